import Foundation
import SkerryCore

/// Migrations the PostgreSQL store makes in place, inside the load's transaction (PostgreSQL's DDL
/// is transactional): a failure anywhere rolls every step back and leaves the schema as it was.
///
/// A step renames tables and columns (renaming identifiers, a plan step's renames), drops removed
/// entities and attributes, changes number types with `ALTER COLUMN … TYPE` after checking that
/// every value fits exactly, fills required attributes that were optional with their default,
/// rebuilds relationship storage and carries every link over (through temporary tables), runs a
/// plan step's `prepare`, `keepsRow` (deleting the rows it leaves out, and with them their links,
/// before anything else changes), `transformRow` and `finish`, and checks that every row is still there: the same
/// "carry every row and link or fail saying what could not be carried" rule as the SQLite store.
///
/// With entity hierarchies (a table per entity, keys unique in a hierarchy, from its root's
/// sequence), as the SQLite store's rebuilding migration: keys carry over to the sequence of each
/// hierarchy of the new version; where hierarchies merge, the rows whose keys clash get new ones
/// (``MigrationKeys``) before anything else changes; relationships are carried once per
/// hierarchy, in every table of it (``MigrationLinks``); the uniqueness triggers across
/// hierarchies are dropped for the step and made again at its end, after checking the rows.
extension PostgresStore {
    /// Runs one step in the open transaction.
    static func runMigrationStep(_ step: MigrationStepSpec, _ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        let custom = step.custom
        let transforms = custom?.transformRow != nil
        let mapping = SchemaMapping(
            from: step.source, to: step.destination,
            renamedAttributes: custom?.renamedAttributes ?? [:], renamedEntities: custom?.renamedEntities ?? [:],
            renamedRelationships: custom?.renamedRelationships ?? [:], convertsValues: transforms)
        if !mapping.problems.isEmpty {
            throw SkerryError(
                .modelMismatch,
                "Step \(step.number): " + mapping.problems.joined(separator: "; ")
                    + ". Give the store description a MigrationPlan whose step converts it (transformRow).")
        }
        let oldLayout = RelationshipLayout(schema: step.source), newLayout = RelationshipLayout(entities: step.destination)
        // Uniqueness across hierarchies is checked by triggers that read the tables of other
        // entities: they go for the step, and are made again (after checking every row) at its end.
        try syncFamilyUniqueness([], connection)
        let keys = try MigrationKeys(step, connection)

        // The rows a step's code reads, as they were; then the rows the step leaves out go
        // (before the links are read: those of rows no longer there are not carried).
        var sourceRows: [String: [MigrationRow]] = [:]
        if transforms || custom?.finish != nil || custom?.prepare != nil || custom?.keepsRow != nil {
            for entity in step.source.entities {
                sourceRows[entity.name] = try readRows(entity, layout: oldLayout, connection)
            }
        }
        if let prepare = custom?.prepare {
            try prepare(migrationContext(step, sourceRows: sourceRows, layout: newLayout, connection).readingOnly())
        }
        var leftOut: [String: Set<Int64>] = [:]
        if let keepsRow = custom?.keepsRow {
            leftOut = try leaveOut(mapping, sourceRows: sourceRows, keepsRow, connection)
        }
        // What must survive: each kept entity's row count, the links.
        var rowCounts: [String: Int64] = [:]
        for entityMapping in mapping.entities {
            rowCounts[entityMapping.destination.name] = try count(connection, "SELECT count(*) FROM \(q(entityMapping.source.name))")
        }
        let renumbered = try keys.renumberClashingKeys(mapping, layout: oldLayout, connection)
        let links = try MigrationLinks(
            mapping: mapping, destination: step.destination, oldLayout: oldLayout, newLayout: newLayout, number: step.number, connection)

        // Relationship storage goes, then removed entities, then renames (through temporary
        // names, so that names can be swapped), then attribute changes.
        for table in oldLayout.joinTables.sorted() { try connection.execute("DROP TABLE \(q(table))") }
        for entityMapping in mapping.entities {
            for column in (oldLayout.extraColumns[entityMapping.source.name] ?? []).sorted() {
                try connection.execute("ALTER TABLE \(q(entityMapping.source.name)) DROP COLUMN \(q(column))")
            }
        }
        for entity in mapping.droppedEntities {
            try connection.execute("DROP TABLE \(q(entity.name))")
        }
        let renamed = mapping.entities.filter { $0.source.name != $0.destination.name }
        for (position, entityMapping) in renamed.enumerated() {
            try renameTable(entityMapping.source.name, to: "_skerry_migrating_\(position)", connection)
        }
        for (position, entityMapping) in renamed.enumerated() {
            try renameTable("_skerry_migrating_\(position)", to: entityMapping.destination.name, connection)
        }
        for entityMapping in mapping.entities {
            try migrateAttributes(entityMapping, transforms: transforms, number: step.number, connection)
        }
        for entity in mapping.newEntities {
            try schema.createTable(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        let newNames = Set(mapping.newEntities.map(\.name))
        for entity in step.destination where !newNames.contains(entity.name) {
            for column in (newLayout.extraColumns[entity.name] ?? []).sorted() {
                try connection.execute("ALTER TABLE \(q(entity.name)) ADD COLUMN \(q(column)) bigint")
            }
        }
        for table in newLayout.joinTables.sorted() { try schema.createJoinTable(table, connection) }
        // Statements prepared before the columns changed type would keep their old result and
        // parameter types (the server refuses them: "cached plan must not change result type").
        try connection.clearStatementCache()
        try links.write(connection)
        // The links the step carried are checked before its code runs (what transformRow or
        // finish then change is the step's business, as with the SQLite store).
        try links.verify(connection)
        try links.drop(connection)
        try keys.carry(mapping, connection)

        // Where the old rows went (read when the step has code), for its transformRow and finish.
        var kept: [String: Set<Int64>] = [:]
        for entityMapping in mapping.entities {
            let name = entityMapping.source.name
            kept[name] = Set((sourceRows[name] ?? []).map(\.primaryKey)).subtracting(leftOut[name] ?? [])
        }
        let carried = CarriedRows(source: step.source, kept: kept, renumbered: renumbered)
        if let transform = custom?.transformRow {
            try CarriedRows.$current.withValue(carried) {
                try transformRows(mapping, sourceRows: sourceRows, renumbered: renumbered, layout: newLayout, transform, connection)
            }
        }
        if let finish = custom?.finish {
            try finish(migrationContext(step, sourceRows: sourceRows, layout: newLayout, carried: carried, connection))
        }
        // Derived attributes new or changed in this version, or made stale by the step's code, get
        // their values in every row.
        try schema.fillDerivedAttributes(of: step, mapping, connection)
        if step.checksLinks { try schema.checkMigratedLinks(of: step, mapping, connection) }
        // Every row is still there, every required value set, every link carried.
        for entityMapping in mapping.entities {
            let name = entityMapping.destination.name
            let now = try count(connection, "SELECT count(*) FROM \(q(name))")
            if now < rowCounts[name] ?? 0 {
                throw SkerryError(
                    .migrationWouldLoseData,
                    "Step \(step.number): '\(entityMapping.source.name)' had \(rowCounts[name] ?? 0) rows and '\(name)' has \(now) after the step.",
                    entityName: name)
            }
            for attribute in entityMapping.destination.storedAttributes where !attribute.isOptional {
                let empty = try count(connection, "SELECT count(*) FROM \(q(name)) WHERE \(q(attribute.name)) IS NULL")
                if empty > 0 {
                    throw SkerryError(
                        .missingRequiredValue,
                        "Step \(step.number): '\(name).\(attribute.name)' is required and has no default value, and \(empty) rows have no value for it; Core Data's lightweight migration fails the same way. Give the attribute a default value, or migrate with a MigrationPlan step that sets it.",
                        entityName: name, key: attribute.name)
                }
            }
        }
        for entity in step.destination where !newNames.contains(entity.name) {
            try schema.syncIndexes(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        try syncFamilyUniqueness(step.destination, connection)
        try schema.writeModelMetadata(model: step.model, entities: step.destination, connection)
        try connection.clearStatementCache() // the next step's, and the store's, start afresh
    }

    /// The integer a one-value query returns (0 for NULL).
    static func count(_ connection: PostgresConnection, _ sql: String, _ bindings: [AttributeValue] = []) throws -> Int64 {
        let result = try connection.query(sql, bindings)
        return result.rowCount > 0 && !result.isNull(0, 0) ? result.int64(0, 0) : 0
    }

    /// Renames a table with its primary-key index and Skerry indexes (which
    /// ``StoreSchema/syncIndexes`` makes again under the new name); key sequences follow the
    /// hierarchies (``MigrationKeys/carry(_:_:)``).
    private static func renameTable(_ old: String, to new: String, _ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        // The server names a table's key index after as much of the table's name as fits before "_pkey".
        func keyIndex(_ table: String) -> String { StoreIndexes.clipped(table, toBytes: StoreIndexes.identifierLimit - 5) + "_pkey" }
        let indexes = try connection.query(
            "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ?",
            [.string(StoreIndexes.storedName(old))])
        for row in 0..<indexes.rowCount {
            let name = indexes.text(row, 0)
            if name == keyIndex(old) {
                try connection.execute("ALTER INDEX \(q(name)) RENAME TO \(q(keyIndex(new)))")
            } else if StoreIndexes.isSkerryIndex(name, of: old) {
                try connection.execute("DROP INDEX \(q(name))")
            }
        }
        try connection.execute("ALTER TABLE \(q(old)) RENAME TO \(q(new))")
    }

    /// Brings a kept entity's attribute columns to the new version: removed ones dropped, renamed
    /// ones renamed, number types changed once every value was checked to fit exactly, new ones
    /// added with their default, required ones that were optional filled with their default.
    private static func migrateAttributes(
        _ entityMapping: SchemaMapping.EntityMapping, transforms: Bool, number: Int, _ connection: PostgresConnection
    ) throws {
        let q = SQLBuilder.quote
        let table = q(entityMapping.destination.name)
        let kept = Set(entityMapping.attributes.compactMap { $0?.name })
        for old in entityMapping.source.attributes where !kept.contains(old.name) {
            try connection.execute("ALTER TABLE \(table) DROP COLUMN \(q(old.name))")
        }
        let pairs = zip(entityMapping.destination.storedAttributes, entityMapping.attributes).compactMap { new, old in
            old.map { (new: new, old: $0) }
        }
        let renamed = pairs.filter { $0.new.name != $0.old.name }
        for (position, pair) in renamed.enumerated() {
            try connection.execute("ALTER TABLE \(table) RENAME COLUMN \(q(pair.old.name)) TO \(q("_skerry_migrating_\(position)"))")
        }
        for (position, pair) in renamed.enumerated() {
            try connection.execute("ALTER TABLE \(table) RENAME COLUMN \(q("_skerry_migrating_\(position)")) TO \(q(pair.new.name))")
        }
        for (new, old) in pairs where new.type != old.type {
            let column = q(new.name)
            guard SchemaMapping.canConvert(old.type, to: new.type) else {
                // Only with a step's transformRow (else the mapping refused the step): the column
                // starts empty in its new type and transformRow sets it from the old row.
                try connection.execute("ALTER TABLE \(table) DROP COLUMN \(column)")
                try connection.execute("ALTER TABLE \(table) ADD COLUMN \(column) \(columnType(new.type))")
                continue
            }
            let value = old.type == .boolean ? "(CASE WHEN \(column) THEN 1 ELSE 0 END)::numeric" : "\(column)::numeric"
            if let lossy = lossyCondition(value, to: new.type) {
                let found = try connection.query(
                    "SELECT \(q(SQLBuilder.primaryKeyColumn)), \(column)::text FROM \(table) WHERE \(column) IS NOT NULL AND (\(lossy)) LIMIT 1"
                )
                if found.rowCount > 0 {
                    throw SkerryError(
                        .migrationWouldLoseData,
                        "Step \(number): the value \(found.text(0, 1)) of '\(entityMapping.source.name).\(old.name)' in row \(found.int64(0, 0)) does not fit '\(entityMapping.destination.name).\(new.name)', which is \(new.type) now (it was \(old.type)).",
                        entityName: entityMapping.destination.name, key: new.name)
                }
            }
            guard columnType(old.type) != columnType(new.type) else { continue }
            let using = new.type == .boolean ? "(\(value) <> 0)" : "(\(value))::\(columnType(new.type))"
            try connection.execute("ALTER TABLE \(table) ALTER COLUMN \(column) TYPE \(columnType(new.type)) USING \(using)")
        }
        for (attribute, old) in zip(entityMapping.destination.storedAttributes, entityMapping.attributes) {
            if old == nil {
                try connection.execute("ALTER TABLE \(table) ADD COLUMN \(q(attribute.name)) \(columnType(attribute.type))")
            }
            if !attribute.defaultValue.isNull && (old == nil || !attribute.isOptional) {
                try connection.query(
                    "UPDATE \(table) SET \(q(attribute.name)) = ? WHERE \(q(attribute.name)) IS NULL", [attribute.defaultValue])
            }
        }
    }

    /// The SQL condition under which the number `value` does not fit `type` exactly (nil: always
    /// fits). Conservative for doubles: PostgreSQL compares them through 15 significant digits.
    private static func lossyCondition(_ value: String, to type: AttributeType) -> String? {
        switch type {
        case .boolean: return "\(value) NOT IN (0, 1)"
        case .integer16, .integer32, .integer64:
            let range = type.integerRange
            return "\(value) <> trunc(\(value)) OR \(value) < \(range.lowerBound) OR \(value) > \(range.upperBound)"
        case .double: return "\(value)::double precision::numeric <> \(value)"
        case .float: return "\(value)::real::double precision::numeric <> \(value)"
        default: return nil
        }
    }

    /// Every row of an old entity, as a step's code sees it: attribute values and to-one keys
    /// (as `.int`) by name.
    private static func readRows(
        _ entity: StoredSchema.Entity, layout: RelationshipLayout, _ connection: PostgresConnection
    ) throws -> [MigrationRow] {
        let q = SQLBuilder.quote
        let foreignKeys = entity.relationships.compactMap { relationship -> String? in
            if case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name] { return column }
            return nil
        }
        let columns = [SQLBuilder.primaryKeyColumn] + entity.attributes.map(\.name) + foreignKeys
        let result = try connection.query(
            "SELECT \(columns.map(q).joined(separator: ", ")) FROM \(q(entity.name)) ORDER BY \(q(SQLBuilder.primaryKeyColumn))")
        return (0..<result.rowCount).map { row in
            var values: [String: AttributeValue] = [:]
            for (index, attribute) in entity.attributes.enumerated() {
                values[attribute.name] = result.value(row, Int32(index + 1), as: attribute.type) ?? .null
            }
            for (index, column) in foreignKeys.enumerated() {
                let position = Int32(entity.attributes.count + 1 + index)
                values[column] = result.isNull(row, position) ? .null : .int(result.int64(row, position))
            }
            return MigrationRow(primaryKey: result.int64(row, 0), values: values)
        }
    }

    /// Deletes from the old tables the rows a step's `keepsRow` leaves out of the new version;
    /// returns their keys by old entity name.
    private static func leaveOut(
        _ mapping: SchemaMapping, sourceRows: [String: [MigrationRow]],
        _ keepsRow: (_ entity: String, _ source: MigrationRow) throws -> Bool, _ connection: PostgresConnection
    ) throws -> [String: Set<Int64>] {
        let q = SQLBuilder.quote
        var leftOut: [String: Set<Int64>] = [:]
        for entityMapping in mapping.entities {
            var left: [Int64] = []
            for row in sourceRows[entityMapping.source.name] ?? [] {
                if try !keepsRow(entityMapping.destination.name, row) { left.append(row.primaryKey) }
            }
            var start = 0
            while start < left.count {
                let keys = left[start..<min(start + 500, left.count)]
                try connection.execute(
                    "DELETE FROM \(q(entityMapping.source.name)) WHERE \(q(SQLBuilder.primaryKeyColumn)) IN (\(keys.map(String.init).joined(separator: ", ")))"
                )
                start += keys.count
            }
            leftOut[entityMapping.source.name] = Set(left)
        }
        return leftOut
    }

    /// Runs a step's `transformRow` on each kept row (the old row as it was, the new one as the
    /// step made it) and writes what it changed.
    private static func transformRows(
        _ mapping: SchemaMapping, sourceRows: [String: [MigrationRow]], renumbered: [String: [Int64: Int64]],
        layout: RelationshipLayout,
        _ transform: (_ entity: String, _ source: MigrationRow, _ destination: inout MigrationRow) throws -> Void,
        _ connection: PostgresConnection
    ) throws {
        let q = SQLBuilder.quote
        for entityMapping in mapping.entities {
            let entity = entityMapping.destination
            let migrated = Dictionary(
                uniqueKeysWithValues: try readRows(StoredSchema(entities: [entity]).entities[0], layout: layout, connection).map {
                    ($0.primaryKey, $0)
                })
            for source in sourceRows[entityMapping.source.name] ?? [] {
                let key = renumbered[entityMapping.source.name]?[source.primaryKey] ?? source.primaryKey
                guard let prepared = migrated[key] else { continue }
                var row = prepared
                for (attribute, old) in zip(entity.storedAttributes, entityMapping.attributes) {
                    // A value no number conversion carries (the column starts empty in its new
                    // type) is handed to transformRow as it was, for it to convert.
                    if let old, prepared[attribute.name].isNull, !source[old.name].isNull { row[attribute.name] = source[old.name] }
                }
                try transform(entity.name, source, &row)
                let changed = prepared.values.keys.filter { row[$0] != prepared[$0] }.sorted()
                guard !changed.isEmpty else { continue }
                try connection.query(
                    "UPDATE \(q(entity.name)) SET \(changed.map { "\(q($0)) = ?" }.joined(separator: ", ")) WHERE \(q(SQLBuilder.primaryKeyColumn)) = ?",
                    changed.map { row[$0] } + [.int(key)])
            }
        }
    }

    /// What a step's `finish` gets: the old rows as read before the step, inserts into the
    /// new tables (keys from the sequence of each entity's hierarchy), and where the step put
    /// the old rows (nil in `prepare`).
    private static func migrationContext(
        _ step: MigrationStepSpec, sourceRows: [String: [MigrationRow]], layout: RelationshipLayout, carried: CarriedRows? = nil,
        _ connection: PostgresConnection
    ) -> MigrationContext {
        let q = SQLBuilder.quote
        return MigrationContext(
            source: step.sourceEntities, destination: step.model,
            readSource: { entity in sourceRows[entity.name] ?? [] },
            insertRow: { entity, values in
                let root = StoreWritePlanner.keyRoot(entity, among: step.destination)
                let key = try count(connection, "SELECT nextval(?::regclass)", [.string(q(sequenceName(root.name)))])
                var columns = [SQLBuilder.primaryKeyColumn], bindings: [AttributeValue] = [.int(key)]
                for attribute in entity.storedAttributes {
                    columns.append(attribute.name)
                    bindings.append(values[attribute.name] ?? attribute.defaultValue)
                }
                for relationship in entity.relationships {
                    if case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name], let value = values[column] {
                        columns.append(column)
                        bindings.append(value)
                    }
                }
                try connection.query(
                    "INSERT INTO \(q(entity.name)) (\(columns.map(q).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
                    bindings)
                return key
            }, keepsRow: step.custom?.keepsRow, carried: carried)
    }
}

extension PostgresStore {
    /// Runs `steps` in the open transaction (the caller rolls it back on failure), telling
    /// `events` of each step done (before the transaction commits); a failure is reported as the
    /// migration's, naming what could not be carried.
    static func runMigration(
        _ steps: [MigrationStepSpec], description: StoreDescription, model: ObjectModel, events: EventHub?,
        fromVersionHash: String?, _ connection: PostgresConnection
    ) throws {
        do {
            try MigrationStepSpec.runAll(steps, description: description, events: events, fromVersionHash: fromVersionHash) { step in
                try runMigrationStep(step, connection)
            }
            // The steps rebuilt the tables (new keys, new entity names): the history recorded
            // before no longer describes the store, and every token taken before expires.
            if try historyTablesExist(connection) { try expireAllHistory(connection) }
        } catch {
            let reason = error as? SkerryError ?? mapError(error, entity: nil)
            let code: SkerryError.Code = reason.code == .migrationWouldLoseData ? reason.code : .modelMismatch
            var failure = SkerryError(
                code,
                "The migration of \(description) to its current model (\(model.versionHash)) failed: \(reason.message) The store was left as it was.",
                entityName: reason.entityName, key: reason.key)
            failure.underlyingError = error
            throw failure
        }
    }
}
