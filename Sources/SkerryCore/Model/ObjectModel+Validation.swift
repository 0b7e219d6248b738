extension ObjectModel {
    /// Whether `name` is a valid entity or property name: an ASCII letter, then ASCII letters,
    /// digits or underscores, and not SQLite's reserved `sqlite_` prefix.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, (first | 0x20) >= UInt8(ascii: "a"), (first | 0x20) <= UInt8(ascii: "z") else {
            return false
        }
        let valid = name.utf8.allSatisfy { c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
        }
        return valid && !name.lowercased().hasPrefix("sqlite_")
    }

    static func validate(
        configurations: [String: [String]], templates: [FetchRequestTemplate],
        entities: [EntityDescription]
    ) throws(SkerryError) {
        let names = Set(entities.map(\.name))
        for (name, members) in configurations {
            for member in members where !names.contains(member) {
                throw SkerryError(
                    .invalidModel, "The configuration '\(name)' names '\(member)', which is not an entity of the model.",
                    entityName: member, key: name)
            }
        }
        for template in templates where !names.contains(template.entityName) {
            throw SkerryError(
                .invalidModel,
                "The fetch request template '\(template.name)' fetches '\(template.entityName)', which is not an entity of the model.",
                entityName: template.entityName, key: template.name)
        }
        for entity in entities {
            for property in entity.fetchedProperties where !names.contains(property.fetchRequest.entityName) {
                throw SkerryError(
                    .invalidModel,
                    "The fetched property '\(entity.name).\(property.name)' fetches '\(property.fetchRequest.entityName)', which is not an entity of the model.",
                    entityName: entity.name, key: property.name)
            }
        }
    }

    static func validate(_ entities: [EntityDescription]) throws(SkerryError) {
        func fail(_ message: String, _ entity: String? = nil, _ key: String? = nil) -> SkerryError {
            SkerryError(.invalidModel, message, entityName: entity, key: key)
        }
        var entityNames = Set<String>()
        for entity in entities {
            guard isValidName(entity.name) else {
                throw fail(
                    "'\(entity.name)' is not a valid entity name: use a letter followed by letters, digits or underscores.", entity.name)
            }
            guard entityNames.insert(entity.name.lowercased()).inserted else {
                throw fail("The entity name '\(entity.name)' is used twice.", entity.name)
            }
            var propertyNames = Set<String>()
            let propertyList = entity.attributes.map(\.name) + entity.relationships.map(\.name) + entity.fetchedProperties.map(\.name)
            for name in propertyList {
                // An element of a composite attribute is named "composite.element".
                let isCompositeElement =
                    entity.attribute(named: name) != nil && name.contains(".")
                    && name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { isValidName(String($0)) }
                guard isValidName(name) || isCompositeElement else {
                    throw fail("'\(name)' in entity '\(entity.name)' is not a valid property name.", entity.name, name)
                }
                guard propertyNames.insert(name.lowercased()).inserted else {
                    throw fail("The property name '\(name)' is used twice in entity '\(entity.name)'.", entity.name, name)
                }
            }
            for attribute in entity.attributes where !attribute.defaultValue.fits(attribute.type) || attribute.defaultValue.isNaN {
                throw fail(
                    "The default value \(attribute.defaultValue) of '\(entity.name).\(attribute.name)' does not fit its type \(attribute.type).",
                    entity.name, attribute.name)
            }
            for list in entity.uniquenessConstraints + entity.indexes.map(\.attributeNames) {
                guard !list.isEmpty else {
                    throw fail("Entity '\(entity.name)' has an empty uniqueness constraint or index.", entity.name)
                }
            }
            for list in entity.uniquenessConstraints {
                for name in list where entity.attribute(named: name).map({ $0.isTransient }) ?? true {
                    throw fail(
                        "A uniqueness constraint of '\(entity.name)' names '\(name)', which is not one of its stored attributes.",
                        entity.name, name)
                }
            }
            for attribute in entity.attributes {
                guard let derivation = attribute.derivation else { continue }
                let here = "'\(entity.name).\(attribute.name)'"
                if attribute.isTransient {
                    throw fail("The derived attribute \(here) is transient; a derived attribute is stored.", entity.name, attribute.name)
                }
                let first: String, wantsToMany: Bool
                switch derivation {
                case .keyPath(let path), .function(_, let path):
                    first = String(path.split(separator: ".").first ?? "")
                    wantsToMany = false
                    if !path.contains("."), entity.attribute(named: path) == nil {
                        throw fail(
                            "The derived attribute \(here) derives from '\(path)', which is not an attribute of '\(entity.name)'.",
                            entity.name, attribute.name)
                    }
                    if !path.contains(".") { continue }
                case .count(let relationship), .aggregate(_, let relationship, _):
                    first = relationship
                    wantsToMany = true
                case .now:
                    // Core Data's SQLite store keeps a date as its seconds since 2001: a number
                    // attribute gets that number. Any other type cannot hold the time.
                    guard [.date, .double, .float].contains(attribute.type) else {
                        throw fail(
                            "The derived attribute \(here) (now()) is a \(attribute.type) attribute: now() gives the time of the save, which a Date, Double or Float attribute holds.",
                            entity.name, attribute.name)
                    }
                    continue
                }
                guard let relationship = entity.relationship(named: first), relationship.isToMany == wantsToMany else {
                    throw fail(
                        "The derived attribute \(here) (\(derivation)) needs '\(first)' to be a \(wantsToMany ? "to-many" : "to-one") relationship of '\(entity.name)'.",
                        entity.name, attribute.name)
                }
            }
            for index in entity.indexes {
                for name in index.attributeNames where entity.attribute(named: name) == nil && entity.relationship(named: name) == nil {
                    throw fail(
                        "An index of '\(entity.name)' names '\(name)', which is neither one of its attributes nor one of its relationships.",
                        entity.name, name)
                }
            }
        }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entity in entities {
            if let superentity = entity.superentity, byName[superentity.name] !== superentity {
                throw fail("The superentity '\(superentity.name)' of '\(entity.name)' is not an entity of the model.", entity.name)
            }
        }
        for entity in entities {
            for relationship in entity.relationships {
                let here = "\(entity.name).\(relationship.name)"
                guard let destination = byName[relationship.destinationEntityName] else {
                    throw fail(
                        "The relationship \(here) points to '\(relationship.destinationEntityName)', which is not an entity of the model.",
                        entity.name, relationship.name)
                }
                if relationship.isOrdered && !relationship.isToMany {
                    throw fail("The relationship \(here) is ordered but not to-many.", entity.name, relationship.name)
                }
                if relationship.minCount < 0 || relationship.maxCount < 0
                    || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount)
                {
                    throw fail("The relationship \(here) has an invalid count range.", entity.name, relationship.name)
                }
                guard let inverseName = relationship.inverseName else { continue }
                guard let inverse = destination.relationship(named: inverseName) else {
                    throw fail(
                        "The inverse '\(inverseName)' of \(here) is not a relationship of '\(destination.name)'.", entity.name,
                        relationship.name)
                }
                // The inverse points back at this entity or, for an inherited relationship, at the
                // ancestor that declares it. A relationship may be its own inverse (symmetric).
                guard let back = byName[inverse.destinationEntityName], entity.isKind(of: back),
                    inverse.inverseName == relationship.name
                else {
                    throw fail(
                        "The inverse \(destination.name).\(inverseName) of \(here) does not point back to it.", entity.name,
                        relationship.name)
                }
            }
        }
    }
}
