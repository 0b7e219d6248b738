import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A uniqueness constraint's index that went missing (dropped by hand, or left out by a failed
/// migration of an older version) is made again when the store loads, or the load fails naming it
/// when the rows hold duplicates.
@Suite(.postgres) struct PostgresUniqueIndexTests {
    static let model = PostgresMigrationTests.book(uniquenessConstraints: [["title"]])
    static let index = StoreIndexes.indexName("Book", ["title"], unique: true)

    /// The names of the indexes in `schema`.
    static func indexes(_ schema: String) throws -> Set<String> {
        let result = try PostgresTestServer.connect().query(
            "SELECT indexname::text FROM pg_indexes WHERE schemaname = ?", [.string(schema)])
        return Set((0..<result.rowCount).map { result.text($0, 0) })
    }

    /// Makes the store in a new schema, then drops the constraint's index by hand.
    static func storeWithoutIndex() throws -> String {
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(model, schema)
        #expect(try indexes(schema).contains(index))
        try PostgresTestServer.connect().execute("DROP INDEX \"\(schema)\".\"\(index)\"")
        return schema
    }

    @Test func aMissingUniqueIndexIsMadeAgainWhenTheStoreLoads() throws {
        let schema = try Self.storeWithoutIndex()
        let stack = try PostgresTestServer.stack(Self.model, schema)
        #expect(try Self.indexes(schema).contains(Self.index))
        // The constraint holds again: a second book with the same title is refused.
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insert(entityName: "Book").setValue("Dune", forKey: "title")
            try context.save()
            try context.insert(entityName: "Book").setValue("Dune", forKey: "title")
            #expect(throws: SkerryError.self) { try context.save() }
        }
        #expect(try PostgresMigrationTests.values(stack, "Book", "title", sortedBy: "title") == ["Dune"])
    }

    @Test func aMissingUniqueIndexOverDuplicateRowsFailsTheLoadNamingItAndChangesNothing() throws {
        let schema = try Self.storeWithoutIndex()
        try PostgresTestServer.connect().execute(
            "INSERT INTO \"\(schema)\".\"Book\" (\"_pk\", \"_version\", \"title\") VALUES (100, 1, 'Dune'), (101, 1, 'Dune')")
        let error = #expect(throws: SkerryError.self) { try PostgresTestServer.stack(Self.model, schema) }
        #expect(error?.code == .storeLoadFailed)
        #expect(error?.entityName == "Book")
        #expect(error?.message.contains(Self.index) == true)
        #expect(error?.message.contains("duplicates") == true)
        #expect(try !Self.indexes(schema).contains(Self.index))
        // Once the duplicate is gone, the store loads and has its index again.
        try PostgresTestServer.connect().execute("DELETE FROM \"\(schema)\".\"Book\" WHERE \"_pk\" = 101")
        _ = try PostgresTestServer.stack(Self.model, schema)
        #expect(try Self.indexes(schema).contains(Self.index))
    }
}
