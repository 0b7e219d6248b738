import Foundation

extension PersistentHistoryTransaction {
    /// A fetch request whose predicate filters the transactions a history request returns (Core
    /// Data's `NSPersistentHistoryTransaction.fetchRequest`): set its `predicate` on the
    /// transactions' `author`, `contextName`, `bundleID`, `processID`, `storeID` (strings),
    /// `timestamp` (a date) or `transactionNumber` (an integer), and give it to
    /// ``PersistentHistoryChangeRequest/fetchRequest``. Optional as Core Data's is, never nil.
    ///
    /// ```swift
    /// var historyFetchRequest = PersistentHistoryTransaction.fetchRequest!
    /// historyFetchRequest.predicate = try FetchPredicate(format: "author != %@", appAuthor)
    /// var request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
    /// request.fetchRequest = historyFetchRequest
    /// ```
    public static var fetchRequest: FetchRequest? { FetchRequest(entityName: HistoryFilter.entity.name) }
}

/// The filter of a history request: the request's fetch request resolved against an entity that
/// describes transactions, evaluated in memory on the transactions fetched.
enum HistoryFilter {
    static let attributes: [(name: String, type: AttributeType)] = [
        ("author", .string), ("contextName", .string), ("bundleID", .string), ("processID", .string),
        ("storeID", .string), ("timestamp", .date), ("transactionNumber", .integer64),
    ]

    /// The entity of transactions, alone in a model of its own.
    static let model: ObjectModel = {
        let entity = EntityDescription(
            name: "Transaction", attributes: attributes.map { AttributeDescription($0.name, $0.type, isOptional: true) })
        do {
            return try ObjectModel(entities: [entity])
        } catch {
            fatalError("The model of history transactions is valid: \(error)")
        }
    }()

    static var entity: EntityDescription { model.entities[0] }

    /// The identity that the transactions' IDs name while they are filtered.
    static let identity = StoreIdentity(identifier: "PersistentHistory")

    /// The transactions of `transactions` that `request` keeps.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a request of another entity or with
    ///   settings other than a predicate; the predicate's own resolution errors.
    static func filter(_ transactions: [PersistentHistoryTransaction], by request: FetchRequest) throws(SkerryError)
        -> [PersistentHistoryTransaction]
    {
        guard request.entityName == entity.name else {
            throw SkerryError(
                .invalidArgument,
                "A history request filters transactions only: its fetch request must be PersistentHistoryTransaction.fetchRequest (entity '\(entity.name)'), not one of '\(request.entityName)'.",
                entityName: request.entityName)
        }
        guard request.sortKeys.isEmpty, request.fetchLimit == 0, request.fetchOffset == 0 else {
            throw SkerryError(
                .invalidArgument,
                "A history request's fetch request filters transactions by its predicate only: the transactions come in commit order, unlimited."
            )
        }
        guard let predicate = request.predicate else { return transactions }
        let resolved = try predicate.resolved(for: entity, in: model)
        let subjects = transactions.map { transaction in
            TransactionSubject(
                objectID: ObjectID(store: identity, entity: entity, primaryKey: transaction.transactionNumber),
                values: [
                    transaction.author.map(AttributeValue.string) ?? .null,
                    transaction.contextName.map(AttributeValue.string) ?? .null,
                    .string(transaction.bundleID), .string(transaction.processID), .string(transaction.storeID),
                    .date(transaction.timestamp), .int(transaction.transactionNumber),
                ])
        }
        let kept = try resolved.evaluate(subjects)
        return zip(transactions, kept).filter(\.1).map(\.0)
    }
}

/// A transaction as a predicate subject: its values, no relationships, no raw SQL.
private struct TransactionSubject: PredicateSubject {
    let objectID: ObjectID
    let values: [AttributeValue]

    func value(_ key: ResolvedKey) throws(SkerryError) -> AttributeValue {
        key.path.isEmpty ? values[key.index] : .null
    }

    func related(_ relationship: ResolvedRelationship) throws(SkerryError) -> [TransactionSubject] { [] }

    static func evaluateSQL(
        _ condition: String, _ bindings: [AttributeValue], entity: EntityDescription, on subjects: [TransactionSubject]
    ) throws(SkerryError) -> [Bool] {
        throw SkerryError(
            .invalidArgument, "A history request's predicate cannot hold a raw SQL condition: transactions are filtered in memory.")
    }
}
