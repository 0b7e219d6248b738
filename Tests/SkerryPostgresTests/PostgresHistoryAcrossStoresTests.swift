import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Saves spanning two PostgreSQL stores that both record persistent history, by instances that
/// loaded the stores in opposite orders. Each store's history lock is taken after the statements
/// of every store of the save, in the stores' identifiers' order: no instance holds one store's
/// lock while it waits in the other store for something the other instance holds.
@Suite(.postgres) struct PostgresHistoryAcrossStoresTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Entry", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)]),
        EntityDescription(
            name: "Mark", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)]),
    ])

    /// A stack with a store per `(schema, entity)`, loaded in that order, both recording history.
    static func stack(_ name: String, _ stores: [(schema: String, entity: String)]) throws -> PersistentStack {
        let stack = PersistentStack(name: name, model: model)
        stack.persistentStoreDescriptions = try stores.map { store in
            var description = try PostgresTestServer.description(schema: store.schema, maximumConnections: 2)
            description.entityNames = [store.entity]
            description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
            return description
        }
        try stack.loadPersistentStores()
        return stack
    }

    /// Four instances (two with stores A then B, two with B then A) save an Entry (store A) and
    /// a Mark (store B) together 50 times each, at once, while a consumer fetches after its last token again
    /// and again. Every save succeeds (before, the instances could each hold one store's history
    /// lock and wait for the other's, a wait the server cannot see as a deadlock, until the lock
    /// timeout failed one of them), and the consumer sees each save once in each store, in the
    /// order of each store's numbers.
    @Test func instancesThatLoadedTheStoresInOppositeOrdersSaveToBothAtOnceAndEverySaveIsSeenOnce() throws {
        let a = PostgresTestServer.newSchema(), b = PostgresTestServer.newSchema()
        // Two instances of each order.
        let writers = try (0..<4).map { index in
            index % 2 == 0
                ? try Self.stack("AB\(index)", [(a, "Entry"), (b, "Mark")]) : try Self.stack("BA\(index)", [(b, "Mark"), (a, "Entry")])
        }
        let consumer = try Self.stack("Consumer", [(a, "Entry"), (b, "Mark")])
        let token = try #require(consumer.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let saves = 50
        let done = Locked(0)
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        // A thread per writer (the global queue may run them one after another), all starting at once.
        let start = DispatchSemaphore(value: 0)
        for (writer, stack) in writers.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer {
                    done.update { $0 += 1 }
                    group.leave()
                }
                start.wait()
                let context = stack.newBackgroundContext()
                context.transactionAuthor = "writer\(writer)"
                do {
                    try context.performAndWait {
                        for index in 0..<saves {
                            for entity in ["Entry", "Mark"] {
                                let object = try context.insert(entityName: entity)
                                try object.setValue(Int32(writer), forKey: "writer")
                                try object.setValue(Int32(index), forKey: "index")
                            }
                            try context.save()
                        }
                    }
                } catch {
                    failures.append("writer \(writer): \(error)")
                }
            }
        }

        for _ in writers { start.signal() }
        var last = token
        var seen: [PersistentHistoryTransaction] = []
        // A guard against hanging (a writer that never finishes), not a measurement.
        let deadline = Date().addingTimeInterval(120)
        while true {
            // Read before fetching: once every writer was done, one more fetch sees all.
            let finished = done.value == writers.count
            let late = Date() > deadline
            let fresh = try consumer.viewContext.history(.fetchHistory(after: last))
            for transaction in fresh {
                // Each store's numbers only grow, fetch after fetch.
                if let before = seen.last(where: { $0.storeID == transaction.storeID }) {
                    #expect(transaction.transactionNumber > before.transactionNumber)
                }
                seen.append(transaction)
            }
            last = fresh.last?.token ?? last
            if finished { break }
            #expect(!late, "the writers had not finished after 120 s (\(done.value) of \(writers.count) done)")
            if late { return }
            Thread.sleep(forTimeInterval: 0.001)
        }
        group.wait()
        #expect(failures.value.isEmpty)

        // Each save is one transaction in each store, holding its one insert there.
        let stores = Dictionary(grouping: seen, by: \.storeID)
        #expect(stores.count == 2)
        for (_, transactions) in stores {
            #expect(transactions.count == writers.count * saves)
            let numbers = transactions.map(\.transactionNumber)
            #expect(Set(numbers).count == numbers.count)
            #expect(transactions.allSatisfy { $0.changes?.count == 1 })
            for writer in writers.indices {
                #expect(transactions.filter { $0.author == "writer\(writer)" }.count == saves)
            }
        }
        let all = try consumer.viewContext.history(.fetchHistory(after: token))
        #expect(all.count == seen.count)
        let counts = try consumer.viewContext.performAndWait {
            try ["Entry", "Mark"].map { try consumer.viewContext.count(for: FetchRequest(entityName: $0)) }
        }
        #expect(counts == [writers.count * saves, writers.count * saves])
    }

    /// A save over two stores that fails after its first store recorded its transaction (a
    /// number taken, the lock held): its record in the second store times out waiting for that
    /// store's history lock, which another session holds. Nothing of the save is kept in either
    /// store, the first store's number is never seen (the current token stays), the context
    /// keeps its changes, and the same save succeeds once the lock is free, numbered after a gap.
    @Test func aSaveFailingAfterItsFirstStoreTookANumberRecordsNothing() throws {
        let schemas = [PostgresTestServer.newSchema(), PostgresTestServer.newSchema()]
        let stack = PersistentStack(name: "TimingOut", model: Self.model)
        stack.persistentStoreDescriptions = try zip(schemas, ["Entry", "Mark"]).map { schema, entity in
            var description = StoreDescription.postgres(
                PostgresStoreOptions(
                    connectionString: try PostgresTestServer.require(), maximumConnections: 2, schema: schema,
                    historyLockTimeout: .milliseconds(200)))
            description.entityNames = [entity]
            description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
            return description
        }
        try stack.loadPersistentStores()
        // A save records its stores in the order of their identifiers: `early` first.
        let identifiers = stack.persistentStoreCoordinator.loadedStores.map(\.identity.identifier)
        let (early, late) = identifiers[0] < identifiers[1] ? (0, 1) : (1, 0)
        let context = stack.newBackgroundContext()
        func insertBoth(_ index: Int32) throws {
            for entity in ["Entry", "Mark"] {
                let object = try context.insert(entityName: entity)
                try object.setValue(Int32(0), forKey: "writer")
                try object.setValue(index, forKey: "index")
            }
        }
        try context.performAndWait {
            try insertBoth(0)
            try context.save()
        }
        let token = try #require(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let before = try #require(token.storeTokens[identifiers[early]])

        let holder = try PostgresHistoryLockHolder.holding(schemas[late])
        try context.performAndWait {
            try insertBoth(1)
            let error = expectError(.database) { try context.save() }
            #expect(error?.postgres?.sqlState == .lockNotAvailable)
            #expect(context.insertedObjects.count == 2)
        }
        try holder.execute("ROLLBACK")
        let fresh = stack.newBackgroundContext()
        let counts = try fresh.performAndWait { try ["Entry", "Mark"].map { try fresh.count(for: FetchRequest(entityName: $0)) } }
        #expect(counts == [1, 1])
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).isEmpty)
        #expect(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == token)

        try context.performAndWait { try context.save() }
        let next = try stack.viewContext.history(.fetchHistory(after: token))
        #expect(next.count == 2)
        #expect(next.allSatisfy { $0.changes?.count == 1 })
        // The failed save had taken a number in the early store before it rolled back.
        let number = try #require(next.first { $0.storeID == identifiers[early] }?.transactionNumber)
        #expect(number > before + 1)
    }
}

extension ObjectContext {
    /// The transactions a history request returns, as Core Data code reads them.
    fileprivate func history(_ request: PersistentHistoryChangeRequest) throws -> [PersistentHistoryTransaction] {
        try performAndWait { try execute(request).result as? [PersistentHistoryTransaction] ?? [] }
    }
}
