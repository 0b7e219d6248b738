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
