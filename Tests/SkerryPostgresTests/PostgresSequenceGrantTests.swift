import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Key sequences keep their owner and their grants when a store moves into a schema
/// (`migratePersistentStore`) and when a schema migrates to a new model version: the sequences
/// restart (`ALTER SEQUENCE … RESTART WITH`, transactional) instead of being made again, so that
/// an application role that was granted them may still take keys; a move that fails after the
/// sequences restarted leaves them where they were.
@Suite(.postgres) struct PostgresSequenceGrantTests {
    /// Each key sequence of `schema`: name, owner, grants.
    static func sequences(_ schema: String) throws -> [String] {
        try PostgresTestServer.connect().textRows(
            """
            SELECT s.sequencename::text, s.sequenceowner::text, coalesce(c.relacl::text, '-') \
            FROM pg_sequences s JOIN pg_namespace n ON n.nspname = s.schemaname \
            JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.sequencename \
            WHERE s.schemaname = ? AND starts_with(s.sequencename::text, '_skerry_seq_') ORDER BY 1
            """, [.string(schema)]
        ).map { $0.joined(separator: " ") }
    }

    /// A new role (dropped by `dropRole`) with the rights an application that only reads and
    /// writes rows needs in `schema`: its tables and the USAGE of its sequences.
    static func grantApplicationRole(_ schema: String) throws -> String {
        let role = "app_" + UUID().uuidString.prefix(8).lowercased()
        let q = SQLBuilder.quote
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE ROLE \(role)")
        try connection.execute("GRANT USAGE ON SCHEMA \(q(schema)) TO \(role)")
        try connection.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(q(schema)) TO \(role)")
        try connection.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA \(q(schema)) TO \(role)")
        return role
    }

    static func dropRole(_ role: String, _ schema: String) throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("DROP SCHEMA IF EXISTS \(SQLBuilder.quote(schema)) CASCADE")
        try connection.execute("DROP OWNED BY \(role); DROP ROLE \(role)")
    }

    /// The next key `role` takes from `schema`'s sequence of `root`.
    static func nextKey(as role: String, _ schema: String, root: String) throws -> Int64? {
        let connection = try PostgresTestServer.connect()
        try connection.execute("SET ROLE \(role)")
        let sequence = SQLBuilder.quote(schema) + "." + SQLBuilder.quote(PostgresStore.sequenceName(root))
        return try connection.scalarInt64("SELECT nextval(?::regclass)", [.string(sequence)])
    }

    /// A SQLite store of the move fixture with `people` people, loaded by a stack.
    static func fileStack(_ directory: TemporaryDirectory, people: Int) throws -> PersistentStack {
        let stack = PersistentStack(name: "Service", model: try StoreMoveFixture.model())
        stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("Service.sqlite"))]
        try stack.loadPersistentStores()
        try StoreMoveFixture.fill(stack.newBackgroundContext(), people: people)
        return stack
    }

    @Test func aMoveKeepsTheOwnerAndGrantsOfTheSequences() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.fileStack(directory, people: 30)
        // The schema is made (empty) by the service's first instance; a DBA grants the
        // application role its rights; then the file moves in.
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Empty")
        let role = try Self.grantApplicationRole(schema)
        defer { try? Self.dropRole(role, schema) }
        let before = try Self.sequences(schema)
        #expect(before.allSatisfy { $0.contains(role) })

        let coordinator = stack.persistentStoreCoordinator
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: try PostgresTestServer.description(schema: schema))

        // The same sequences, owners and grants.
        #expect(try Self.sequences(schema) == before)
        // The application role takes keys past every copied object's.
        let key = try #require(try Self.nextKey(as: role, schema, root: "Person"))
        #expect(key > 30)
    }

    @Test func aMoveThatFailsAtCommitLeavesSequencesTablesAndGrantsAsTheyWere() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.fileStack(directory, people: 30)
        let before = try StoreMoveFixture.contents(stack.newBackgroundContext())
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Empty")
        let role = try Self.grantApplicationRole(schema)
        defer { try? Self.dropRole(role, schema) }
        // A deferred check that refuses every desk: it runs at commit, after the copy restarted
        // the sequences, so the whole transaction, restarts included, must roll back.
        let q = SQLBuilder.quote
        let connection = try PostgresTestServer.connect()
        try connection.execute(
            """
            CREATE FUNCTION \(q(schema)).refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no desks'; END $$; \
            CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON \(q(schema))."Desk" DEFERRABLE INITIALLY DEFERRED \
            FOR EACH ROW EXECUTE FUNCTION \(q(schema)).refuse()
            """)
        let sequences = try Self.sequences(schema)

        let coordinator = stack.persistentStoreCoordinator
        let file = coordinator.persistentStores[0]
        let error = try #require(throws: SkerryError.self) {
            try coordinator.migratePersistentStore(file, to: try PostgresTestServer.description(schema: schema))
        }
        #expect(error.message.contains("no desks"))
        #expect(coordinator.persistentStores == [file])
        #expect(try StoreMoveFixture.contents(stack.newBackgroundContext()) == before)
        #expect(try Self.sequences(schema) == sequences)
        for table in ["Person", "Team", "Tag", "Item", "Desk"] {
            #expect(try connection.scalarInt64("SELECT count(*) FROM \(q(schema)).\(q(table))") == 0)
        }
        // The sequences did not move: the role's first key is the first key.
        #expect(try Self.nextKey(as: role, schema, root: "Person") == 1)
    }

    @Test func aSchemaMigrationKeepsTheOwnerAndGrantsOfTheSequences() throws {
        // A number type that widens: not additive, so the step runs (and restarts the sequence).
        let version1 = try ObjectModel(entities: [
            EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string), AttributeDescription("rank", .integer16)])
        ])
        let version2 = try ObjectModel(entities: [
            EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string), AttributeDescription("rank", .integer64)])
        ])
        let schema = PostgresTestServer.newSchema()
        let first = try PostgresTestServer.stack(version1, schema)
        let context = first.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<3 {
                let note = try context.insert(entityName: "Note")
                try note.setValue("note \(index)", forKey: "text")
                try note.setValue(Int16(index), forKey: "rank")
            }
            try context.save()
        }
        let role = try Self.grantApplicationRole(schema)
        defer { try? Self.dropRole(role, schema) }
        let before = try Self.sequences(schema)
        #expect(before.count == 1 && before[0].contains(role))

        _ = try PostgresTestServer.stack(version2, schema, name: "Version2")

        #expect(try Self.sequences(schema) == before)
        #expect(try Self.nextKey(as: role, schema, root: "Note") == 4)
    }
}
