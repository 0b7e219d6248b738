import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Persistent history in a PostgreSQL store shared by several instances (each stack here has its
/// own pool of connections, as a process would): transaction numbers follow commit order, so an
/// instance that catches up after its last token sees every other instance's save once, in order.
/// The behaviour shared with the SQLite store runs in SkerryCoreTests' history suites, over
/// `StoreKind.postgres`.
@Suite(.postgres) struct PostgresPersistentHistoryTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Entry", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)])
    ])

    static func stack(_ schema: String, name: String) throws -> PersistentStack {
        let stack = PersistentStack(name: name, model: model)
        var description = try PostgresTestServer.description(schema: schema, maximumConnections: 2)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }

    /// Four writer instances save 25 times each at once, each save one entry, while a consumer
    /// instance fetches again and again after the last token it saw. Every fetch returns only
    /// numbers above those it saw before, and in the end the consumer has seen every save
    /// exactly once, in the order of the whole history.
    @Test func aConsumerFetchingAfterItsLastTokenWhileOthersSaveSeesEverySaveOnceInOrder() throws {
        let schema = PostgresTestServer.newSchema()
        let writers = 4, saves = 25
        let consumer = try Self.stack(schema, name: "Consumer")
        let stacks = try (0..<writers).map { try Self.stack(schema, name: "Writer\($0)") }
        let done = Locked(0)
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for (writer, stack) in stacks.enumerated() {
            DispatchQueue.global().async(group: group) {
                defer { done.update { $0 += 1 } }
                let context = stack.newBackgroundContext()
                context.transactionAuthor = "writer\(writer)"
                do {
                    try context.performAndWait {
                        for index in 0..<saves {
                            let entry = try context.insert(entityName: "Entry")
                            try entry.setValue(Int32(writer), forKey: "writer")
                            try entry.setValue(Int32(index), forKey: "index")
                            try context.save()
                        }
                    }
                } catch {
                    failures.append("writer \(writer): \(error)")
                }
            }
        }

        var token: PersistentHistoryToken?
        var seen: [PersistentHistoryTransaction] = []
        var fetches = 0
        // A guard against hanging (a writer that never finishes), not a measurement.
        let deadline = Date().addingTimeInterval(120)
        while true {
            // Read before fetching: once every writer was done, one more fetch sees all.
            let finished = done.value == writers
            let late = Date() > deadline
            let fresh = try consumer.viewContext.history(.fetchHistory(after: token))
            fetches += 1
            if let last = seen.last?.transactionNumber, let first = fresh.first?.transactionNumber {
                #expect(first > last, "fetch \(fetches) returned \(first) after \(last) was seen")
            }
            seen += fresh
            token = fresh.last?.token ?? token
            if finished { break }
            #expect(!late, "the writers had not finished after 120 s (\(done.value) of \(writers) done)")
            if late { return }
            Thread.sleep(forTimeInterval: 0.001)
        }
        group.wait()
        #expect(failures.value.isEmpty)

        #expect(seen.count == writers * saves)
        let numbers = seen.map(\.transactionNumber)
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        // Every save once: each (writer, index) entry inserted by exactly one transaction seen.
        let all = try consumer.viewContext.history(.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(all.map(\.transactionNumber) == numbers)
        let inserted = seen.flatMap { $0.changes ?? [] }.map(\.changedObjectID)
        #expect(Set(inserted).count == writers * saves)
        let count = try consumer.viewContext.performAndWait { try consumer.viewContext.count(for: FetchRequest(entityName: "Entry")) }
        #expect(count == writers * saves)
        // Each writer's saves, all of them.
        for writer in 0..<writers {
            let own = seen.filter { $0.author == "writer\(writer)" }
            #expect(own.count == saves)
        }
    }

    /// Two other processes (`SkerryPostgresPeer history`) and this one save at once; this
    /// process catches up on all of them by fetching after its last token, again and again:
    /// each save arrives once, in commit order, with the process that made it.
    @Test func anInstanceCatchesUpOnTheSavesOfOtherProcessesByToken() throws {
        let schema = PostgresTestServer.newSchema()
        let saves = 20
        let consumer = PersistentStack(name: "Consumer", model: try PostgresChangePropagationTests.model())
        var description = try PostgresTestServer.description(schema: schema, maximumConnections: 2)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        consumer.persistentStoreDescriptions = [description]
        try consumer.loadPersistentStores()
        let peers = try (0..<2).map { _ in
            try PostgresChangePropagationTests.Peer([try PostgresTestServer.require(), schema, "history", String(saves)])
        }
        let finished = Locked(false)
        let group = DispatchGroup()
        // This process saves too, as another author.
        DispatchQueue.global().async(group: group) {
            let context = consumer.newBackgroundContext()
            context.transactionAuthor = "local"
            do {
                try context.performAndWait {
                    for index in 0..<saves {
                        try context.insert(entityName: "Note").setValue("local \(index)", forKey: "text")
                        try context.save()
                    }
                }
            } catch {
                Issue.record("local save failed: \(error)")
            }
            finished.set(true)
        }
        var token: PersistentHistoryToken?
        var seen: [PersistentHistoryTransaction] = []
        // A guard against hanging, not a measurement.
        let deadline = Date().addingTimeInterval(120)
        while true {
            let done = finished.value && !peers.contains { $0.process.isRunning } || Date() > deadline
            let fresh = try consumer.viewContext.history(.fetchHistory(after: token))
            if let last = seen.last?.transactionNumber, let first = fresh.first?.transactionNumber { #expect(first > last) }
            seen += fresh
            token = fresh.last?.token ?? token
            if done { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        group.wait()
        for peer in peers {
            #expect(peer.nextLine() == "saved \(saves)")
            #expect(peer.finish() == 0)
        }
        #expect(seen.count == 3 * saves)
        #expect(seen.map(\.transactionNumber) == seen.map(\.transactionNumber).sorted())
        #expect(seen.filter { $0.author == "peer" }.count == 2 * saves)
        #expect(Set(seen.filter { $0.author == "peer" }.map(\.processID)) == Set(peers.map { String($0.process.processIdentifier) }))
        #expect(seen.filter { $0.author == "local" }.count == saves)
        #expect(try consumer.viewContext.history(.fetchHistory(after: nil as PersistentHistoryToken?)).count == 3 * saves)
    }

    /// The race a sequence alone loses, made to happen: a save over two stores takes its number
    /// in the store it records first, then stops before committing (its record in the second
    /// store waits for that store's history lock, which another session holds); meanwhile a
    /// second instance saves to the first store. Were the second numbered and committed first, a
    /// consumer fetching then would take its token past the first, and never see the first. The
    /// history lock makes the second wait for the first: the consumer sees both, in order.
    @Test func aSaveNumberedEarlierButCommittingLaterIsNeverSkippedByAConsumer() throws {
        let schemas = [PostgresTestServer.newSchema(), PostgresTestServer.newSchema()]
        let entities = ["Entry", "Other"]
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Entry", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)]),
            EntityDescription(
                name: "Other", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)]),
        ])
        // Every instance: Entry in one schema, Other in the other, both with history. The saves
        // wait for history locks until the test lets go; a loaded machine may take longer than
        // the default lock timeout (10 s) to get there, so they wait longer.
        func stack(_ name: String) throws -> PersistentStack {
            let stack = PersistentStack(name: name, model: model)
            stack.persistentStoreDescriptions = try zip(schemas, entities).map { schema, entity in
                var description = StoreDescription.postgres(
                    PostgresStoreOptions(
                        connectionString: try PostgresTestServer.require(), maximumConnections: 2, schema: schema,
                        historyLockTimeout: .seconds(120)))
                description.entityNames = [entity]
                description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
                return description
            }
            try stack.loadPersistentStores()
            return stack
        }
        let first = try stack("First"), second = try stack("Second"), consumer = try stack("Consumer")
        // A save records its stores in the order of their identifiers: `early` first.
        let identifiers = first.persistentStoreCoordinator.loadedStores.map(\.identity.identifier)
        let (early, late) = identifiers[0] < identifiers[1] ? (0, 1) : (1, 0)
        let token = try #require(consumer.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))

        // Another session holds the late store's history lock.
        let holder = try PostgresHistoryLockHolder.holding(schemas[late])
        let watcher = try PostgresTestServer.connect()
        let holderPID = try #require(try holder.scalarInt64("SELECT pg_backend_pid()"))
        let blockedBy = "SELECT pid FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))"
        let group = DispatchGroup()
        let failures = Locked<[String]>([])
        func save(_ stack: PersistentStack, _ writer: Int32, entities: [String]) {
            DispatchQueue.global().async(group: group) {
                let context = stack.newBackgroundContext()
                do {
                    try context.performAndWait {
                        for entity in entities {
                            let object = try context.insert(entityName: entity)
                            try object.setValue(writer, forKey: "writer")
                            try object.setValue(Int32(0), forKey: "index")
                        }
                        try context.save()
                    }
                } catch {
                    failures.append("writer \(writer): \(error)")
                }
            }
        }
        // The first save: numbered in the early store, then waits for the late store's lock.
        save(first, 1, entities: entities)
        var firstPID: Int64?
        // Guards against hanging, not measurements: a loaded machine may take seconds to get there.
        var deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            firstPID = try watcher.scalarInt64(blockedBy, [.int(holderPID)])
            if firstPID != nil { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(firstPID != nil, "the first save never waited for the late store's history lock")
        // The second save, to the early store only: waits for the first (history lock), or
        // commits at once (none).
        save(second, 2, entities: [entities[early]])
        let committed = "SELECT count(*) FROM \"\(schemas[early])\".\"_skerry_history_transactions\""
        deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try watcher.scalarInt64(PostgresHistoryLockHolder.waiting, [.string(schemas[early])]) ?? 0 > 0 { break }
            if try watcher.scalarInt64(committed) ?? 0 > 0 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let earlyStore = identifiers[early]
        let duringWait = try consumer.viewContext.history(.fetchHistory(after: token))
        try holder.execute("ROLLBACK")
        group.wait()
        #expect(failures.value.isEmpty)
        let after = try consumer.viewContext.history(.fetchHistory(after: duringWait.last?.token ?? token))
        let seen = (duringWait + after).filter { $0.storeID == earlyStore }.map(\.transactionNumber)
        // Both saves, each once, in increasing numbers: nothing numbered below a number seen came later.
        #expect(seen.count == 2)
        #expect(seen == seen.sorted())
        let all = try consumer.viewContext.history(.fetchHistory(after: token))
        #expect(all.filter { $0.storeID == earlyStore }.map(\.transactionNumber) == seen)
    }

    /// A token past the store's last committed transaction (the database was restored from an
    /// older dump since, here by deleting the newest transaction by hand) expires, as in SQLite.
    @Test func aTokenPastTheLastCommittedTransactionExpires() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema, name: "Restored")
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<2 {
                let entry = try context.insert(entityName: "Entry")
                try entry.setValue(Int32(0), forKey: "writer")
                try entry.setValue(Int32(index), forKey: "index")
                try context.save()
            }
        }
        let ahead = try #require(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let connection = try PostgresTestServer.connect()
        try connection.execute(
            "DELETE FROM \"\(schema)\".\"_skerry_history_transactions\" WHERE \"number\" = (SELECT max(\"number\") FROM \"\(schema)\".\"_skerry_history_transactions\")"
        )
        stack.viewContext.performAndWait {
            let error = expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: ahead)) }
            #expect(error?.message.contains("past its last transaction") == true)
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: nil as PersistentHistoryToken?)).count == 1)
    }

    /// A save that fails on a uniqueness constraint leaves the rows, the history and the current
    /// token as they were.
    @Test func aFailedSaveLeavesTheStoreAndItsHistoryAsTheyWere() throws {
        let schema = PostgresTestServer.newSchema()
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Entry", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)],
                uniquenessConstraints: [["writer", "index"]])
        ])
        let stack = PersistentStack(name: "Failing", model: model)
        var description = try PostgresTestServer.description(schema: schema, maximumConnections: 2)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let entry = try context.insert(entityName: "Entry")
            try entry.setValue(Int32(1), forKey: "writer")
            try entry.setValue(Int32(1), forKey: "index")
            try context.save()
        }
        let token = try #require(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try context.performAndWait {
            // Two new entries, one of them colliding with the saved one: nothing of the save is kept.
            for index in [2, 1] {
                let entry = try context.insert(entityName: "Entry")
                try entry.setValue(Int32(1), forKey: "writer")
                try entry.setValue(Int32(index), forKey: "index")
            }
            expectError(.constraintViolation) { try context.save() }
            context.rollback()
            #expect(try context.count(for: FetchRequest(entityName: "Entry")) == 1)
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).isEmpty)
        #expect(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == token)
        // The next save's transaction is the next one seen after the token.
        try context.performAndWait {
            let entry = try context.insert(entityName: "Entry")
            try entry.setValue(Int32(2), forKey: "writer")
            try entry.setValue(Int32(1), forKey: "index")
            try context.save()
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).count == 1)
    }

    /// A save over two stores whose second store finds a conflict: every store's statements run
    /// before any history is recorded, so the first store rolls back without having taken a
    /// number (the next save's is the one after the token). A failure after a number was taken
    /// is in `PostgresHistoryAcrossStoresTests`.
    @Test func aSaveFailingInItsSecondStoreRecordsNothingAndTakesNoNumber() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Entry", attributes: [AttributeDescription("writer", .integer32), AttributeDescription("index", .integer32)]),
            EntityDescription(name: "Mark", attributes: [AttributeDescription("code", .string)], uniquenessConstraints: [["code"]]),
        ])
        let stack = PersistentStack(name: "TwoStores", model: model)
        var a = try PostgresTestServer.description(schema: PostgresTestServer.newSchema(), maximumConnections: 2)
        a.entityNames = ["Entry"]
        a.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        var b = try PostgresTestServer.description(schema: PostgresTestServer.newSchema(), maximumConnections: 2)
        b.entityNames = ["Mark"]
        stack.persistentStoreDescriptions = [a, b]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        func insert(_ index: Int32, mark: String) throws {
            let entry = try context.insert(entityName: "Entry")
            try entry.setValue(Int32(0), forKey: "writer")
            try entry.setValue(index, forKey: "index")
            try context.insert(entityName: "Mark").setValue(mark, forKey: "code")
        }
        try context.performAndWait {
            try insert(1, mark: "one")
            try context.save()
        }
        let token = try #require(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try context.performAndWait {
            try insert(2, mark: "one") // the mark collides in the second store
            expectError(.constraintViolation) { try context.save() }
            context.rollback()
            #expect(try context.count(for: FetchRequest(entityName: "Entry")) == 1)
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).isEmpty)
        #expect(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == token)
        try context.performAndWait {
            try insert(3, mark: "three")
            try context.save()
        }
        let next = try stack.viewContext.history(.fetchHistory(after: token))
        #expect(next.count == 1)
        #expect(next.first?.changes?.count == 1)
        // The conflict was found before the first store took a number.
        let before = try #require(token.storeTokens.values.first)
        #expect(try #require(next.first?.transactionNumber) == before + 1)
    }

    /// A save that cannot get the history lock within `historyLockTimeout` (another session holds
    /// it, as a stalled client would) fails with a typed, retryable error: nothing is written, the
    /// context keeps its changes, and the same save succeeds once the lock is free.
    @Test func aSaveWaitingForTheHistoryLockLongerThanItsTimeoutFailsAndCanBeRetried() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = PersistentStack(name: "Waiting", model: Self.model)
        var description = StoreDescription.postgres(
            PostgresStoreOptions(
                connectionString: try PostgresTestServer.require(), maximumConnections: 2, schema: schema,
                historyLockTimeout: .milliseconds(200)))
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let token = try #require(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        // Another session holds the store's history lock in an open transaction, until told to
        // let go.
        let holder = PostgresHistoryLockHolder(schema)
        #expect(holder.failure.value == nil)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let entry = try context.insert(entityName: "Entry")
            try entry.setValue(Int32(1), forKey: "writer")
            try entry.setValue(Int32(1), forKey: "index")
            let error = expectError(.database) { try context.save() }
            #expect(error?.postgres?.sqlState == .lockNotAvailable)
            #expect(context.hasChanges && context.insertedObjects.count == 1)
        }
        holder.release()
        // Nothing of the failed save was written.
        let fresh = stack.newBackgroundContext()
        #expect(try fresh.performAndWait { try fresh.count(for: FetchRequest(entityName: "Entry")) } == 0)
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).isEmpty)
        // The same save, tried again once the lock is free.
        try context.performAndWait { try context.save() }
        #expect(try fresh.performAndWait { try fresh.count(for: FetchRequest(entityName: "Entry")) } == 1)
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).count == 1)
    }
}

extension ObjectContext {
    /// The transactions a history request returns, as Core Data code reads them.
    fileprivate func history(_ request: PersistentHistoryChangeRequest) throws -> [PersistentHistoryTransaction] {
        try performAndWait { try execute(request).result as? [PersistentHistoryTransaction] ?? [] }
    }
}
