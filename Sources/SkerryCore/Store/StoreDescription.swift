import Foundation

/// SQLite's journal modes (`PRAGMA journal_mode`).
public enum JournalMode: String, Sendable, Hashable {
    /// Write-ahead log: readers never wait for the writer. The default.
    case wal = "WAL"
    case delete = "DELETE"
    case truncate = "TRUNCATE"
    case persist = "PERSIST"
    case memory = "MEMORY"
    case off = "OFF"
}

/// SQLite's synchronous modes (`PRAGMA synchronous`).
public enum SynchronousMode: String, Sendable, Hashable {
    case off = "OFF"
    /// With WAL, durable across application crashes; a power loss may lose the last commits but
    /// never corrupts the database. The default.
    case normal = "NORMAL"
    case full = "FULL"
    case extra = "EXTRA"
}

/// Where and how a store is kept: NSPersistentStoreDescription's role.
///
/// ```swift
/// let file = StoreDescription(url: directory.appendingPathComponent("Library.sqlite"))
/// let memory = StoreDescription.inMemory()
/// ```
public struct StoreDescription: Sendable, Hashable, CustomStringConvertible {
    public static func == (lhs: StoreDescription, rhs: StoreDescription) -> Bool {
        lhs.kind == rhs.kind && lhs.url == rhs.url && lhs.entityNames == rhs.entityNames && lhs.configuration == rhs.configuration
            && lhs.journalMode == rhs.journalMode
            && lhs.synchronous == rhs.synchronous && lhs.busyTimeout == rhs.busyTimeout
            && lhs.maximumReaderCount == rhs.maximumReaderCount
            && lhs.shouldMigrateStoreAutomatically == rhs.shouldMigrateStoreAutomatically
            && lhs.shouldInferMappingModelAutomatically == rhs.shouldInferMappingModelAutomatically
            && lhs.isReadOnly == rhs.isReadOnly && lhs.unsupportedOptions == rhs.unsupportedOptions
            && lhs.tracksPersistentHistory == rhs.tracksPersistentHistory
            && lhs.migrationPlan.map(ObjectIdentifier.init) == rhs.migrationPlan.map(ObjectIdentifier.init)
            && lhs.storeFactory.map(ObjectIdentifier.init) == rhs.storeFactory.map(ObjectIdentifier.init)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(url)
        hasher.combine(entityNames)
    }

    /// The kinds of store.
    public enum Kind: Sendable, Hashable {
        /// A SQLite database file.
        case sqlite
        /// A private in-memory SQLite database, gone when the stack is released.
        case inMemory
        /// A PostgreSQL database (the `SkerryPostgres` product's `StoreDescription.postgres(_:)`).
        case postgres
    }

    /// The kind of store.
    public var kind: Kind
    /// The database file, for ``Kind/sqlite`` stores. An in-memory store needs none; as in Core
    /// Data, the store the coordinator lists (``StoreCoordinator/persistentStores``) has one all the
    /// same: the URL it was described with, else `/dev/null`.
    public var url: URL?
    /// The entities this store holds; nil for all. Each entity lives in the first store of the
    /// stack that holds it.
    public var entityNames: Set<String>?
    /// The model configuration whose entities this store holds (Core Data's
    /// `NSPersistentStoreDescription.configuration`); nil for every entity. With
    /// ``entityNames`` too, the store holds the entities both name.
    public var configuration: String?
    /// The journal mode of a file store. Default: WAL.
    public var journalMode: JournalMode = .wal
    /// The synchronous mode. Default: NORMAL.
    public var synchronous: SynchronousMode = .normal
    /// How long a connection waits for a lock held by another process before failing. Default 5 s.
    public var busyTimeout: TimeInterval = 5
    /// The most reader connections of a file store used at once. Default 4.
    public var maximumReaderCount: Int = 4
    /// Whether a store written with an earlier model is migrated when the change is additive
    /// (new entities, new optional attributes, new attributes with a default). Default true; when
    /// false, any model change fails the load with ``SkerryError/Code/modelMismatch``.
    ///
    /// True when both of Core Data's flags are (``shouldMigrateStoreAutomatically`` and
    /// ``shouldInferMappingModelAutomatically``: Skerry infers every migration it makes without a
    /// ``migrationPlan``); setting it sets both.
    public var shouldMigrateAutomatically: Bool {
        get { shouldMigrateStoreAutomatically && shouldInferMappingModelAutomatically }
        set {
            shouldMigrateStoreAutomatically = newValue
            shouldInferMappingModelAutomatically = newValue
        }
    }
    /// Core Data's `shouldMigrateStoreAutomatically`: whether a store written with an earlier model
    /// may be migrated when it loads. Default true. See ``shouldMigrateAutomatically``.
    public var shouldMigrateStoreAutomatically: Bool = true
    /// Core Data's `shouldInferMappingModelAutomatically`: whether the migration may be inferred
    /// from the two models (Skerry's lightweight migration). Default true. Skerry has no mapping
    /// models to fall back on: without inference, a store of an earlier model fails to load with
    /// ``SkerryError/Code/modelMismatch`` as when ``shouldMigrateStoreAutomatically`` is false.
    public var shouldInferMappingModelAutomatically: Bool = true
    /// Why options set with Core Data's `setOption(_:forKey:)`, `setValue(_:forPragmaNamed:)` or
    /// `type` cannot be honoured; loading the store throws ``SkerryError/Code/invalidArgument``
    /// with them (those setters cannot throw).
    var unsupportedOptions: [String] = []
    /// Whether the store is opened for reading only (Core Data's `isReadOnly`): the file must
    /// exist and is never written — not migrated, not given a journal mode; saves and batch
    /// deletes into it fail with ``SkerryError/Code/storeIsReadOnly``. A store on read-only media (a
    /// read-only folder or file system) opens this way. Default false. A file store only.
    public var isReadOnly: Bool = false
    /// The model versions a file store may have been written with, and the custom steps between
    /// them: a store of an older version is migrated step by step when it loads. See ``MigrationPlan``.
    public var migrationPlan: MigrationPlan?
    /// Whether the store records persistent history (Core Data's ``PersistentHistoryTrackingKey``,
    /// set through ``setOption(_:forKey:)``): SQLite, in-memory and PostgreSQL stores.
    package var tracksPersistentHistory: Bool = false
    /// For a store of a kind this module does not implement (a PostgreSQL store), what opens it;
    /// nil for the SQLite kinds. Set by that store's module.
    package var storeFactory: (any ObjectStoreFactory)?

    /// Describes a SQLite file store.
    /// - Parameter url: the database file; its folder is created on load if missing.
    public init(url: URL) {
        self.kind = .sqlite
        self.url = url
    }

    private init(kind: Kind) {
        self.kind = kind
    }

    /// Describes a store of a kind implemented outside this module, opened by `factory`.
    package init(kind: Kind, factory: any ObjectStoreFactory) {
        self.kind = kind
        self.storeFactory = factory
    }

    /// Describes an in-memory store.
    public static func inMemory() -> StoreDescription {
        StoreDescription(kind: .inMemory)
    }

    /// Opens the store this description describes, for the entities of `model` it holds.
    /// - Throws: the store's load error.
    func makeStore(model: ObjectModel, entities: [EntityDescription], events: EventHub?) throws(SkerryError) -> any ObjectStore {
        if let storeFactory {
            return try storeFactory.makeStore(description: self, model: model, entities: entities, events: events)
        }
        return try SQLiteStore(description: self, model: model, entities: entities, events: events)
    }

    /// Whether the store holds `entity` of `model`.
    package func holds(_ entity: EntityDescription, of model: ObjectModel) -> Bool {
        if let configuration, let members = try? model.entityNames(forConfiguration: configuration),
            !members.contains(entity.name)
        {
            // An unknown configuration was reported when the store loaded (`checkConfiguration`).
            return false
        }
        return entityNames?.contains(entity.name) ?? true
    }

    /// Fails for a configuration the model does not have.
    func checkConfiguration(of model: ObjectModel) throws(SkerryError) {
        if let configuration { _ = try model.entityNames(forConfiguration: configuration) }
    }

    var connectionSettings: ConnectionSettings {
        ConnectionSettings(
            journalMode: journalMode, synchronous: synchronous, busyTimeout: busyTimeout,
            maximumReaderCount: maximumReaderCount, readOnly: isReadOnly)
    }

    public var description: String {
        switch kind {
        case .sqlite: return "SQLite store at \(url?.path ?? "?")"
        case .inMemory: return "in-memory store"
        case .postgres: return storeFactory?.storeLabel ?? "PostgreSQL store"
        }
    }
}
