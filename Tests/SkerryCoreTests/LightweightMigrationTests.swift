import Foundation
import Testing

@testable import SkerryCore

/// Lightweight migration as Core Data infers it, on the hand-written Shelf.xcdatamodeld (three
/// versions in Xcode's shape): renaming identifiers on an entity, attributes and relationships,
/// removed and added entities and attributes, a widened integer, an integer that became a
/// required decimal with a default, a to-one that became to-many, an inverse added to a
/// many-to-many relationship, and that relationship made one-to-many.
@Suite struct LightweightMigrationTests {
    static let package = FixtureFiles.url("Shelf.xcdatamodeld")

    static func version(_ number: Int) throws -> ObjectModel {
        try XcodeModel(contentsOf: package).load(version: "Shelf \(number)").model
    }

    static func open(_ url: URL, _ model: ObjectModel) throws -> PersistentStack {
        let stack = PersistentStack(name: "Shelf", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        return stack
    }

    /// A store of version 1: two authors, three books, two tags, a note, a reader. With
    /// `crowded`, Dune has both tags (which version 3, where a book has one tag, cannot hold).
    static func makeVersion1Store(_ url: URL, crowded: Bool = false) throws {
        let stack = try open(url, try version(1))
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            func insert(_ entity: String, _ values: [String: AttributeValue]) throws -> EntityObject {
                let object = try context.insert(entityName: entity)
                for (key, value) in values { try object.setValue(value, forKey: key) }
                return object
            }
            let herbert = try insert("Author", ["name": .string("Frank Herbert"), "born": .int(1920)])
            _ = try insert("Author", ["name": .string("Ursula K. Le Guin"), "born": .int(1929)])
            let sf = try insert("Tag", ["label": .string("sf")]), classic = try insert("Tag", ["label": .string("classic")])
            let dune = try insert("Book", ["title": .string("Dune"), "year": .int(1965), "rating": .double(4.5)])
            try dune.setRelatedObject(herbert, forKey: "author")
            try dune.setRelatedObjects(crowded ? [sf, classic] : [sf], forKey: "tags")
            let emma = try insert("Book", ["title": .string("Emma"), "year": .int(1815)])
            try emma.setRelatedObjects([classic], forKey: "tags")
            _ = try insert("Book", ["title": .string("Solaris")])
            _ = try insert("Note", ["text": .string("remember")])
            let reader = try insert("Reader", ["name": .string("Ann")])
            try reader.setRelatedObject(dune, forKey: "favorite")
            try context.save()
        }
    }

    /// Every book of a version 3 store, by title: year, pages, writer, tag, and the readers'
    /// favorites, the writers' works and the tags' books.
    static func version3Contents(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            var lines: [String] = []
            for book in try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])) {
                let writer = try book.relatedObject(forKey: "writer").map { try $0.value(forKey: "fullName", as: String.self) }
                let tag = try book.relatedObject(forKey: "tag").map { try $0.value(forKey: "label", as: String.self) }
                lines.append(
                    "\(try book.value(forKey: "title", as: String.self)) \(try book.value(forKey: "year", as: Decimal.self)) "
                        + "\(try book.value(forKey: "pages", as: Int16.self)) \(writer ?? "-") \(tag ?? "-")")
            }
            for writer in try context.fetch(FetchRequest(entityName: "Writer", sortKeys: [SortKey("fullName")])) {
                let works = try writer.relatedObjects(forKey: "works").map { try $0.value(forKey: "title", as: String.self) }
                lines.append(
                    "\(try writer.value(forKey: "fullName", as: String.self)) \(try writer.value(forKey: "born", as: Int64.self)) \(works)")
            }
            for tag in try context.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("label")])) {
                lines.append(
                    "\(try tag.value(forKey: "label", as: String.self)) \(try tag.relatedObjects(forKey: "books").map { try $0.value(forKey: "title", as: String.self) })"
                )
            }
            for reader in try context.fetch(FetchRequest(entityName: "Reader")) {
                lines.append(
                    "\(try reader.value(forKey: "name", as: String.self)) \(try reader.relatedObjects(forKey: "favorites").map { try $0.value(forKey: "title", as: String.self) })"
                )
            }
            return lines
        }
    }

    static let expectedVersion3 = [
        "Dune 1965 0 Frank Herbert sf", "Emma 1815 0 - classic", "Solaris 0 0 - -",
        "Frank Herbert 1920 [\"Dune\"]", "Ursula K. Le Guin 1929 []",
        "classic [\"Emma\"]", "sf [\"Dune\"]",
        "Ann [\"Dune\"]",
    ]

    @Test func aVersion1StoreOpensWithVersion3DirectlyWithEveryRowAndLink() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shelf.sqlite")
        try Self.makeVersion1Store(url)
        let stack = try Self.open(url, try Self.version(3)) // no plan: inferred, as Core Data does
        #expect(try Self.version3Contents(stack) == Self.expectedVersion3)
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.count(for: FetchRequest(entityName: "Shelf")) == 0)
            #expect(try context.fetch(FetchRequest(entityName: "Writer")).count == 2)
        }
        #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE name IN ('Note', 'Author', '_Book_tags')") == [["0"]])
    }

    @Test func aVersion1StoreOpensWithEachVersionInTurn() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shelf.sqlite")
        try Self.makeVersion1Store(url)
        do {
            let stack = try Self.open(url, try Self.version(2))
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let dune = try #require(
                    try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune")).first)
                #expect(try dune.value(forKey: "pages", as: Int16.self) == 0) // new, its default
                #expect(try dune.value(forKey: "summary", as: String?.self) == nil)
                #expect(try dune.relatedObject(forKey: "writer")?.value(forKey: "fullName", as: String.self) == "Frank Herbert")
                let sf = try #require(try dune.relatedObjects(forKey: "tags").first)
                #expect(try sf.relatedObjects(forKey: "books") == [dune]) // the inverse added
                let reader = try #require(try context.fetch(FetchRequest(entityName: "Reader")).first)
                #expect(try reader.relatedObjects(forKey: "favorites") == [dune]) // to-one became to-many
            }
        }
        #expect(try Self.version3Contents(try Self.open(url, try Self.version(3))) == Self.expectedVersion3)
    }

    @Test func dataThatDoesNotFitTheNewModelFailsAndLeavesTheStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shelf.sqlite")
        try Self.makeVersion1Store(url, crowded: true)
        let before = try Data(contentsOf: url)
        let error = expectError(.migrationWouldLoseData) { _ = try Self.open(url, try Self.version(3)) }
        #expect(error?.message.contains("'Book.tag'") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("1 object(s) of 'Book' hold several objects") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("The store was left as it was") == true)
        #expect(try Data(contentsOf: url) == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migrating"))
        // Version 2 can hold the data (a book has many tags there).
        let stack = try Self.open(url, try Self.version(2))
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune")).first)
            #expect(try dune.relatedObjects(forKey: "tags").count == 2)
        }
    }

    @Test func aToManyRelationshipThatBecomesToOneKeepsItsLinksWhenEachObjectHasOne() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Back.sqlite")
        func model(toMany: Bool) throws -> ObjectModel {
            try ObjectModel(entities: [
                EntityDescription(
                    name: "Reader", attributes: [AttributeDescription("name", .string)],
                    relationships: [
                        RelationshipDescription(
                            toMany ? "favorites" : "favorite", destination: "Book", toMany: toMany,
                            renamingIdentifier: toMany ? nil : "favorites")
                    ]),
                EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)]),
            ])
        }
        func withManyStore(_ body: (ObjectContext) throws -> Void) throws {
            let stack = try Self.open(url, try model(toMany: true))
            let context = stack.newBackgroundContext()
            try context.performAndWait { try body(context) }
        }
        try withManyStore { context in
            let books = try ["Dune", "Emma", "Ubik"].map { title in
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                return book
            }
            for (name, favorites) in [("Ann", [books[0]]), ("Bo", []), ("Cy", [books[1], books[2]])] {
                let reader = try context.insert(entityName: "Reader")
                try reader.setValue(name, forKey: "name")
                try reader.setRelatedObjects(favorites, forKey: "favorites")
            }
            try context.save()
        }
        let error = expectError(.migrationWouldLoseData) { _ = try Self.open(url, try model(toMany: false)) }
        #expect(error?.entityName == "Reader" && error?.key == "favorite")
        #expect(error?.message.contains("up to 2") == true, "\(error?.message ?? "")")
        // Once Cy keeps one favorite, the data fits.
        try withManyStore { context in
            let cy = try #require(try context.fetch(FetchRequest(entityName: "Reader", predicate: AttributeKey("name") == "Cy")).first)
            try cy.setRelatedObjects(Array(try cy.relatedObjects(forKey: "favorites").prefix(1)), forKey: "favorites")
            try context.save()
        }
        let migrated = try Self.open(url, try model(toMany: false))
        let check = migrated.newBackgroundContext()
        try check.performAndWait {
            let favorites = try check.fetch(FetchRequest(entityName: "Reader", sortKeys: [SortKey("name")])).map {
                try $0.relatedObject(forKey: "favorite").map { try $0.value(forKey: "title", as: String.self) } ?? "-"
            }
            #expect(favorites == ["Dune", "-", "Emma"])
        }
    }

    /// A relationship that is its own inverse, renamed with its entity: both directions of each
    /// link arrive, none twice, and unlinking from one side afterwards leaves neither (as on
    /// PostgreSQL: PostgresMigrationTests).
    @Test func aSelfInverseManyToManyKeepsBothDirectionsOfEachLinkThroughRenames() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Friends.sqlite")
        try Friendships.populate(Self.open(url, Friendships.before))
        let stack = try Self.open(url, Friendships.after)
        #expect(try Friendships.contacts(stack) == Friendships.populated)
        #expect(try rawSQL(url, #"SELECT count(*) FROM "_Member_contacts""#) == [["4"]])
        try Friendships.removeContact("Bob", of: "Ann", in: stack)
        #expect(try Friendships.contacts(Self.open(url, Friendships.after)) == ["Ann": ["Cy"], "Bob": [], "Cy": ["Ann"], "Dee": []])
    }
}
