import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A migration step with code computes the unchanged derived attributes again (its code may have
/// changed what they read), and writes only the rows whose value changes: counted here by
/// triggers on the derived columns (`AFTER UPDATE OF`, which fires for every row an `UPDATE`
/// naming the column writes, changed or not), the step's table kept in place by PostgreSQL.
@Suite(.postgres) struct PostgresDerivedRefreshTests {
    /// Authors (a `bookCount` of their books) and books (the author's name, a canonical title,
    /// the pages as an Integer 16: SQL and Swift computations both), with `extra` books' attributes.
    static func model(_ extra: [AttributeDescription] = []) throws -> ObjectModel {
        let author = EntityDescription(
            name: "Author",
            attributes: [
                AttributeDescription("name", .string, isOptional: true),
                AttributeDescription("bookCount", .integer64, isOptional: true, derivation: .count(relationship: "books")),
            ],
            relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)])
        let book = EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("pages", .integer64, defaultValue: Int64(0)),
                AttributeDescription("title", .string, isOptional: true),
                AttributeDescription("authorName", .string, isOptional: true, derivation: .keyPath("author.name")),
                AttributeDescription("searchTitle", .string, isOptional: true, derivation: .function(name: "canonical", keyPath: "title")),
                AttributeDescription("shortPages", .integer16, isOptional: true, derivation: .keyPath("pages")),
            ] + extra,
            relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")])
        return try ObjectModel(entities: [author, book])
    }

    /// Migrates a store of two authors (Ann with two books, Bob with none) and a book without an
    /// author through a step with `transformRow`, and returns the rows the step's recomputation
    /// of derived attributes wrote (table and key), and the books' author names after it.
    static func rewrites(_ transformRow: @escaping @Sendable (String, MigrationRow, inout MigrationRow) throws -> Void) throws -> (
        rows: [[String]], names: [String]
    ) {
        let schema = PostgresTestServer.newSchema(), counting = PostgresTestServer.newSchema()
        let v1 = try model(), v2 = try model([AttributeDescription("isbn", .string, isOptional: true)])
        let stack = try PostgresTestServer.stack(v1, schema)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let ann = try context.insert(entityName: "Author")
            try ann.setValue("Ann Émile", forKey: "name")
            try context.insert(entityName: "Author").setValue("Bob", forKey: "name")
            for (title, pages, author) in [("Été", 120, ann), ("Winter", 80, ann), ("Loose", 10, nil)] as [(String, Int64, EntityObject?)] {
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setRelatedObject(author, forKey: "author")
            }
            try context.save()
        }
        try stack.persistentStoreCoordinator.remove(stack.persistentStoreCoordinator.persistentStores[0])
        let server = try PostgresTestServer.connect()
        let q = SQLBuilder.quote
        try server.execute(
            """
            CREATE SCHEMA \(q(counting));
            CREATE TABLE \(q(counting)).rewrites (tbl text, pk bigint);
            CREATE FUNCTION \(q(counting)).count_rewrite() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN INSERT INTO \(q(counting)).rewrites VALUES (TG_TABLE_NAME, NEW._pk); RETURN NEW; END $f$;
            CREATE TRIGGER count_book AFTER UPDATE OF "authorName", "searchTitle", "shortPages" ON \(q(schema))."Book"
                FOR EACH ROW EXECUTE FUNCTION \(q(counting)).count_rewrite();
            CREATE TRIGGER count_author AFTER UPDATE OF "bookCount" ON \(q(schema))."Author"
                FOR EACH ROW EXECUTE FUNCTION \(q(counting)).count_rewrite();
            """)
        let plan = MigrationPlan(versions: [v1, v2], steps: [MigrationStep(from: 0, transformRow: transformRow)])
        let migrated = try PostgresTestServer.stack(v2, schema, plan: plan)
        let rows = try server.textRows("SELECT tbl, CAST(pk AS text) FROM \(q(counting)).rewrites ORDER BY 1, 2", [])
        let reader = migrated.newBackgroundContext()
        let names = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")])).map {
                try $0.value(forKey: "authorName", as: String?.self) ?? "-"
            }
        }
        return (rows, names)
    }

    /// A step whose code changes nothing the derived attributes read rewrites no row.
    @Test func anUnchangedRefreshRewritesNoRow() throws {
        let (rows, names) = try Self.rewrites { _, _, _ in }
        #expect(rows == [])
        #expect(names == ["-", "Ann Émile", "Ann Émile"])
    }

    /// A step that renames Ann rewrites her two books' author names, and nothing else (the
    /// triggers count what they should).
    @Test func aRefreshRewritesOnlyTheRowsWhoseValueChanges() throws {
        let (rows, names) = try Self.rewrites { entity, _, row in
            if entity == "Author", row["name"] == .string("Ann Émile") { row["name"] = .string("ANN") }
        }
        #expect(rows.map { $0[0] } == ["Book", "Book"])
        #expect(names == ["-", "ANN", "ANN"])
    }

    /// A refresh computed in Swift (`shortPages`, an Integer 64 key path into an Integer 16)
    /// reads the table 2,048 rows at a time and writes the changed rows 256 to a statement: 2,500
    /// stale rows (inserted in SQL, without their derived values) take ten `UPDATE` statements,
    /// not one each, and get the values a save gives them, on both pages.
    @Test func aRefreshInSwiftWritesTheChangedRowsInBatches() throws {
        let schema = PostgresTestServer.newSchema(), counting = PostgresTestServer.newSchema()
        let v1 = try Self.model(), v2 = try Self.model([AttributeDescription("isbn", .string, isOptional: true)])
        let stack = try PostgresTestServer.stack(v1, schema)
        try stack.persistentStoreCoordinator.remove(stack.persistentStoreCoordinator.persistentStores[0])
        let server = try PostgresTestServer.connect()
        let q = SQLBuilder.quote
        try server.execute(
            """
            INSERT INTO \(q(schema))."Book" ("_pk", "pages", "title") SELECT i, i, 'Book' FROM generate_series(1, 2500) AS i;
            CREATE SCHEMA \(q(counting));
            CREATE TABLE \(q(counting)).statements (tbl text);
            CREATE FUNCTION \(q(counting)).count_statement() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN INSERT INTO \(q(counting)).statements VALUES (TG_TABLE_NAME); RETURN NULL; END $f$;
            CREATE TRIGGER count_book AFTER UPDATE OF "shortPages" ON \(q(schema))."Book"
                FOR EACH STATEMENT EXECUTE FUNCTION \(q(counting)).count_statement();
            """)
        let plan = MigrationPlan(versions: [v1, v2], steps: [MigrationStep(from: 0, transformRow: { _, _, _ in })])
        let migrated = try PostgresTestServer.stack(v2, schema, plan: plan)
        #expect(try server.scalarInt64("SELECT count(*) FROM \(q(counting)).statements", []) == 10)
        let reader = migrated.newBackgroundContext()
        let pages = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")])).map {
                try $0.value(forKey: "shortPages", as: Int64?.self)
            }
        }
        #expect(pages == (1...2500).map { Int64($0) })
    }
}
