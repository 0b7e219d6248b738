import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Schema changes of a PostgreSQL store: additive changes in place; renames, removals, type and
/// relationship changes and MigrationPlan steps carried in place too; all in one transaction that
/// leaves the schema as it was when any part fails; instances starting at once wait for the one
/// that creates or migrates the schema.
@Suite(.postgres) struct PostgresMigrationTests {
    static let version1 = book()

    /// A model of one entity, Book: a `title` string, then `attributes`.
    static func book(
        _ attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [], also others: [EntityDescription] = []
    ) -> ObjectModel {
        try! ObjectModel(
            entities: [
                EntityDescription(
                    name: "Book", attributes: [AttributeDescription("title", .string)] + attributes,
                    relationships: relationships, uniquenessConstraints: uniquenessConstraints)
            ] + others)
    }

    /// Book (`title`, then `attributes`) and one more entity, `other` (a `name`), related by
    /// `relationship` on Book's side and `inverse` on the other's.
    static func book(
        _ attributes: [AttributeDescription] = [], relatedBy relationship: RelationshipDescription, to other: String,
        inverse: RelationshipDescription
    ) -> ObjectModel {
        book(
            attributes, relationships: [relationship],
            also: [EntityDescription(name: other, attributes: [AttributeDescription("name", .string)], relationships: [inverse])])
    }

    /// Saves, in a store of `model` in `schema`, an object of `entity` named `name` whose to-many
    /// relationship `key` holds new books with `titles`, in that order. The books are inserted in
    /// alphabetical order, so that their keys follow their titles, not the relationship's order.
    static func link(_ name: String, of entity: String, to titles: [String], by key: String, _ model: ObjectModel, _ schema: String)
        throws
    {
        let context = try PostgresTestServer.stack(model, schema).newBackgroundContext()
        try context.performAndWait {
            let holder = try context.insert(entityName: entity)
            try holder.setValue(name, forKey: "name")
            var books: [String: EntityObject] = [:]
            for title in titles.sorted() {
                books[title] = try context.insert(entityName: "Book")
                try books[title]!.setValue(title, forKey: "title")
            }
            try holder.setRelatedObjects(titles.map { books[$0]! }, forKey: key)
            try context.save()
        }
    }

    /// The titles of the books in relationship `key` of the first object of `entity`, in the
    /// relationship's order (nil when there is no such object).
    static func titles(of entity: String, by key: String, in stack: PersistentStack) throws -> [String]? {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: entity)).first?.relatedObjects(forKey: key).map {
                try $0.value(forKey: "title", as: String.self)
            }
        }
    }

    /// The values of `key` of every object of `entity`, by the objects' `sortKey`.
    static func values(_ stack: PersistentStack, _ entity: String, _ key: String, sortedBy sortKey: String) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: entity, sortKeys: [SortKey(sortKey)])).map {
                try $0.value(forKey: key).map { "\($0)" } ?? "nil"
            }
        }
    }

    /// Saves books with these titles in a store of `version1`.
    static func fill(_ schema: String, _ titles: [String]) throws {
        let stack = try PostgresTestServer.stack(version1, schema)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for title in titles { try context.insert(entityName: "Book").setValue(title, forKey: "title") }
            try context.save()
        }
    }

    /// The columns of a table, as the server has them.
    static func columns(_ schema: String, _ table: String) throws -> Set<String> {
        let result = try PostgresTestServer.connect().query(
            "SELECT column_name::text FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
            [.string(schema), .string(table)])
        return Set((0..<result.rowCount).map { result.text($0, 0) })
    }

    @Test func additiveChangesMigrateInPlaceAndKeepEveryRow() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune", "Emma"])
        let version2 = Self.book(
            [
                AttributeDescription("year", .integer32, isOptional: true),
                AttributeDescription("pages", .integer32, defaultValue: Int32(7)),
            ],
            relatedBy: RelationshipDescription("author", destination: "Author", inverse: "books"), to: "Author",
            inverse: RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true))
        let stack = try PostgresTestServer.stack(version2, schema)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(try books.map { try $0.value(forKey: "title") as? String } == ["Dune", "Emma"])
            #expect(try books.map { try $0.value(forKey: "pages") as? Int32 } == [7, 7])
            #expect(try books.map { try $0.value(forKey: "year") as? Int32 } == [nil, nil])
            let author = try context.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            try books[0].setRelatedObject(author, forKey: "author")
            try context.save()
        }
        #expect(try Self.titles(of: "Author", by: "books", in: stack) == ["Dune"])
    }

    @Test func aMigrationThatFailsPartWayLeavesTheSchemaAsItWas() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune", "Dune"])
        // A new column, then a uniqueness constraint the rows break: the index fails after the
        // column was added, and the whole migration rolls back.
        let version2 = Self.book([AttributeDescription("year", .integer32, isOptional: true)], uniquenessConstraints: [["title"]])
        #expect(throws: SkerryError.self) { try PostgresTestServer.stack(version2, schema) }
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
        // The store still opens with its own model, rows intact.
        let stack = try PostgresTestServer.stack(Self.version1, schema)
        let context = stack.newBackgroundContext()
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 2)
    }

    @Test func anIncompatibleChangeIsATypedErrorAndChangesNothing() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune"])
        // Text to a number: only a plan step's transformRow can say how.
        let retyped = try ObjectModel(entities: [
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .integer32)])
        ])
        let error = try #require(throws: SkerryError.self) { try PostgresTestServer.stack(retyped, schema) }
        #expect(error.code == .modelMismatch)
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
    }

    @Test func aPlansCustomStepRunsInTheMigrationTransaction() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune", "Emma"])
        let version2 = Self.book([AttributeDescription("shout", .string, isOptional: true)])
        let plan = MigrationPlan(
            versions: [Self.version1, version2],
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { _, old, new in
                        if case .string(let title) = old["title"] { new["shout"] = .string(title.uppercased()) }
                    })
            ])
        let stack = try PostgresTestServer.stack(version2, schema, plan: plan)
        let shouts = try Self.values(stack, "Book", "shout", sortedBy: "title")
        #expect(shouts == ["DUNE", "EMMA"])
    }

    @Test func eachStepIsReportedAsAStackEvent() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune"])
        let version2 = Self.book([AttributeDescription("shout", .string, isOptional: true)])
        let version3 = Self.book([AttributeDescription("loud", .string, isOptional: true, renamingIdentifier: "shout")])
        let plan = MigrationPlan(
            versions: [Self.version1, version2],
            steps: [MigrationStep(from: 0, transformRow: { _, _, new in new["shout"] = .string("DUNE") })])
        let stack = PersistentStack(name: "Migrating", model: version3)
        stack.persistentStoreDescriptions = [try PostgresTestServer.description(schema: schema, plan: plan)]
        let steps = Mutex<[MigrationStepEvent]>([])
        let observation = stack.addEventObserver { event in
            if case .migrationStep(let step) = event { steps.withLock { $0.append(step) } }
        }
        try stack.loadPersistentStores()
        _ = observation
        // The plan's step (version 1 to 2), then the inferred rename to the current model.
        let reported = steps.withLock { $0 }
        #expect(reported.map(\.step) == [1, 2])
        #expect(reported.map(\.stepCount) == [2, 2])
        #expect(reported.map(\.summary) == ["version 1 to 2, custom step", "lightweight migration (inferred mapping)"])
        #expect(reported.map(\.fromVersionHash) == [Self.version1.versionHash, version2.versionHash])
        #expect(reported.map(\.toVersionHash) == [version2.versionHash, version3.versionHash])
        #expect(try Self.values(stack, "Book", "loud", sortedBy: "title") == ["DUNE"])
    }

    @Test func aFailingCustomStepRollsEveryChangeBack() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune", "Emma"])
        let version2 = Self.book(
            [AttributeDescription("shout", .string, isOptional: true)],
            also: [
                EntityDescription(name: "Shelf", attributes: [AttributeDescription("name", .string)])
            ])
        struct Refused: Error {}
        let plan = MigrationPlan(
            versions: [Self.version1, version2],
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { _, old, new in
                        guard old["title"] != .string("Emma") else { throw Refused() }
                        new["shout"] = .string("!")
                    })
            ])
        let error = try #require(throws: SkerryError.self) { try PostgresTestServer.stack(version2, schema, plan: plan) }
        #expect(error.code == .modelMismatch)
        #expect(error.underlyingError is Refused)
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
        #expect(try Self.columns(schema, "Shelf").isEmpty)
        #expect(try Self.values(PostgresTestServer.stack(Self.version1, schema), "Book", "title", sortedBy: "title") == ["Dune", "Emma"])
    }

    @Test func renamesRemovalsAndNumberTypeChangesCarryEveryRow() throws {
        let schema = PostgresTestServer.newSchema()
        let version1 = Self.book(
            [
                AttributeDescription("pages", .integer16, isOptional: true),
                AttributeDescription("rating", .double, isOptional: true),
                AttributeDescription("year", .integer32, isOptional: true),
            ],
            also: [EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)])])
        let old = try PostgresTestServer.stack(version1, schema)
        let context = old.newBackgroundContext()
        try context.performAndWait {
            for (title, pages, year) in [("Dune", 412, 1965), ("Emma", 474, nil)] as [(String, Int16, Int32?)] {
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setValue(4.5, forKey: "rating")
                try book.setValue(year, forKey: "year")
            }
            try context.insert(entityName: "Note").setValue("gone", forKey: "text")
            try context.save()
        }
        // Book becomes Volume (renaming identifier), title becomes name, pages widens to 64
        // bits, rating and Note go, year becomes required with a default.
        let version2 = try ObjectModel(entities: [
            EntityDescription(
                name: "Volume",
                attributes: [
                    AttributeDescription("name", .string, renamingIdentifier: "title"),
                    AttributeDescription("pages", .integer64, isOptional: true),
                    AttributeDescription("year", .integer32, defaultValue: Int32(1900)),
                ], renamingIdentifier: "Book")
        ])
        let stack = try PostgresTestServer.stack(version2, schema)
        #expect(try Self.values(stack, "Volume", "name", sortedBy: "name") == ["Dune", "Emma"])
        #expect(try Self.values(stack, "Volume", "pages", sortedBy: "name") == ["412", "474"])
        #expect(try Self.values(stack, "Volume", "year", sortedBy: "name") == ["1965", "1900"])
        #expect(try Self.columns(schema, "Volume") == ["_pk", "_version", "name", "pages", "year"])
        #expect(try Self.columns(schema, "Book").isEmpty)
        #expect(try Self.columns(schema, "Note").isEmpty)
        // New rows get keys after the old ones (the sequence moved with the table).
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            try writer.insert(entityName: "Volume").setValue("Hyperion", forKey: "name")
            try writer.save()
        }
        #expect(try Self.values(stack, "Volume", "name", sortedBy: "name") == ["Dune", "Emma", "Hyperion"])
    }

    @Test func valuesThatDoNotFitANewTypeFailTheMigrationAndChangeNothing() throws {
        let schema = PostgresTestServer.newSchema()
        let version1 = Self.book([AttributeDescription("sales", .integer64, isOptional: true)])
        let old = try PostgresTestServer.stack(version1, schema)
        let context = old.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(Int64(100_000), forKey: "sales")
            try context.save()
        }
        let narrowed = Self.book([AttributeDescription("sales", .integer16, isOptional: true)])
        let error = try #require(throws: SkerryError.self) { try PostgresTestServer.stack(narrowed, schema) }
        #expect(error.code == .migrationWouldLoseData)
        #expect(error.message.contains("100000"))
        // A required attribute without default, with rows lacking it: refused too.
        let required = Self.book([AttributeDescription("sales", .integer64), AttributeDescription("isbn", .string)])
        let missing = try #require(throws: SkerryError.self) { try PostgresTestServer.stack(required, schema) }
        #expect(missing.code == .modelMismatch)
        #expect(try Self.values(PostgresTestServer.stack(version1, schema), "Book", "sales", sortedBy: "title") == ["100000"])
    }

    @Test func relationshipChangesCarryEveryLinkOrFailSayingWhich() throws {
        let schema = PostgresTestServer.newSchema()
        // Version 1: a book has one author.
        let version1 = Self.book(
            relatedBy: RelationshipDescription("author", destination: "Author", inverse: "books"), to: "Author",
            inverse: RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true))
        try Self.link("Herbert", of: "Author", to: ["Dune", "Messiah"], by: "books", version1, schema)
        // Version 2: many-to-many (a join table instead of a foreign key).
        let version2 = Self.book(
            relatedBy: RelationshipDescription(
                "authors", destination: "Author", inverse: "books", toMany: true, renamingIdentifier: "author"),
            to: "Author", inverse: RelationshipDescription("books", destination: "Book", inverse: "authors", toMany: true))
        let stack = try PostgresTestServer.stack(version2, schema)
        #expect(try Self.titles(of: "Author", by: "books", in: stack)?.sorted() == ["Dune", "Messiah"])
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
        // Version 3: an author has one book: Herbert has two, which cannot be carried.
        let version3 = Self.book(
            relatedBy: RelationshipDescription("authors", destination: "Author", inverse: "book", toMany: true), to: "Author",
            inverse: RelationshipDescription("book", destination: "Book", inverse: "authors", renamingIdentifier: "books"))
        let error = try #require(throws: SkerryError.self) { try PostgresTestServer.stack(version3, schema) }
        #expect(error.code == .migrationWouldLoseData)
        let expected =
            "'Author.book' is to-one in the new model, but 1 object(s) of 'Author' hold several objects in it"
            + " (up to 2, 2 links in all)"
        #expect(error.message.contains(expected))
    }

    @Test func orderedRelationshipsKeepTheirOrderWhenTheirStorageChanges() throws {
        let schema = PostgresTestServer.newSchema()
        // Version 1: a book is on one shelf (the shelf's order in a column of Book).
        let version1 = Self.book(
            relatedBy: RelationshipDescription("shelf", destination: "Shelf", inverse: "items"), to: "Shelf",
            inverse: RelationshipDescription("items", destination: "Book", inverse: "shelf", toMany: true, ordered: true))
        try Self.link("Main", of: "Shelf", to: ["Ubik", "Dune", "Emma"], by: "items", version1, schema)
        // Version 2: a book can be on several shelves (a join table keeps the order).
        let version2 = Self.book(
            relatedBy: RelationshipDescription(
                "shelves", destination: "Shelf", inverse: "items", toMany: true, renamingIdentifier: "shelf"),
            to: "Shelf", inverse: RelationshipDescription("items", destination: "Book", inverse: "shelves", toMany: true, ordered: true))
        #expect(try Self.titles(of: "Shelf", by: "items", in: PostgresTestServer.stack(version2, schema)) == ["Ubik", "Dune", "Emma"])
    }

    @Test func swappedNamesAndAOneToOneWhoseSideChangesCarryEverything() throws {
        let schema = PostgresTestServer.newSchema()
        let person = { (name: String, attributes: [AttributeDescription], renaming: String?) in
            EntityDescription(
                name: name, attributes: attributes,
                relationships: [RelationshipDescription("card", destination: "Card", inverse: "owner")], renamingIdentifier: renaming)
        }
        let card = { (owner: String) in
            EntityDescription(
                name: "Card", attributes: [AttributeDescription("number", .integer32)],
                relationships: [RelationshipDescription("owner", destination: owner, inverse: "card")])
        }
        // Version 1: "Card.owner" sorts before "Person.card", so Card holds the key.
        let version1 = try ObjectModel(entities: [
            person("Person", [AttributeDescription("first", .string), AttributeDescription("last", .string)], nil), card("Person"),
        ])
        let old = try PostgresTestServer.stack(version1, schema)
        let context = old.newBackgroundContext()
        try context.performAndWait {
            let ada = try context.insert(entityName: "Person")
            try ada.setValue("Ada", forKey: "first")
            try ada.setValue("Lovelace", forKey: "last")
            let card = try context.insert(entityName: "Card")
            try card.setValue(Int32(7), forKey: "number")
            try card.setRelatedObject(ada, forKey: "owner")
            try context.save()
        }
        // Version 2: first and last swap names; Person becomes "Adult" ("Adult.card" <
        // "Card.owner": now Adult holds the key).
        let version2 = try ObjectModel(entities: [
            person(
                "Adult",
                [
                    AttributeDescription("last", .string, renamingIdentifier: "first"),
                    AttributeDescription("first", .string, renamingIdentifier: "last"),
                ], "Person"),
            card("Adult"),
        ])
        let stack = try PostgresTestServer.stack(version2, schema)
        #expect(try Self.values(stack, "Adult", "last", sortedBy: "last") == ["Ada"])
        #expect(try Self.values(stack, "Adult", "first", sortedBy: "last") == ["Lovelace"])
        #expect(try Self.columns(schema, "Adult").contains("card"))
        #expect(!(try Self.columns(schema, "Card").contains("owner")))
        let reader = stack.newBackgroundContext()
        let number = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Adult")).first?.relatedObject(forKey: "card")?.value(forKey: "number") as? Int32
        }
        #expect(number == 7)
    }

    /// A relationship that is its own inverse, renamed with its entity (a new table and a new join
    /// table): both directions of each link arrive, none twice, and unlinking from one side
    /// afterwards leaves neither (as on SQLite: LightweightMigrationTests).
    @Test func aSelfInverseManyToManyKeepsBothDirectionsOfEachLinkThroughRenames() throws {
        let schema = PostgresTestServer.newSchema()
        try Friendships.populate(PostgresTestServer.stack(Friendships.before, schema))
        let stack = try PostgresTestServer.stack(Friendships.after, schema)
        #expect(try Friendships.contacts(stack) == Friendships.populated)
        #expect(try PostgresTestServer.connect().scalarInt64("SELECT count(*) FROM \"\(schema)\".\"_Member_contacts\"") == 4)
        #expect(try Self.columns(schema, "Person").isEmpty)
        try Friendships.removeContact("Bob", of: "Ann", in: stack)
        #expect(
            try Friendships.contacts(PostgresTestServer.stack(Friendships.after, schema)) == [
                "Ann": ["Cy"], "Bob": [], "Cy": ["Ann"], "Dee": [],
            ])
    }

    @Test func aStepsFinishFillsANewEntity() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune", "Emma"])
        let version2 = Self.book(also: [EntityDescription(name: "Count", attributes: [AttributeDescription("books", .integer64)])])
        let plan = MigrationPlan(
            versions: [Self.version1, version2],
            steps: [
                MigrationStep(
                    from: 0,
                    finish: { migration in
                        let books = try migration.sourceRows(of: "Book")
                        _ = try migration.insert("Count", ["books": .int(Int64(books.count))])
                    })
            ])
        let stack = try PostgresTestServer.stack(version2, schema, plan: plan)
        #expect(try Self.values(stack, "Count", "books", sortedBy: "books") == ["2"])
    }

    @Test func instancesStartingAtOnceWaitForTheOneThatMigrates() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema, ["Dune"])
        let version2 = Self.book([AttributeDescription("year", .integer32, isOptional: true)])
        // Six instances load the new version at once: one migrates under the advisory lock, the
        // others wait for it and find the schema migrated; all open the same store.
        let outcomes = Mutex<[Result<String, SkerryError>]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            let outcome = Result { () throws(SkerryError) -> String in
                let stack = PersistentStack(name: "Instance", model: version2)
                stack.persistentStoreDescriptions = [
                    .postgres(PostgresTestServer.connectionString ?? "", maximumConnections: 1, schema: schema)
                ]
                try stack.loadPersistentStores()
                return (stack.coordinator.loadedStores.first?.identity.identifier) ?? ""
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let identifiers = try outcomes.withLock { $0 }.map { try $0.get() }
        #expect(identifiers.count == 6)
        #expect(Set(identifiers).count == 1)
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title", "year"])
    }
}
