import Foundation

extension MigrationStepSpec {
    /// The derived attributes whose values the step must compute for every row (Core Data
    /// computes a derived attribute when its object is saved, and a migrated store's rows are not
    /// saved again): those of entities new in the step, those new in their entity, and those whose
    /// derivation differs from the one the version left had (when the plan gives that version).
    package func derivedAttributesToFill(_ mapping: SchemaMapping) -> [(entity: EntityDescription, attribute: AttributeDescription)] {
        derivedAttributes(mapping).filter { !$0.refresh }.map { ($0.entity, $0.attribute) }
    }

    /// The derived attributes, unchanged by the step, whose values the step's code may have made
    /// stale: in a step whose code leaves rows out, changes rows or makes objects (`keepsRow`,
    /// `transformRow`, `finish`: a mapping model's filters and second entity mappings among
    /// them), every key path, text function and `@count` of the new version (Core Data saves
    /// every object such a migration makes, which computes them again).
    package func derivedAttributesToRefresh(_ mapping: SchemaMapping) -> [(entity: EntityDescription, attribute: AttributeDescription)] {
        derivedAttributes(mapping).filter(\.refresh).map { ($0.entity, $0.attribute) }
    }

    private func derivedAttributes(_ mapping: SchemaMapping) -> [(
        entity: EntityDescription, attribute: AttributeDescription, refresh: Bool
    )] {
        let changesRows = custom?.keepsRow != nil || custom?.transformRow != nil || custom?.finish != nil
        var result: [(entity: EntityDescription, attribute: AttributeDescription, refresh: Bool)] = []
        for entity in destination {
            guard let entityMapping = mapping.mapping(ofDestination: entity.name) else {
                result += entity.storedAttributes.filter { $0.derivation != nil }.map { (entity, $0, false) }
                continue
            }
            let old = sourceEntities.first { $0.name == entityMapping.source.name }
            for (attribute, previous) in zip(entity.attributes, entityMapping.attributes) {
                guard let derivation = attribute.derivation else { continue }
                guard let previous else {
                    result.append((entity, attribute, false))
                    continue
                }
                if let old, old.attribute(named: previous.name)?.derivation != derivation {
                    result.append((entity, attribute, false))
                } else if changesRows && Self.readsRows(derivation) {
                    result.append((entity, attribute, true))
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
    /// Computes the derived attributes a migration step changes or may have made stale, in the
    /// step's transaction: ``MigrationStepSpec/derivedAttributesToFill(_:)`` and
    /// ``MigrationStepSpec/derivedAttributesToRefresh(_:)``.
    package func fillDerivedAttributes(of step: MigrationStepSpec, _ mapping: SchemaMapping, _ connection: some StoreSQLConnection) throws {
        try fillDerivedAttributes(
            step.derivedAttributesToFill(mapping), refreshing: step.derivedAttributesToRefresh(mapping), entities: step.destination,
            number: step.number, connection)
    }

    /// Computes `attributes` (derived attributes of `entities`, the store's) for every row, as a
    /// save computes them: a key path (through to-one relationships), `@count` of a to-many
    /// relationship, `lowercase:`/`uppercase:`/`canonical:` of a text key path, and `now()` (the
    /// time of the migration, for the rows that have no value); in SQL, or in Swift where a save
    /// converts the value to the attribute's number type or applies a text function. Then a
    /// required one left without a value fails. Only rows whose value changes are written.
    ///
    /// `refreshing` are derived attributes whose derivation did not change, computed again
    /// because a step's code may have changed what they read (Core Data's migration saves every
    /// object it makes, which computes them): one Skerry cannot compute fails the step as one
    /// of `attributes` does, rather than keeping values the step may have made stale.
    /// - Throws: ``SkerryError/Code/modelMismatch`` for an attribute that cannot be computed for
    ///   existing rows (an aggregate other than `@count` new or changed, a key path to a value a
    ///   save cannot convert to the attribute's type, or to a transient attribute);
    ///   ``SkerryError/Code/migrationWouldLoseData`` for a row whose computed value the attribute
    ///   cannot hold (a number out of an Integer 16's range: a save of its object fails too);
    ///   ``SkerryError/Code/missingRequiredValue`` for a required one some rows get no value for
    ///   (a key path through an empty relationship).
    package func fillDerivedAttributes(
        _ attributes: [(entity: EntityDescription, attribute: AttributeDescription)],
        refreshing: [(entity: EntityDescription, attribute: AttributeDescription)] = [], entities: [EntityDescription],
        number: Int?, _ connection: some StoreSQLConnection
    ) throws {
        guard !attributes.isEmpty || !refreshing.isEmpty else { return }
        let filler = DerivedFiller(dialect: dialect, entities: entities)
        for (entity, attribute, refresh) in attributes.map({ ($0.entity, $0.attribute, false) })
            + refreshing.map({ ($0.entity, $0.attribute, true) })
        {
            guard let derivation = attribute.derivation else { continue }
            let step = number.map { "Step \($0): " } ?? ""
            do {
                try filler.fill(attribute, of: entity, derivation, connection)
            } catch let uncomputable as DerivedFiller.Uncomputable {
                let why =
                    refresh
                    ? "reads values the step's code may have changed (Core Data's migration computes it again for every object it saves)"
                    : "is new or changed"
                let remedy =
                    refresh
                    ? "Change the derivation (or the attribute's type) so that Skerry can compute it, or make it a plain attribute that the step's transformRow sets."
                    : "Set it with a MigrationPlan step's transformRow, or save each object once after the migration."
                throw SkerryError(
                    .modelMismatch,
                    "\(step)the derived attribute '\(entity.name).\(attribute.name)' (\(derivation)) \(why), and Skerry cannot compute it for the existing rows in a migration (\(uncomputable.why)); Core Data computes it when each object is saved. \(remedy)",
                    entityName: entity.name, key: attribute.name)
            } catch let unconvertible as DerivedFiller.Unconvertible {
                throw SkerryError(
                    .migrationWouldLoseData,
                    "\(step)the derived attribute '\(entity.name).\(attribute.name)' (\(derivation)) computes \(unconvertible.value) for row \(unconvertible.key), which is no \(attribute.type) value; a save of that object fails the same way.",
                    entityName: entity.name, key: attribute.name)
            }
            let table = SQLBuilder.quote(entity.name), column = SQLBuilder.quote(attribute.name)
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
