import Foundation

extension MigrationStepSpec {
    /// The derived attributes whose values the step computes for every row (Core Data computes a
    /// derived attribute when its object is saved, and a migrated store's rows are not saved
    /// again): those of entities new in the step, those new in their entity, and those whose
    /// derivation differs from the one the version left had (when the plan gives that version).
    /// In a step whose code leaves rows out, changes rows or makes objects (`keepsRow`,
    /// `transformRow`, `finish`: a mapping model's filters and second entity mappings among
    /// them), also every key path, text function and `@count` of the new version, whose values
    /// the rows and links left out or changed may have changed (Core Data saves every object
    /// such a migration makes, which computes them again).
    package func derivedAttributesToFill(_ mapping: SchemaMapping) -> [(entity: EntityDescription, attribute: AttributeDescription)] {
        let changesRows = custom?.keepsRow != nil || custom?.transformRow != nil || custom?.finish != nil
        var result: [(entity: EntityDescription, attribute: AttributeDescription)] = []
        for entity in destination {
            guard let entityMapping = mapping.mapping(ofDestination: entity.name) else {
                result += entity.storedAttributes.filter { $0.derivation != nil }.map { (entity, $0) }
                continue
            }
            let old = sourceEntities.first { $0.name == entityMapping.source.name }
            for (attribute, previous) in zip(entity.attributes, entityMapping.attributes) {
                guard let derivation = attribute.derivation else { continue }
                guard let previous else {
                    result.append((entity, attribute))
                    continue
                }
                if let old, old.attribute(named: previous.name)?.derivation != derivation {
                    result.append((entity, attribute))
                } else if changesRows && Self.readsRows(derivation) {
                    result.append((entity, attribute))
                }
            }
        }
        return result
    }

    /// Whether a derivation's value comes from the stored values and links (not from the time of
    /// the save), and Skerry computes it in a migration: an aggregate other than `@count` is not
    /// computed again when its derivation is unchanged (it keeps the value the object was last
    /// saved with).
    private static func readsRows(_ derivation: AttributeDerivation) -> Bool {
        switch derivation {
        case .keyPath, .count, .function: return true
        case .aggregate, .now: return false
        }
    }
}

extension StoreSchema {
    /// Computes `attributes` (derived attributes of `entities`, the store's) for every row, in
    /// SQL, as a save computes them: a key path (through to-one relationships), `@count` of a
    /// to-many relationship, `lowercase:`/`uppercase:`/`canonical:` of a text key path, and
    /// `now()` (the time of the migration, for the rows that have no value). Then a required one
    /// left without a value fails.
    /// - Throws: ``SkerryError/Code/modelMismatch`` for a derivation that cannot be computed for
    ///   existing rows (an aggregate other than `@count`, a key path whose value is of another
    ///   type, through a to-many relationship); ``SkerryError/Code/missingRequiredValue`` for a
    ///   required one some rows get no value for (a key path through an empty relationship).
    package func fillDerivedAttributes(
        _ attributes: [(entity: EntityDescription, attribute: AttributeDescription)], entities: [EntityDescription],
        number: Int?, _ connection: some StoreSQLConnection
    ) throws {
        guard !attributes.isEmpty else { return }
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        let layout = RelationshipLayout(entities: entities)
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let now = Date()
        for (entity, attribute) in attributes {
            guard let derivation = attribute.derivation else { continue }
            let table = q(entity.name), column = q(attribute.name)
            func cannot(_ why: String) -> SkerryError {
                SkerryError(
                    .modelMismatch,
                    "\(number.map { "Step \($0): " } ?? "")the derived attribute '\(entity.name).\(attribute.name)' (\(derivation)) is new or changed, and Skerry cannot compute it for the existing rows in a migration (\(why)); Core Data computes it when each object is saved. Set it with a MigrationPlan step's transformRow, or save each object once after the migration.",
                    entityName: entity.name, key: attribute.name)
            }
            /// The SQL of the value at `path` for the row `alias` of `entity`, and its attribute.
            var aliases = 0
            func value(_ path: [String], of entity: EntityDescription, _ alias: String) throws -> (sql: String, type: AttributeType) {
                if path.count == 1 {
                    guard let reached = entity.attribute(named: path[0]), !reached.isTransient else {
                        throw cannot("'\(entity.name)' has no stored attribute '\(path[0])'")
                    }
                    return ("\(alias).\(q(path[0]))", reached.type)
                }
                guard let relationship = entity.relationship(named: path[0]), !relationship.isToMany,
                    let destination = byName[relationship.destinationEntityName]
                else { throw cannot("'\(entity.name).\(path[0])' is no to-one relationship") }
                var parts: [String] = [], type: AttributeType?
                for member in entities where member.isKind(of: destination) {
                    aliases += 1
                    let inner = "_d\(aliases)"
                    let reached = try value(Array(path.dropFirst()), of: member, inner)
                    type = reached.type
                    switch layout.storage[entity.name]?[relationship.name] {
                    case .foreignKey(let key)?:
                        parts.append("(SELECT \(reached.sql) FROM \(q(member.name)) AS \(inner) WHERE \(inner).\(pk) = \(alias).\(q(key)))")
                    case .inverseForeignKey(_, let key, _)?:
                        parts.append("(SELECT \(reached.sql) FROM \(q(member.name)) AS \(inner) WHERE \(inner).\(q(key)) = \(alias).\(pk))")
                    default:
                        throw cannot("'\(entity.name).\(relationship.name)' is not stored")
                    }
                }
                guard let type else { throw cannot("'\(relationship.destinationEntityName)' is not in the store") }
                return (parts.count == 1 ? parts[0] : "COALESCE(\(parts.joined(separator: ", ")))", type)
            }
            switch derivation {
            case .now:
                let time: AttributeValue = attribute.type == .date ? .date(now) : .double(now.timeIntervalSinceReferenceDate)
                guard let converted = SchemaMapping.convert(time, to: attribute.type) else { throw cannot("now() is no \(attribute.type)") }
                try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(column) IS NULL", [converted])
            case .keyPath(let path):
                let reached = try value(path.split(separator: ".").map(String.init), of: entity, table)
                guard reached.type == attribute.type else {
                    throw cannot("its value is a \(reached.type), and the attribute a \(attribute.type)")
                }
                try connection.execute("UPDATE \(table) SET \(column) = \(reached.sql)")
            case .function(let name, let path):
                let reached = try value(path.split(separator: ".").map(String.init), of: entity, table)
                guard reached.type == .string, attribute.type == .string else { throw cannot("it is a text function") }
                let rows = try connection.textRows(
                    "SELECT CAST(\(pk) AS TEXT), CASE WHEN \(reached.sql) IS NULL THEN '' ELSE 'v' END, \(reached.sql) FROM \(table)", [])
                for row in rows {
                    guard let key = Int64(row[0]) else { continue }
                    let computed = row[1].isEmpty ? AttributeValue.null : .string(AttributeDerivation.apply(name, to: row[2]))
                    try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(pk) = ?", [computed, .int(key)])
                }
            case .count(let relationshipName):
                guard [.integer16, .integer32, .integer64].contains(attribute.type) else {
                    throw cannot("a count is an integer, and the attribute a \(attribute.type)")
                }
                guard let relationship = entity.relationship(named: relationshipName), relationship.isToMany,
                    let destination = byName[relationship.destinationEntityName]
                else { throw cannot("'\(entity.name).\(relationshipName)' is no to-many relationship") }
                let counts: [String]
                switch layout.storage[entity.name]?[relationshipName] {
                case .inverseForeignKey(_, let key, _)?:
                    counts = entities.filter { $0.isKind(of: destination) }.map {
                        "(SELECT count(*) FROM \(q($0.name)) AS _c WHERE _c.\(q(key)) = \(table).\(pk))"
                    }
                case .joinTable(let join, let sourceColumn, _, _)?:
                    counts = ["(SELECT count(*) FROM \(q(join)) AS _c WHERE _c.\(q(sourceColumn)) = \(table).\(pk))"]
                default:
                    throw cannot("'\(entity.name).\(relationshipName)' is not stored")
                }
                try connection.execute("UPDATE \(table) SET \(column) = \(counts.joined(separator: " + "))")
            case .aggregate:
                throw cannot("an aggregate other than @count")
            }
            if !attribute.isOptional,
                let empty = try connection.scalarInt64("SELECT count(*) FROM \(table) WHERE \(column) IS NULL", []), empty > 0
            {
                throw SkerryError(
                    .missingRequiredValue,
                    "\(number.map { "Step \($0): " } ?? "")the derived attribute '\(entity.name).\(attribute.name)' (\(derivation)) is required, and its derivation gives no value for \(empty) existing row(s).",
                    entityName: entity.name, key: attribute.name)
            }
        }
    }
}
