import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// The round trips (times the client waits for the server) of a PostgreSQL batch delete and save,
/// counted on the store's one connection. A batch delete of one table, with nothing to clear or
/// record, is one round trip, as the `DELETE` alone would be: `BEGIN`, the history tracking check,
/// the `DELETE` and `COMMIT` go in one pipeline, and the check fails on the server when another
/// instance turned tracking on, so that the server skips the `DELETE`.
@Suite(.postgres) struct PostgresBatchDeleteRoundTripTests {
    static let model = PostgresPersistentHistoryTests.model

    /// A stack over `schema` with one connection (so that its counter is the store's), with or
    /// without `PersistentHistoryTrackingKey`.
    static func stack(_ schema: String, name: String, tracking: Bool) throws -> (PersistentStack, PostgresStore) {
        let stack = PersistentStack(name: name, model: model)
        var description = try PostgresTestServer.description(schema: schema, maximumConnections: 1)
        if tracking { description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey) }
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let store = try #require(stack.coordinator.loadedStores.first as? PostgresStore)
        // The counter read through `pool.withConnection` is the one of the connection the request
        // used because there is no other; a pool of several would hand back its last idle one,
        // which need not be the request's.
        try #require(store.pool.maximumConnections == 1)
        return (stack, store)
    }

    /// Saves entries 0..<count of `writer`.
    static func insert(_ stack: PersistentStack, writer: Int32, count: Int32) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<count {
                let entry = try context.insert(entityName: "Entry")
                try entry.setValue(writer, forKey: "writer")
                try entry.setValue(index, forKey: "index")
            }
            try context.save()
        }
    }

    /// Batch-deletes the entries of `writer` and returns what the request returned and the round
    /// trips it took.
    static func batchDelete(
        _ stack: PersistentStack, _ store: PostgresStore, writer: Int32, _ resultType: BatchDeleteRequest.ResultType
    ) throws -> (result: BatchDeleteResult, waits: Int) {
        let before = try store.pool.withConnection { $0.waits }
        let context = stack.newBackgroundContext()
        let result = try context.performAndWait {
            var request = BatchDeleteRequest(entityName: "Entry", predicate: AttributeKey("writer") == Int64(writer))
            request.resultType = resultType
            return try context.execute(request)
        }
        return (result, try store.pool.withConnection { $0.waits } - before)
    }

    static func count(_ stack: PersistentStack) throws -> Int {
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest(entityName: "Entry")) }
    }

    @Test func aBatchDeleteOfOneTableWithoutHistoryIsOneRoundTrip() throws {
        let (stack, store) = try Self.stack(PostgresTestServer.newSchema(), name: "Plain", tracking: false)
        try Self.insert(stack, writer: 1, count: 10)
        try Self.insert(stack, writer: 2, count: 10)
        // The first batch delete of each form on the connection prepares its `DELETE`, whose
        // parameter's type the server tells (a round trip, before the pipeline); `BEGIN`, the
        // check and `COMMIT`, without parameters, are prepared in the pipeline itself.
        #expect(try Self.batchDelete(stack, store, writer: 9, .count).waits == 2)
        #expect(try Self.batchDelete(stack, store, writer: 9, .objectIDs).waits == 2)

        let counted = try Self.batchDelete(stack, store, writer: 1, .count)
        #expect(counted.result.count == 10)
        #expect(counted.waits == 1)
        let listed = try Self.batchDelete(stack, store, writer: 2, .objectIDs)
        #expect(listed.result.deletedObjectIDs.count == 10)
        #expect(listed.waits == 1)
        #expect(try Self.count(stack) == 0)
    }

    /// A batch delete of every object (a `DELETE` without parameters) is one round trip even the
    /// first time on a connection: every statement is prepared in the pipeline that runs it.
    @Test func theFirstBatchDeleteOfEveryObjectOnAConnectionIsOneRoundTrip() throws {
        let (stack, store) = try Self.stack(PostgresTestServer.newSchema(), name: "Plain", tracking: false)
        try Self.insert(stack, writer: 1, count: 10)
        for round in 0..<2 {
            let before = try store.pool.withConnection { $0.waits }
            let context = stack.newBackgroundContext()
            let deleted = try context.performAndWait { try context.execute(BatchDeleteRequest(entityName: "Entry")).count }
            #expect(deleted == (round == 0 ? 10 : 0))
            #expect(try store.pool.withConnection { $0.waits } - before == 1)
        }
    }

    /// A batch delete whose rows others refer to (a foreign key to clear, join-table rows to
    /// delete), without history or change propagation: the deletes (with `BEGIN`), then the
    /// clearing with `COMMIT`. The first on a connection prepares every statement with
    /// parameters (the `DELETE` and both clearing statements) together first: one wait more.
    @Test func aBatchDeleteThatClearsReferencesIsTwoRoundTrips() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true),
                    RelationshipDescription("tags", destination: "Tag", inverse: "authors", toMany: true),
                ]),
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: [RelationshipDescription("authors", destination: "Author", inverse: "tags", toMany: true)]),
        ])
        let stack = try PostgresTestServer.stack(model, PostgresTestServer.newSchema(), maximumConnections: 1)
        let store = try #require(stack.coordinator.loadedStores.first as? PostgresStore)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let tag = try context.insert(entityName: "Tag")
            try tag.setValue("t", forKey: "label")
            for name in ["A1", "A2", "A3"] {
                let author = try context.insert(entityName: "Author")
                try author.setValue(name, forKey: "name")
                let book = try context.insert(entityName: "Book")
                try book.setValue("Book of \(name)", forKey: "title")
                try author.setRelatedObjects([book], forKey: "books")
                try author.setRelatedObjects([tag], forKey: "tags")
            }
            try context.save()
        }
        func batchDelete(_ name: String) throws -> (count: Int, waits: Int) {
            let before = try store.pool.withConnection { $0.waits }
            var request = BatchDeleteRequest(entityName: "Author", predicate: AttributeKey("name") == name)
            request.resultType = .count
            let deleting = stack.newBackgroundContext()
            let count = try deleting.performAndWait { try deleting.execute(request).count }
            return (count, try store.pool.withConnection { $0.waits } - before)
        }
        let first = try batchDelete("A1")
        #expect(first.count == 1)
        #expect(first.waits == 3)
        let second = try batchDelete("A2")
        #expect(second.count == 1)
        #expect(second.waits == 2)
        let reading = stack.newBackgroundContext()
        let (orphans, tagged) = try reading.performAndWait {
            let context = reading
            let books = try context.fetch(FetchRequest(entityName: "Book"))
            let orphans = try books.filter { try $0.relatedObject(forKey: "author") == nil }
                .map { try $0.value(forKey: "title", as: String.self) }
            let tag = try #require(try context.fetch(FetchRequest(entityName: "Tag")).first)
            return (orphans.sorted(), try tag.relatedObjects(forKey: "authors").map { try $0.value(forKey: "name", as: String.self) })
        }
        #expect(orphans == ["Book of A1", "Book of A2"])
        #expect(tagged == ["A3"])
    }

    /// Refused by the check on the server (another instance turned tracking on): the typed error
    /// of `refuseUntrackedWrite`, every row still there, and the connection rolled back and
    /// reused.
    @Test(arguments: [BatchDeleteRequest.ResultType.count, .objectIDs])
    func aBatchDeleteRefusedOnTheServerLeavesEveryRowAndTheConnectionUsable(_ resultType: BatchDeleteRequest.ResultType) throws {
        let schema = PostgresTestServer.newSchema()
        let (plain, store) = try Self.stack(schema, name: "Plain", tracking: false)
        try Self.insert(plain, writer: 1, count: 5)
        for warm in [false, true] {
            if warm { _ = try Self.batchDelete(plain, store, writer: 9, resultType) } // statements prepared
            let tracking = try Self.stack(schema, name: "Tracking", tracking: true).0
            let context = plain.newBackgroundContext()
            let error = expectError(.storeIsReadOnly) {
                try context.performAndWait {
                    var request = BatchDeleteRequest(entityName: "Entry", predicate: AttributeKey("writer") == Int64(1))
                    request.resultType = resultType
                    _ = try context.execute(request)
                }
            }
            #expect(error?.message == PersistentHistoryMetadata.untrackedWriteRefusal(store: store.storeDescription).message)
            #expect(try store.pool.withConnection { !$0.isInTransaction })
            #expect(try Self.count(plain) == 5)
            #expect(try Self.count(tracking) == 5)
            // Tracking off again for the next round: all history deleted, opened without the option.
            _ = try tracking.viewContext.performAndWait { try tracking.viewContext.execute(.deleteHistory(before: .distantFuture)) }
            _ = try Self.stack(schema, name: "Off", tracking: false)
        }
    }

    /// A batch delete whose own condition fails with the same SQLSTATE as the tracking check
    /// (22P02, a text cast to an integer) is the database's error, not a refusal of a store
    /// without history: only the check's own statement is read as one. Every row is still there.
    @Test func aBatchDeleteFailingWithTheChecksSQLStateIsNotReadAsARefusal() throws {
        let (stack, store) = try Self.stack(PostgresTestServer.newSchema(), name: "Plain", tracking: false)
        try Self.insert(stack, writer: 1, count: 5)
        let context = stack.newBackgroundContext()
        var caught: (any Error)?
        do {
            try context.performAndWait {
                _ = try context.execute(
                    BatchDeleteRequest(entityName: "Entry", predicate: .sql("\"writer\" = CAST(? AS integer)", [.string("one")])))
            }
        } catch {
            caught = error
        }
        let error = SkerryError.converting(try #require(caught))
        #expect(error.code == .database, "\(error)")
        #expect((error.underlyingError as? PostgresError)?.sqlState == .invalidTextRepresentation, "\(error)")
        #expect(try store.pool.withConnection { !$0.isInTransaction })
        #expect(try Self.count(stack) == 5)
    }

    /// With history, the deletes (with `BEGIN`) are one round trip and the record (with `COMMIT`)
    /// another.
    @Test func aBatchDeleteOfATrackingStoreIsTwoRoundTrips() throws {
        let (stack, store) = try Self.stack(PostgresTestServer.newSchema(), name: "Tracking", tracking: true)
        try Self.insert(stack, writer: 1, count: 3)
        try Self.insert(stack, writer: 9, count: 3)
        _ = try Self.batchDelete(stack, store, writer: 9, .count) // prepares the statements
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)
        let deleted = try Self.batchDelete(stack, store, writer: 1, .count)
        #expect(deleted.result.count == 3)
        #expect(deleted.waits == 2)
        let history = try stack.viewContext.performAndWait {
            try stack.viewContext.execute(.fetchHistory(after: token)).result as? [PersistentHistoryTransaction] ?? []
        }
        #expect(history.count == 1)
        #expect(history.first?.changes?.map { $0.changeType } == [.delete, .delete, .delete])
    }

    /// A save that updates rows: one pipeline (`BEGIN`, the tracking check's two statements and
    /// the updates, answered with its synchronization in one wait), then `COMMIT`. The first such
    /// save on the connection prepares its `UPDATE` in the middle of the pipeline: one wait more.
    @Test func anUpdateSaveIsTwoRoundTrips() throws {
        let (stack, store) = try Self.stack(PostgresTestServer.newSchema(), name: "Plain", tracking: false)
        try Self.insert(stack, writer: 1, count: 3)
        let context = stack.newBackgroundContext()
        func update(_ index: Int32) throws -> Int {
            try context.performAndWait {
                for entry in try context.fetch(FetchRequest(entityName: "Entry")) { try entry.setValue(index, forKey: "index") }
                let before = try store.pool.withConnection { $0.waits }
                try context.save()
                return try store.pool.withConnection { $0.waits } - before
            }
        }
        #expect(try update(10) == 3) // prepares the update
        #expect(try update(20) == 2)
        #expect(try update(30) == 2)
        let stored = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Entry")).map { try $0.value(forKey: "index", as: Int32.self) }
        }
        #expect(stored == [30, 30, 30])
    }

    /// What a batch delete of every object and an update save send, statement by statement (the
    /// statement trace): their transaction's statements and nothing else (no check of the pooled
    /// connection, no read of the store's state, no savepoint).
    @Test func aBatchDeleteAndAnUpdateSaveSendOnlyTheirTransactionsStatements() throws {
        let (stack, _) = try Self.stack(PostgresTestServer.newSchema(), name: "Plain", tracking: false)
        try Self.insert(stack, writer: 1, count: 3)
        let statements = Locked<[String]>([])
        let observation = stack.addEventObserver(statements: .all) { event in
            if case .statement(let trace) = event { statements.update { $0.append(trace.sql) } }
        }
        defer { observation.cancel() }
        let head = [PostgresConnection.beginWriteSQL, PostgresStore.sharedHistoryLockSQL, PostgresStore.trackingCheckSQL]
        let context = stack.newBackgroundContext()
        let sent = try context.performAndWait {
            for entry in try context.fetch(FetchRequest(entityName: "Entry")) { try entry.setValue(Int32(5), forKey: "index") }
            statements.set([])
            try context.save()
            return statements.value
        }
        #expect(Array(sent.prefix(3)) == head)
        #expect(sent.dropFirst(3).dropLast().map { $0.hasPrefix("UPDATE \"Entry\" SET") } == [true, true, true])
        #expect(sent.last == "COMMIT")

        statements.set([])
        let deleted = try context.performAndWait {
            var request = BatchDeleteRequest(entityName: "Entry")
            request.resultType = .count // as the benchmark's: no keys returned
            return try context.execute(request).count
        }
        #expect(deleted == 3)
        #expect(statements.value == head + ["DELETE FROM \"Entry\"", "COMMIT"])
    }

    /// A save that inserts rows: the keys (one statement, outside the transaction: a sequence is
    /// never rolled back), one pipeline (`BEGIN`, the check, the inserts), then `COMMIT`. The
    /// first on a connection prepares the keys' statement and the insert together first.
    @Test func anInsertSaveIsThreeRoundTrips() throws {
        let (stack, store) = try Self.stack(PostgresTestServer.newSchema(), name: "Plain", tracking: false)
        func insert(_ writer: Int32) throws -> Int {
            let before = try store.pool.withConnection { $0.waits }
            try Self.insert(stack, writer: writer, count: 3)
            return try store.pool.withConnection { $0.waits } - before
        }
        #expect(try insert(1) == 4) // prepares the key allocation and the insert
        #expect(try insert(2) == 3)
        #expect(try insert(3) == 3)
        #expect(try Self.count(stack) == 9)
    }

    /// A save refused by the tracking check (another instance turned tracking on), its `BEGIN`
    /// in the pipeline with it: the typed error, nothing written, the context's changes kept, and
    /// the connection out of the transaction and reused.
    @Test func aSaveRefusedOnTheServerLeavesTheStoreAsItWas() throws {
        let schema = PostgresTestServer.newSchema()
        let (plain, store) = try Self.stack(schema, name: "Plain", tracking: false)
        try Self.insert(plain, writer: 1, count: 2)
        let tracking = try Self.stack(schema, name: "Tracking", tracking: true).0
        let context = plain.newBackgroundContext()
        let error = expectError(.storeIsReadOnly) {
            try context.performAndWait {
                for entry in try context.fetch(FetchRequest(entityName: "Entry")) { try entry.setValue(Int32(7), forKey: "index") }
                let entry = try context.insert(entityName: "Entry")
                try entry.setValue(Int32(2), forKey: "writer")
                try entry.setValue(Int32(0), forKey: "index")
                try context.save()
            }
        }
        #expect(error?.message == PersistentHistoryMetadata.untrackedWriteRefusal(store: store.storeDescription).message)
        #expect(context.performAndWait { context.hasChanges })
        #expect(try store.pool.withConnection { !$0.isInTransaction })
        #expect(try Self.count(plain) == 2)
        let indexes = try tracking.viewContext.performAndWait {
            try tracking.viewContext.fetch(FetchRequest(entityName: "Entry")).map { try $0.value(forKey: "index", as: Int32.self) }
        }
        #expect(indexes.sorted() == [0, 1])
    }
}
