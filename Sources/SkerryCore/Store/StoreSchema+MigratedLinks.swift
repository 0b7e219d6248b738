extension MigrationStepSpec {
    /// Whether the step's code may leave a link empty or naming no object: a `keepsRow` (the
    /// links to the rows it leaves out go with them), a `transformRow` (which may change a row's
    /// foreign keys) or a `finish` (the objects it makes, a mapping model's second entity
    /// mapping's among them). Core Data's migration manager validates every destination object
    /// before it saves them, and fails on a required relationship left empty; a link to an
    /// object the store does not have cannot be saved at all.
    package var checksLinks: Bool { custom?.keepsRow != nil || custom?.transformRow != nil || custom?.finish != nil }
}

extension StoreSchema {
    /// Fails when a to-one link that a row keeps in its own foreign-key column (the store's,
    /// after the migration step `step`, whose entities `mapping` maps) names no row of the
    /// relationship's destination entity or its subentities, or when a required one is empty.
    /// Every entity is checked, as Core Data's migration manager validates every object it
    /// migrated (a step without code is a lightweight migration, which validates none).
    /// - Throws: ``SkerryError/Code/relationshipViolation`` for links to objects the store does
    ///   not have; ``SkerryError/Code/missingRequiredValue`` for a required relationship left
    ///   empty (a save of such an object fails the same way); each names the entity, the
    ///   relationship and how many rows, and what may have left them so: the step, or (for a
    ///   relationship new or optional in the version left) rows that had no link before it.
    package func checkMigratedLinks(of step: MigrationStepSpec, _ mapping: SchemaMapping, _ connection: some StoreSQLConnection) throws {
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        let entities = step.destination, number = step.number
        let layout = RelationshipLayout(entities: entities)
        for entity in entities {
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isToMany {
                guard case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name] else { continue }
                let table = q(entity.name), key = q(column)
                let absent = entities.filter { $0.isKind(ofEntityNamed: relationship.destinationEntityName) }.map {
                    " AND NOT EXISTS (SELECT 1 FROM \(q($0.name)) AS _t WHERE _t.\(pk) = _r.\(key))"
                }
                // (A destination this store does not hold has no table to look in.)
                let dangling =
                    absent.isEmpty
                    ? 0
                    : try connection.scalarInt64("SELECT count(*) FROM \(table) AS _r WHERE _r.\(key) IS NOT NULL" + absent.joined(), [])
                        ?? 0
                if dangling > 0 {
                    throw SkerryError(
                        .relationshipViolation,
                        "Step \(number): \(dangling) row(s) of '\(entity.name)' link '\(relationship.name)' to '\(relationship.destinationEntityName)' objects the store does not have after the step (keys the step's transformRow or finish wrote that no row has: a row the step left out, or an old key the step gave another row; MigrationContext.carriedKey(of:_:) gives a row's key in the new store).",
                        entityName: entity.name, key: relationship.name)
                }
                guard !relationship.isOptional else { continue }
                let empty = try connection.scalarInt64("SELECT count(*) FROM \(table) WHERE \(key) IS NULL", []) ?? 0
                guard empty > 0 else { continue }
                throw SkerryError(
                    .missingRequiredValue,
                    "Step \(number): the required relationship '\(entity.name).\(relationship.name)' is empty in \(empty) row(s) after the step: \(Self.causes(of: relationship, at: index, of: entity, step, mapping)) Core Data's migration fails the same way when it validates the migrated objects.",
                    entityName: entity.name, key: relationship.name)
            }
        }
    }

    /// What may have left the required to-one relationship `relationship` (number `index` of the
    /// new entity `entity`) empty in a step with code: the step alone when the relationship was
    /// required in the version left (or its entity is new: the step made every object of it);
    /// otherwise also the rows that had no link before the step.
    private static func causes(
        of relationship: RelationshipDescription, at index: Int, of entity: EntityDescription, _ step: MigrationStepSpec,
        _ mapping: SchemaMapping
    ) -> String {
        let stepCauses =
            "the objects it linked to were left out (by the step's keepsRow or a mapping model's filter predicate), or the step made or changed objects without that link."
        let stepAlone = stepCauses + " Keep the objects they link to, or make the relationship optional."
        guard let entityMapping = mapping.mapping(ofDestination: entity.name) else {
            return stepAlone
        }
        let oldEntity = step.sourceEntities.first { $0.name == entityMapping.source.name }
        let old = entityMapping.relationships[index].flatMap { oldEntity?.relationship(named: $0.name) }
        if let old, !old.isOptional, !old.isToMany {
            return stepAlone
        }
        let before =
            old == nil
            ? "it carries no links from the version left (it is new, or its destination changed)" : "it was optional in the version left"
        return
            "\(before), so these may be rows that had no link before the step; or \(stepCauses) Give them one in the step's transformRow or finish, keep the objects they link to, or make the relationship optional."
    }
}
