import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Schema changes of a PostgreSQL store: additive changes in place, in one transaction that
/// leaves the schema as it was when any part fails; instances starting at once wait for the one
/// that creates or migrates the schema.
@Suite(.postgres) struct PostgresMigrationTests {
    static func newSchema() -> String { "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }

    static func stack(_ model: ObjectModel, _ schema: String, plan: MigrationPlan? = nil) throws -> PersistentStack {
        let stack = PersistentStack(name: "Migrating", model: model)
        var description = StoreDescription.postgres(try PostgresTestServer.require(), maximumConnections: 2, schema: schema)
        description.migrationPlan = plan
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }

    static let version1 = try! ObjectModel(entities: [
        EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)])
    ])

    /// Saves books with these titles in a store of `version1`.
    static func fill(_ schema: String, _ titles: [String]) throws {
        let stack = try stack(version1, schema)
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
        let schema = Self.newSchema()
        try Self.fill(schema, ["Dune", "Emma"])
        let version2 = try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("year", .integer32, isOptional: true),
                    AttributeDescription("pages", .integer32, defaultValue: Int32(7)),
                ], relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)]),
        ])
        let stack = try Self.stack(version2, schema)
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
        let reader = stack.newBackgroundContext()
        let names = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Author")).first?.relatedObjects(forKey: "books").map {
                try $0.value(forKey: "title") as? String
            }
        }
        #expect(names == ["Dune"])
    }

    @Test func aMigrationThatFailsPartWayLeavesTheSchemaAsItWas() throws {
        let schema = Self.newSchema()
        try Self.fill(schema, ["Dune", "Dune"])
        // A new column, then a uniqueness constraint the rows break: the index fails after the
        // column was added, and the whole migration rolls back.
        let version2 = try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("year", .integer32, isOptional: true),
                ], uniquenessConstraints: [["title"]])
        ])
        #expect(throws: SkerryError.self) { try Self.stack(version2, schema) }
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
        // The store still opens with its own model, rows intact.
        let stack = try Self.stack(Self.version1, schema)
        let context = stack.newBackgroundContext()
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 2)
    }

    @Test func anIncompatibleChangeIsATypedErrorAndChangesNothing() throws {
        let schema = Self.newSchema()
        try Self.fill(schema, ["Dune"])
        let retyped = try ObjectModel(entities: [
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .integer32)])
        ])
        let error = try #require(throws: SkerryError.self) { try Self.stack(retyped, schema) }
        #expect(error.code == .modelMismatch)
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
    }

    @Test func aPlansCustomStepIsRefusedRatherThanSkipped() throws {
        let schema = Self.newSchema()
        try Self.fill(schema, ["Dune"])
        let version2 = try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("shout", .string, isOptional: true),
                ])
        ])
        let plan = MigrationPlan(
            versions: [Self.version1, version2],
            steps: [
                MigrationStep(from: 0, transformRow: { _, old, new in new["shout"] = .string(old["title"].description.uppercased()) })
            ])
        let error = try #require(throws: SkerryError.self) { try Self.stack(version2, schema, plan: plan) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("MigrationPlan"))
        #expect(try Self.columns(schema, "Book") == ["_pk", "_version", "title"])
    }

    @Test func instancesStartingAtOnceWaitForTheOneThatMigrates() throws {
        let schema = Self.newSchema()
        try Self.fill(schema, ["Dune"])
        let version2 = try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("year", .integer32, isOptional: true),
                ])
        ])
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
