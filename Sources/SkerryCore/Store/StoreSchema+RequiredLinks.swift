extension MigrationStepSpec {
    /// Whether the step's code may leave a required to-one relationship empty: a `keepsRow`
    /// (the links to the rows it leaves out go with them) or a `finish` (the objects it makes, a
    /// mapping model's second entity mapping's among them). Core Data's migration manager
    /// validates every destination object before it saves them, and fails on such a one.
    package var checksRequiredLinks: Bool { custom?.keepsRow != nil || custom?.finish != nil }
}

extension StoreSchema {
    /// Fails when a required to-one relationship that a row keeps in its own foreign-key column
    /// is empty in some rows of `entities` (the store's, after a migration step).
    /// - Throws: ``SkerryError/Code/missingRequiredValue`` naming the entity, the relationship
    ///   and how many rows have no link (a save of such an object fails the same way).
    package func checkRequiredLinks(entities: [EntityDescription], number: Int, _ connection: some StoreSQLConnection) throws {
        let q = SQLBuilder.quote
        let layout = RelationshipLayout(entities: entities)
        for entity in entities {
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isOptional {
                guard case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name] else { continue }
                let empty = try connection.scalarInt64("SELECT count(*) FROM \(q(entity.name)) WHERE \(q(column)) IS NULL", []) ?? 0
                guard empty > 0 else { continue }
                throw SkerryError(
                    .missingRequiredValue,
                    "Step \(number): the required relationship '\(entity.name).\(relationship.name)' is empty in \(empty) row(s) after the step: the objects it linked to were left out (by the step's keepsRow or a mapping model's filter predicate), or the step made objects without that link. Core Data's migration fails the same way when it validates the migrated objects. Keep the objects they link to, or make the relationship optional.",
                    entityName: entity.name, key: relationship.name)
            }
        }
    }
}
