import Foundation
import Testing

@testable import SkerryCore

/// What a batch delete records in the persistent history besides its deletes, in SQLite,
/// in-memory and PostgreSQL stores: the objects that stay and lost a deleted object, as a save's
/// clearing records them (one update per object, naming the relationships that lost it), so that
/// a consumer merging the history keeps no link to a deleted object. The rows whose foreign keys
/// it cleared are in `PersistentHistoryTests`; these lost a link kept in a join table.
@Suite struct BatchDeleteHistoryTests {
    /// The changes of the one transaction after `token`, as (entity name, label, type, properties).
    static func changes(
        _ stack: PersistentStack, after token: PersistentHistoryToken?, _ label: (ObjectID) -> String
    ) throws -> [String] {
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        try #require(transactions.count == 1)
        return (transactions[0].changes ?? []).map { change in
            "\(change.changeType) \(label(change.changedObjectID))"
                + (change.updatedProperties.map { " " + $0.sorted().joined(separator: ",") } ?? "")
        }.sorted()
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteRecordsTheObjectsThatLostAManyToManyLink(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack(model: GraphFixtures.model())
        let writer = stack.newBackgroundContext()
        let names = try writer.performAndWait {
            let dune = try writer.insertNamed("Book", "Dune"), emma = try writer.insertNamed("Book", "Emma")
            let classic = try writer.insertNamed("Tag", "classic"), scienceFiction = try writer.insertNamed("Tag", "sf")
            try dune.setRelatedObjects([classic, scienceFiction], forKey: "tags")
            try emma.setRelatedObjects([classic], forKey: "tags")
            try writer.save()
            return [dune.objectID: "Dune", emma.objectID: "Emma", classic.objectID: "classic", scienceFiction.objectID: "sf"]
        }
        let dune = try #require(names.first { $0.value == "Dune" }?.key)
        let label = { (id: ObjectID) in names[id] ?? "\(id)" }
        // A consumer holds Dune with its tags.
        let consumer = stack.newBackgroundContext()
        try consumer.performAndWait { () throws in
            #expect(try consumer.existingObject(with: dune).relatedObjects(forKey: "tags").count == 2)
        }

        // A tag goes: the books that had it lost it from their tags.
        var token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try writer.performAndWait {
            try writer.execute(BatchDeleteRequest(entityName: "Tag", predicate: AttributeKey("label") == "classic"))
        }
        #expect(try Self.changes(stack, after: token, label) == ["delete classic", "update Dune tags", "update Emma tags"])
        let transaction = try #require(try stack.viewContext.history(.fetchHistory(after: token)).first)
        try consumer.performAndWait { () throws in
            consumer.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            let tags = try consumer.existingObject(with: dune).relatedObjects(forKey: "tags")
            #expect(tags.map(\.objectID).map(label) == ["sf"])
        }

        // A book goes: the tag it had lost it from its books (the other side of the same table).
        token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try writer.performAndWait {
            try writer.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune"))
        }
        #expect(try Self.changes(stack, after: token, label) == ["delete Dune", "update sf books"])
    }

    /// The deleted rows' own foreign keys: the objects they name stay and lose the deleted ones
    /// from the inverse (an author's books, a shelf's ordered items, a portrait's author, a
    /// publisher's authors), recorded as the join table's case is, so that a consumer merging the
    /// history lists no deleted book among the author's.
    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteRecordsTheObjectsThatLostALinkHeldByTheDeletedRows(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack(model: GraphFixtures.model())
        let writer = stack.newBackgroundContext()
        let names = try writer.performAndWait {
            let herbert = try writer.insertNamed("Author", "Herbert"), lem = try writer.insertNamed("Author", "Lem")
            let dune = try writer.insertNamed("Book", "Dune"), messiah = try writer.insertNamed("Book", "Messiah")
            let solaris = try writer.insertNamed("Book", "Solaris")
            let shelf = try writer.insertNamed("Shelf", "top"), portrait = try writer.insertNamed("Portrait", "lem.png")
            let publisher = try writer.insertNamed("Publisher", "Ace")
            try herbert.setRelatedObjects([dune, messiah], forKey: "books")
            try lem.setRelatedObjects([solaris], forKey: "books")
            try shelf.setRelatedObjects([messiah, dune, solaris], forKey: "items")
            try lem.setRelatedObject(portrait, forKey: "portrait")
            try lem.setRelatedObject(publisher, forKey: "publisher")
            try writer.save()
            return Dictionary(
                uniqueKeysWithValues: [herbert, lem, dune, messiah, solaris, shelf, portrait, publisher].map { ($0.objectID, $0.label) })
        }
        let herbert = try #require(names.first { $0.value == "Herbert" }?.key)
        let label = { (id: ObjectID) in names[id] ?? "\(id)" }
        // A consumer holds Herbert with his books.
        let consumer = stack.newBackgroundContext()
        try consumer.performAndWait { () throws in
            #expect(try consumer.existingObject(with: herbert).relatedObjects(forKey: "books").count == 2)
        }

        // A book goes: its author lost it from his books, its shelf from its items.
        var token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try writer.performAndWait {
            try writer.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune"))
        }
        #expect(try Self.changes(stack, after: token, label) == ["delete Dune", "update Herbert books", "update top items"])
        let transaction = try #require(try stack.viewContext.history(.fetchHistory(after: token)).first)
        try consumer.performAndWait { () throws in
            consumer.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            let books = try consumer.existingObject(with: herbert).relatedObjects(forKey: "books")
            #expect(books.map(\.objectID).map(label) == ["Messiah"])
        }

        // An author goes: his portrait lost its author (the column is the author's), his publisher
        // an author; his book's column is cleared (recorded before this change too).
        token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try writer.performAndWait {
            try writer.execute(BatchDeleteRequest(entityName: "Author", predicate: AttributeKey("name") == "Lem"))
        }
        #expect(
            try Self.changes(stack, after: token, label) == [
                "delete Lem", "update Ace authors", "update Solaris author", "update lem.png author",
            ])

        // Both books of a shelf go in one batch delete: the shelf is recorded once, the deleted
        // books not at all.
        token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try writer.performAndWait { try writer.execute(BatchDeleteRequest(entityName: "Book")) }
        #expect(
            try Self.changes(stack, after: token, label) == [
                "delete Messiah", "delete Solaris", "update Herbert books", "update top items",
            ])
    }

    /// A deleted row's foreign key that names an object of a sub-entity (a cabinet, a kind of
    /// shelf, each in its own table) records the object under its own entity.
    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteRecordsTheObjectOfASubentityThatLostALink(_ kind: StoreKind) throws {
        let shelf = EntityDescription(
            name: "Shelf", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("books", destination: "Book", inverse: "shelf", toMany: true)])
        let cabinet = EntityDescription(
            name: "Cabinet", attributes: [AttributeDescription("doors", .integer16, isOptional: true)], superentity: shelf)
        let model = try ObjectModel(entities: [
            shelf, cabinet,
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("shelf", destination: "Shelf", inverse: "books")]),
        ])
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack(model: model)
        let writer = stack.newBackgroundContext()
        let names = try writer.performAndWait {
            let plain = try writer.insertNamed("Shelf", "plain"), glass = try writer.insertNamed("Cabinet", "glass")
            let dune = try writer.insertNamed("Book", "Dune"), emma = try writer.insertNamed("Book", "Emma")
            try dune.setRelatedObject(glass, forKey: "shelf")
            try emma.setRelatedObject(plain, forKey: "shelf")
            try writer.save()
            return Dictionary(uniqueKeysWithValues: [plain, glass, dune, emma].map { ($0.objectID, $0.label) })
        }
        let label = { (id: ObjectID) in names[id] ?? "\(id)" }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try writer.performAndWait { try writer.execute(BatchDeleteRequest(entityName: "Book")) }
        #expect(
            try Self.changes(stack, after: token, label) == [
                "delete Dune", "delete Emma", "update glass books", "update plain books",
            ])
    }

    /// A relationship that is its own inverse (friends): each link is seen from both ends, so a
    /// deleted person is lost by the people on either end of a link, except those deleted with it.
    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteRecordsThePeopleThatLostAFriendAndNotThoseDeletedWithIt(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack(model: Friendships.before)
        try Friendships.populate(stack) // Ann -> Bob, Cy -> Ann
        let context = stack.newBackgroundContext()
        let names = try context.performAndWait {
            Dictionary(
                uniqueKeysWithValues: try context.fetch(FetchRequest(entityName: "Person")).map {
                    ($0.objectID, try $0.value(forKey: "name") as? String ?? "")
                })
        }
        let label = { (id: ObjectID) in names[id] ?? "\(id)" }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try context.performAndWait {
            try context.execute(BatchDeleteRequest(entityName: "Person", predicate: AttributeKey("name").isIn(["Ann", "Bob"])))
        }
        #expect(try Self.changes(stack, after: token, label) == ["delete Ann", "delete Bob", "update Cy friends"])
    }
}
