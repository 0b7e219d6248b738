import Foundation

/// Who makes the writes a store records in its persistent history: the saving context's
/// transaction author and name. Set by the context around its writes (a task-local value, so
/// that the stores' write methods keep their signatures; it reaches synchronous code too).
package struct HistoryAuthor: Sendable {
    package var author: String?
    package var contextName: String?

    /// The author of the writes running now; nil outside a context's save or batch delete.
    @TaskLocal package static var current: HistoryAuthor?
}

/// Where a history request starts or ends in one store.
package enum HistoryBound: Sendable {
    /// After (fetch) or before (delete) the transaction with this number; nil: from the
    /// beginning (fetch) or nothing (delete).
    case number(Int64?)
    /// After (fetch) or before (delete) this moment.
    case date(Date)
}

/// One transaction as a store read it from its history.
package struct HistoryTransactionRecord: Sendable {
    package var number: Int64
    package var timestamp: Date
    package var author: String?
    package var contextName: String?
    package var bundleID: String
    package var processID: String
    package var changes: [PersistentHistoryChange]
}

/// What a store that can keep persistent history offers (the SQLite store, when its description
/// asks for history: ``ObjectStore/tracksPersistentHistory``). A PostgreSQL store keeps none.
package protocol PersistentHistoryStore: ObjectStore {
    /// The transactions after `bound`, in commit order.
    /// - Throws: ``SkerryError/Code/persistentHistoryTokenExpired`` when transactions after
    ///   `bound` were deleted.
    func fetchHistory(after bound: HistoryBound) throws(SkerryError) -> [HistoryTransactionRecord]
    /// Deletes the transactions before `bound`; returns how many.
    func deleteHistory(before bound: HistoryBound) throws(SkerryError) -> Int
    /// The number of the last transaction recorded (0 before the first).
    func lastHistoryNumber() throws(SkerryError) -> Int64
}

extension ObjectStore {
    /// The store as a history store, when it records history (no cast for the others).
    var historyStore: (any PersistentHistoryStore)? {
        guard tracksPersistentHistory else { return nil }
        return self as? any PersistentHistoryStore
    }
}

/// The process as history names it.
enum HistoryProcess {
    static let processID = String(ProcessInfo.processInfo.processIdentifier)
    static let bundleID = ProcessInfo.processInfo.processName
}
