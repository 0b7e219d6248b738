import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Migrations of PostgreSQL stores with entity hierarchies, made in place in the load's one
/// transaction with the SQLite store's semantics: entities that join a hierarchy keep their rows
/// and links, keys that would clash are renumbered (links follow them), the hierarchy's key
/// sequence and uniqueness triggers are made again; a failing step leaves schema, rows,
/// sequences and triggers as they were; instances loading at once wait for the one that
/// migrates. (The SQLite store's hierarchy migration tests run here too: HierarchyMigrationTests.)
@Suite(.postgres) struct PostgresHierarchyMigrationTests {
    /// Books and films on shelves, and people who like films. `hierarchy`: Book and Film are
    /// sub-entities of an abstract Item whose `code` is unique across both (and a shelf keeps
    /// one ordered list of items, which took over its list of books); otherwise each stands
    /// alone, with its own key sequence. `labelled`: Item has a `label` too, and Book a
    /// sub-entity Ebook. `widePages`: a book's pages are a 64-bit integer. `notes`: a shelf has
    /// optional text attributes of these names.
    static func model(hierarchy: Bool, labelled: Bool = false, widePages: Bool = false, notes: [String] = []) throws -> ObjectModel {
        let shelfAttributes = [AttributeDescription("name", .string)] + notes.map { AttributeDescription($0, .string, isOptional: true) }
        let code = AttributeDescription("code", .string, isOptional: true)
        let shelf = { (inverse: String) in RelationshipDescription("shelf", destination: "Shelf", inverse: inverse) }
        let likedBy = RelationshipDescription("likedBy", destination: "Person", inverse: "likes", toMany: true)
        let person = EntityDescription(
            name: "Person", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("likes", destination: "Film", inverse: "likedBy", toMany: true)])
        guard hierarchy else {
            return try ObjectModel(entities: [
                EntityDescription(
                    name: "Book", attributes: [code, AttributeDescription("pages", .integer32, isOptional: true)],
                    relationships: [shelf("books")]),
                EntityDescription(
                    name: "Film", attributes: [code, AttributeDescription("minutes", .integer32, isOptional: true)],
                    relationships: [shelf("films"), likedBy]),
                EntityDescription(
                    name: "Shelf", attributes: shelfAttributes,
                    relationships: [
                        RelationshipDescription("books", destination: "Book", inverse: "shelf", toMany: true, ordered: true),
                        RelationshipDescription("films", destination: "Film", inverse: "shelf", toMany: true),
                    ]),
                person,
            ])
        }
        let item = EntityDescription(
            name: "Item", attributes: [code] + (labelled ? [AttributeDescription("label", .string, isOptional: true)] : []),
            relationships: [shelf("items")], uniquenessConstraints: [["code"]], isAbstract: true)
        let book = EntityDescription(
            name: "Book", attributes: [AttributeDescription("pages", widePages ? .integer64 : .integer32, isOptional: true)],
            superentity: item)
        let ebook = EntityDescription(
            name: "Ebook", attributes: [AttributeDescription("size", .integer64, isOptional: true)], superentity: book)
        return try ObjectModel(
            entities: [
                item, book,
                EntityDescription(
                    name: "Film", attributes: [AttributeDescription("minutes", .integer32, isOptional: true)], relationships: [likedBy],
                    superentity: item),
                EntityDescription(
                    name: "Shelf", attributes: shelfAttributes,
                    relationships: [
                        RelationshipDescription(
                            "items", destination: "Item", inverse: "shelf", toMany: true, ordered: true, renamingIdentifier: "books")
                    ]),
                person,
            ] + (labelled ? [ebook] : []))
    }

    /// Two books and two films (whose keys are the books' keys: each entity has its own
    /// sequence) on one shelf, books in the order B2, B1; Ann likes both films, Bob likes F2.
    static func fill(_ schema: String) throws {
        let stack = try PostgresTestServer.stack(model(hierarchy: false), schema)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            func insert(_ entity: String, _ values: [String: any Sendable]) throws -> EntityObject {
                let object = try context.insert(entityName: entity)
                for (key, value) in values { try object.setValue(value, forKey: key) }
                return object
            }
            let b1 = try insert("Book", ["code": "B1", "pages": Int32(100)])
            let b2 = try insert("Book", ["code": "B2", "pages": Int32(200)])
            let f1 = try insert("Film", ["code": "F1", "minutes": Int32(90)])
            let f2 = try insert("Film", ["code": "F2", "minutes": Int32(120)])
            let shelf = try insert("Shelf", ["name": "top"])
            try shelf.setRelatedObjects([b2, b1], forKey: "books")
            try shelf.setRelatedObjects([f1, f2], forKey: "films")
            try insert("Person", ["name": "Ann"]).setRelatedObjects([f1, f2], forKey: "likes")
            try insert("Person", ["name": "Bob"]).setRelatedObjects([f2], forKey: "likes")
            try context.save()
        }
    }

    /// What a user sees: each item's code with its entity, number and shelf, each shelf's list,
    /// and whom each person likes.
    static func contents(_ stack: PersistentStack, hierarchy: Bool) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            func code(_ object: EntityObject) throws -> String { try object.value(forKey: "code", as: String.self) }
            var lines: [String] = []
            for entity in ["Book", "Film"] {
                for object in try context.fetch(FetchRequest(entityName: entity, sortKeys: [SortKey("code")])) {
                    let number = try object.value(forKey: entity == "Book" ? "pages" : "minutes", as: Int32.self)
                    let shelf = try object.relatedObject(forKey: "shelf")?.value(forKey: "name", as: String.self) ?? "-"
                    lines.append("\(entity) \(try code(object)) \(number) on \(shelf)")
                }
            }
            for shelf in try context.fetch(FetchRequest(entityName: "Shelf")) {
                let lists = hierarchy ? ["items"] : ["books", "films"]
                for list in lists {
                    // Films are not ordered: sorted by code.
                    let members = try shelf.relatedObjects(forKey: list).map(code)
                    lines.append("\(list): " + (list == "films" ? members.sorted() : members).joined(separator: ","))
                }
            }
            for person in try context.fetch(FetchRequest(entityName: "Person", sortKeys: [SortKey("name")])) {
                let likes = try person.relatedObjects(forKey: "likes").map(code).sorted()
                lines.append("\(try person.value(forKey: "name", as: String.self)) likes \(likes.joined(separator: ","))")
            }
            return lines
        }
    }

    /// Rows of `sql` on the test server, as text.
    static func rows(_ sql: String, _ schema: String) throws -> [String] {
        try PostgresTestServer.connect().textRows(sql, [.string(schema)]).map { $0.joined(separator: " ") }
    }

    /// How many keys a book and a film share.
    static func sharedKeys(_ schema: String) throws -> Int64? {
        let q = SQLBuilder.quote
        return try PostgresTestServer.connect().scalarInt64(
            "SELECT count(*) FROM (SELECT _pk FROM \(q(schema)).\"Book\" INTERSECT SELECT _pk FROM \(q(schema)).\"Film\") AS k")
    }

    static func sequences(_ schema: String) throws -> [String] {
        try rows(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = ? AND sequencename LIKE '\\_skerry\\_seq\\_%' ORDER BY 1", schema)
    }

    static func triggers(_ schema: String) throws -> [String] {
        try rows(
            "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND NOT t.tgisinternal ORDER BY 1",
            schema)
    }

    /// Everything a migration could change: columns, indexes, triggers, sequences (with their
    /// positions) and every row of every table.
    static func everything(_ schema: String) throws -> [String] {
        let server = try PostgresTestServer.connect()
        var lines = try rows(
            "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = ? ORDER BY 1, 2", schema)
        lines += try rows("SELECT tablename, indexname FROM pg_indexes WHERE schemaname = ? ORDER BY 1, 2", schema)
        lines += try triggers(schema).map { "trigger \($0)" }
        lines += try rows("SELECT sequencename, coalesce(last_value::text, '-') FROM pg_sequences WHERE schemaname = ? ORDER BY 1", schema)
        for table in try rows(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE'", schema)
        {
            let quoted = "\(SQLBuilder.quote(schema)).\(SQLBuilder.quote(table))"
            lines += try server.textRows("SELECT j FROM (SELECT row_to_json(x)::text AS j FROM \(quoted) AS x) AS r ORDER BY j", [])
                .map { "\(table): \($0[0])" }
        }
        return lines
    }

    /// Book and Film join a new hierarchy: Film's keys clash with Book's and are renumbered, its
    /// links follow; the hierarchy gets one sequence and its uniqueness trigger. Then they leave
    /// it again: rows and links stay, each gets its sequence back, past every key.
    @Test func entitiesJoiningAndLeavingAHierarchyKeepTheirRowsAndLinks() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema)
        let before = try Self.contents(PostgresTestServer.stack(Self.model(hierarchy: false), schema), hierarchy: false)
        #expect(try Self.sharedKeys(schema) == 2)
        #expect(try Self.sequences(schema) == ["_skerry_seq_Book", "_skerry_seq_Film", "_skerry_seq_Person", "_skerry_seq_Shelf"])

        let joined = try PostgresTestServer.stack(Self.model(hierarchy: true), schema)
        // The shelf's one list: its books in their order, then the films that join it.
        let expected = before.filter { !$0.hasPrefix("books") && !$0.hasPrefix("films") }.map { $0 } + ["items: B2,B1,F1,F2"]
        #expect(try Self.contents(joined, hierarchy: true).sorted() == expected.sorted())
        #expect(try Self.sharedKeys(schema) == 0)
        #expect(try Self.sequences(schema) == ["_skerry_seq_Item", "_skerry_seq_Person", "_skerry_seq_Shelf"])
        let triggers = try Self.triggers(schema)
        #expect(triggers.map { String($0.prefix { $0 != " " }) } == ["Book", "Film", "Item"], "\(triggers)")
        let context = joined.newBackgroundContext()
        try context.performAndWait {
            // The code is unique across the hierarchy now, and new keys come after every key.
            let film = try context.insert(entityName: "Film")
            try film.setValue("B1", forKey: "code")
            _ = expectError(.constraintViolation) { try context.save() }
            try film.setValue("F3", forKey: "code")
            try film.setValue(Int32(95), forKey: "minutes")
            try context.save()
            let keys = try context.fetch(FetchRequest(entityName: "Item")).map(\.objectID.key)
            #expect(Set(keys).count == 5)
        }

        let apart = try PostgresTestServer.stack(Self.model(hierarchy: false), schema)
        let after = try Self.contents(apart, hierarchy: false)
        #expect(after.contains("Film F3 95 on -"))
        #expect(after.filter { !$0.hasPrefix("Film F3") && !$0.hasPrefix("films") } == before.filter { !$0.hasPrefix("films") })
        #expect(after.contains("films: F1,F2"))
        #expect(try Self.sequences(schema) == ["_skerry_seq_Book", "_skerry_seq_Film", "_skerry_seq_Person", "_skerry_seq_Shelf"])
        #expect(try Self.triggers(schema).isEmpty)
        let q = SQLBuilder.quote
        let highest = try #require(
            try PostgresTestServer.connect().scalarInt64(
                "SELECT max(_pk) FROM (SELECT _pk FROM \(q(schema)).\"Book\" UNION ALL SELECT _pk FROM \(q(schema)).\"Film\") AS k"))
        let again = apart.newBackgroundContext()
        try again.performAndWait {
            let book = try again.insert(entityName: "Book")
            try book.setValue("B3", forKey: "code")
            try again.save()
            #expect(book.objectID.key > highest)
        }
    }

    /// A plan's custom step on a store with a hierarchy: `transformRow` sees the rows of every
    /// table of it, `finish` inserts a row of a new sub-entity with a key from the hierarchy's
    /// sequence.
    @Test func aPlanStepRunsOnEveryTableOfAHierarchy() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema)
        let version1 = try Self.model(hierarchy: true)
        _ = try PostgresTestServer.stack(version1, schema)
        let version2 = try Self.model(hierarchy: true, labelled: true)
        let seen = Locked<[String]>([])
        let plan = MigrationPlan(
            versions: [version1, version2],
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { entity, old, new in
                        seen.update { $0.append(entity) }
                        if case .string(let code) = old["code"] { new["label"] = .string("\(entity) \(code)") }
                    },
                    finish: { migration in
                        _ = try migration.insert("Ebook", ["code": .string("E1"), "label": .string("Ebook E1")])
                    })
            ])
        let stack = try PostgresTestServer.stack(version2, schema, plan: plan)
        #expect(seen.value.filter { $0 != "Shelf" && $0 != "Person" }.sorted() == ["Book", "Book", "Film", "Film"])
        let context = stack.newBackgroundContext()
        let items = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("code")])).map {
                "\($0.entity.name) \(try $0.value(forKey: "label", as: String.self))"
            }
        }
        #expect(items == ["Book Book B1", "Book Book B2", "Ebook Ebook E1", "Film Film F1", "Film Film F2"])
        let keys = try context.performAndWait { try context.fetch(FetchRequest(entityName: "Item")).map(\.objectID.key) }
        #expect(Set(keys).count == 5)
    }

    /// Two plan steps that widen a number and transform the rows of the same tables: each reads
    /// the rows before and after the column changed type, with the same columns.
    @Test func stepsThatChangeAColumnsTypeReadItsRowsAgain() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema)
        let version1 = try Self.model(hierarchy: true), version2 = try Self.model(hierarchy: true, widePages: true)
        _ = try PostgresTestServer.stack(version1, schema)
        let double = MigrationStep(
            from: 0,
            transformRow: { entity, old, new in
                if entity == "Book", case .int(let pages) = old["pages"] { new["pages"] = .int(pages * 2) }
            })
        let stack = try PostgresTestServer.stack(version2, schema, plan: MigrationPlan(versions: [version1, version2], steps: [double]))
        let context = stack.newBackgroundContext()
        let pages = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("code")])).map {
                try $0.value(forKey: "pages", as: Int64.self)
            }
        }
        #expect(pages == [200, 400])
    }

    /// Two plan steps with code, one load: each step carries the links of every relationship
    /// again (through temporary tables of its own), on a store with and without a hierarchy.
    @Test(arguments: [false, true])
    func twoStepsInOneLoadCarryEveryLinkTwice(hierarchy: Bool) throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema)
        let versions = try [[], ["a"], ["a", "b"]].map { try Self.model(hierarchy: hierarchy, notes: $0) }
        let before = try Self.contents(PostgresTestServer.stack(versions[0], schema), hierarchy: hierarchy)
        let steps = ["a", "b"].enumerated().map { position, note in
            MigrationStep(
                from: position,
                transformRow: { entity, _, new in
                    if entity == "Shelf" { new[note] = .string(note.uppercased()) }
                })
        }
        let stack = try PostgresTestServer.stack(versions[2], schema, plan: MigrationPlan(versions: versions, steps: steps))
        #expect(try Self.contents(stack, hierarchy: hierarchy) == before)
        let context = stack.newBackgroundContext()
        let notes = try context.performAndWait {
            let shelf = try #require(try context.fetch(FetchRequest(entityName: "Shelf")).first)
            return [try shelf.value(forKey: "a", as: String.self), try shelf.value(forKey: "b", as: String.self)]
        }
        #expect(notes == ["A", "B"])
    }

    /// Steps that fail late: one after keys were renumbered for a new hierarchy and tables
    /// changed, one on a store with a hierarchy after its triggers were dropped and its sequence
    /// made again. Each error is typed, and columns, indexes, triggers, sequences (with their
    /// positions) and every row are as they were.
    @Test func aFailingStepLeavesSchemaRowsSequencesAndTriggersAsTheyWere() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema)
        let apart = try Self.model(hierarchy: false), joined = try Self.model(hierarchy: true)
        let labelled = try Self.model(hierarchy: true, labelled: true)
        struct Refused: Error {}
        func failing(_ from: ObjectModel, _ to: ObjectModel) -> MigrationPlan {
            MigrationPlan(
                versions: [from, to],
                steps: [
                    MigrationStep(
                        from: 0,
                        transformRow: { entity, old, _ in
                            if entity == "Film", old["code"] == .string("F2") { throw Refused() }
                        })
                ])
        }
        for (from, to) in [(apart, joined), (joined, labelled)] {
            let before = try Self.everything(schema)
            let error = try #require(throws: SkerryError.self) { try PostgresTestServer.stack(to, schema, plan: failing(from, to)) }
            #expect(error.code == .modelMismatch)
            #expect(error.underlyingError is Refused)
            #expect(try Self.everything(schema) == before)
            #expect(
                try Self.contents(PostgresTestServer.stack(from, schema), hierarchy: from !== apart).count == 7 + (from === apart ? 1 : 0))
            _ = try PostgresTestServer.stack(to, schema) // the next round starts from here
        }
    }

    /// Four instances load the hierarchy at once: one migrates under the advisory lock (and
    /// reports the step), the others wait for it and open the migrated store.
    @Test func instancesStartingAtOnceWaitForTheOneThatMigratesAHierarchy() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(schema)
        let version2 = try Self.model(hierarchy: true)
        let steps = Locked(0)
        let outcomes = Mutex<[Result<String, SkerryError>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let outcome = Result { () throws(SkerryError) -> String in
                let stack = PersistentStack(name: "Instance", model: version2)
                stack.persistentStoreDescriptions = [
                    .postgres(PostgresTestServer.connectionString ?? "", maximumConnections: 1, schema: schema)
                ]
                let observation = stack.addEventObserver { event in
                    if case .migrationStep = event { steps.update { $0 += 1 } }
                }
                defer { _ = observation }
                try stack.loadPersistentStores()
                return (stack.coordinator.loadedStores.first?.identity.identifier) ?? ""
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let identifiers = try outcomes.withLock { $0 }.map { try $0.get() }
        #expect(identifiers.count == 4)
        #expect(Set(identifiers).count == 1)
        #expect(steps.value == 1)
        let contents = try Self.contents(PostgresTestServer.stack(version2, schema), hierarchy: true)
        #expect(contents.contains("items: B2,B1,F1,F2"))
        #expect(try Self.sharedKeys(schema) == 0)
    }
}
