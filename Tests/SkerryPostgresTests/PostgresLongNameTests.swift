import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Models whose names are longer than PostgreSQL keeps (63 bytes), as real apps' models have
/// (MagicalRecord's test model: an entity named `SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey`,
/// 60 characters, with a many-to-many relationship, so a join table of 77). The names Skerry
/// makes from them (indexes, key sequences) must stay apart; names that would be cut to the same
/// one are refused with a clear error.
@Suite(.postgres) struct PostgresLongNameTests {
    static let holder = "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey"
    static let renamedHolder = "SingleEntityRelatedToManyMappedEntitiesUsingAnotherPrimaryKey"

    /// The long-named entity (two uniqueness constraints; relationships to Mapped: a to-many
    /// without inverse, so its join table is named after the long name; an ordered to-many, so an
    /// order column too; a to-one), named `name`, with `extra` attributes.
    static func model(holder name: String = holder, renamingIdentifier: String? = nil, extra: [AttributeDescription] = []) -> ObjectModel {
        try! ObjectModel(entities: [
            EntityDescription(
                name: name,
                attributes: [AttributeDescription("code", .string), AttributeDescription("serial", .integer64)] + extra,
                relationships: [
                    RelationshipDescription("mappedEntities", destination: "Mapped", toMany: true),
                    RelationshipDescription(
                        "orderedMappedEntities", destination: "Mapped", inverse: "orderedHolder", toMany: true, ordered: true),
                    RelationshipDescription("favoriteMappedEntity", destination: "Mapped", inverse: "favoriteOf"),
                ],
                uniquenessConstraints: [["code"], ["serial"]], renamingIdentifier: renamingIdentifier),
            EntityDescription(
                name: "Mapped", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("orderedHolder", destination: name, inverse: "orderedMappedEntities"),
                    RelationshipDescription("favoriteOf", destination: name, inverse: "favoriteMappedEntity", toMany: true),
                ]),
        ])
    }

    /// Saves holders "a" (serial 1) and "b" (serial 2), both linked to mapped objects "x" and "y",
    /// "a"'s favorite "x", "a"'s ordered list "z", "w" (inserted in the other order).
    static func fill(_ stack: PersistentStack, holder: String = holder) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var mapped: [String: EntityObject] = [:]
            for name in ["w", "x", "y", "z"] {
                mapped[name] = try context.insert(entityName: "Mapped")
                try mapped[name]!.setValue(name, forKey: "name")
            }
            for (code, serial) in [("a", 1), ("b", 2)] {
                let object = try context.insert(entityName: holder)
                try object.setValue(code, forKey: "code")
                try object.setValue(Int64(serial), forKey: "serial")
                try object.setRelatedObjects([mapped["x"]!, mapped["y"]!], forKey: "mappedEntities")
                if code == "a" {
                    try object.setRelatedObject(mapped["x"]!, forKey: "favoriteMappedEntity")
                    try object.setRelatedObjects([mapped["z"]!, mapped["w"]!], forKey: "orderedMappedEntities")
                }
            }
            try context.save()
        }
    }

    /// Each holder's code, the names of its mapped objects, its ordered list and its favorite's name.
    static func contents(_ stack: PersistentStack, holder: String = holder) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: holder, sortKeys: [SortKey("code")])).map { object in
                func names(_ key: String) throws -> [String] {
                    try object.relatedObjects(forKey: key).map { try $0.value(forKey: "name", as: String.self) }
                }
                let favorite = try object.relatedObject(forKey: "favoriteMappedEntity")?.value(forKey: "name", as: String.self)
                let code = try object.value(forKey: "code", as: String.self)
                return "\(code) \(try names("mappedEntities").sorted()) \(try names("orderedMappedEntities")) \(favorite ?? "-")"
            }
        }
    }

    /// Saves a holder with `code` and `serial`; the error the save throws, if any.
    static func saveHolder(_ stack: PersistentStack, code: String, serial: Int64, holder: String = holder) -> SkerryError? {
        let context = stack.newBackgroundContext()
        return context.performAndWait {
            do {
                let object = try context.insert(entityName: holder)
                try object.setValue(code, forKey: "code")
                try object.setValue(serial, forKey: "serial")
                try context.save()
                return nil
            } catch {
                return error as? SkerryError
            }
        }
    }

    static let filled = [#"a ["x", "y"] ["z", "w"] x"#, #"b ["x", "y"] [] -"#]

    @Test func longNamesHoldRowsLinksAndEveryConstraint() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(try PostgresTestServer.stack(Self.model(), schema))
        // Read back by a new stack (which loads the existing schema).
        let stack = try PostgresTestServer.stack(Self.model(), schema)
        #expect(try Self.contents(stack) == Self.filled)
        // Both constraints hold: their unique indexes, named after the same cut entity name, are two.
        let sameCode = Self.saveHolder(stack, code: "a", serial: 3)
        #expect(sameCode?.code == .constraintViolation)
        #expect(sameCode?.key == "code")
        let sameSerial = Self.saveHolder(stack, code: "c", serial: 2)
        #expect(sameSerial?.code == .constraintViolation)
        #expect(sameSerial?.key == "serial")
        #expect(Self.saveHolder(stack, code: "c", serial: 3) == nil)
    }

    @Test func everyConstraintOfALongNamedEntityHolds() throws {
        // Without relationships: index names cut after 63 bytes made the two unique indexes one.
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: Self.holder, attributes: [AttributeDescription("code", .string), AttributeDescription("serial", .integer64)],
                uniquenessConstraints: [["code"], ["serial"]])
        ])
        let stack = try PostgresTestServer.stack(model, PostgresTestServer.newSchema())
        #expect(Self.saveHolder(stack, code: "a", serial: 1) == nil)
        #expect(Self.saveHolder(stack, code: "a", serial: 2)?.key == "code")
        #expect(Self.saveHolder(stack, code: "b", serial: 1)?.key == "serial")
    }

    @Test func aRenamedLongNamedEntityKeepsItsRowsLinksAndConstraints() throws {
        let schema = PostgresTestServer.newSchema()
        try Self.fill(try PostgresTestServer.stack(Self.model(), schema))
        // Renamed (another long name) with a new attribute: the table is renamed, its indexes made again.
        let version2 = Self.model(
            holder: Self.renamedHolder, renamingIdentifier: Self.holder,
            extra: [AttributeDescription("note", .string, isOptional: true)])
        let stack = try PostgresTestServer.stack(version2, schema)
        #expect(try Self.contents(stack, holder: Self.renamedHolder) == Self.filled)
        #expect(Self.saveHolder(stack, code: "c", serial: 2, holder: Self.renamedHolder)?.key == "serial")
        #expect(Self.saveHolder(stack, code: "c", serial: 3, holder: Self.renamedHolder) == nil)
        // The old table's indexes went with its old name: each index is there once.
        let connection = try PostgresTestServer.connect()
        let indexes = try connection.textRows(
            "SELECT indexname FROM pg_indexes WHERE schemaname = ? ORDER BY indexname", [.string(schema)]
        ).map { $0[0] }
        #expect(indexes.filter { $0.contains("__unique__") }.count == 2)
        #expect(indexes.filter { $0.contains("__index__") }.count == 2) // the foreign keys favoriteMappedEntity, orderedHolder
        // Loading again finds nothing to migrate.
        #expect(try Self.contents(try PostgresTestServer.stack(version2, schema), holder: Self.renamedHolder).count == 3)
    }

    @Test func aKeySequenceNamedAsTheServerCutItKeepsHandingOutNewKeys() throws {
        // A store made before sequence names were kept within 63 bytes: its sequence has the
        // server's cut of "_skerry_seq_" + the long root name.
        let schema = PostgresTestServer.newSchema()
        try Self.fill(try PostgresTestServer.stack(Self.model(), schema))
        let connection = try PostgresTestServer.connect()
        let q = SQLBuilder.quote
        let cut = StoreIndexes.storedName(PostgresStore.sequencePrefix + Self.holder)
        try connection.execute("ALTER SEQUENCE \(q(schema)).\(q(PostgresStore.sequenceName(Self.holder))) RENAME TO \(q(cut))")
        let stack = try PostgresTestServer.stack(Self.model(), schema)
        #expect(Self.saveHolder(stack, code: "c", serial: 3) == nil) // a key no row has
        #expect(try Self.contents(stack).count == 3)
        let sequences = try connection.textRows(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = ? ORDER BY sequencename", [.string(schema)]
        ).map { $0[0] }
        #expect(sequences.contains(PostgresStore.sequenceName(Self.holder)) && !sequences.contains(cut))
    }

    @Test func namesThatPostgreSQLWouldCutToOneAreRefused() throws {
        let long = String(repeating: "x", count: 70)
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Item", attributes: [AttributeDescription(long + "A", .string), AttributeDescription(long + "B", .string)])
        ])
        let error = expectError(.storeLoadFailed) { _ = try PostgresTestServer.stack(model, PostgresTestServer.newSchema()) }
        #expect(error?.message.contains("'\(long)A' and '\(long)B'") == true)
        #expect(error?.entityName == "Item")
    }
}
