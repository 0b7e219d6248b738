import Foundation

/// A ``FetchPredicate`` checked against one entity: keys resolved to attribute positions (through
/// to-one relationships where the key is a path), relationships to their destinations, values
/// checked against attribute types. Both the SQL compiler and the in-memory evaluator work from this
/// form, so both see the same checked predicate. It says nothing of storage: each store compiles it
/// for its own layout.
package indirect enum ResolvedPredicate: Sendable {
    case constant(Bool)
    case comparison(ResolvedKey, ComparisonOperator, AttributeValue)
    case isIn(ResolvedKey, [AttributeValue])
    case between(ResolvedKey, AttributeValue, AttributeValue)
    case string(ResolvedKey, StringOperator, String, StringComparisonOptions)
    case and([ResolvedPredicate])
    case or([ResolvedPredicate])
    case not(ResolvedPredicate)
    /// Some object related through the relationship (to-one or to-many) matches the inner
    /// predicate, which is on the destination.
    case any(ResolvedRelationship, ResolvedPredicate)
    /// Every related object matches (true when there is none).
    case all(ResolvedRelationship, ResolvedPredicate)
    /// An aggregate of a to-many relationship's members compared with a value.
    case aggregate(ResolvedAggregate, ComparisonOperator, AttributeValue)
    /// The object is one of these (IDs of other entities never match).
    case isObject([ObjectID])
    /// A raw SQL condition on `entity`'s columns, with its bound values.
    case sql(String, [AttributeValue], EntityDescription)
}

/// One relationship step from an entity to its destination.
package struct ResolvedRelationship: Sendable {
    /// The entity the relationship belongs to.
    package let entity: EntityDescription
    /// Its index in `entity.relationships`.
    package let index: Int
    package let destination: EntityDescription
    package let isToMany: Bool
}

/// An attribute, reached through `path` (to-one relationships, first step first) from the
/// entity the predicate is on.
package struct ResolvedKey: Sendable {
    package let index: Int
    package let attribute: AttributeDescription
    package var path: [ResolvedRelationship] = []
}

/// `function` over the members of `collection` (a to-many relationship reached through the
/// to-one relationships of `path`): of `key`'s values, or for `.count` of the members matching
/// `filter` (all when nil).
package struct ResolvedAggregate: Sendable {
    package let path: [ResolvedRelationship]
    package let collection: ResolvedRelationship
    package let function: AggregateFunction
    package let key: ResolvedKey?
    package let filter: ResolvedPredicate?
}

/// A ``SortKey`` resolved against an entity.
package struct ResolvedSortKey: Sendable {
    package let key: ResolvedKey
    package let ascending: Bool
}

extension FetchPredicate {
    /// Resolves the predicate against `entity` of `model`.
    /// - Throws: ``SkerryError/Code/unknownAttribute`` for a key or relationship the entity lacks,
    ///   ``SkerryError/Code/wrongValueType`` for a value that cannot be compared with the
    ///   attribute, ``SkerryError/Code/invalidArgument`` for a predicate nested deeper than
    ///   ``FetchPredicate/maximumDepth``, ``SkerryError/Code/invalidPredicateFormat`` for
    ///   variables without values.
    func resolved(for entity: EntityDescription, in model: ObjectModel) throws(SkerryError) -> ResolvedPredicate {
        try resolved(for: entity, in: model, depth: 0)
    }

    func resolved(for entity: EntityDescription, in model: ObjectModel, depth: Int) throws(SkerryError) -> ResolvedPredicate {
        guard depth <= Self.maximumDepth else { throw Self.tooDeep() }
        switch self {
        case .constant(let value):
            return .constant(value)
        case .comparison(let key, let op, let value):
            if value.isNull, op == .equal || op == .notEqual, let hops = try entity.relationshipPath(key, in: model, depth: depth) {
                // `author == nil`: no related object.
                let exists = ResolvedPredicate.nested(hops, .constant(true), all: false)
                return op == .equal ? .not(exists) : exists
            }
            return try entity.resolveLeaf(key, in: model, depth: depth) { resolved throws(SkerryError) in
                try resolved.checkComparable(value, entity: entity)
                return .comparison(resolved, op, value)
            }
        case .isIn(let key, let values):
            return try entity.resolveLeaf(key, in: model, depth: depth) { resolved throws(SkerryError) in
                for value in values { try resolved.checkComparable(value, entity: entity) }
                return .isIn(resolved, values)
            }
        case .between(let key, let lower, let upper):
            return try entity.resolveLeaf(key, in: model, depth: depth) { resolved throws(SkerryError) in
                try resolved.checkComparable(lower, entity: entity)
                try resolved.checkComparable(upper, entity: entity)
                return .between(resolved, lower, upper)
            }
        case .string(let key, let op, let pattern, let options):
            try StringMatching.checkPattern(pattern, op, options)
            return try entity.resolveLeaf(key, in: model, depth: depth) { resolved throws(SkerryError) in
                guard resolved.attribute.type == .string || resolved.attribute.type == .url else {
                    throw SkerryError(
                        .wrongValueType,
                        "String operators need a string or URL attribute; '\(entity.name).\(key)' is \(resolved.attribute.type).",
                        entityName: entity.name, key: key)
                }
                return .string(resolved, op, pattern, options)
            }
        case .and(let predicates):
            var resolved: [ResolvedPredicate] = []
            for predicate in predicates { resolved.append(try predicate.resolved(for: entity, in: model, depth: depth + 1)) }
            return .and(resolved)
        case .or(let predicates):
            var resolved: [ResolvedPredicate] = []
            for predicate in predicates { resolved.append(try predicate.resolved(for: entity, in: model, depth: depth + 1)) }
            return .or(resolved)
        case .not(let predicate):
            return .not(try predicate.resolved(for: entity, in: model, depth: depth + 1))
        case .any(let path, let predicate), .all(let path, let predicate):
            guard let hops = try entity.relationshipPath(path, in: model, depth: depth) else {
                throw SkerryError(
                    .unknownAttribute, "'\(path)' is not a relationship key path of '\(entity.name)'.", entityName: entity.name, key: path)
            }
            let inner = try predicate.resolved(for: hops.last?.destination ?? entity, in: model, depth: depth + hops.count + 1)
            if case .all = self { return .nested(hops, inner, all: true) }
            return .nested(hops, inner, all: false)
        case .count(let path, let op, let value):
            let aggregate = try entity.resolveAggregate(.count, path, filter: nil, in: model, depth: depth)
            return .aggregate(aggregate, op, .int(Int64(value)))
        case .aggregate(let function, let path, let op, let value):
            let aggregate = try entity.resolveAggregate(function, path, filter: nil, in: model, depth: depth)
            try aggregate.checkComparable(value, entity: entity, path: path)
            return .aggregate(aggregate, op, value)
        case .countMatching(let path, let predicate, let op, let value):
            let aggregate = try entity.resolveAggregate(.count, path, filter: predicate, in: model, depth: depth)
            return .aggregate(aggregate, op, .int(Int64(value)))
        case .isObject(let path, let ids):
            // IDs of other entities can never match; the SQL compares primary keys only.
            if path.isEmpty { return .isObject(ids.filter { $0.entityName == entity.name }) }
            guard let hops = try entity.relationshipPath(path, in: model, depth: depth) else {
                throw SkerryError(
                    .unknownAttribute, "'\(path)' is not a relationship key path of '\(entity.name)'.", entityName: entity.name, key: path)
            }
            let destination = hops.last?.destination.name
            return .nested(hops, .isObject(ids.filter { $0.entityName == destination }), all: false)
        case .unsubstituted(let template):
            throw SkerryError(
                .invalidPredicateFormat,
                "The predicate \"\(template.format)\" has variables without values (\(template.variableNames.map { "$" + $0 }.joined(separator: ", "))); call withSubstitutionVariables first.",
                entityName: entity.name)
        case .sql(let condition, let values):
            for value in values where value.isNaN {
                throw SkerryError(.wrongValueType, "A raw SQL condition cannot compare with NaN.", entityName: entity.name)
            }
            // The text itself (one expression, its placeholders, what it reads) is checked by the
            // store, which can ask SQLite.
            return .sql(condition, values, entity)
        }
    }
}

extension ResolvedPredicate {
    /// `inner` for the objects reached through `hops`, first hop outermost: some of them (`any`)
    /// or all of them.
    static func nested(_ hops: [ResolvedRelationship], _ inner: ResolvedPredicate, all: Bool) -> ResolvedPredicate {
        var result = inner
        for hop in hops.reversed() { result = all ? .all(hop, result) : .any(hop, result) }
        return result
    }
}

extension ResolvedAggregate {
    /// Checks the value an aggregate is compared with.
    func checkComparable(_ value: AttributeValue, entity: EntityDescription, path: String) throws(SkerryError) {
        if value.isNaN {
            throw SkerryError(.wrongValueType, "Cannot compare '\(path)' with NaN.", entityName: entity.name, key: path)
        }
        guard let key, function == .min || function == .max else {
            switch value {
            case .null, .int, .double, .decimal: return
            default:
                throw SkerryError(
                    .wrongValueType, "Cannot compare '@\(function.rawValue)' of '\(path)' with a \(value.kindName) value.",
                    entityName: entity.name, key: path)
            }
        }
        try key.checkComparable(value, entity: collection.destination)
    }
}

extension SortKey {
    /// Resolves the sort key: an attribute, or a key path through to-one relationships
    /// (`author.name`), whose objects without a related object sort as nil.
    func resolved(for entity: EntityDescription, in model: ObjectModel) throws(SkerryError) -> ResolvedSortKey {
        let resolved = try entity.resolveKey(key, in: model)
        return ResolvedSortKey(key: resolved, ascending: ascending)
    }
}

extension EntityDescription {
    /// Resolves `name`, an attribute or a key path through to-one relationships ending in one.
    func resolveKey(_ name: String, in model: ObjectModel) throws(SkerryError) -> ResolvedKey {
        // An element of a composite attribute ("location.x") is an attribute of its own.
        if name.contains("."), let index = attributeIndex(named: name) {
            return ResolvedKey(index: index, attribute: attributes[index], path: [])
        }
        var entity = self
        var path: [ResolvedRelationship] = []
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= FetchPredicate.maximumDepth else { throw FetchPredicate.tooDeep() }
        for step in parts.dropLast() {
            let relationship = try entity.resolveRelationship(step, in: model)
            guard !relationship.isToMany else {
                throw SkerryError(
                    .unknownAttribute,
                    "'\(step)' in '\(name)' is a to-many relationship of '\(entity.name)'; sort keys and values go through to-one relationships only.",
                    entityName: entity.name, key: name)
            }
            path.append(relationship)
            entity = relationship.destination
        }
        let index = try entity.requireAttributeIndex(parts.last ?? name)
        try entity.requireStored(index, in: name)
        return ResolvedKey(index: index, attribute: entity.attributes[index], path: path)
    }

    /// Resolves a condition on the attribute at the end of key path `name`. Steps through to-many
    /// relationships make it hold when it holds for some related object (Core Data's implicit
    /// ANY): those steps, and the to-one steps before the last of them, become `.any`s around
    /// `make`'s predicate; the to-one steps after it stay in the key.
    func resolveLeaf(
        _ name: String, in model: ObjectModel, depth: Int,
        _ make: (ResolvedKey) throws(SkerryError) -> ResolvedPredicate
    ) throws(SkerryError) -> ResolvedPredicate {
        if name.contains("."), let index = attributeIndex(named: name) { // an element of a composite attribute
            return try make(ResolvedKey(index: index, attribute: attributes[index], path: []))
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard depth + parts.count <= FetchPredicate.maximumDepth else { throw FetchPredicate.tooDeep() }
        var entity = self
        var hops: [ResolvedRelationship] = []
        for step in parts.dropLast() {
            let relationship = try entity.resolveRelationship(step, in: model)
            hops.append(relationship)
            entity = relationship.destination
        }
        let index = try entity.requireAttributeIndex(parts.last ?? name)
        try entity.requireStored(index, in: name)
        let split = (hops.lastIndex { $0.isToMany }).map { $0 + 1 } ?? 0
        let key = ResolvedKey(index: index, attribute: entity.attributes[index], path: Array(hops[split...]))
        return .nested(Array(hops[..<split]), try make(key), all: false)
    }

    /// The relationships of key path `name` when every step is a relationship; nil when its last
    /// step is not one (an attribute, or a name the entity lacks).
    func relationshipPath(_ name: String, in model: ObjectModel, depth: Int) throws(SkerryError) -> [ResolvedRelationship]? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard depth + parts.count <= FetchPredicate.maximumDepth else { throw FetchPredicate.tooDeep() }
        var entity = self
        var hops: [ResolvedRelationship] = []
        for (position, step) in parts.enumerated() {
            if position == parts.count - 1, entity.relationshipIndex(named: step) == nil { return nil }
            let relationship = try entity.resolveRelationship(step, in: model)
            hops.append(relationship)
            entity = relationship.destination
        }
        return hops
    }

    /// Resolves an aggregate's key path: to-one steps, one to-many step (the collection), then for
    /// functions other than count the to-one steps to an attribute of the members.
    func resolveAggregate(
        _ function: AggregateFunction, _ name: String, filter: FetchPredicate?,
        in model: ObjectModel, depth: Int
    ) throws(SkerryError) -> ResolvedAggregate {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard depth + parts.count <= FetchPredicate.maximumDepth else { throw FetchPredicate.tooDeep() }
        var entity = self
        var prefix: [ResolvedRelationship] = []
        var position = 0
        while position < parts.count {
            let relationship = try entity.resolveRelationship(parts[position], in: model)
            position += 1
            entity = relationship.destination
            if relationship.isToMany {
                var key: ResolvedKey?
                let rest = parts[position...].joined(separator: ".")
                if function == .count {
                    guard rest.isEmpty else {
                        throw SkerryError(
                            .unknownAttribute,
                            "@count takes a key path that ends in a to-many relationship; '\(name)' goes on past '\(relationship.destination.name)'.",
                            entityName: self.name, key: name)
                    }
                } else {
                    guard !rest.isEmpty else {
                        throw SkerryError(
                            .unknownAttribute,
                            "@\(function.rawValue) needs an attribute of the members after the to-many relationship in '\(name)'.",
                            entityName: self.name, key: name)
                    }
                    let resolved = try entity.resolveKey(rest, in: model)
                    let numeric =
                        resolved.attribute.type.isInteger || resolved.attribute.type == .decimal
                        || resolved.attribute.type == .float || resolved.attribute.type == .double
                    let ordered = numeric || resolved.attribute.type == .date
                    guard function == .min || function == .max ? ordered : numeric else {
                        throw SkerryError(
                            .wrongValueType,
                            "@\(function.rawValue) of '\(name)' needs a numeric\(function == .min || function == .max ? " or date" : "") attribute; it is \(resolved.attribute.type).",
                            entityName: self.name, key: name)
                    }
                    key = resolved
                }
                let resolvedFilter = try filter?.resolved(for: entity, in: model, depth: depth + parts.count + 1)
                return ResolvedAggregate(path: prefix, collection: relationship, function: function, key: key, filter: resolvedFilter)
            }
            prefix.append(relationship)
        }
        throw SkerryError(
            .unknownAttribute,
            "'\(name)' of '\(self.name)' does not go through a to-many relationship, which @\(function.rawValue) and SUBQUERY need.",
            entityName: self.name, key: name)
    }

    /// Resolves a relationship of this entity.
    func resolveRelationship(_ name: String, in model: ObjectModel) throws(SkerryError) -> ResolvedRelationship {
        let index = try requireRelationshipIndex(name)
        guard let destination = model.entity(named: relationships[index].destinationEntityName) else {
            throw SkerryError(
                .unknownEntity, "The destination of '\(self.name).\(name)' is not in the model.", entityName: self.name, key: name)
        }
        return ResolvedRelationship(
            entity: self, index: index, destination: destination,
            isToMany: relationships[index].isToMany)
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
            throw SkerryError(
                .wrongValueType,
                "Cannot compare '\(entity.name).\(attribute.name)' (\(attribute.type)) with a \(value.kindName) value \(value).",
                entityName: entity.name, key: attribute.name)
        }
        if value.isNaN {
            throw SkerryError(
                .wrongValueType, "Cannot compare '\(entity.name).\(attribute.name)' with NaN.",
                entityName: entity.name, key: attribute.name)
        }
    }
}
