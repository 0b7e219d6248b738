import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A service's instances connect as an application role that does not own the store's schema
/// (a migrator role deploys it; the DBA grants the application role the usual DML rights): such
/// a role loads, reads and writes a store whose schema is current without any DDL, and a store
/// that needs a migration refuses it with a typed error, leaving the schema as it was.
@Suite(.postgres) struct PostgresApplicationRoleTests {
    /// `Note` (unique `text`, and `color` when `colors`) linked many-to-many with `Label`.
    static func model(colors: Bool = false) throws -> ObjectModel {
        let note = EntityDescription(
            name: "Note",
            attributes: [AttributeDescription("text", .string), AttributeDescription("rank", .integer64, defaultValue: Int64(0))]
                + (colors ? [AttributeDescription("color", .string, isOptional: true)] : []),
            relationships: [RelationshipDescription("labels", destination: "Label", inverse: "notes", toMany: true)],
            uniquenessConstraints: [["text"]])
        let label = EntityDescription(
            name: "Label", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("notes", destination: "Note", inverse: "labels", toMany: true)])
        return try ObjectModel(entities: [note, label])
    }

    /// An application role that may log in, with the usual DML rights on `schema`'s tables and
    /// sequences (and nothing else: no CREATE on the schema or the database).
    static func applicationRole(_ schema: String) throws -> String {
        let role = try PostgresSequenceGrantTests.grantApplicationRole(schema)
        try PostgresTestServer.connect().execute("ALTER ROLE \(role) LOGIN")
        return role
    }

    /// A stack of `model` over `schema`, connecting as `role`, loaded.
    static func stack(_ model: ObjectModel, _ schema: String, as role: String, history: Bool = false) throws -> PersistentStack {
        let stack = PersistentStack(name: "App", model: model)
        var description = StoreDescription.postgres(
            try PostgresTestServer.require() + " user=\(role)", maximumConnections: 2, schema: schema, propagatesChanges: true)
        if history { description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey) }
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }

    /// What the owner sees of `schema`: its tables, columns, indexes, sequences and functions, and
    /// the recorded schema.
    static func catalog(_ schema: String) throws -> [[String]] {
        try PostgresTestServer.connect().textRows(
            """
            SELECT 'relation', c.relname::text || ':' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?1
            UNION ALL SELECT 'column', table_name::text || '.' || column_name::text || ':' || data_type::text FROM information_schema.columns WHERE table_schema = ?1
            UNION ALL SELECT 'function', p.proname::text || ':' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ?1
            UNION ALL SELECT 'metadata', "key" || '=' || "value" FROM \(SQLBuilder.quote(schema)).\(SQLBuilder.quote(StoreSchema.metadataTable))
            ORDER BY 1, 2
            """.replacingOccurrences(of: "?1", with: "'\(schema)'"), [])
    }

    @Test func anApplicationRoleLoadsSavesFetchesAndBatchDeletesInACurrentStore() throws {
        let schema = PostgresTestServer.newSchema()
        let model = try Self.model()
        _ = try PostgresTestServer.stack(model, schema)
        let role = try Self.applicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }
        let before = try Self.catalog(schema)

        let stack = try Self.stack(model, schema, as: role)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for text in ["a", "b", "c"] {
                let note = try context.insert(entityName: "Note")
                try note.setValue(text, forKey: "text")
                let label = try context.insert(entityName: "Label")
                try label.setValue("label " + text, forKey: "name")
                try note.setRelatedObjects([label], forKey: "labels")
            }
            try context.save()
        }
        let reading = stack.newBackgroundContext()
        try reading.performAndWait {
            let notes = try reading.fetch(FetchRequest(entityName: "Note", predicate: AttributeKey("text") == "b"))
            #expect(notes.count == 1)
            #expect(try notes.first?.relatedObjects(forKey: "labels").count == 1)
        }
        let deleted = try context.performAndWait {
            try context.execute(BatchDeleteRequest(entityName: "Note", predicate: AttributeKey("text") != "b")).count
        }
        #expect(deleted == 2)
        #expect(try reading.performAndWait { try reading.count(for: FetchRequest(entityName: "Note")) } == 1)
        // The role's uniqueness constraint still holds (its index was there, not made again).
        try context.performAndWait {
            let note = try context.insert(entityName: "Note")
            try note.setValue("b", forKey: "text")
            #expect(throws: SkerryError.self) { try context.save() }
        }
        // Loading changed nothing in the schema.
        let after = try Self.catalog(schema)
        #expect(after.filter { $0[0] != "metadata" } == before.filter { $0[0] != "metadata" })
    }

    @Test func aChangedModelRefusesTheApplicationRoleAndLeavesTheSchemaAsItWas() throws {
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(try Self.model(), schema)
        let role = try Self.applicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }
        let before = try Self.catalog(schema)

        // Version 2 adds an optional attribute (an additive migration, which needs ALTER TABLE).
        let version2 = try Self.model(colors: true)
        let error = try #require(throws: SkerryError.self) { _ = try Self.stack(version2, schema, as: role) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("needs a migration"))
        #expect(error.message.contains("owns its schema"))
        #expect((error.underlyingError as? PostgresError)?.sqlState == .insufficientPrivilege)
        #expect(try Self.catalog(schema) == before)

        // Once the owner migrated (as on deploy), the role loads version 2.
        _ = try PostgresTestServer.stack(version2, schema, name: "Migrator")
        let stack = try Self.stack(version2, schema, as: role)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let note = try context.insert(entityName: "Note")
            try note.setValue("x", forKey: "text")
            try note.setValue("red", forKey: "color")
            try context.save()
        }
    }

    @Test func skerrysOwnFunctionsOfAnotherVersionRefuseTheApplicationRole() throws {
        let schema = PostgresTestServer.newSchema()
        let model = try Self.model()
        _ = try PostgresTestServer.stack(model, schema)
        let role = try Self.applicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }
        // The function as another version of Skerry would have left it.
        try PostgresTestServer.connect().execute(
            "CREATE OR REPLACE FUNCTION \(SQLBuilder.quote(schema)).skerry_fold_diacritics(value text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$ SELECT value $f$"
        )
        let before = try Self.catalog(schema)

        let error = try #require(throws: SkerryError.self) { _ = try Self.stack(model, schema, as: role) }
        #expect(error.code == .modelMismatch)
        #expect((error.underlyingError as? PostgresError)?.sqlState == .insufficientPrivilege)
        #expect(try Self.catalog(schema) == before)

        // The owner's load brings the function to this version's; then the role loads.
        _ = try PostgresTestServer.stack(model, schema, name: "Migrator")
        #expect(try Self.catalog(schema) != before)
        _ = try Self.stack(model, schema, as: role)
    }

    @Test func anApplicationRoleLoadsAStoreThatTracksHistoryWithTrackingOn() throws {
        let schema = PostgresTestServer.newSchema()
        let model = try Self.model()
        let owner = PersistentStack(name: "Migrator", model: model)
        var description = try PostgresTestServer.description(schema: schema)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        owner.persistentStoreDescriptions = [description]
        try owner.loadPersistentStores()
        let role = try Self.applicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }

        let stack = try Self.stack(model, schema, as: role, history: true)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let note = try context.insert(entityName: "Note")
            try note.setValue("a", forKey: "text")
            try context.save()
        }
        let history = try context.performAndWait {
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).result
                as? [PersistentHistoryTransaction] ?? []
        }
        #expect(history.count == 1)
        #expect(history.first?.changes?.count == 1)
    }

    @Test func turningHistoryOnRefusesTheApplicationRoleWithAClearError() throws {
        let schema = PostgresTestServer.newSchema()
        let model = try Self.model()
        _ = try PostgresTestServer.stack(model, schema)
        let role = try Self.applicationRole(schema)
        defer { try? PostgresSequenceGrantTests.dropRole(role, schema) }

        let error = try #require(throws: SkerryError.self) { _ = try Self.stack(model, schema, as: role, history: true) }
        #expect(error.code == .storeLoadFailed)
        #expect(error.message.contains("owns its schema"))
        let history = SQLBuilder.quote(schema) + "." + SQLBuilder.quote(PostgresStore.historyTransactionsTable)
        let made = try PostgresTestServer.connect().query("SELECT to_regclass(?) IS NOT NULL", [.string(history)])
        #expect(made.value(0, 0, as: .boolean) == .bool(false))
    }
}
