import Foundation

/// A ``FetchPredicate`` checked against one entity: keys resolved to attribute positions and
/// values checked against attribute types. Both the SQL compiler and the in-memory evaluator work
/// from this form, so both see the same checked predicate.
indirect enum ResolvedPredicate: Sendable {
    case constant(Bool)
    case comparison(ResolvedKey, ComparisonOperator, AttributeValue)
    case isIn(ResolvedKey, [AttributeValue])
    case between(ResolvedKey, AttributeValue, AttributeValue)
    case string(ResolvedKey, StringOperator, String, StringComparisonOptions)
    case and([ResolvedPredicate])
    case or([ResolvedPredicate])
    case not(ResolvedPredicate)
}

/// An attribute of an entity, by position.
struct ResolvedKey: Sendable {
    let index: Int
    let attribute: AttributeDescription
}

/// A ``SortKey`` resolved against an entity.
struct ResolvedSortKey: Sendable {
    let key: ResolvedKey
    let ascending: Bool
}

extension FetchPredicate {
    /// Resolves the predicate against `entity`.
    /// - Throws: ``SkerryError/Code/unknownAttribute`` for a key the entity lacks,
    ///   ``SkerryError/Code/wrongValueType`` for a value that cannot be compared with the attribute.
    func resolved(for entity: EntityDescription) throws(SkerryError) -> ResolvedPredicate {
        switch self {
        case .constant(let value):
            return .constant(value)
        case .comparison(let key, let op, let value):
            let resolved = try entity.resolveKey(key)
            try resolved.checkComparable(value, entity: entity)
            return .comparison(resolved, op, value)
        case .isIn(let key, let values):
            let resolved = try entity.resolveKey(key)
            for value in values { try resolved.checkComparable(value, entity: entity) }
            return .isIn(resolved, values)
        case .between(let key, let lower, let upper):
            let resolved = try entity.resolveKey(key)
            try resolved.checkComparable(lower, entity: entity)
            try resolved.checkComparable(upper, entity: entity)
            return .between(resolved, lower, upper)
        case .string(let key, let op, let pattern, let options):
            let resolved = try entity.resolveKey(key)
            guard resolved.attribute.type == .string || resolved.attribute.type == .url else {
                throw SkerryError(.wrongValueType,
                                  "String operators need a string or URL attribute; '\(entity.name).\(key)' is \(resolved.attribute.type).",
                                  entityName: entity.name, key: key)
            }
            return .string(resolved, op, pattern, options)
        case .and(let predicates):
            var resolved: [ResolvedPredicate] = []
            for predicate in predicates { resolved.append(try predicate.resolved(for: entity)) }
            return .and(resolved)
        case .or(let predicates):
            var resolved: [ResolvedPredicate] = []
            for predicate in predicates { resolved.append(try predicate.resolved(for: entity)) }
            return .or(resolved)
        case .not(let predicate):
            return .not(try predicate.resolved(for: entity))
        }
    }
}

extension SortKey {
    func resolved(for entity: EntityDescription) throws(SkerryError) -> ResolvedSortKey {
        ResolvedSortKey(key: try entity.resolveKey(key), ascending: ascending)
    }
}

extension EntityDescription {
    func resolveKey(_ name: String) throws(SkerryError) -> ResolvedKey {
        let index = try requireAttributeIndex(name)
        return ResolvedKey(index: index, attribute: attributes[index])
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
