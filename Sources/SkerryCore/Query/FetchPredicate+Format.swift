/// A predicate parsed from a format string that has `$VARIABLE`s, kept until they get values with
/// ``FetchPredicate/withSubstitutionVariables(_:)``.
public struct PredicateTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The format it was parsed from.
    public let format: String
    /// The names of its variables (without `$`), sorted.
    public let variableNames: [String]
    let node: FormatNode

    public var description: String { format }
}

extension FetchPredicate {
    /// Parses a predicate written in Core Data's predicate format language, as `NSPredicate(format:)`
    /// does, into the same predicate that code builds:
    ///
    /// ```swift
    /// let recent = try FetchPredicate(format: "year >= %d AND title BEGINSWITH[cd] %@", 1960, "d")
    /// ```
    ///
    /// Supported: comparisons (`=`, `==`, `!=`, `<>`, `<`, `<=`, `=<`, `>`, `>=`, `=>`), `BETWEEN`,
    /// `IN`, `CONTAINS`, `BEGINSWITH`, `ENDSWITH`, `LIKE`, `MATCHES` with `[c]`, `[d]`, `[cd]`;
    /// `AND`/`OR`/`NOT` and `&&`/`||`/`!`; `ANY`/`SOME`/`ALL`/`NONE`; `@count`, `@sum`, `@avg`,
    /// `@min`, `@max`; key paths through relationships; `SUBQUERY(…).@count`; `SELF`;
    /// `TRUEPREDICATE`, `FALSEPREDICATE`; `nil`/`NULL`, `YES`/`NO`/`TRUE`/`FALSE`, numbers
    /// (also `0x`, `0o`, `0b`), strings in either quote with escapes, `{ … }` lists; arguments
    /// `%@`, `%K`, `%d`, `%i`, `%ld`, `%lld`, `%u`, `%x`, `%f`, `%g`, `%e`, `%s` and the other
    /// printf length forms; `$VARIABLE`s (see ``withSubstitutionVariables(_:)``). Keywords are
    /// case-insensitive; a key path component that is a keyword is written `#name`.
    ///
    /// - Parameters:
    ///   - format: the format string.
    ///   - arguments: one per `%` specifier, in order: strings, numbers, `Bool`, `Date`,
    ///     `Decimal`, `UUID`, `Data`, `URL`, nil, ``ObjectID`` or ``EntityObject``, or arrays of
    ///     these; a key path string for `%K`.
    /// - Throws: ``SkerryError/Code/invalidPredicateFormat`` for a malformed format, a construct
    ///   Skerry does not support, or arguments that do not fit; the error's
    ///   ``SkerryError/predicateSyntax`` gives the offset and what was expected there.
    public init(format: String, _ arguments: Any...) throws(SkerryError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a predicate format with its arguments in an array; see ``init(format:_:)``.
    public init(format: String, argumentArray: [Any]) throws(SkerryError) {
        var parser = try FormatParser(format: format, arguments: argumentArray)
        let node = try parser.parse()
        var names = Set<String>()
        node.collectVariables(into: &names)
        if names.isEmpty {
            self = try FormatBuilder(format: format, variables: [:]).build(node)
        } else {
            self = .unsubstituted(PredicateTemplate(format: format, variableNames: names.sorted(), node: node))
        }
    }

    /// The predicate with its `$VARIABLE`s replaced by values, as `NSPredicate`'s
    /// `withSubstitutionVariables(_:)`:
    ///
    /// ```swift
    /// let template = try FetchPredicate(format: "year >= $FROM AND year < $TO")
    /// let sixties = try template.withSubstitutionVariables(["FROM": 1960, "TO": 1970])
    /// ```
    ///
    /// - Parameter variables: values by variable name (without `$`), of the kinds a `%@` argument
    ///   takes.
    /// - Throws: ``SkerryError/Code/invalidPredicateFormat`` when a variable has no value or a
    ///   value that does not fit where it stands.
    public func withSubstitutionVariables(_ variables: [String: Any]) throws(SkerryError) -> FetchPredicate {
        try substituting(variables, depth: 0)
    }

    private func substituting(_ variables: [String: Any], depth: Int) throws(SkerryError) -> FetchPredicate {
        guard depth <= Self.maximumDepth else { throw Self.tooDeep() }
        switch self {
        case .unsubstituted(let template):
            var expressions: [String: FormatExpression] = [:]
            for (name, value) in variables {
                do {
                    expressions[name] = try FormatArgument.expression(value)
                } catch {
                    throw SkerryError(
                        .invalidPredicateFormat,
                        "The value of $\(name) is \(type(of: value)); wanted \(error.wanted).", key: name)
                }
            }
            return try FormatBuilder(format: template.format, variables: expressions).build(template.node)
        case .and(let parts):
            var result: [FetchPredicate] = []
            for part in parts { result.append(try part.substituting(variables, depth: depth + 1)) }
            return .and(result)
        case .or(let parts):
            var result: [FetchPredicate] = []
            for part in parts { result.append(try part.substituting(variables, depth: depth + 1)) }
            return .or(result)
        case .not(let inner):
            return .not(try inner.substituting(variables, depth: depth + 1))
        case .any(let relationship, let inner):
            return .any(relationship: relationship, try inner.substituting(variables, depth: depth + 1))
        case .all(let relationship, let inner):
            return .all(relationship: relationship, try inner.substituting(variables, depth: depth + 1))
        case .countMatching(let relationship, let inner, let op, let count):
            return .countMatching(relationship: relationship, try inner.substituting(variables, depth: depth + 1), op, count)
        default:
            return self
        }
    }

    static func tooDeep() -> SkerryError {
        SkerryError(
            .invalidArgument, "The predicate nests deeper than \(maximumDepth) levels (NOT, ANY, ALL, subqueries or key path steps).")
    }
}

extension FormatNode {
    func collectVariables(into names: inout Set<String>) {
        switch self {
        case .constant: return
        case .and(let parts), .or(let parts): for part in parts { part.collectVariables(into: &names) }
        case .not(let inner): inner.collectVariables(into: &names)
        case .comparison(let comparison):
            comparison.lhs.collectVariables(into: &names)
            comparison.rhs.collectVariables(into: &names)
        }
    }
}

extension FormatExpression {
    func collectVariables(into names: inout Set<String>) {
        switch self {
        case .variable(let name): names.insert(name)
        case .list(let elements): for element in elements { element.collectVariables(into: &names) }
        case .subqueryCount(_, let node): node.collectVariables(into: &names)
        default: return
        }
    }
}

/// Builds ``FetchPredicate``s from a parsed format, with variables' values.
struct FormatBuilder {
    let format: String
    let variables: [String: FormatExpression]

    private func error(_ comparison: FormatComparison, expected: String, found: String) -> SkerryError {
        FormatLexer.error(format, scalarOffset: comparison.offset, expected: expected, found: found)
    }

    func build(_ node: FormatNode) throws(SkerryError) -> FetchPredicate {
        switch node {
        case .constant(let value): return .constant(value)
        case .and(let parts):
            var result: [FetchPredicate] = []
            for part in parts { result.append(try build(part)) }
            return .and(result)
        case .or(let parts):
            var result: [FetchPredicate] = []
            for part in parts { result.append(try build(part)) }
            return .or(result)
        case .not(let inner): return .not(try build(inner))
        case .comparison(let comparison): return try build(comparison)
        }
    }

    /// The expression with variables replaced by their values.
    private func substituted(_ expression: FormatExpression, in comparison: FormatComparison) throws(SkerryError) -> FormatExpression {
        switch expression {
        case .variable(let name):
            guard let value = variables[name] else {
                throw error(comparison, expected: "a value for $\(name) (see withSubstitutionVariables)", found: "none")
            }
            return value
        case .list(let elements):
            var result: [FormatExpression] = []
            for element in elements { result.append(try substituted(element, in: comparison)) }
            return .list(result)
        default:
            return expression
        }
    }

    private func build(_ original: FormatComparison) throws(SkerryError) -> FetchPredicate {
        var comparison = original
        comparison.lhs = try substituted(comparison.lhs, in: original)
        comparison.rhs = try substituted(comparison.rhs, in: original)
        if !comparison.lhs.isKeyExpression {
            guard comparison.rhs.isKeyExpression else {
                throw error(original, expected: "a key path on one side of the comparison", found: "values on both sides")
            }
            swap(&comparison.lhs, &comparison.rhs)
            switch comparison.op {
            case .comparison(let op): comparison.op = .comparison(op.flipped)
            case .in:
                // `value IN collection`: some member of the collection is the value.
                guard comparison.quantifier == nil else {
                    throw error(original, expected: "no ANY/ALL/NONE before 'value IN keyPath'", found: "a quantifier")
                }
                comparison.op = .comparison(.equal)
                comparison.quantifier = .any
            default:
                throw error(original, expected: "the key path on the left of this operator", found: "a value")
            }
        } else if comparison.rhs.isKeyExpression {
            throw error(original, expected: "a value on the right", found: "a key path (comparing two key paths is not supported)")
        }
        switch comparison.lhs {
        case .keyPath(let path): return try buildKeyComparison(path, comparison)
        case .aggregate(let function, let path):
            return try buildAggregate(comparison) { op, value throws(SkerryError) in
                if function == .count, case .int(let count) = value { return .count(relationship: path, op, Int(count)) }
                return .aggregate(function, keyPath: path, op, value)
            }
        case .subqueryCount(let collection, let node):
            let inner = try build(node)
            return try buildAggregate(comparison) { op, value throws(SkerryError) in
                guard case .int(let count) = value else {
                    throw error(original, expected: "an integer to compare SUBQUERY(…).@count with", found: "\(value)")
                }
                return .countMatching(relationship: collection, inner, op, Int(count))
            }
        default:
            throw error(original, expected: "a key path", found: "a value") // unreachable: swapped above
        }
    }

    /// A comparison of an aggregate (`@count`, `@sum`…, `SUBQUERY(…).@count`): an operator, or
    /// BETWEEN and IN spelled out.
    private func buildAggregate(
        _ comparison: FormatComparison,
        _ make: (ComparisonOperator, AttributeValue) throws(SkerryError) -> FetchPredicate
    ) throws(SkerryError) -> FetchPredicate {
        guard comparison.quantifier == nil else {
            throw error(comparison, expected: "no ANY/ALL/NONE before an aggregate", found: "a quantifier")
        }
        switch (comparison.op, comparison.rhs) {
        case (.comparison(let op), .value(let value)):
            return try make(op, value)
        case (.between, .list(let bounds)):
            let (lower, upper) = try self.bounds(bounds, comparison)
            return .and([try make(.greaterThanOrEqual, lower), try make(.lessThanOrEqual, upper)])
        case (.in, .list(let elements)):
            var parts: [FetchPredicate] = []
            for value in try values(elements, comparison) { parts.append(try make(.equal, value)) }
            return .or(parts)
        default:
            throw error(
                comparison, expected: "a comparison of the aggregate with a number (or BETWEEN/IN a list)",
                found: "another operator or operand")
        }
    }

    private func values(_ elements: [FormatExpression], _ comparison: FormatComparison) throws(SkerryError) -> [AttributeValue] {
        var values: [AttributeValue] = []
        for element in elements {
            guard case .value(let value) = element else {
                throw error(comparison, expected: "a list of values", found: "a list holding a key path, a list or objects")
            }
            values.append(value)
        }
        return values
    }

    private func bounds(_ elements: [FormatExpression], _ comparison: FormatComparison) throws(SkerryError) -> (
        AttributeValue, AttributeValue
    ) {
        let values = try values(elements, comparison)
        guard values.count == 2 else {
            throw error(comparison, expected: "BETWEEN { lower, upper } (two values)", found: "\(values.count) value(s)")
        }
        return (values[0], values[1])
    }

    /// The object IDs of a right-hand side made of objects (`%@` with an object or ID, or an array
    /// of them); nil when it holds values.
    private func objectIDs(_ expression: FormatExpression) -> [ObjectID]? {
        switch expression {
        case .objects(let ids): return ids
        case .list(let elements) where !elements.isEmpty:
            var ids: [ObjectID] = []
            for element in elements {
                guard case .objects(let more) = element else { return nil }
                ids += more
            }
            return ids
        default: return nil
        }
    }

    private func buildKeyComparison(_ path: String, _ comparison: FormatComparison) throws(SkerryError) -> FetchPredicate {
        if let ids = objectIDs(comparison.rhs) {
            let positive: Bool
            switch comparison.op {
            case .comparison(.equal), .in, .string(.contains): positive = true
            case .comparison(.notEqual): positive = false
            default:
                throw error(comparison, expected: "==, != or IN to compare with objects", found: "another operator")
            }
            let test: FetchPredicate
            switch comparison.quantifier {
            case nil, .any?: test = .isObject(keyPath: path, in: ids)
            case .none?: test = .not(.isObject(keyPath: path, in: ids))
            case .all?: test = path.isEmpty ? .isObject(keyPath: "", in: ids) : .all(relationship: path, .isObject(keyPath: "", in: ids))
            }
            return positive ? test : .not(test)
        }
        guard !path.isEmpty else {
            throw error(comparison, expected: "an object, an object ID or a list of them to compare SELF with", found: "a value")
        }
        guard let quantifier = comparison.quantifier else { return try leaf(path, comparison) }
        guard let dot = path.lastIndex(of: ".") else {
            throw error(comparison, expected: "a key path through a to-many relationship after ANY/ALL/NONE", found: "'\(path)'")
        }
        let relationship = String(path[..<dot])
        let inner = try leaf(String(path[path.index(after: dot)...]), comparison)
        switch quantifier {
        case .any: return .any(relationship: relationship, inner)
        case .all: return .all(relationship: relationship, inner)
        case .none: return .not(.any(relationship: relationship, inner))
        }
    }

    /// The comparison of one key with the right-hand side.
    private func leaf(_ key: String, _ comparison: FormatComparison) throws(SkerryError) -> FetchPredicate {
        let options = comparison.options
        switch (comparison.op, comparison.rhs) {
        case (.comparison(let op), .value(let value)):
            if !options.isEmpty, op == .equal || op == .notEqual, case .string(let text) = value {
                let equal = FetchPredicate.string(key: key, .equal, text, options)
                return op == .equal ? equal : .not(equal)
            }
            return .comparison(key: key, op, value)
        case (.in, .list(let elements)):
            let values = try values(elements, comparison)
            if !options.isEmpty {
                var parts: [FetchPredicate] = []
                for value in values {
                    guard case .string(let text) = value else {
                        throw error(comparison, expected: "strings in a list compared with [c]/[d]", found: "\(value)")
                    }
                    parts.append(.string(key: key, .equal, text, options))
                }
                return .or(parts)
            }
            return .isIn(key: key, values)
        case (.between, .list(let elements)):
            let (lower, upper) = try bounds(elements, comparison)
            return .between(key: key, lower, upper)
        case (.string(let op), .value(.string(let pattern))):
            return .string(key: key, op, pattern, options)
        case (.string, _):
            throw error(comparison, expected: "a string on the right of a string operator", found: "another operand")
        case (.in, _), (.between, _):
            throw error(comparison, expected: "a list ({ … } or an array argument) on the right", found: "a single value")
        default:
            throw error(comparison, expected: "a value on the right", found: "a list")
        }
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped: `a < b` is `b > a`.
    var flipped: ComparisonOperator {
        switch self {
        case .equal, .notEqual: return self
        case .lessThan: return .greaterThan
        case .lessThanOrEqual: return .greaterThanOrEqual
        case .greaterThan: return .lessThan
        case .greaterThanOrEqual: return .lessThanOrEqual
        }
    }
}
