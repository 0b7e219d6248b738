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
    /// new entity `entity`) empty in a step with code: the step alone when every row had a link
    /// in the version left that the step carries (the relationship was required there, to-one or
    /// to-many, to the same objects; or its entity is new: the step made every object of it);
    /// otherwise also what the version left allowed or the schema change dropped, each said as
    /// it is: a relationship optional there, a to-many one an object could leave empty, a new
    /// one (linked only by the step's code and by its inverse's old links), or a destination
    /// whose old objects it cannot hold.
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
        var before: [String] = []
        if let old = entityMapping.relationships[index].flatMap({ oldEntity?.relationship(named: $0.name) }) {
            // As a save validates: a to-many one needs max(minCount, 1 unless optional) members.
            let couldBeEmpty = old.isToMany ? max(old.minCount, old.isOptional ? 0 : 1) == 0 : old.isOptional
            if couldBeEmpty {
                before.append(
                    old.isToMany
                        ? "it was to-many in the version left ('\(entityMapping.source.name).\(old.name)'), where an object could have no related object, so these may be rows that had no link before the step"
                        : "it was optional in the version left, so these may be rows that had no link before the step")
            }
            // Links are carried to objects the new destination can hold (SQLiteStore.LinkReader):
            // none when the old destination's objects became another entity's, or went.
            let became = mapping.mapping(ofSource: old.destinationEntityName)?.destination
            let went = mapping.droppedEntities.contains { $0.name == old.destinationEntityName }
            if went || became.map({ !$0.isKind(ofEntityNamed: relationship.destinationEntityName) }) == true {
                before.append(
                    "its destination changed (it linked to '\(old.destinationEntityName)' objects in the version left, which are not '\(relationship.destinationEntityName)' objects now), so those links were not carried"
                )
            }
        } else {
            before.append(
                "it is new in this version (no relationship of the version left maps to it), so a row has a link only where the step's code gave it one (a transformRow or finish, or a mapping model's value expression) or where its inverse linked the row in the version left"
            )
        }
        guard !before.isEmpty else { return stepAlone }
        return
            "\(before.joined(separator: "; ")); or \(stepCauses) Give them one in the step's transformRow or finish, keep the objects they link to, or make the relationship optional."
    }
}
