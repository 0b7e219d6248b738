import Foundation

/// Core Data's `NSPersistentHistoryTrackingKey`: `true` makes a SQLite, in-memory or PostgreSQL
/// store record every save and batch delete as a ``PersistentHistoryTransaction``, in tables of
/// its own inside the same database, in the same transaction as the save (a failed save records
/// nothing). In a PostgreSQL store shared by several processes, transaction numbers follow commit
/// order, so that each process can catch up on the others' saves after its last token.
/// Read it with ``PersistentHistoryChangeRequest``. A store without the option writes no history.
///
/// As in Core Data, a store once opened with the option and opened later without it opens
/// read-only (its saves fail with ``SkerryError/Code/storeIsReadOnly``), whether it holds
/// transactions or not: to stop tracking, delete all its history up to now with the option
/// (`PersistentHistoryChangeRequest.deleteHistory(before: .distantFuture)`), then open it without.
public let PersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"

/// A bookmark in the persistent history: Core Data's `NSPersistentHistoryToken`. It names, for
/// each store it covers, the last transaction it has seen; fetching history after it returns the
/// transactions committed since.
///
/// Tokens are `Codable` (Core Data's are archived with `NSKeyedArchiver`; archive Skerry's with
/// `JSONEncoder` or `PropertyListEncoder`) and stay valid across launches. A token whose history
/// was deleted since (`PersistentHistoryChangeRequest.deleteHistory(before:)`,
/// or a migration that rebuilt the store's tables), that names only stores the stack does not
/// have, that is past a store's last transaction (an older copy of the store was restored) or
/// whose store stopped tracking, fails a fetch with ``SkerryError/Code/persistentHistoryTokenExpired``: start again from
/// the current state, as Core Data apps do on `NSPersistentHistoryTokenExpiredError`.
public struct PersistentHistoryToken: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number of the last transaction seen, by store identifier.
    package var storeTokens: [String: Int64]

    package init(storeTokens: [String: Int64]) {
        self.storeTokens = storeTokens
    }

    public var description: String {
        "PersistentHistoryToken(" + storeTokens.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
}

/// What a ``PersistentHistoryChange`` did to its object: Core Data's `NSPersistentHistoryChangeType`.
public enum PersistentHistoryChangeType: Int, Sendable, Hashable {
    case insert = 0
    case update = 1
    case delete = 2
}

/// One object's change in a transaction: Core Data's `NSPersistentHistoryChange`.
public struct PersistentHistoryChange: Sendable, Hashable {
    /// The change's number, unique in its store and never reused.
    public let changeID: Int64
    /// The object inserted, updated or deleted.
    public let changedObjectID: ObjectID
    /// Whether the object was inserted, updated or deleted.
    public let changeType: PersistentHistoryChangeType
    /// For an update, the names of the attributes and relationships it changed (Core Data gives
    /// their property descriptions: `updatedProperties?.map(\.name)` becomes `updatedProperties`);
    /// nil for an insert or a delete.
    public let updatedProperties: Set<String>?
    /// For a delete, the deleted object's values of the attributes marked
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion``, by name, as
    /// `EntityObject.value(forKey:)` gives them (`String`, `NSNumber`, `Date`, `UUID`, `Data`,
    /// `URL`, `NSDecimalNumber`; a nil value is left out): Core Data's `tombstone`. Nil for an
    /// insert or an update, and for a delete of an entity that preserves nothing.
    public var tombstone: [String: Any]? {
        guard let tombstoneValues else { return nil }
        let entity = changedObjectID.entity
        var values: [String: Any] = [:]
        for (name, value) in tombstoneValues {
            guard let index = entity.attributeIndex(named: name),
                let boxed = EntityObject.boxed(value, type: entity.attributes[index].type)
            else { continue }
            values[name] = boxed
        }
        return values
    }
    /// The preserved values as the store keeps them.
    var tombstoneValues: [String: AttributeValue]? = nil
}

/// One save (or batch delete) recorded in a store's persistent history: Core Data's
/// `NSPersistentHistoryTransaction`. A save that writes to several stores records one
/// transaction in each.
public struct PersistentHistoryTransaction: Sendable {
    /// When the transaction committed.
    public let timestamp: Date
    /// The token that marks this transaction: fetching history after it returns the later ones.
    public let token: PersistentHistoryToken
    /// The transaction's number in its store, increasing in commit order.
    public let transactionNumber: Int64
    /// The identifier of the store that recorded it (the one its object IDs' URIs name).
    public let storeID: String
    /// The saving context's ``ObjectContext/transactionAuthor``.
    public let author: String?
    /// The saving context's ``ObjectContext/name``.
    public let contextName: String?
    /// The name of the process that saved (Core Data: its bundle identifier; Linux has none).
    public let bundleID: String
    /// The identifier of the process that saved.
    public let processID: String
    /// The objects it changed, in the order they were recorded; nil when the request asked for
    /// ``PersistentHistoryResultType/transactionsOnly``.
    public let changes: [PersistentHistoryChange]?
    /// Every change, whatever the request asked for, for ``objectIDNotification()``.
    let allChanges: [PersistentHistoryChange]
    /// The context events are made in (one per request, of the fetching stack; it never saves).
    let eventContext: ObjectContext

    /// The transaction as a did-save event, as Core Data's `objectIDNotification()` gives it as
    /// a notification: pass it to ``ObjectContext/mergeChanges(fromContextDidSave:)`` (or its
    /// ``DidSaveEvent/userInfo`` to ``ObjectContext/mergeChanges(fromRemoteContextSave:into:)``)
    /// to bring a context up to date with what the transaction changed.
    public func objectIDNotification() -> DidSaveEvent {
        var changes = StoreChanges()
        for change in allChanges {
            switch change.changeType {
            case .insert: changes.inserted.insert(change.changedObjectID)
            case .update: changes.updated.insert(change.changedObjectID)
            case .delete: changes.deleted.insert(change.changedObjectID)
            }
        }
        // A transaction names each object once; were one named twice, its delete would win.
        changes.inserted.subtract(changes.deleted)
        changes.updated.subtract(changes.deleted)
        return DidSaveEvent(context: eventContext, changes: changes)
    }
}

/// What a ``PersistentHistoryChangeRequest`` reports: Core Data's `NSPersistentHistoryResultType`.
public enum PersistentHistoryResultType: Int, Sendable, Hashable {
    /// `true` when the request succeeded.
    case statusOnly = 0
    /// The IDs of the changed objects (`[ObjectID]`), in commit order, each once.
    case objectIDs = 1
    /// For a fetch, the number of transactions; for a delete, the number deleted (`Int`).
    case count = 2
    /// The transactions (`[PersistentHistoryTransaction]`) without their changes.
    case transactionsOnly = 3
    /// The changes (`[PersistentHistoryChange]`) of the transactions, in commit order.
    case changesOnly = 4
    /// The transactions with their changes (the default).
    case transactionsAndChanges = 5
}

/// A request that fetches or deletes persistent history: Core Data's
/// `NSPersistentHistoryChangeRequest`, run with `ObjectContext.execute(_:)`.
/// A request is a value: change ``resultType`` on a `var`.
///
/// ```swift
/// let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: lastToken))
/// for transaction in result.result as? [PersistentHistoryTransaction] ?? [] { ... }
/// ```
public struct PersistentHistoryChangeRequest: Sendable {
    enum Operation: Sendable {
        case fetchAfterToken(PersistentHistoryToken?)
        case fetchAfterDate(Date)
        case deleteBeforeToken(PersistentHistoryToken?)
        case deleteBeforeDate(Date)
    }

    let operation: Operation
    /// What the result reports; ``PersistentHistoryResultType/transactionsAndChanges`` by default.
    public var resultType: PersistentHistoryResultType = .transactionsAndChanges
    /// For a fetch, a filter of the transactions: ``PersistentHistoryTransaction/fetchRequest``
    /// with a predicate (Core Data's `fetchRequest`); nil for every transaction. Each transaction
    /// kept has its own token, so that the last one's token is where the next fetch starts.
    public var fetchRequest: FetchRequest?

    /// The token the request starts after (a fetch) or ends before (a delete), when it was made
    /// with one.
    public var token: PersistentHistoryToken? {
        switch operation {
        case .fetchAfterToken(let token), .deleteBeforeToken(let token): return token
        case .fetchAfterDate, .deleteBeforeDate: return nil
        }
    }

    /// The transactions committed after `token`, in commit order; every transaction for nil.
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(operation: .fetchAfterToken(token))
    }

    /// The transactions committed after `transaction`; every transaction for nil.
    public static func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(operation: .fetchAfterToken(transaction?.token))
    }

    /// The transactions committed after `date`, in commit order (`.distantPast`: every one).
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(operation: .fetchAfterDate(date))
    }

    /// Deletes the transactions committed before the one `token` marks (that one stays); nil
    /// deletes nothing. A later fetch after a token older than what was deleted fails with
    /// ``SkerryError/Code/persistentHistoryTokenExpired``.
    public static func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(operation: .deleteBeforeToken(token))
    }

    /// Deletes the transactions committed before `transaction` (it stays); nil deletes nothing.
    public static func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(operation: .deleteBeforeToken(transaction?.token))
    }

    /// Deletes the transactions committed before `date` (`.distantFuture`: all of them).
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(operation: .deleteBeforeDate(date))
    }
}

/// What a ``PersistentHistoryChangeRequest`` returned: Core Data's `NSPersistentHistoryResult`.
public struct PersistentHistoryResult: Sendable {
    /// What the request asked to report.
    public let resultType: PersistentHistoryResultType
    /// The transactions fetched, with their changes unless the request asked for
    /// ``PersistentHistoryResultType/transactionsOnly``; empty for a delete.
    public let transactions: [PersistentHistoryTransaction]
    /// For a delete, how many transactions it deleted; for a fetch, how many it found.
    public let count: Int

    /// The result as Core Data gives it, by ``resultType``: `Bool` (`true`) for `.statusOnly`,
    /// `[ObjectID]` for `.objectIDs`, `Int` for `.count`, `[PersistentHistoryTransaction]` for
    /// `.transactionsOnly` and `.transactionsAndChanges`, `[PersistentHistoryChange]` for
    /// `.changesOnly` (a delete reports `true` for these). `result as? [NSPersistentHistoryTransaction]`
    /// ports as `result as? [PersistentHistoryTransaction]`.
    public var result: Any? {
        switch resultType {
        case .statusOnly: return true
        case .count: return count
        case .objectIDs:
            var seen = Set<ObjectID>()
            return transactions.flatMap(\.allChanges).map(\.changedObjectID).filter { seen.insert($0).inserted }
        case .transactionsOnly, .transactionsAndChanges: return isDelete ? true : transactions
        case .changesOnly: return isDelete ? true : transactions.flatMap(\.allChanges)
        }
    }

    /// Whether the request deleted history.
    let isDelete: Bool
}
