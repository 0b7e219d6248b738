/// What a predicate is evaluated on in memory: something that can give an attribute's value
/// (through the key's to-one relationships) and a to-many relationship's members.
protocol PredicateSubject {
    /// The value of `key`; nil-valued (`.null`) when a relationship on its path is empty.
    func value(_ key: ResolvedKey) -> AttributeValue
    /// The members of a to-many relationship.
    func members(_ relationship: ResolvedRelationship) -> [Self]
    /// The value of a raw SQL condition on the subject's attribute values (false if it cannot be
    /// evaluated).
    func evaluateSQL(_ condition: String, _ values: [AttributeValue]) -> Bool
}

/// A row's attribute values alone: enough for predicates without relationships.
struct ValuesSubject: PredicateSubject {
    let values: [AttributeValue]
    func value(_ key: ResolvedKey) -> AttributeValue { key.path.isEmpty ? values[key.index] : .null }
    func members(_ relationship: ResolvedRelationship) -> [ValuesSubject] { [] }
    func evaluateSQL(_ condition: String, _ values: [AttributeValue]) -> Bool { false }
}

extension ResolvedPredicate {
    /// Evaluates the predicate on one object's attribute values, as SQLite would on its row.
    ///
    /// - Parameter values: the object's values, indexed like the entity's attributes.
    func evaluate(_ values: [AttributeValue]) -> Bool {
        evaluate(ValuesSubject(values: values))
    }

    /// Evaluates the predicate on `subject`, as SQLite would on its row.
    func evaluate<Subject: PredicateSubject>(_ subject: Subject) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .comparison(let key, let op, let operand):
            let value = subject.value(key)
            switch op {
            case .equal: return Self.isSame(value, operand, key)
            case .notEqual: return !Self.isSame(value, operand, key)
            case .lessThan: return Self.compare(value, operand, key).map { $0 < 0 } ?? false
            case .lessThanOrEqual: return Self.compare(value, operand, key).map { $0 <= 0 } ?? false
            case .greaterThan: return Self.compare(value, operand, key).map { $0 > 0 } ?? false
            case .greaterThanOrEqual: return Self.compare(value, operand, key).map { $0 >= 0 } ?? false
            }
        case .isIn(let key, let candidates):
            let value = subject.value(key)
            return candidates.contains { Self.compare(value, $0, key) == 0 }
        case .between(let key, let lower, let upper):
            let value = subject.value(key)
            guard let low = Self.compare(value, lower, key), let high = Self.compare(value, upper, key) else {
                return false
            }
            return low >= 0 && high <= 0
        case .string(let key, let op, let pattern, let options):
            let text: String
            switch subject.value(key) {
            case .string(let v): text = v
            case .url(let v): text = v.absoluteString
            default: return false
            }
            return StringMatching.matches(text, op, pattern, options)
        case .and(let predicates):
            return predicates.allSatisfy { $0.evaluate(subject) }
        case .or(let predicates):
            return predicates.contains { $0.evaluate(subject) }
        case .not(let predicate):
            return !predicate.evaluate(subject)
        case .any(let relationship, let inner):
            return subject.members(relationship).contains { inner.evaluate($0) }
        case .all(let relationship, let inner):
            return subject.members(relationship).allSatisfy { inner.evaluate($0) }
        case .sql(let condition, let values, _):
            return subject.evaluateSQL(condition, values)
        case .count(let relationship, let op, let value):
            let count = subject.members(relationship).count
            switch op {
            case .equal: return count == value
            case .notEqual: return count != value
            case .lessThan: return count < value
            case .lessThanOrEqual: return count <= value
            case .greaterThan: return count > value
            case .greaterThanOrEqual: return count >= value
            }
        }
    }

    /// Compares an attribute value with an operand; decimals compare as doubles, as the SQL
    /// compiler casts them (`CAST(column AS REAL)`).
    private static func compare(_ value: AttributeValue, _ operand: AttributeValue, _ key: ResolvedKey) -> Int? {
        if key.attribute.type == .decimal {
            guard let a = value.numericValue, let b = operand.numericValue else { return nil }
            return a < b ? -1 : (a == b ? 0 : 1)
        }
        return AttributeValue.compare(value, operand)
    }

    /// SQL's `IS`: nil equals nil only.
    private static func isSame(_ value: AttributeValue, _ operand: AttributeValue, _ key: ResolvedKey) -> Bool {
        if value.isNull || operand.isNull { return value.isNull && operand.isNull }
        return compare(value, operand, key) == 0
    }
}

extension Array where Element == ResolvedSortKey {
    /// Three-way comparison of two objects' values under these sort keys.
    func compare(_ lhs: [AttributeValue], _ rhs: [AttributeValue]) -> Int {
        for sortKey in self {
            let (a, b) = (lhs[sortKey.key.index], rhs[sortKey.key.index])
            var order: Int
            if sortKey.key.attribute.type == .decimal, let x = a.numericValue, let y = b.numericValue {
                order = x < y ? -1 : (x == y ? 0 : 1)
            } else {
                order = AttributeValue.sortOrder(a, b)
            }
            if !sortKey.ascending { order = -order }
            if order != 0 { return order }
        }
        return 0
    }
}
