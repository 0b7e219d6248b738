import Foundation
import Testing

@testable import SkerryCore

/// Saves the graph fixture: authors Herbert (books Dune, Messiah, portrait) and Gibson (book
/// Neuromancer); tags sf (all three books) and classic (Dune); shelf Main holding the three books
/// in the order Dune, Messiah, Neuromancer. Returns the objects' IDs by label.
private func savedGraph(_ stack: PersistentStack) throws -> [String: ObjectID] {
    let context = stack.newBackgroundContext()
    return try context.performAndWait {
        let herbert = try context.insertNamed("Author", "Herbert")
        let gibson = try context.insertNamed("Author", "Gibson")
        let dune = try context.insertNamed("Book", "Dune")
        let messiah = try context.insertNamed("Book", "Messiah")
        let neuromancer = try context.insertNamed("Book", "Neuromancer")
        let sf = try context.insertNamed("Tag", "sf")
        let classic = try context.insertNamed("Tag", "classic")
        let shelf = try context.insertNamed("Shelf", "Main")
        let portrait = try context.insertNamed("Portrait", "herbert.png")
        try herbert.setRelatedObjects([dune, messiah], forKey: "books")
        try gibson.setRelatedObjects([neuromancer], forKey: "books")
        try sf.setRelatedObjects([dune, messiah, neuromancer], forKey: "books")
        try classic.setRelatedObjects([dune], forKey: "books")
        try shelf.setRelatedObjects([dune, messiah, neuromancer], forKey: "items")
        try herbert.setRelatedObject(portrait, forKey: "portrait")
        try context.save()
        return Dictionary(
            uniqueKeysWithValues: [herbert, gibson, dune, messiah, neuromancer, sf, classic, shelf, portrait].map {
                ($0.label, $0.objectID)
            })
    }
}

/// Runs `body` in a fresh context of `stack`, which sees only what the store holds.
private func inFreshContext<T>(_ stack: PersistentStack, _ body: (ObjectContext) throws -> T) throws -> T {
    let context = stack.newBackgroundContext()
    return try context.performAndWait { try body(context) }
}

private func labels(_ objects: [EntityObject]) -> [String] { objects.map(\.label) }

/// The rows of a raw query on the store's file (nil for the other kinds).
private func raw(_ directory: TemporaryDirectory?, _ sql: String) throws -> [[String]]? {
    guard let directory else { return nil }
    return try rawSQL(directory.file("Test.sqlite"), sql)
}

@Suite struct BatchDeleteReferenceTests {
    @Test(arguments: StoreKind.allCases, [BatchDeleteRequest.ResultType.objectIDs, .count])
    func deletedBooksLeaveNoJoinRowsAndTheShelfKeepsItsOrder(kind: StoreKind, resultType: BatchDeleteRequest.ResultType) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        let ids = try savedGraph(stack)
        #expect(try raw(directory, "SELECT count(*) FROM \"_Book_tags\"") == [["4"]].optionalForFile(directory))
        var request = BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title") == "Messiah")
        request.resultType = resultType
        let result = try inFreshContext(stack) { try $0.execute(request) }
        #expect(result.count == 1)
        // The file holds no link of the deleted book any more (a raw read: reads of the store
        // would skip such rows anyway).
        #expect(
            try raw(directory, "SELECT count(*) FROM \"_Book_tags\" WHERE source = \(ids["Messiah"]!.key)")
                == [["0"]].optionalForFile(directory))
        #expect(try raw(directory, "SELECT count(*) FROM \"_Book_tags\"") == [["3"]].optionalForFile(directory))
        try inFreshContext(stack) { context in
            let sf = try context.existingObject(with: ids["sf"]!)
            #expect(Set(labels(try sf.relatedObjects(forKey: "books"))) == ["Dune", "Neuromancer"])
            // The ordered shelf keeps the order of the books that stay, and a book added later
            // goes at the end.
            let shelf = try context.existingObject(with: ids["Main"]!)
            #expect(labels(try shelf.relatedObjects(forKey: "items")) == ["Dune", "Neuromancer"])
            let added = try context.insertNamed("Book", "Count Zero")
            try shelf.addRelatedObject(added, forKey: "items")
            try context.save()
        }
        try inFreshContext(stack) { context in
            let shelf = try context.existingObject(with: ids["Main"]!)
            #expect(labels(try shelf.relatedObjects(forKey: "items")) == ["Dune", "Neuromancer", "Count Zero"])
            let herbert = try context.existingObject(with: ids["Herbert"]!)
            #expect(labels(try herbert.relatedObjects(forKey: "books")) == ["Dune"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletedTagsLeaveNoJoinRowsOnTheOtherSide(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        let ids = try savedGraph(stack)
        let result = try inFreshContext(stack) {
            try $0.execute(BatchDeleteRequest(entityName: "Tag", predicate: AttributeKey("label") == "sf"))
        }
        #expect(result.deletedObjectIDs == [ids["sf"]!])
        #expect(
            try raw(directory, "SELECT count(*) FROM \"_Book_tags\" WHERE target = \(ids["sf"]!.key)")
                == [["0"]].optionalForFile(directory))
        try inFreshContext(stack) { context in
            let dune = try context.existingObject(with: ids["Dune"]!)
            #expect(labels(try dune.relatedObjects(forKey: "tags")) == ["classic"])
            let messiah = try context.existingObject(with: ids["Messiah"]!)
            #expect(try messiah.relatedObjects(forKey: "tags").isEmpty)
            #expect(
                try context.count(
                    for: FetchRequest(entityName: "Book", predicate: RelationshipKey("tags").any(AttributeKey("label") == "sf"))) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func toOneRelationshipsToDeletedObjectsBecomeNilAndNoDeleteRuleApplies(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        let ids = try savedGraph(stack)
        try inFreshContext(stack) { context in
            // Author.books is a cascade relationship: a batch delete applies no delete rule (as
            // Core Data's), so Neuromancer stays, without an author.
            _ = try context.execute(BatchDeleteRequest(entityName: "Author", predicate: AttributeKey("name") == "Gibson"))
            // The shelf goes: its books stay, on no shelf.
            _ = try context.execute(BatchDeleteRequest(entityName: "Shelf"))
            // Author.portrait <-> Portrait.author is one-to-one: Author holds the key.
            _ = try context.execute(BatchDeleteRequest(entityName: "Portrait"))
        }
        #expect(
            try raw(directory, "SELECT title, author, shelf, \"_Shelf_items_order\" FROM \"Book\" ORDER BY title")
                == [
                    ["Dune", "\(ids["Herbert"]!.key)", "NULL", "NULL"],
                    ["Messiah", "\(ids["Herbert"]!.key)", "NULL", "NULL"],
                    ["Neuromancer", "NULL", "NULL", "NULL"],
                ].optionalForFile(directory))
        // Gibson is gone; Herbert no longer has a portrait.
        #expect(try raw(directory, "SELECT name, portrait FROM \"Author\"") == [["Herbert", "NULL"]].optionalForFile(directory))
        try inFreshContext(stack) { context in
            let neuromancer = try context.existingObject(with: ids["Neuromancer"]!)
            #expect(try neuromancer.relatedObject(forKey: "author") == nil)
            #expect(try neuromancer.relatedObject(forKey: "shelf") == nil)
            let dune = try context.existingObject(with: ids["Dune"]!)
            #expect(try dune.relatedObject(forKey: "author")?.label == "Herbert")
            #expect(try dune.relatedObject(forKey: "shelf") == nil)
            let herbert = try context.existingObject(with: ids["Herbert"]!)
            #expect(try herbert.relatedObject(forKey: "portrait") == nil)
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("author").isNil)) == 1)
            // The books save as usual afterwards.
            try neuromancer.setRelatedObject(herbert, forKey: "author")
            try context.save()
        }
        let books = try inFreshContext(stack) { context in
            try labels(context.existingObject(with: ids["Herbert"]!).relatedObjects(forKey: "books")).sorted()
        }
        #expect(books == ["Dune", "Messiah", "Neuromancer"])
    }

    @Test(arguments: StoreKind.allCases)
    func requiredToOneRelationshipsRefuseTheDeleteAndNothingChanges(kind: StoreKind) throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Owner", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("pets", destination: "Pet", inverse: "owner", toMany: true)]),
            EntityDescription(
                name: "Pet", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("owner", destination: "Owner", inverse: "pets", isOptional: false)]),
        ])
        let (stack, directory) = try makeStack(kind, model: model)
        _ = directory
        try inFreshContext(stack) { context in
            let ada = try context.insertNamed("Owner", "Ada")
            _ = try context.insertNamed("Owner", "Bob")
            let rex = try context.insertNamed("Pet", "Rex")
            try rex.setRelatedObject(ada, forKey: "owner")
            try context.save()
        }
        try inFreshContext(stack) { context in
            // Ada's pet would be left without its required owner: refused, nothing deleted.
            expectError(.relationshipViolation) { _ = try context.execute(BatchDeleteRequest(entityName: "Owner")) }
            var count = BatchDeleteRequest(entityName: "Owner")
            count.resultType = .count
            expectError(.relationshipViolation) { _ = try context.execute(count) }
            #expect(try context.count(for: FetchRequest(entityName: "Owner")) == 2)
            // An owner no pet needs can go.
            let bob = try context.execute(BatchDeleteRequest(entityName: "Owner", predicate: AttributeKey("name") == "Bob"))
            #expect(bob.count == 1)
            // Once the pets are gone, nothing that stays refers to Ada.
            #expect(try context.execute(BatchDeleteRequest(entityName: "Pet")).count == 1)
            #expect(try context.execute(BatchDeleteRequest(entityName: "Owner")).count == 1)
        }
    }
}

extension Array where Element == [String] {
    /// The rows a raw query on the store file must return; nil where there is no file.
    fileprivate func optionalForFile(_ directory: TemporaryDirectory?) -> [[String]]? { directory == nil ? nil : self }
}
