import Foundation
import SkerryCore
import Synchronization
import Testing

@testable import SkerryPostgres

/// The links a save clears because they point at an object it deletes through a relationship with
/// no stored inverse reach the other instances' change notifications as updates of the objects
/// that held them (the history's case is in DanglingLinkHistoryTests); so do the links a batch
/// delete clears (BatchDeleteHistoryTests for the history).
@Suite(.postgres) struct PostgresDanglingLinkChangesTests {
    static func stack(_ schema: String) throws -> PersistentStack {
        let stack = PersistentStack(name: "Instance", model: PostgresTransientInverseTests.model)
        stack.persistentStoreDescriptions = [
            .postgres(try PostgresTestServer.require(), maximumConnections: 2, schema: schema, propagatesChanges: true)
        ]
        try stack.loadPersistentStores()
        return stack
    }

    @Test func anotherInstanceHearsOfTheObjectsWhoseLinksADeleteCleared() throws {
        let schema = PostgresTestServer.newSchema()
        let writing = try Self.stack(schema)
        let listening = try Self.stack(schema)
        let heard = Mutex<StoreChanges>(StoreChanges())
        let observation = listening.addDidSaveObserver { event in
            guard event.isFromOtherProcess else { return }
            heard.withLock {
                $0.inserted.formUnion(event.changes.inserted)
                $0.updated.formUnion(event.changes.updated)
                $0.deleted.formUnion(event.changes.deleted)
            }
        }
        defer { observation.cancel() }
        let context = writing.newBackgroundContext()
        let (acme, ada, bob, badge) = try context.performAndWait {
            let company = try context.insert(entityName: "Company")
            try company.setValue("Acme", forKey: "name")
            let employees = try ["Ada", "Bob"].map { name in
                let employee = try context.insert(entityName: "Employee")
                try employee.setValue(name, forKey: "name")
                return employee
            }
            try company.setRelatedObjects(employees, forKey: "employees")
            let badge = try context.insert(entityName: "Badge")
            try badge.setValue("B-1", forKey: "code")
            for employee in employees { try employee.setRelatedObject(badge, forKey: "badge") }
            try context.save()
            return (company.objectID, employees[0].objectID, employees[1].objectID, badge.objectID)
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.inserted.count == 4 } })
        // A context that never saw the links (the transient sides read as empty) deletes Ada and the badge.
        let deleter = writing.newBackgroundContext()
        try deleter.performAndWait {
            try deleter.delete(try deleter.existingObject(with: ada))
            try deleter.delete(try deleter.existingObject(with: badge))
            try deleter.save()
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.deleted.count == 2 } })
        let changes = heard.withLock { $0 }
        // The other stack's IDs, by entity and key.
        func names(_ ids: Set<ObjectID>) -> Set<String> { Set(ids.map { "\($0.entityName) \($0.key)" }) }
        #expect(names(changes.deleted) == names([ada, badge]))
        // Acme lost Ada from its employees; Bob lost the badge (Ada's badge went with her).
        #expect(names(changes.updated) == names([acme, bob]))
    }

    @Test func anotherInstanceHearsOfTheObjectsWhoseLinksABatchDeleteCleared() throws {
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
        let (acme, ada, bob, badge) = try context.performAndWait {
            let company = try context.insert(entityName: "Company")
            try company.setValue("Acme", forKey: "name")
            let employees = try ["Ada", "Bob"].map { name in
                let employee = try context.insert(entityName: "Employee")
                try employee.setValue(name, forKey: "name")
                return employee
            }
            try company.setRelatedObjects(employees, forKey: "employees")
            let badge = try context.insert(entityName: "Badge")
            try badge.setValue("B-1", forKey: "code")
            for employee in employees { try employee.setRelatedObject(badge, forKey: "badge") }
            try context.save()
            return (company.objectID, employees[0].objectID, employees[1].objectID, badge.objectID)
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 1 } })
        func names(_ ids: Set<ObjectID>) -> Set<String> { Set(ids.map { "\($0.entityName) \($0.key)" }) }
        // The badge goes: both employees held it (a foreign key cleared).
        _ = try context.performAndWait { try context.execute(BatchDeleteRequest(entityName: "Badge")) }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 2 } })
        let badgeDeleted = try #require(heard.withLock { $0.last })
        #expect(names(badgeDeleted.deleted) == names([badge]))
        #expect(names(badgeDeleted.updated) == names([ada, bob]))
        // Ada goes: Acme lost her from its employees (a join-table row deleted).
        _ = try context.performAndWait {
            try context.execute(BatchDeleteRequest(entityName: "Employee", predicate: AttributeKey("name") == "Ada"))
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 3 } })
        let adaDeleted = try #require(heard.withLock { $0.last })
        #expect(names(adaDeleted.deleted) == names([ada]))
        #expect(names(adaDeleted.updated) == names([acme]))
    }

    /// The objects named by the deleted rows' own foreign keys lose them from the inverse: a
    /// batch delete of a book announces its author as updated (the author's books changed), as
    /// a join-table row's case does.
    @Test func anotherInstanceHearsOfTheAuthorWhoseBookABatchDeleteDeleted() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)]),
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
        ])
        let schema = PostgresTestServer.newSchema()
        func stack() throws -> PersistentStack {
            let stack = PersistentStack(name: "Instance", model: model)
            stack.persistentStoreDescriptions = [
                .postgres(try PostgresTestServer.require(), maximumConnections: 2, schema: schema, propagatesChanges: true)
            ]
            try stack.loadPersistentStores()
            return stack
        }
        let writing = try stack()
        let listening = try stack()
        let heard = Mutex<[StoreChanges]>([])
        let observation = listening.addDidSaveObserver { event in
            guard event.isFromOtherProcess else { return }
            heard.withLock { $0.append(event.changes) }
        }
        defer { observation.cancel() }
        let context = writing.newBackgroundContext()
        let (herbert, dune) = try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            let books = try ["Dune", "Messiah"].map { title in
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                return book
            }
            try author.setRelatedObjects(books, forKey: "books")
            try context.save()
            return (author.objectID, books[0].objectID)
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 1 } })
        func names(_ ids: Set<ObjectID>) -> Set<String> { Set(ids.map { "\($0.entityName) \($0.key)" }) }
        _ = try context.performAndWait {
            try context.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune"))
        }
        #expect(PostgresChangePropagationTests.eventually { heard.withLock { $0.count == 2 } })
        let duneDeleted = try #require(heard.withLock { $0.last })
        #expect(names(duneDeleted.deleted) == names([dune]))
        #expect(names(duneDeleted.updated) == names([herbert]))
    }
}
