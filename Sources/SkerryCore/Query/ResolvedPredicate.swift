import Foundation

/// A ``FetchPredicate`` checked against one entity: keys resolved to attribute positions (through
/// to-one relationships where the key is a path), relationships to their storage, values checked
/// against attribute types. Both the SQL compiler and the in-memory evaluator work from this form,
/// so both see the same checked predicate.
indirect enum ResolvedPredicate: Sendable {
    case constant(Bool)
    case comparison(ResolvedKey, ComparisonOperator, AttributeValue)
    case isIn(ResolvedKey, [AttributeValue])
    case between(ResolvedKey, AttributeValue, AttributeValue)
    case string(ResolvedKey, StringOperator, String, StringComparisonOptions)
    case and([ResolvedPredicate])
    case or([ResolvedPredicate])
    case not(ResolvedPredicate)
    /// Some member of the relationship matches (the inner predicate is on the destination).
    case any(ResolvedRelationship, ResolvedPredicate)
    /// Every member matches.
    case all(ResolvedRelationship, ResolvedPredicate)
    /// The member count compared with a number.
    case count(ResolvedRelationship, ComparisonOperator, Int)
    /// A raw SQL condition on `entity`'s columns, with its bound values.
    case sql(String, [AttributeValue], EntityDescription)
}

/// One relationship step from an entity to its destination.
struct ResolvedRelationship: Sendable {
    let index: Int
    let storage: RelationshipStorage
    let destination: EntityDescription
}

/// An attribute, reached through `path` (to-one relationships, first step first) from the
/// entity the predicate is on.
struct ResolvedKey: Sendable {
    let index: Int
    let attribute: AttributeDescription
    var path: [ResolvedRelationship] = []
}

/// A ``SortKey`` resolved against an entity.
struct ResolvedSortKey: Sendable {
    let key: ResolvedKey
    let ascending: Bool
}

extension FetchPredicate {
    /// Resolves the predicate against `entity` of `model`.
    /// - Throws: ``SkerryError/Code/unknownAttribute`` for a key or relationship the entity lacks
    ///   (or a path through a to-many relationship), ``SkerryError/Code/wrongValueType`` for a value
    ///   that cannot be compared with the attribute.
    func resolved(for entity: EntityDescription, in model: ObjectModel) throws(SkerryError) -> ResolvedPredicate {
        switch self {
        case .constant(let value):
            return .constant(value)
        case .comparison(let key, let op, let value):
            let resolved = try entity.resolveKey(key, in: model)
            try resolved.checkComparable(value, entity: entity)
            return .comparison(resolved, op, value)
        case .isIn(let key, let values):
            let resolved = try entity.resolveKey(key, in: model)
            for value in values { try resolved.checkComparable(value, entity: entity) }
            return .isIn(resolved, values)
        case .between(let key, let lower, let upper):
            let resolved = try entity.resolveKey(key, in: model)
            try resolved.checkComparable(lower, entity: entity)
            try resolved.checkComparable(upper, entity: entity)
            return .between(resolved, lower, upper)
        case .string(let key, let op, let pattern, let options):
            let resolved = try entity.resolveKey(key, in: model)
            guard resolved.attribute.type == .string || resolved.attribute.type == .url else {
                throw SkerryError(.wrongValueType,
                                  "String operators need a string or URL attribute; '\(entity.name).\(key)' is \(resolved.attribute.type).",
                                  entityName: entity.name, key: key)
            }
            return .string(resolved, op, pattern, options)
        case .and(let predicates):
            var resolved: [ResolvedPredicate] = []
            for predicate in predicates { resolved.append(try predicate.resolved(for: entity, in: model)) }
            return .and(resolved)
        case .or(let predicates):
            var resolved: [ResolvedPredicate] = []
            for predicate in predicates { resolved.append(try predicate.resolved(for: entity, in: model)) }
            return .or(resolved)
        case .not(let predicate):
            return .not(try predicate.resolved(for: entity, in: model))
        case .any(let name, let predicate):
            let relationship = try entity.resolveToMany(name, in: model)
            return .any(relationship, try predicate.resolved(for: relationship.destination, in: model))
        case .all(let name, let predicate):
            let relationship = try entity.resolveToMany(name, in: model)
            return .all(relationship, try predicate.resolved(for: relationship.destination, in: model))
        case .count(let name, let op, let value):
            return .count(try entity.resolveToMany(name, in: model), op, value)
        case .sql(let condition, let values):
            guard !condition.contains(";") else {
                throw SkerryError(.invalidArgument, "A raw SQL condition may not contain ';'.", entityName: entity.name)
            }
            let placeholders = condition.filter { $0 == "?" }.count
            guard placeholders == values.count else {
                throw SkerryError(.invalidArgument, "The raw SQL condition has \(placeholders) '?' for \(values.count) value(s).", entityName: entity.name)
            }
            for value in values where value.isNaN {
                throw SkerryError(.wrongValueType, "A raw SQL condition cannot compare with NaN.", entityName: entity.name)
            }
            return .sql(condition, values, entity)
        }
    }
}

extension SortKey {
    func resolved(for entity: EntityDescription, in model: ObjectModel) throws(SkerryError) -> ResolvedSortKey {
        guard !key.contains(".") else {
            throw SkerryError(.unknownAttribute, "Sorting on a key path through relationships ('\(key)') is not supported; sort on an attribute of '\(entity.name)'.",
                              entityName: entity.name, key: key)
        }
        return ResolvedSortKey(key: try entity.resolveKey(key, in: model), ascending: ascending)
    }
}

extension EntityDescription {
    /// Resolves `name`, an attribute or a key path through to-one relationships ending in one.
    func resolveKey(_ name: String, in model: ObjectModel) throws(SkerryError) -> ResolvedKey {
        var entity = self
        var path: [ResolvedRelationship] = []
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for step in parts.dropLast() {
            let relationship = try entity.resolveRelationship(step, in: model)
            guard !entity.relationships[relationship.index].isToMany else {
                throw SkerryError(.unknownAttribute,
                                  "'\(step)' in '\(name)' is a to-many relationship of '\(entity.name)'; use RelationshipKey(\"\(step)\").any/all/count.",
                                  entityName: entity.name, key: name)
            }
            path.append(relationship)
            entity = relationship.destination
        }
        let index = try entity.requireAttributeIndex(parts.last ?? name)
        return ResolvedKey(index: index, attribute: entity.attributes[index], path: path)
    }

    /// Resolves a relationship of this entity.
    func resolveRelationship(_ name: String, in model: ObjectModel) throws(SkerryError) -> ResolvedRelationship {
        let index = try requireRelationshipIndex(name)
        guard let destination = model.entity(named: relationships[index].destinationEntityName) else {
            throw SkerryError(.unknownEntity, "The destination of '\(self.name).\(name)' is not in the model.", entityName: self.name, key: name)
        }
        return ResolvedRelationship(index: index, storage: model.relationships(of: self).storage[index], destination: destination)
    }

    /// Resolves a to-many relationship (possibly at the end of a key path through to-one ones is
    /// not supported: it must be this entity's own).
    func resolveToMany(_ name: String, in model: ObjectModel) throws(SkerryError) -> ResolvedRelationship {
        let relationship = try resolveRelationship(name, in: model)
        guard relationships[relationship.index].isToMany else {
            throw SkerryError(.unknownAttribute,
                              "'\(self.name).\(name)' is a to-one relationship; compare its attributes with a key path (\"\(name).attribute\").",
                              entityName: self.name, key: name)
        }
        return relationship
    }
}

extension ResolvedKey {
    /// Checks that `value` can be compared with this attribute: numbers with numeric attributes,
    /// otherwise the attribute's own value form. `.null` is always allowed.
    func checkComparable(_ value: AttributeValue, entity: EntityDescription) throws(SkerryError) {
        let ok: Bool
        switch (attribute.type, value) {
        case (_, .null): ok = true
        case (.integer16, .int), (.integer32, .int), (.integer64, .int), (.float, .int), (.double, .int),
             (.decimal, .int), (.integer16, .double), (.integer32, .double), (.integer64, .double),
             (.float, .double), (.double, .double), (.decimal, .double), (.decimal, .decimal):
            ok = true
        default:
            ok = value.fits(attribute.type)
        }
        guard ok else {
            throw SkerryError(.wrongValueType,
                              "Cannot compare '\(entity.name).\(attribute.name)' (\(attribute.type)) with a \(value.kindName) value \(value).",
                              entityName: entity.name, key: attribute.name)
        }
        if value.isNaN {
            throw SkerryError(.wrongValueType, "Cannot compare '\(entity.name).\(attribute.name)' with NaN.",
                              entityName: entity.name, key: attribute.name)
        }
    }
}
