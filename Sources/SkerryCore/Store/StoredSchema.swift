/// The part of a model that a store's tables depend on, recorded in the store as JSON so that a
/// later load can tell exactly what changed, and migrate from it without the model it was
/// written with (renaming identifiers included, so that a migration matches elements as Core
/// Data does, by renaming identifier or name).
package struct StoredSchema: Codable, Equatable {
    package struct Attribute: Codable, Equatable {
        package var name: String
        package var type: AttributeType
        package var isOptional: Bool
        package var renamingIdentifier: String?
        package var canonicalName: String { renamingIdentifier ?? name }
    }
    package struct Relationship: Codable, Equatable, Sendable {
        package var name: String
        package var destination: String
        package var inverse: String?
        package var isToMany: Bool
        package var isOrdered: Bool
        package var renamingIdentifier: String?
        package var canonicalName: String { renamingIdentifier ?? name }
    }
    package struct Entity: Codable, Equatable {
        package var name: String
        package var attributes: [Attribute]
        package var relationships: [Relationship]
        package var uniquenessConstraints: [[String]]
        package var indexes: [[String]]
        package var renamingIdentifier: String?
        /// The superentity's name (absent in stores written before entity inheritance).
        package var parent: String?
        package var canonicalName: String { renamingIdentifier ?? name }

        package func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
        package func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }
    }
    package var entities: [Entity]

    package init(entities: [EntityDescription]) {
        self.entities = entities.map { entity in
            Entity(
                name: entity.name,
                attributes: entity.storedAttributes.map {
                    Attribute(name: $0.name, type: $0.type, isOptional: $0.isOptional, renamingIdentifier: $0.renamingIdentifier)
                },
                relationships: entity.relationships.filter { !$0.isTransient }.map {
                    Relationship(
                        name: $0.name, destination: $0.destinationEntityName, inverse: $0.inverseName,
                        isToMany: $0.isToMany, isOrdered: $0.isOrdered, renamingIdentifier: $0.renamingIdentifier)
                },
                uniquenessConstraints: entity.uniquenessConstraints,
                indexes: entity.indexes.map(\.attributeNames),
                renamingIdentifier: entity.renamingIdentifier, parent: entity.superentity?.name)
        }
    }

    package func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The schema without renaming identifiers: what the tables' shape depends on.
    package var shape: StoredSchema {
        var copy = self
        for e in copy.entities.indices {
            copy.entities[e].renamingIdentifier = nil
            for a in copy.entities[e].attributes.indices { copy.entities[e].attributes[a].renamingIdentifier = nil }
            for r in copy.entities[e].relationships.indices { copy.entities[e].relationships[r].renamingIdentifier = nil }
        }
        return copy
    }
}

/// The steps that bring a store from its recorded schema to the current model, or the reasons it
/// cannot be done automatically.
package struct SchemaMigration {
    /// Entities to create (tables and their indexes).
    package var newEntities: [EntityDescription] = []
    /// Attributes to add to existing tables.
    package var newAttributes: [(entity: EntityDescription, attribute: AttributeDescription)] = []
    /// Indexes to create, as (entity, attribute names).
    var newIndexes: [(entity: EntityDescription, attributes: [String])] = []
    /// Indexes to drop, as (entity name, attribute names).
    var droppedIndexes: [(entityName: String, attributes: [String])] = []
    /// Changes that cannot be migrated automatically, each a sentence.
    package var incompatibilities: [String] = []
    /// Entities whose superentity changed (or that are recorded without one, as stores written
    /// before entity inheritance are), each a sentence: their rows' keys were counted apart from
    /// the new hierarchy's, so the change is not made in place (the SQLite store's migration
    /// rebuilds the tables, renumbering keys that clash).
    package var changedHierarchies: [String] = []

    package var isEmpty: Bool {
        newEntities.isEmpty && newAttributes.isEmpty && newIndexes.isEmpty && droppedIndexes.isEmpty
    }

    /// Compares the recorded schema with the entities the store now holds.
    package init(from stored: StoredSchema, to entities: [EntityDescription]) {
        // Where each relationship is kept, before and after: a relationship can move although
        // it is recorded the same (its inverse became stored, or transient).
        let oldLayout = RelationshipLayout(schema: stored), newLayout = RelationshipLayout(entities: entities)
        let currentNames = Set(entities.map(\.name))
        for old in stored.entities where !currentNames.contains(old.name) {
            incompatibilities.append("entity '\(old.name)' was removed")
        }
        for entity in entities {
            guard let old = stored.entity(named: entity.name) else {
                newEntities.append(entity)
                continue
            }
            if old.parent != entity.superentity?.name {
                changedHierarchies.append(
                    "the superentity of '\(entity.name)' changed from \(old.parent.map { "'\($0)'" } ?? "none") to \(entity.superentity.map { "'\($0.name)'" } ?? "none")"
                )
            }
            for oldAttribute in old.attributes where entity.attribute(named: oldAttribute.name) == nil {
                incompatibilities.append("attribute '\(entity.name).\(oldAttribute.name)' was removed")
            }
            for attribute in entity.storedAttributes {
                let here = "'\(entity.name).\(attribute.name)'"
                guard let oldAttribute = old.attributes.first(where: { $0.name == attribute.name }) else {
                    if attribute.isOptional || !attribute.defaultValue.isNull {
                        newAttributes.append((entity, attribute))
                    } else {
                        incompatibilities.append("attribute \(here) was added as required without a default value")
                    }
                    continue
                }
                if oldAttribute.type != attribute.type {
                    incompatibilities.append("attribute \(here) changed type from \(oldAttribute.type) to \(attribute.type)")
                }
                if oldAttribute.isOptional && !attribute.isOptional {
                    incompatibilities.append("attribute \(here) changed from optional to required")
                }
            }
            for oldRelationship in old.relationships {
                let here = "'\(entity.name).\(oldRelationship.name)'"
                guard let relationship = entity.relationship(named: oldRelationship.name) else {
                    incompatibilities.append("relationship \(here) was removed")
                    continue
                }
                let current = StoredSchema.Relationship(
                    name: relationship.name, destination: relationship.destinationEntityName,
                    inverse: relationship.inverseName, isToMany: relationship.isToMany,
                    isOrdered: relationship.isOrdered, renamingIdentifier: oldRelationship.renamingIdentifier)
                if current != oldRelationship {
                    incompatibilities.append("relationship \(here) changed (destination, inverse, to-many or ordering)")
                } else if !relationship.isTransient,
                    oldLayout.storage[entity.name]?[relationship.name] != newLayout.storage[entity.name]?[relationship.name]
                {
                    // A relationship made transient keeps nothing: its old storage is left unread.
                    let inverse = relationship.inverseName.map {
                        " (its inverse '\(relationship.destinationEntityName).\($0)' became stored or transient)"
                    }
                    incompatibilities.append("relationship \(here) is stored elsewhere in this model\(inverse ?? "")")
                }
            }
            if Set(old.uniquenessConstraints) != Set(entity.uniquenessConstraints) {
                incompatibilities.append(
                    "the uniqueness constraints of '\(entity.name)' changed from \(old.uniquenessConstraints) to \(entity.uniquenessConstraints)"
                )
            }
            let oldIndexes = Set(old.indexes), indexes = Set(entity.indexes.map(\.attributeNames))
            for index in entity.indexes.map(\.attributeNames) where !oldIndexes.contains(index) {
                newIndexes.append((entity, index))
            }
            for index in old.indexes where !indexes.contains(index) {
                droppedIndexes.append((entity.name, index))
            }
        }
    }
}
