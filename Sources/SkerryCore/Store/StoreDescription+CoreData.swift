import Foundation

// Core Data's store types and option keys, with their `NS` prefix dropped (Core Data code renames
// `NSSQLiteStoreType` to `SQLiteStoreType`, and so on). Their values are Core Data's, so that code
// spelling a key as a string literal works too.

/// Core Data's `NSSQLiteStoreType`: a SQLite file store.
public let SQLiteStoreType = "SQLite"
/// Core Data's `NSInMemoryStoreType`: a private in-memory store, gone when the stack is released.
public let InMemoryStoreType = "InMemory"
/// Core Data's `NSMigratePersistentStoresAutomaticallyOption`: whether a store written with an
/// earlier model may be migrated when it is added (``StoreDescription/shouldMigrateStoreAutomatically``).
public let MigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Core Data's `NSInferMappingModelAutomaticallyOption`: whether that migration may be inferred
/// from the models (``StoreDescription/shouldInferMappingModelAutomatically``).
public let InferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Core Data's `NSReadOnlyPersistentStoreOption`: open the store for reading only
/// (``StoreDescription/isReadOnly``).
public let ReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Core Data's `NSPersistentStoreTimeoutOption`: seconds to wait for a lock held by another
/// process (``StoreDescription/busyTimeout``).
public let PersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// Core Data's `NSSQLitePragmasOption`: a dictionary of SQLite pragmas. Skerry honours
/// `journal_mode` and `synchronous` (``StoreDescription/journalMode``, ``StoreDescription/synchronous``);
/// any other pragma fails the load with ``SkerryError/Code/invalidArgument``, as Skerry sets the
/// connection up itself.
public let SQLitePragmasOption = "NSSQLitePragmasOption"
/// Core Data's `NSPersistentStoreFileProtectionKey` (Apple data protection). Accepted and without
/// effect: Linux has no per-file data protection.
public let PersistentStoreFileProtectionKey = "NSPersistentStoreFileProtectionKey"
/// Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey`. Accepted and without
/// effect on a SQLite store: no other process posts changes to it. (A PostgreSQL store delivers
/// other processes' saves as did-save events; see `PostgresStoreOptions.propagatesChanges`.)
public let PersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"
/// Core Data's `NSSQLiteManualVacuumOption`. Accepted and without effect: a hint about file size.
public let SQLiteManualVacuumOption = "NSSQLiteManualVacuumOption"
/// Core Data's `NSSQLiteAnalyzeOption`. Accepted and without effect: a hint for SQLite's planner.
public let SQLiteAnalyzeOption = "NSSQLiteAnalyzeOption"

extension StoreDescription {
    /// Describes a store without a location yet: Core Data's `NSPersistentStoreDescription()`.
    /// Set ``type`` (for example to ``InMemoryStoreType``) or ``url`` before loading it; a SQLite
    /// store without a URL fails to load.
    public init() {
        self = .inMemory()
        kind = .sqlite
    }

    /// The store's type, as Core Data names it: ``SQLiteStoreType``, ``InMemoryStoreType``, or
    /// `"Postgres"` for a PostgreSQL store. Setting ``SQLiteStoreType`` or ``InMemoryStoreType``
    /// changes ``kind``; any other value makes the store fail to load with
    /// ``SkerryError/Code/invalidArgument`` (Core Data's binary and XML stores have no Skerry
    /// counterpart; a PostgreSQL store is described with `StoreDescription.postgres(_:)`).
    public var type: String {
        get {
            switch kind {
            case .sqlite: return SQLiteStoreType
            case .inMemory: return InMemoryStoreType
            case .postgres: return "Postgres"
            }
        }
        set {
            switch newValue {
            case SQLiteStoreType where storeFactory == nil: kind = .sqlite
            case InMemoryStoreType where storeFactory == nil: kind = .inMemory
            case type: break
            default:
                unsupportedOptions.append(
                    "Store type '\(newValue)' is not one Skerry opens: use SQLiteStoreType or InMemoryStoreType (or StoreDescription.postgres for a PostgreSQL store)."
                )
            }
        }
    }

    /// Core Data's `timeout`: seconds to wait for a lock held by another process; the same as
    /// ``busyTimeout``.
    public var timeout: TimeInterval {
        get { busyTimeout }
        set { busyTimeout = newValue }
    }

    /// Sets a store option by Core Data's key, as `NSPersistentStoreDescription.setOption(_:forKey:)`
    /// does. The keys Skerry honours set the matching property: ``ReadOnlyPersistentStoreOption``,
    /// ``MigratePersistentStoresAutomaticallyOption``, ``InferMappingModelAutomaticallyOption``,
    /// ``PersistentStoreTimeoutOption``, ``SQLitePragmasOption``, ``PersistentHistoryTrackingKey``
    /// (SQLite and in-memory stores; a PostgreSQL store fails to load with it). The platform hints
    /// ``PersistentStoreFileProtectionKey``, ``PersistentStoreRemoteChangeNotificationPostOptionKey``,
    /// ``SQLiteManualVacuumOption`` and ``SQLiteAnalyzeOption`` are accepted without effect. Any
    /// other key (`NSPersistentStoreUbiquitousContentNameKey`, for one), or a value of the wrong kind, makes the
    /// store fail to load with ``SkerryError/Code/invalidArgument`` naming it: Skerry does not
    /// pretend to honour an option it ignores.
    /// - Parameters:
    ///   - option: the value (`true as NSNumber`, a `Bool`, a number, or for the pragmas a
    ///     dictionary); nil sets the option back to its default.
    ///   - key: the option's key.
    public mutating func setOption(_ option: Any?, forKey key: String) {
        do {
            try applyOption(option, forKey: key)
        } catch {
            unsupportedOptions.append(error.message)
        }
    }

    /// Sets a SQLite pragma, as `NSPersistentStoreDescription.setValue(_:forPragmaNamed:)` does.
    /// Skerry honours `journal_mode` (``journalMode``) and `synchronous` (``synchronous``); any
    /// other pragma or value makes the store fail to load with ``SkerryError/Code/invalidArgument``.
    /// - Parameters:
    ///   - value: the pragma's value (`"DELETE" as NSString`, `"WAL"`, `2`); nil for the default.
    ///   - name: the pragma's name.
    public mutating func setValue(_ value: Any?, forPragmaNamed name: String) {
        do {
            try applyPragma(name, value)
        } catch {
            unsupportedOptions.append(error.message)
        }
    }

    /// Applies one Core Data option.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a key Skerry does not know or a value
    ///   of the wrong kind.
    mutating func applyOption(_ option: Any?, forKey key: String) throws(SkerryError) {
        switch key {
        case ReadOnlyPersistentStoreOption:
            isReadOnly = try Self.bool(option, key, default: false)
        case MigratePersistentStoresAutomaticallyOption:
            shouldMigrateStoreAutomatically = try Self.bool(option, key, default: true)
        case InferMappingModelAutomaticallyOption:
            shouldInferMappingModelAutomatically = try Self.bool(option, key, default: true)
        case PersistentHistoryTrackingKey:
            tracksPersistentHistory = try Self.bool(option, key, default: false)
        case PersistentStoreTimeoutOption:
            busyTimeout = try Self.seconds(option, key, default: 5)
        case SQLitePragmasOption:
            guard let option else {
                journalMode = .wal
                synchronous = .normal
                return
            }
            guard let pragmas = option as? [String: Any] ?? (option as? NSDictionary).flatMap({ $0 as? [String: Any] }) else {
                throw SkerryError(.invalidArgument, "The value of \(key) must be a dictionary of pragma names and values, not \(option).")
            }
            for (name, value) in pragmas.sorted(by: { $0.key < $1.key }) { try applyPragma(name, value) }
        case PersistentStoreFileProtectionKey, PersistentStoreRemoteChangeNotificationPostOptionKey, SQLiteManualVacuumOption,
            SQLiteAnalyzeOption:
            break
        default:
            throw SkerryError(
                .invalidArgument,
                "Store option '\(key)' is not one Skerry honours. It honours ReadOnlyPersistentStoreOption, MigratePersistentStoresAutomaticallyOption, InferMappingModelAutomaticallyOption, PersistentStoreTimeoutOption, PersistentHistoryTrackingKey and SQLitePragmasOption (journal_mode, synchronous)."
            )
        }
    }

    /// Applies one SQLite pragma given as Core Data code gives it.
    private mutating func applyPragma(_ name: String, _ value: Any?) throws(SkerryError) {
        let text = value.map { "\($0)".uppercased() }
        switch name.lowercased() {
        case "journal_mode":
            guard let text else {
                journalMode = .wal
                return
            }
            guard let mode = JournalMode(rawValue: text) else {
                throw SkerryError(
                    .invalidArgument, "'\(text)' is not a SQLite journal mode (WAL, DELETE, TRUNCATE, PERSIST, MEMORY, OFF).")
            }
            journalMode = mode
        case "synchronous":
            guard let text else {
                synchronous = .normal
                return
            }
            let byNumber: [String: SynchronousMode] = ["0": .off, "1": .normal, "2": .full, "3": .extra]
            guard let mode = SynchronousMode(rawValue: text) ?? byNumber[text] else {
                throw SkerryError(.invalidArgument, "'\(text)' is not a SQLite synchronous mode (OFF, NORMAL, FULL, EXTRA, or 0–3).")
            }
            synchronous = mode
        default:
            throw SkerryError(
                .invalidArgument,
                "SQLite pragma '\(name)' cannot be set through the store's options: Skerry sets its connections up itself and honours journal_mode and synchronous."
            )
        }
    }

    /// A flag given as Core Data code gives it: `Bool`, `NSNumber`, an integer, or `"YES"`/`"NO"`;
    /// nil for `defaultValue`.
    private static func bool(_ value: Any?, _ key: String, default defaultValue: Bool) throws(SkerryError) -> Bool {
        guard let value else { return defaultValue }
        switch value {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.boolValue
        case let number as Int: return number != 0
        case let text as String where ["YES", "TRUE", "1"].contains(text.uppercased()): return true
        case let text as String where ["NO", "FALSE", "0"].contains(text.uppercased()): return false
        default: throw SkerryError(.invalidArgument, "The value of \(key) must be a Boolean, not \(value).")
        }
    }

    /// A number of seconds given as `Double`, `Int` or `NSNumber`; nil for `defaultValue`.
    private static func seconds(_ value: Any?, _ key: String, default defaultValue: TimeInterval) throws(SkerryError) -> TimeInterval {
        guard let value else { return defaultValue }
        switch value {
        case let seconds as Double where seconds >= 0 && seconds.isFinite: return seconds
        case let seconds as Int where seconds >= 0: return TimeInterval(seconds)
        case let seconds as NSNumber where seconds.doubleValue >= 0 && seconds.doubleValue.isFinite: return seconds.doubleValue
        default: throw SkerryError(.invalidArgument, "The value of \(key) must be a number of seconds, not \(value).")
        }
    }

    /// The URL of an in-memory store described without one: `/dev/null`, Core Data's URL for a
    /// store kept in memory.
    static let inMemoryURL = URL(fileURLWithPath: "/dev/null")

    /// The description a store is opened from (and that the coordinator's `persistentStores`
    /// lists): Core Data's `/dev/null` URL (its way of asking for a SQLite store kept in memory)
    /// becomes an in-memory store, and an in-memory store has a URL, as in Core Data, so that code
    /// reading `store.url!` works: the one it was described with, else `/dev/null`.
    var resolvedForLoading: StoreDescription {
        guard storeFactory == nil else { return self }
        var description = self
        switch kind {
        case .sqlite where url?.standardizedFileURL.path == "/dev/null":
            description.kind = .inMemory
            description.url = Self.inMemoryURL
        case .inMemory where url == nil:
            description.url = Self.inMemoryURL
        case .sqlite, .inMemory, .postgres:
            break
        }
        return description
    }

    /// Throws the options recorded as unsupported by setters that cannot throw.
    func checkOptions() throws(SkerryError) {
        guard unsupportedOptions.isEmpty else {
            throw SkerryError(.invalidArgument, "\(self) has options Skerry cannot honour: " + unsupportedOptions.joined(separator: " "))
        }
    }
}
