import Foundation

extension ObjectContext {
    /// The author recorded with this context's saves and batch deletes in the persistent history
    /// of the stores that keep one (``PersistentHistoryTransaction/author``): Core Data's
    /// `transactionAuthor`, typically used to skip one's own transactions when reading the
    /// history. Nil by default. May be set from any thread; a save uses the value it finds when
    /// it starts.
    public var transactionAuthor: String? {
        get { transactionAuthorStorage.withLock { $0 } }
        set { transactionAuthorStorage.withLock { $0 = newValue } }
    }

    /// Runs `body` (writes to `stores`) with this context named as the author of the history
    /// they record, when one of them records history; otherwise runs it as it is.
    func withHistoryAuthor<T, E: Error>(of stores: some Sequence<any ObjectStore>, _ body: () throws(E) -> T) throws(E) -> T {
        guard stores.contains(where: \.tracksPersistentHistory) else { return try body() }
        let author = HistoryAuthor(author: transactionAuthor, contextName: name)
        // `withValue` rethrows untyped: the result carries the typed error through it.
        let result = HistoryAuthor.$current.withValue(author) { Result { () throws(E) -> T in try body() } }
        return try result.get()
    }

    /// Fetches or deletes persistent history (Core Data's `execute(_:)` of an
    /// `NSPersistentHistoryChangeRequest`) in every loaded store that records it
    /// (``PersistentHistoryTrackingKey``).
    ///
    /// A fetch returns the transactions in commit order (across stores, by timestamp), each with
    /// a ``PersistentHistoryTransaction/token`` that covers every store up to it: keep the last
    /// one's token and fetch after it next time. The context itself is not changed: merge what a
    /// transaction changed with ``mergeChanges(fromContextDidSave:)`` and
    /// ``PersistentHistoryTransaction/objectIDNotification()``.
    /// - Parameter request: what to fetch or delete, and what to report.
    /// - Returns: the result; ``PersistentHistoryResult/result`` holds it as Core Data gives it.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when no loaded store records history;
    ///   ``SkerryError/Code/persistentHistoryTokenExpired`` for a token whose history was deleted,
    ///   that names none of those stores, that is past a store's last transaction (an older copy
    ///   was restored) or whose store stopped tracking; ``SkerryError/Code/storeIsReadOnly`` for a delete
    ///   in a read-only store.
    @discardableResult
    public func execute(_ request: PersistentHistoryChangeRequest) throws(SkerryError) -> PersistentHistoryResult {
        checkConfinement()
        let stores = coordinator.loadedStores.compactMap(\.historyStore)
        guard !stores.isEmpty else {
            throw SkerryError(
                .invalidArgument,
                "No loaded store of this context records persistent history: load the store with the option PersistentHistoryTrackingKey set to true."
            )
        }
        switch request.operation {
        case .fetchAfterToken(let token):
            try Self.checkNamesAStore(token, stores)
            let records = try stores.map { store throws(SkerryError) in
                try store.fetchHistory(after: .number(token?.storeTokens[store.identity.identifier]))
            }
            return try historyResult(request, records, stores: stores, startingAt: token)
        case .fetchAfterDate(let date):
            let records = try stores.map { store throws(SkerryError) in try store.fetchHistory(after: .date(date)) }
            return try historyResult(request, records, stores: stores, startingAt: nil)
        case .deleteBeforeToken(let token):
            guard let token else {
                return PersistentHistoryResult(resultType: request.resultType, transactions: [], count: 0, isDelete: true)
            }
            try Self.checkNamesAStore(token, stores)
            var count = 0
            for store in stores {
                guard let number = token.storeTokens[store.identity.identifier] else { continue }
                count += try store.deleteHistory(before: .number(number))
            }
            return PersistentHistoryResult(resultType: request.resultType, transactions: [], count: count, isDelete: true)
        case .deleteBeforeDate(let date):
            var count = 0
            for store in stores { count += try store.deleteHistory(before: .date(date)) }
            return PersistentHistoryResult(resultType: request.resultType, transactions: [], count: count, isDelete: true)
        }
    }

    /// Refuses a token that names none of `stores`: it was taken from another store, or from
    /// one destroyed or replaced since (a new store has a new identifier).
    private static func checkNamesAStore(_ token: PersistentHistoryToken?, _ stores: [any PersistentHistoryStore]) throws(SkerryError) {
        guard let token, !stores.contains(where: { token.storeTokens[$0.identity.identifier] != nil }) else { return }
        throw SkerryError(
            .persistentHistoryTokenExpired,
            "\(token) names none of the stores of this context that record persistent history (\(stores.map(\.identity.identifier).joined(separator: ", "))): it was taken from another store, or from a store destroyed or replaced since. Fetch all history again (after nil) and take a new token."
        )
    }

    /// The transactions of each store's `records`, merged in commit order (by timestamp across
    /// stores, by number within one), each with a token that covers every store up to it.
    private func historyResult(
        _ request: PersistentHistoryChangeRequest, _ records: [[HistoryTransactionRecord]],
        stores: [any PersistentHistoryStore], startingAt start: PersistentHistoryToken?
    ) throws(SkerryError) -> PersistentHistoryResult {
        let eventContext = ObjectContext(coordinator: coordinator, name: "persistentHistory")
        var running = start?.storeTokens ?? [:]
        var next = Array(repeating: 0, count: records.count)
        var transactions: [PersistentHistoryTransaction] = []
        transactions.reserveCapacity(records.reduce(0) { $0 + $1.count })
        while true {
            // The store whose next transaction is the earliest (the first store on a tie).
            var earliest: Int?
            for index in records.indices where next[index] < records[index].count {
                if let current = earliest, records[current][next[current]].timestamp <= records[index][next[index]].timestamp { continue }
                earliest = index
            }
            guard let index = earliest else { break }
            let record = records[index][next[index]]
            next[index] += 1
            let storeID = stores[index].identity.identifier
            running[storeID] = record.number
            transactions.append(
                PersistentHistoryTransaction(
                    timestamp: record.timestamp, token: PersistentHistoryToken(storeTokens: running),
                    transactionNumber: record.number, storeID: storeID, author: record.author,
                    contextName: record.contextName, bundleID: record.bundleID, processID: record.processID,
                    changes: request.resultType == .transactionsOnly ? nil : record.changes, allChanges: record.changes,
                    eventContext: eventContext))
        }
        if let fetchRequest = request.fetchRequest { transactions = try HistoryFilter.filter(transactions, by: fetchRequest) }
        return PersistentHistoryResult(
            resultType: request.resultType, transactions: transactions, count: transactions.count, isDelete: false)
    }
}

extension StoreCoordinator {
    /// A token for the current end of the persistent history of `stores` (every loaded store
    /// when nil): Core Data's `currentPersistentHistoryToken(fromStores:)`. Fetching history
    /// after it returns what is saved from now on.
    /// - Parameter stores: stores of ``persistentStores``.
    /// - Returns: nil when none of them records persistent history, or when reading a store's
    ///   history failed (Core Data's method cannot throw either; a fetch reports the error).
    public func currentPersistentHistoryToken(fromStores stores: [StoreDescription]?) -> PersistentHistoryToken? {
        let wanted = stores.map { Set($0.map(\.resolvedForLoading)) }
        var tokens: [String: Int64] = [:]
        for store in loadedStores.compactMap(\.historyStore) where wanted?.contains(store.storeDescription) ?? true {
            do {
                tokens[store.identity.identifier] = try store.lastHistoryNumber()
            } catch {
                return nil
            }
        }
        return tokens.isEmpty ? nil : PersistentHistoryToken(storeTokens: tokens)
    }
}
