/// Uniqueness constraints across an entity hierarchy, the same for both stores of this package.
/// Core Data keeps a hierarchy in one table, so a constraint an entity declares holds among the
/// objects of all its sub-entities. Skerry keeps each entity in its own table, where a unique
/// index holds the constraint; across the tables of a hierarchy, each store adds triggers (in
/// its own dialect) that refuse a row whose values another table of the hierarchy already holds.
extension StoreSchema {
    /// A uniqueness constraint of an entity with sub-entities, and the entities whose tables
    /// must hold it together (the entity and its sub-entities among a store's entities).
    package struct FamilyConstraint {
        package let declaring: EntityDescription
        package let columns: [String]
        package let members: [EntityDescription]
        package var name: String { ObjectModel.fnv1a64Hex(declaring.name + ":" + columns.joined(separator: ",")) }
    }

    /// The constraints of `entities` (a store's entities) that span several tables: each held by
    /// the topmost entity of the store that has it.
    package static func familyConstraints(_ entities: [EntityDescription]) -> [FamilyConstraint] {
        entities.flatMap { entity -> [FamilyConstraint] in
            let members = entities.filter { $0.isKind(of: entity) }
            guard members.count > 1 else { return [] }
            let parent = entity.superentity.flatMap { parent in entities.first { $0 === parent } }
            return entity.uniquenessConstraints.filter { parent?.uniquenessConstraints.contains($0) != true }.map {
                FamilyConstraint(declaring: entity, columns: $0, members: members)
            }
        }
    }

    /// Checks that the rows already in the tables of `constraint` hold it, before its triggers
    /// are made.
    /// - Throws: ``SkerryError/Code/constraintViolation`` naming the entity and columns when
    ///   objects of different tables of a hierarchy share the values of the constraint.
    package static func checkFamilyDuplicates(_ constraint: FamilyConstraint, _ connection: some StoreSQLConnection) throws {
        let q = SQLBuilder.quote
        let columns = constraint.columns.map(q).joined(separator: ", ")
        let union = constraint.members.map { "SELECT \(columns) FROM \(q($0.name))" }.joined(separator: " UNION ALL ")
        let present = constraint.columns.map { "\(q($0)) IS NOT NULL" }.joined(separator: " AND ")
        let clashes =
            try connection.scalarInt64(
                "SELECT count(*) FROM (SELECT 1 FROM (\(union)) AS \(q("_rows")) WHERE \(present) GROUP BY \(columns) HAVING count(*) > 1) AS \(q("_clashes"))",
                []) ?? 0
        guard clashes > 0 else { return }
        throw SkerryError(
            .constraintViolation,
            "The uniqueness constraint (\(constraint.columns.joined(separator: ", "))) of '\(constraint.declaring.name)' holds across its sub-entities (\(constraint.members.map(\.name).joined(separator: ", "))), but \(clashes) set(s) of values are shared by objects of different sub-entities in the store. Nothing was changed: the duplicates must go before the store opens with this model.",
            entityName: constraint.declaring.name, key: constraint.columns.joined(separator: ","))
    }
}
