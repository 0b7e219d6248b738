import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A batch insert into a PostgreSQL store shared by instances that propagate changes: the other
/// instance hears of the new objects as it hears of a save's (a did-save event from another
/// process listing them), and its contexts can read them.
@Suite(.postgres) struct PostgresBatchInsertPropagationTests {
    @Test func anotherInstanceHearsOfTheObjectsABatchInsertWrote() throws {
        let schema = PostgresTestServer.newSchema()
        let listening = try PostgresChangePropagationTests.stack(schema, propagatesChanges: true)
        let writing = try PostgresChangePropagationTests.stack(schema, propagatesChanges: true)
        let inserted = Mutex<Set<ObjectID>>([])
        let observation = listening.addDidSaveObserver { event in
            if event.isFromOtherProcess { inserted.withLock { $0.formUnion(event.changes.inserted) } }
        }
        defer { observation.cancel() }

        let context = writing.newBackgroundContext()
        let ids = try context.performAndWait {
            var request = BatchInsertRequest(entityName: "Note", objects: (0..<3).map { ["text": "note \($0)"] })
            request.resultType = .objectIDs
            return try context.execute(request).objectIDs
        }
        #expect(PostgresChangePropagationTests.eventually { inserted.withLock { $0.count == 3 } })
        #expect(inserted.withLock { Set($0.map(\.key)) } == Set(ids.map(\.key)))
        let reader = listening.newBackgroundContext()
        let texts = try reader.performAndWait {
            try inserted.withLock { Array($0) }.map { try reader.existingObject(with: $0).value(forKey: "text", as: String.self) }.sorted()
        }
        #expect(texts == ["note 0", "note 1", "note 2"])
    }
}
