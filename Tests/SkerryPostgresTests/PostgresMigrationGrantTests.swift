import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// What a schema migration makes (a new hierarchy's table and key sequence, a join table it
/// rebuilds, history's tables when history is turned on) gets the grants the store's tables
/// and sequences had, so that an application role a DBA granted the store (not its owner) still
/// reads and writes every table and takes keys from every sequence afterwards.
@Suite(.postgres) struct PostgresMigrationGrantTests {
    /// `Note` (with `rank` of `rankType`), optionally linked many-to-many with `Label`, and
    /// optionally a new hierarchy `Tag`.
    static func model(rankType: AttributeType = .integer16, labels: Bool, tags: Bool) throws -> ObjectModel {
        var links: [RelationshipDescription] = []
        var entities: [EntityDescription] = []
        if labels {
            links.append(RelationshipDescription("labels", destination: "Label", inverse: "notes", toMany: true))
            entities.append(
                EntityDescription(
                    name: "Label", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("notes", destination: "Note", inverse: "labels", toMany: true)]))
        }
        if tags {
            links.append(RelationshipDescription("tags", destination: "Tag", inverse: "notes", toMany: true))
            entities.append(
                EntityDescription(
                    name: "Tag", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("notes", destination: "Note", inverse: "tags", toMany: true)]))
        }
        let note = EntityDescription(
            name: "Note", attributes: [AttributeDescription("text", .string), AttributeDescription("rank", rankType)],
            relationships: links)
        return try ObjectModel(entities: [note] + entities)
    }

    /// The join table of `entity`'s relationship `name` in `model`.
    static func joinTable(_ model: ObjectModel, _ entity: String, _ name: String) throws -> String {
        let layout = RelationshipLayout(entities: model.entities)
        guard case .joinTable(let table, _, _, _)? = layout.storage[entity]?[name] else {
            Issue.record("\(entity).\(name) has no join table")
            return ""
        }
        return table
    }

    /// Runs `sql` in `schema` as `role`: nil when the server accepts it, else its refusal.
    static func run(as role: String, _ schema: String, _ sql: String) throws -> String? {
        let connection = try PostgresTestServer.connect()
        try connection.execute("SET ROLE \(role); SET search_path TO \(SQLBuilder.quote(schema))")
        do {
            try connection.execute(sql)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// An object of `entity` (with `name`) inserted by `role` with a key from its sequence.
    static func insert(as role: String, _ schema: String, _ entity: String, name: String) throws -> String? {
        let q = SQLBuilder.quote
        return try run(
            as: role, schema,
            "INSERT INTO \(q(entity)) (\(q(SQLBuilder.primaryKeyColumn)), \"name\") VALUES (nextval('\(q(PostgresStore.sequenceName(entity)))'), '\(name)')"
        )
    }

    /// Whether `role` has `privilege` on the table or sequence `name` of `schema`.
    static func has(_ role: String, _ privilege: String, on name: String, _ schema: String, sequence: Bool = false) throws -> Bool {
        let object = SQLBuilder.quote(schema) + "." + SQLBuilder.quote(name)
        let function = sequence ? "has_sequence_privilege" : "has_table_privilege"
        let result = try PostgresTestServer.connect().query(
            "SELECT \(function)(?, ?, ?)", [.string(role), .string(object), .string(privilege)])
        return result.value(0, 0, as: .boolean) == .bool(true)
    }

    /// A role (with no rights in `schema`, dropped by `PostgresSequenceGrantTests.dropRole`).
    static func newRole() throws -> String {
        let role = "rd_" + UUID().uuidString.prefix(8).lowercased()
        try PostgresTestServer.connect().execute("CREATE ROLE \(role)")
        return role
    }

    @Test func anAdditiveMigrationGivesANewHierarchyTheStoresGrants() throws {
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(try Self.model(labels: true, tags: false), schema)
        let role = try PostgresSequenceGrantTests.grantApplicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }
        // A reporting role that may read the notes only.
        let reader = try Self.newRole()
        defer { try? PostgresSequenceGrantTests.dropRole(reader, schema) }
        try PostgresTestServer.connect().execute(
            "GRANT USAGE ON SCHEMA \(SQLBuilder.quote(schema)) TO \(reader); GRANT SELECT ON \(SQLBuilder.quote(schema)).\"Note\" TO \(reader)"
        )

        // Version 2 adds the hierarchy Tag and a many-to-many between notes and tags (additive).
        let version2 = try Self.model(labels: true, tags: true)
        _ = try PostgresTestServer.stack(version2, schema, name: "Version2")

        // The application role takes a key from Tag's new sequence, inserts a tag and links it.
        #expect(try Self.insert(as: role, schema, "Tag", name: "red") == nil)
        try PostgresTestServer.connect().execute(
            "INSERT INTO \(SQLBuilder.quote(schema)).\"Note\" (\"_pk\", \"text\", \"rank\") VALUES (1, 'a', 1)")
        let join = try Self.joinTable(version2, "Note", "tags")
        #expect(try Self.run(as: role, schema, "INSERT INTO \(SQLBuilder.quote(join)) (\"source\", \"target\") VALUES (1, 1)") == nil)
        #expect(try Self.run(as: role, schema, "SELECT count(*) FROM \"Tag\"; DELETE FROM \"Tag\"") == nil)
        // What only some of the tables had is not extended.
        #expect(try !Self.has(reader, "SELECT", on: "Tag", schema))
        #expect(try !Self.has(reader, "USAGE", on: PostgresStore.sequenceName("Tag"), schema, sequence: true))
        #expect(try Self.has(reader, "SELECT", on: "Note", schema))
    }

    @Test func aRebuildingMigrationKeepsTheGrantsOfJoinTablesAndGivesANewHierarchyTheStores() throws {
        let schema = PostgresTestServer.newSchema()
        let version1 = try Self.model(labels: true, tags: false)
        let first = try PostgresTestServer.stack(version1, schema)
        let context = first.newBackgroundContext()
        try context.performAndWait {
            let note = try context.insert(entityName: "Note")
            try note.setValue("a", forKey: "text")
            try note.setValue(Int16(1), forKey: "rank")
            let label = try context.insert(entityName: "Label")
            try label.setValue("work", forKey: "name")
            try note.setRelatedObjects([label], forKey: "labels")
            try context.save()
        }
        let role = try PostgresSequenceGrantTests.grantApplicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }
        // A role that may read the links only (and with the right to grant it on).
        let reader = try Self.newRole()
        defer { try? PostgresSequenceGrantTests.dropRole(reader, schema) }
        let labels = try Self.joinTable(version1, "Note", "labels")
        try PostgresTestServer.connect().execute(
            "GRANT USAGE ON SCHEMA \(SQLBuilder.quote(schema)) TO \(reader); GRANT SELECT ON \(SQLBuilder.quote(schema)).\(SQLBuilder.quote(labels)) TO \(reader) WITH GRANT OPTION"
        )

        // A widened number type (not additive: the step rebuilds the join tables) and the new
        // hierarchy Tag.
        let version2 = try Self.model(rankType: .integer64, labels: true, tags: true)
        #expect(try Self.joinTable(version2, "Note", "labels") == labels)
        let second = try PostgresTestServer.stack(version2, schema, name: "Version2")
        let reading = second.newBackgroundContext()
        #expect(try reading.performAndWait { try reading.count(for: FetchRequest(entityName: "Note")) } == 1)

        // The rebuilt join table has the grants it had, the new table and sequence the store's.
        #expect(
            try Self.run(
                as: role, schema,
                "DELETE FROM \(SQLBuilder.quote(labels)); INSERT INTO \(SQLBuilder.quote(labels)) (\"source\", \"target\") VALUES (1, 1)")
                == nil)
        #expect(try Self.insert(as: role, schema, "Tag", name: "red") == nil)
        let tags = try Self.joinTable(version2, "Note", "tags")
        #expect(try Self.run(as: role, schema, "INSERT INTO \(SQLBuilder.quote(tags)) (\"source\", \"target\") VALUES (1, 1)") == nil)
        #expect(try Self.run(as: reader, schema, "SELECT count(*) FROM \(SQLBuilder.quote(labels))") == nil)
        #expect(try Self.has(reader, "SELECT WITH GRANT OPTION", on: labels, schema))
        #expect(try !Self.has(reader, "SELECT", on: "Tag", schema))
        #expect(try !Self.has(reader, "SELECT", on: tags, schema))
    }

    @Test func historyTurnedOnLaterGetsTheStoresGrants() throws {
        let schema = PostgresTestServer.newSchema()
        let model = try Self.model(labels: false, tags: false)
        _ = try PostgresTestServer.stack(model, schema)
        let role = try PostgresSequenceGrantTests.grantApplicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }

        let stack = PersistentStack(name: "History", model: model)
        var description = try PostgresTestServer.description(schema: schema)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()

        for table in [PostgresStore.historyTransactionsTable, PostgresStore.historyChangesTable, PostgresStore.historyTombstonesTable] {
            #expect(try Self.has(role, "INSERT", on: table, schema), "\(table)")
            #expect(try Self.has(role, "SELECT", on: table, schema), "\(table)")
        }
        #expect(
            try Self.run(
                as: role, schema,
                "SELECT nextval('\(PostgresStore.historyNumbersSequence)'), nextval('\(PostgresStore.historyChangeIDsSequence)')") == nil)
    }
}
