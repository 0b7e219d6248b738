import Foundation
import SkerryCore
import Synchronization
import Testing

@testable import SkerryPostgres

/// A batch insert reaches the other instances' change notifications as inserts of its rows.
@Suite(.postgres) struct PostgresBatchInsertChangesTests {
    @Test func anotherInstanceHearsOfTheRowsABatchInsertWrote() throws {
        let schema = PostgresTestServer.newSchema()
        let writing = try PostgresBatchUpdateChangesTests.stack(schema)
        let listening = try PostgresBatchUpdateChangesTests.stack(schema)
        let heard = Mutex<[StoreChanges]>([])
        let observation = listening.addDidSaveObserver { event in
            guard event.isFromOtherProcess else { return }
            heard.withLock { $0.append(event.changes) }
        }
        defer { observation.cancel() }
        let context = writing.newBackgroundContext()
        let ids = try context.performAndWait {
            var request = BatchInsertRequest(entityName: "Counter", objects: [["value": 1], ["value": 2]])
            request.resultType = .objectIDs
            return try context.execute(request).objectIDs
        }
        #expect(ids.count == 2)
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 1 } })
        let inserted = try #require(heard.withLock { $0.last })
        #expect(Set(inserted.inserted.map(\.key)) == Set(ids.map(\.key)))
        let reader = listening.newBackgroundContext()
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Counter")) } == 2)
    }
}
