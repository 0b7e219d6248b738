import Foundation
import SkerryCore
import Synchronization
import Testing

@testable import SkerryPostgres

/// A batch update reaches the other instances' change notifications as updates of the rows it
/// changed (the history's case is in BatchUpdateTests), and a value the server refuses as out of
/// range fails it with a typed error, writing nothing.
@Suite(.postgres) struct PostgresBatchUpdateChangesTests {
    static func stack(_ schema: String) throws -> PersistentStack {
        let stack = PersistentStack(name: "Instance", model: try PostgresChangePropagationTests.model())
        stack.persistentStoreDescriptions = [
            .postgres(try PostgresTestServer.require(), maximumConnections: 2, schema: schema, propagatesChanges: true)
        ]
        try stack.loadPersistentStores()
        return stack
    }

    @Test func anotherInstanceHearsOfTheRowsABatchUpdateChanged() throws {
        let schema = PostgresTestServer.newSchema()
        let writing = try Self.stack(schema)
        let listening = try Self.stack(schema)
        let heard = Mutex<[StoreChanges]>([])
        let observation = listening.addDidSaveObserver { event in
            guard event.isFromOtherProcess else { return }
            heard.withLock { $0.append(event.changes) }
        }
        defer { observation.cancel() }
        let context = writing.newBackgroundContext()
        let counters = try context.performAndWait {
            let counters = try [1, 2, 3].map { value in
                let counter = try context.insert(entityName: "Counter")
                try counter.setValue(Int64(value), forKey: "value")
                return counter
            }
            try context.save()
            return counters.map(\.objectID)
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 1 } })
        // The listening instance holds the counters.
        let reader = listening.newBackgroundContext()
        try reader.performAndWait { _ = try reader.fetch(FetchRequest(entityName: "Counter")) }
        try context.performAndWait { () throws in
            var request = BatchUpdateRequest(entityName: "Counter", predicate: AttributeKey("value") >= Int64(2))
            request.propertiesToUpdate = [
                "value": BatchUpdateExpression(forFunction: "multiply:by:", arguments: [BatchUpdateExpression(forKeyPath: "value"), 10])
            ]
            #expect(try context.execute(request).count == 2)
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 2 } })
        let updated = try #require(heard.withLock { $0.last })
        func names(_ ids: Set<ObjectID>) -> Set<String> { Set(ids.map { "\($0.entityName) \($0.key)" }) }
        #expect(names(updated.updated) == names([counters[1], counters[2]]))
        #expect(updated.inserted.isEmpty && updated.deleted.isEmpty)
        // A bigint overflow: the server refuses it (22003), nothing is written.
        context.performAndWait {
            var request = BatchUpdateRequest(entityName: "Counter")
            request.propertiesToUpdate = [
                "value": BatchUpdateExpression(
                    forFunction: "multiply:by:", arguments: [BatchUpdateExpression(forKeyPath: "value"), Int64.max])
            ]
            let error = expectError(.wrongValueType) { try context.execute(request) }
            #expect(error?.message.hasSuffix("Nothing was updated.") == true)
        }
        let values = try reader.performAndWait {
            reader.reset()
            return try reader.fetch(FetchRequest(entityName: "Counter", sortKeys: [SortKey("value")])).map {
                try $0.value(forKey: "value", as: Int64.self)
            }
        }
        #expect(values == [1, 20, 30])
    }
}
