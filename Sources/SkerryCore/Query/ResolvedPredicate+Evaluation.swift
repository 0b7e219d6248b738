/// What a predicate is evaluated on in memory: something that can give an attribute's value
/// (through the key's to-one relationships), its related objects, and answers to raw SQL
/// conditions. Errors (an object that cannot be loaded, a condition SQLite refuses) are thrown,
/// never taken for "no match".
protocol PredicateSubject {
    /// The subject's object ID.
    var objectID: ObjectID { get }
    /// The value of `key`; `.null` when a relationship on its path is empty.
    func value(_ key: ResolvedKey) throws(SkerryError) -> AttributeValue
    /// The objects related through a relationship (none, one or many).
    func related(_ relationship: ResolvedRelationship) throws(SkerryError) -> [Self]
    /// The value of a raw SQL condition on each subject's attribute values, computed by the
    /// store in one statement.
    static func evaluateSQL(
        _ condition: String, _ bindings: [AttributeValue], entity: EntityDescription,
        on subjects: [Self]
    ) throws(SkerryError) -> [Bool]
}

extension ResolvedPredicate {
    /// Evaluates the predicate on each of `subjects`, as SQLite would on their rows.
    ///
    /// The subjects are evaluated together, one node of the predicate at a time, so that a raw SQL
    /// condition costs one statement for all of them; `AND` and `OR` evaluate each part only on
    /// the subjects it can still change. Recursion is bounded by the depth checked when the
    /// predicate was resolved.
    func evaluate<Subject: PredicateSubject>(_ subjects: [Subject]) throws(SkerryError) -> [Bool] {
        switch self {
        case .constant(let value):
            return Array(repeating: value, count: subjects.count)
        case .comparison(let key, let op, let operand):
            return try subjects.mapThrowing { subject throws(SkerryError) in Self.compare(try subject.value(key), op, operand, key) }
        case .isIn(let key, let candidates):
            return try subjects.mapThrowing { subject throws(SkerryError) in
                let value = try subject.value(key)
                return candidates.contains { Self.order(value, $0, key) == 0 }
            }
        case .between(let key, let lower, let upper):
            return try subjects.mapThrowing { subject throws(SkerryError) in
                let value = try subject.value(key)
                guard let low = Self.order(value, lower, key), let high = Self.order(value, upper, key) else { return false }
                return low >= 0 && high <= 0
            }
        case .string(let key, let op, let pattern, let options):
            return try subjects.mapThrowing { subject throws(SkerryError) in
                switch try subject.value(key) {
                case .string(let text): return StringMatching.matches(text, op, pattern, options)
                case .url(let url): return StringMatching.matches(url.absoluteString, op, pattern, options)
                default: return false
                }
            }
        case .and(let parts):
            return try Self.combine(parts, subjects, until: false)
        case .or(let parts):
            return try Self.combine(parts, subjects, until: true)
        case .not(let inner):
            return try inner.evaluate(subjects).map { !$0 }
        case .any(let relationship, let inner), .all(let relationship, let inner):
            let isAll: Bool
            if case .all = self { isAll = true } else { isAll = false }
            var result = Array(repeating: isAll, count: subjects.count)
            let (owners, members) = try Self.gather(subjects) { subject throws(SkerryError) in try subject.related(relationship) }
            guard !members.isEmpty else { return result }
            for (owner, answer) in zip(owners, try inner.evaluate(members)) where answer != isAll { result[owner] = answer }
            return result
        case .aggregate(let aggregate, let op, let operand):
            return try aggregate.values(subjects).map { Self.compareAggregate($0, op, operand) }
        case .isObject(let ids):
            let set = Set(ids)
            return subjects.map { set.contains($0.objectID) }
        case .sql(let condition, let bindings, let entity):
            guard !subjects.isEmpty else { return [] }
            return try Subject.evaluateSQL(condition, bindings, entity: entity, on: subjects)
        }
    }

    /// `AND` (`until` false) or `OR` (`until` true): each part is evaluated on the subjects whose
    /// answer it can still change.
    private static func combine<Subject: PredicateSubject>(
        _ parts: [ResolvedPredicate], _ subjects: [Subject],
        until decided: Bool
    ) throws(SkerryError) -> [Bool] {
        var result = Array(repeating: !decided, count: subjects.count)
        for part in parts {
            let open = result.indices.filter { result[$0] != decided }
            if open.isEmpty { break }
            let answers = try part.evaluate(open.map { subjects[$0] })
            for (index, answer) in zip(open, answers) where answer == decided { result[index] = decided }
        }
        return result
    }

    /// The related objects of every subject, flattened, each with its subject's position.
    static func gather<Subject: PredicateSubject>(
        _ subjects: [Subject],
        _ related: (Subject) throws(SkerryError) -> [Subject]
    ) throws(SkerryError) -> (owners: [Int], members: [Subject]) {
        var owners: [Int] = []
        var members: [Subject] = []
        for (position, subject) in subjects.enumerated() {
            for member in try related(subject) {
                owners.append(position)
                members.append(member)
            }
        }
        return (owners, members)
    }

    private static func compare(_ value: AttributeValue, _ op: ComparisonOperator, _ operand: AttributeValue, _ key: ResolvedKey) -> Bool {
        switch op {
        case .equal: return isSame(value, operand, key)
        case .notEqual: return !isSame(value, operand, key)
        case .lessThan: return order(value, operand, key).map { $0 < 0 } ?? false
        case .lessThanOrEqual: return order(value, operand, key).map { $0 <= 0 } ?? false
        case .greaterThan: return order(value, operand, key).map { $0 > 0 } ?? false
        case .greaterThanOrEqual: return order(value, operand, key).map { $0 >= 0 } ?? false
        }
    }

    /// An aggregate's value compared as the SQL compiler has it: `IS`/`IS NOT` with nil, else
    /// `=`, `<>`, `<`… (false when the aggregate is nil).
    static func compareAggregate(_ value: AttributeValue, _ op: ComparisonOperator, _ operand: AttributeValue) -> Bool {
        if operand.isNull {
            switch op {
            case .equal: return value.isNull
            case .notEqual: return !value.isNull
            default: return false
            }
        }
        guard let order = AttributeValue.compare(value, operand) else { return false }
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .lessThan: return order < 0
        case .lessThanOrEqual: return order <= 0
        case .greaterThan: return order > 0
        case .greaterThanOrEqual: return order >= 0
        }
    }

    /// Compares an attribute value with an operand; decimals compare as doubles, as the SQL
    /// compiler casts them (`CAST(column AS REAL)`).
    static func order(_ value: AttributeValue, _ operand: AttributeValue, _ key: ResolvedKey) -> Int? {
        if key.attribute.type == .decimal {
            guard let a = value.numericValue, let b = operand.numericValue else { return nil }
            return a < b ? -1 : (a == b ? 0 : 1)
        }
        return AttributeValue.compare(value, operand)
    }

    /// SQL's `IS`: nil equals nil only.
    private static func isSame(_ value: AttributeValue, _ operand: AttributeValue, _ key: ResolvedKey) -> Bool {
        if value.isNull || operand.isNull { return value.isNull && operand.isNull }
        return order(value, operand, key) == 0
    }
}

extension ResolvedAggregate {
    /// The aggregate's value for each subject, as SQLite computes it: nil when a to-one step
    /// before the collection is empty; count of the (matching) members; `sum` of the non-nil
    /// values, 0 for none; `avg`, `min`, `max` of the non-nil values, nil for none. Decimals are
    /// taken as doubles.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when an integer sum overflows (SQLite fails
    ///   the statement too).
    func values<Subject: PredicateSubject>(_ subjects: [Subject]) throws(SkerryError) -> [AttributeValue] {
        var reached: [Bool] = []
        let (owners, members) = try ResolvedPredicate.gather(subjects) { subject throws(SkerryError) in
            var current = [subject]
            for hop in path { current = try current.flatMapThrowing { o throws(SkerryError) in try o.related(hop) } }
            reached.append(!current.isEmpty)
            return try current.flatMapThrowing { o throws(SkerryError) in try o.related(collection) }
        }
        let included =
            try filter.map { filter throws(SkerryError) in try filter.evaluate(members) } ?? Array(repeating: true, count: members.count)
        var groups = Array(repeating: [AttributeValue](), count: subjects.count)
        var counts = Array(repeating: 0, count: subjects.count)
        for position in members.indices where included[position] {
            counts[owners[position]] += 1
            if let key {
                let value = try members[position].value(key)
                if !value.isNull {
                    groups[owners[position]].append(
                        key.attribute.type == .decimal ? value.numericValue.map(AttributeValue.double) ?? .null : value)
                }
            }
        }
        var result: [AttributeValue] = []
        result.reserveCapacity(subjects.count)
        for index in subjects.indices {
            guard reached[index] else {
                result.append(.null)
                continue
            }
            result.append(try combine(groups[index], count: counts[index]))
        }
        return result
    }

    private func combine(_ values: [AttributeValue], count: Int) throws(SkerryError) -> AttributeValue {
        switch function {
        case .count:
            return .int(Int64(count))
        case .sum:
            if case .int? = values.first {
                var total: Int64 = 0
                for case .int(let v) in values {
                    let (sum, overflow) = total.addingReportingOverflow(v)
                    if overflow {
                        throw SkerryError(
                            .invalidArgument,
                            "@sum of '\(collection.destination.name).\(key?.attribute.name ?? "")' overflows a 64-bit integer.")
                    }
                    total = sum
                }
                return .int(total)
            }
            guard !values.isEmpty else { return .int(0) }
            return .double(values.reduce(0) { $0 + ($1.numericValue ?? 0) })
        case .average:
            guard !values.isEmpty else { return .null }
            return .double(values.reduce(0) { $0 + ($1.numericValue ?? 0) } / Double(values.count))
        case .min, .max:
            var best: AttributeValue?
            for value in values {
                guard let current = best else {
                    best = value
                    continue
                }
                let order = AttributeValue.compare(value, current) ?? 0
                if function == .min ? order < 0 : order > 0 { best = value }
            }
            return best ?? .null
        }
    }
}

extension Array where Element == ResolvedSortKey {
    /// Three-way comparison of two objects' sort values (one per key, in order).
    func compare(_ lhs: [AttributeValue], _ rhs: [AttributeValue]) -> Int {
        for (position, sortKey) in enumerated() {
            let (a, b) = (lhs[position], rhs[position])
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

    /// The values `subject` sorts by, one per key.
    func sortValues<Subject: PredicateSubject>(_ subject: Subject) throws(SkerryError) -> [AttributeValue] {
        try mapThrowing { sortKey throws(SkerryError) in try subject.value(sortKey.key) }
    }
}

extension Array {
    /// `map` with a typed-throwing transform.
    func mapThrowing<T>(_ transform: (Element) throws(SkerryError) -> T) throws(SkerryError) -> [T] {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self { result.append(try transform(element)) }
        return result
    }

    /// `flatMap` with a typed-throwing transform.
    func flatMapThrowing<T>(_ transform: (Element) throws(SkerryError) -> [T]) throws(SkerryError) -> [T] {
        var result: [T] = []
        for element in self { result += try transform(element) }
        return result
    }
}
