import Foundation

extension XcodeMappingModel {
    /// The entity mappings whose destination objects are the source rows themselves, moved to
    /// the new version with their keys (by name): of the mappings of each source entity, the one
    /// whose destination entity has the source entity's name or takes it as renaming identifier,
    /// else the first in the file. Another mapping of the same source entity (Core Data makes
    /// objects of a source entity by each of its entity mappings, as UnCloudNotes' NoteToNote
    /// and NoteToAttachment) makes new objects, with new keys, once the step's rows are in place.
    func keyKeepingMappings(destination: ObjectModel?) -> Set<String> {
        var kept: [String: EntityMapping] = [:]
        for entityMapping in entityMappings {
            guard let source = entityMapping.sourceEntityName, let target = entityMapping.destinationEntityName else { continue }
            guard let current = kept[source] else {
                kept[source] = entityMapping
                continue
            }
            func takesTheName(_ name: String) -> Bool {
                name == source || destination?.entity(named: name)?.renamingIdentifier == source
            }
            if !takesTheName(current.destinationEntityName ?? "") && takesTheName(target) { kept[source] = entityMapping }
        }
        return Set(kept.values.map(\.name))
    }
}

/// What the `finish` of a mapping model's step makes for an entity mapping whose objects are new
/// (a second mapping of a source entity): a row of `destination` from each row of `source` its
/// filter keeps, with these attribute values and to-one links.
struct Copy: Sendable {
    let mapping: String
    let source: String
    let destination: String
    var attributes: [Assignment] = []
    var links: [CopyLink] = []

    /// Sets the links of the row made from `source`: the key in the new store of the row each
    /// link names, or none when the step did not keep that row (Core Data's
    /// `destinationInstances(forEntityMappingName:sourceInstances:)` finds no object of a source
    /// object its entity mapping did not migrate; a required relationship left empty fails the
    /// migration's check of required links).
    func link(_ row: inout MigrationRow, from source: MigrationRow, _ lookup: SourceRows, _ context: MigrationContext) throws {
        for link in links {
            switch link {
            case .sameSource(let column, _):
                row[column] = try context.carriedKey(of: self.source, source.primaryKey).map(AttributeValue.int) ?? .null
            case .path(let column, let entity, let value):
                guard case .int(let key) = value.evaluate(source, lookup) else {
                    row[column] = .null
                    continue
                }
                row[column] = try context.carriedKey(of: entity, key).map(AttributeValue.int) ?? .null
            }
        }
    }
}

/// A to-one link of the objects a ``Copy`` makes, in the foreign-key column `column`.
enum CopyLink: Sendable {
    /// The object the mapping that fills `destination` (whose rows keep their keys) makes of the
    /// same source object, when the step keeps it: Core Data's
    /// `destinationInstancesForEntityMappingNamed:sourceInstances:` of `$source`.
    case sameSource(column: String, destination: String)
    /// The object reached from the source object through to-one relationships, a row of `entity`'s
    /// old hierarchy, when the step keeps it.
    case path(column: String, entity: String, Evaluable)
}

extension StepBuilder {
    /// An entity mapping whose objects are new (see ``XcodeMappingModel/keyKeepingMappings(destination:)``):
    /// its attributes as values computed from the source row, its relationships as to-one links
    /// to objects whose keys are known (the object another mapping makes of the same source
    /// object, or one reached through to-one relationships). Links such objects cannot get in
    /// a step (to-many, kept in a join table or by the other side) are refused.
    mutating func addCopy(
        _ entityMapping: XcodeMappingModel.EntityMapping, source sourceEntity: EntityDescription?,
        destination destinationEntity: EntityDescription?
    ) throws(Refusal) {
        let destinationName = entityMapping.destinationEntityName ?? ""
        guard let source, let destination, let sourceEntity, let destinationEntity else {
            throw failure(
                entityMapping,
                "makes objects of '\(destinationName)' from the '\(entityMapping.sourceEntityName ?? "")' objects another entity mapping maps too, which needs both versions' models"
            )
        }
        var copy = Copy(mapping: entityMapping.name, source: sourceEntity.name, destination: destinationName)
        for property in entityMapping.attributeMappings {
            try leavingToCustomCode { (builder: inout StepBuilder) throws(Refusal) in
                guard let attribute = destinationEntity.attribute(named: property.name) else {
                    throw builder.missing(
                        entityMapping, "the attribute '\(destinationName).\(property.name)'", in: builder.mapping.destinationVersionName)
                }
                let expression = property.valueExpression ?? .keyPath(property.name)
                if case .keyPath(let path) = expression, !path.contains("."), sourceEntity.attribute(named: path) == nil {
                    throw builder.missing(
                        entityMapping, "the attribute '\(sourceEntity.name).\(path)'", in: builder.mapping.sourceVersionName)
                }
                let value: Evaluable
                if case .constant(let constant) = expression {
                    guard let fitting = MappingValue.convert(constant, to: attribute.type) else {
                        throw builder.failure(
                            entityMapping, "sets '\(property.name)' to the constant \(constant), which is no \(attribute.type) value")
                    }
                    value = .constant(fitting)
                } else {
                    value = try builder.evaluable(
                        expression, of: entityMapping, source: sourceEntity, what: "sets '\(property.name)' to \(expression)")
                }
                copy.attributes.append(Assignment(name: property.name, type: attribute.type, value: value))
            }
        }
        let layout = RelationshipLayout(entities: destination.entities)
        for property in entityMapping.relationshipMappings {
            try leavingToCustomCode { (builder: inout StepBuilder) throws(Refusal) in
                guard let relationship = destinationEntity.relationship(named: property.name) else {
                    throw builder.missing(
                        entityMapping, "the relationship '\(destinationName).\(property.name)'", in: builder.mapping.destinationVersionName)
                }
                let path: String
                switch property.valueExpression {
                case nil:
                    // Without an expression, the links of the source's relationship of that name
                    // (none when it has none).
                    guard sourceEntity.relationship(named: property.name) != nil else { return }
                    path = property.name
                case .destinationInstances(let keyPath)?, .keyPath(let keyPath)?:
                    path = keyPath
                case let expression?:
                    throw builder.failure(entityMapping, "sets the relationship '\(property.name)' to \(expression)")
                }
                let what =
                    "makes new '\(destinationName)' objects (a second entity mapping of '\(sourceEntity.name)') and sets their relationship '\(property.name)' to the destination objects of $source\(path.isEmpty ? "" : ".\(path)")"
                guard !relationship.isToMany, case .foreignKey(let column)? = layout.storage[destinationName]?[relationship.name] else {
                    throw builder.failure(
                        entityMapping, what + " (only a to-one relationship that keeps its own key can be set on new objects)")
                }
                if let inverseName = relationship.inverseName,
                    destination.entity(named: relationship.destinationEntityName)?.relationship(named: inverseName)?.isOrdered == true
                {
                    throw builder.failure(entityMapping, what + " (its inverse is ordered)")
                }
                if path.isEmpty {
                    let target = builder.mapping.entityMappings.first { other in
                        other.sourceEntityName == sourceEntity.name && !builder.copyMappings.contains(other.name)
                            && (property.sourceMappingName.map { $0 == other.name } ?? true)
                            && other.destinationEntityName.flatMap { destination.entity(named: $0) }.map {
                                $0.isKind(ofEntityNamed: relationship.destinationEntityName)
                            } == true
                    }
                    guard let target, let targetName = target.destinationEntityName else {
                        throw builder.failure(
                            entityMapping,
                            what
                                + " (no entity mapping of '\(sourceEntity.name)' whose objects keep their keys makes '\(relationship.destinationEntityName)' objects)"
                        )
                    }
                    copy.links.append(.sameSource(column: column, destination: targetName))
                    return
                }
                // Through to-one relationships: the related row, which an entity mapping carries
                // with its key (its new key, or none when the step leaves the row out, is looked
                // up when the objects are made).
                var reached = sourceEntity
                for name in path.split(separator: ".").map(String.init) {
                    guard let next = reached.relationship(named: name).flatMap({ source.entity(named: $0.destinationEntityName) }) else {
                        break // evaluable(_:) names what is missing
                    }
                    reached = next
                }
                let value = try builder.evaluable(
                    .keyPath(path), of: entityMapping, source: sourceEntity, what: what, endingInRelationship: true)
                for entity in source.entityAndSubentities(of: reached) {
                    let kept = builder.mapping.entityMappings.first {
                        $0.sourceEntityName == entity.name && !builder.copyMappings.contains($0.name)
                    }
                    let keeps = kept?.destinationEntityName.flatMap { destination.entity(named: $0) }.map {
                        $0.isKind(ofEntityNamed: relationship.destinationEntityName)
                    }
                    if keeps == true { continue }
                    if kept == nil && entity.isAbstract { continue }
                    throw builder.failure(
                        entityMapping,
                        what
                            + " (the '\(entity.name)' objects it reaches are not carried to '\(relationship.destinationEntityName)' with their keys by an entity mapping)"
                    )
                }
                copy.links.append(.path(column: column, entity: reached.name, value))
            }
        }
        copies.append(copy)
    }

    /// Fails when a relationship of an object the step moves would take links to objects that a
    /// second entity mapping makes (new objects, whose keys are only known when `finish` makes
    /// them), other than the inverse of a link those objects get.
    func checkLinksIntoCopies() throws(Refusal) {
        guard let destination, !copies.isEmpty else { return }
        for copy in copies {
            guard let made = destination.entity(named: copy.destination) else { continue }
            let setInverses = Set(
                made.relationships.filter { relationship in
                    copy.links.contains { link in
                        switch link {
                        case .sameSource(let column, _), .path(let column, _, _): return column == relationship.name
                        }
                    }
                }.compactMap { relationship in relationship.inverseName.map { "\(relationship.destinationEntityName).\($0)" } })
            for entityMapping in mapping.entityMappings where !copyMappings.contains(entityMapping.name) {
                guard let sourceName = entityMapping.sourceEntityName, let targetName = entityMapping.destinationEntityName,
                    let target = destination.entity(named: targetName)
                else { continue }
                for relationship in target.relationships where made.isKind(ofEntityNamed: relationship.destinationEntityName) {
                    if setInverses.contains("\(targetName).\(relationship.name)") { continue }
                    let mapped = entityMapping.relationshipMappings.first { $0.name == relationship.name }
                    let oldName = renamedRelationships["\(targetName).\(relationship.name)"] ?? relationship.name
                    let hasLinks =
                        mapped?.valueExpression != nil || source?.entity(named: sourceName)?.relationship(named: oldName) != nil
                    guard hasLinks else { continue }
                    throw failure(
                        entityMapping,
                        "links '\(targetName).\(relationship.name)' to the '\(copy.destination)' objects that the entity mapping '\(copy.mapping)' makes as new objects (a second mapping of '\(copy.source)')"
                    )
                }
            }
        }
    }
}
