/// A predicate format string, parsed: the tree before `$VARIABLE`s are substituted and before it
/// is checked against a model. Arguments (`%@`, `%K`, `%d`…) are already in place.
indirect enum FormatNode: Sendable, Hashable {
    case constant(Bool)
    case and([FormatNode])
    case or([FormatNode])
    case not(FormatNode)
    case comparison(FormatComparison)
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a comparison.
enum FormatQuantifier: Sendable, Hashable {
    case any, all, none
}

/// The operators between two expressions.
enum FormatOperator: Sendable, Hashable {
    case comparison(ComparisonOperator)
    case between, `in`
    case string(StringOperator)
}

/// `[quantifier] lhs op[options] rhs`, with where it starts in the format (for errors found
/// when building it).
struct FormatComparison: Sendable, Hashable {
    var quantifier: FormatQuantifier?
    var lhs: FormatExpression
    var op: FormatOperator
    var options: StringComparisonOptions
    var rhs: FormatExpression
    var offset: Int
}

/// The operands of a comparison.
indirect enum FormatExpression: Sendable, Hashable {
    /// A key path; `""` is `SELF`.
    case keyPath(String)
    /// `keyPath.@count`, `keyPath.@sum.attribute` (the path holds the attribute after the
    /// collection), or the prefix form `@sum.keyPath`.
    case aggregate(AggregateFunction, String)
    /// `SUBQUERY(collection, $x, predicate).@count`: keys in the predicate are the member's.
    case subqueryCount(String, FormatNode)
    case value(AttributeValue)
    case objects([ObjectID])
    /// `{ a, b }` or an array argument.
    case list([FormatExpression])
    /// `$NAME`, to be substituted.
    case variable(String)

    var isKeyExpression: Bool {
        switch self {
        case .keyPath, .aggregate, .subqueryCount: return true
        default: return false
        }
    }
}

/// A recursive-descent parser of Core Data's predicate format language. Nesting (parentheses,
/// lists, subqueries) is bounded by ``FetchPredicate/maximumDepth``; a chain of `NOT`s is read
/// without recursion.
struct FormatParser {
    private let format: String
    private let tokens: [(token: FormatToken, offset: Int)]
    private var index = 0
    private var arguments: [Any]
    private var argumentIndex = 0
    private var depth = 0
    /// The variables of the enclosing SUBQUERYs, innermost last.
    private var subqueryVariables: [String] = []

    init(format: String, arguments: [Any]) throws(SkerryError) {
        self.format = format
        self.tokens = try FormatLexer.tokenize(format)
        self.arguments = arguments
    }

    /// Parses the whole format.
    mutating func parse() throws(SkerryError) -> FormatNode {
        let node = try parseOr()
        guard current == .end else {
            throw error(expected: "'AND', 'OR' or the end of the format")
        }
        guard argumentIndex == arguments.count else {
            throw error(
                expected: "\(argumentIndex) argument(s), one per format specifier",
                found: "\(arguments.count) arguments")
        }
        return node
    }

    // MARK: Tokens

    private var current: FormatToken { tokens[index].token }
    private var offset: Int { tokens[index].offset }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func error(expected: String, found: String? = nil, at offset: Int? = nil) -> SkerryError {
        FormatLexer.error(format, scalarOffset: offset ?? self.offset, expected: expected, found: found ?? current.display)
    }

    private mutating func take(_ symbol: String) -> Bool {
        guard current == .symbol(symbol) else { return false }
        advance()
        return true
    }

    private mutating func expect(_ symbol: String) throws(SkerryError) {
        guard take(symbol) else { throw error(expected: "'\(symbol)'") }
    }

    private func isKeyword(_ words: String...) -> Bool {
        if case .keyword(let word, _) = current { return words.contains(word) }
        return false
    }

    private mutating func nest() throws(SkerryError) {
        depth += 1
        guard depth <= FetchPredicate.maximumDepth else {
            throw error(expected: "at most \(FetchPredicate.maximumDepth) levels of nesting", found: "deeper nesting")
        }
    }

    // MARK: Predicates

    private mutating func parseOr() throws(SkerryError) -> FormatNode {
        var parts = [try parseAnd()]
        while isKeyword("OR") || current == .symbol("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws(SkerryError) -> FormatNode {
        var parts = [try parseNot()]
        while isKeyword("AND") || current == .symbol("&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws(SkerryError) -> FormatNode {
        var negations = 0
        while isKeyword("NOT") || current == .symbol("!") {
            advance()
            negations += 1
        }
        let node = try parsePrimary()
        return negations % 2 == 1 ? .not(node) : node
    }

    private mutating func parsePrimary() throws(SkerryError) -> FormatNode {
        if take("(") {
            try nest()
            let node = try parseOr()
            try expect(")")
            depth -= 1
            return node
        }
        if isKeyword("TRUEPREDICATE") {
            advance()
            return .constant(true)
        }
        if isKeyword("FALSEPREDICATE") {
            advance()
            return .constant(false)
        }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws(SkerryError) -> FormatComparison {
        let start = offset
        var quantifier: FormatQuantifier?
        if isKeyword("ANY", "SOME") {
            quantifier = .any
            advance()
        } else if isKeyword("ALL") {
            quantifier = .all
            advance()
        } else if isKeyword("NONE") {
            quantifier = FormatQuantifier.none
            advance()
        }
        let lhs = try parseExpression()
        let opOffset = offset
        let op = try parseOperator()
        let options = try parseOptions()
        let rhs = try parseExpression()
        if case .string = op {
        } else if !options.isEmpty, op != .comparison(.equal), op != .comparison(.notEqual), op != .in {
            throw error(
                expected: "an operator that takes [c]/[d] options (==, !=, IN, CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES)",
                found: "options on another operator", at: opOffset)
        }
        return FormatComparison(quantifier: quantifier, lhs: lhs, op: op, options: options, rhs: rhs, offset: start)
    }

    private mutating func parseOperator() throws(SkerryError) -> FormatOperator {
        let op: FormatOperator
        switch current {
        case .symbol("="), .symbol("=="): op = .comparison(.equal)
        case .symbol("!="), .symbol("<>"): op = .comparison(.notEqual)
        case .symbol("<"): op = .comparison(.lessThan)
        case .symbol("<="), .symbol("=<"): op = .comparison(.lessThanOrEqual)
        case .symbol(">"): op = .comparison(.greaterThan)
        case .symbol(">="), .symbol("=>"): op = .comparison(.greaterThanOrEqual)
        case .keyword("BETWEEN", _): op = .between
        case .keyword("IN", _): op = .in
        case .keyword("CONTAINS", _): op = .string(.contains)
        case .keyword("BEGINSWITH", _): op = .string(.beginsWith)
        case .keyword("ENDSWITH", _): op = .string(.endsWith)
        case .keyword("LIKE", _): op = .string(.like)
        case .keyword("MATCHES", _): op = .string(.matches)
        case .symbol("+"), .symbol("-"), .symbol("*"), .symbol("/"), .symbol("**"):
            throw error(expected: "a comparison operator (arithmetic is not supported)")
        default:
            throw error(
                expected: "a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES)")
        }
        advance()
        return op
    }

    /// `[c]`, `[d]`, `[cd]` (also `[n]` and `[l]`, which change nothing here).
    private mutating func parseOptions() throws(SkerryError) -> StringComparisonOptions {
        guard take("[") else { return [] }
        var options: StringComparisonOptions = []
        guard case .identifier(let letters) = current, letters.allSatisfy({ "cdnlCDNL".contains($0) }) else {
            throw error(expected: "comparison options (c, d, cd)")
        }
        if letters.lowercased().contains("c") { options.insert(.caseInsensitive) }
        if letters.lowercased().contains("d") { options.insert(.diacriticInsensitive) }
        advance()
        try expect("]")
        return options
    }

    // MARK: Expressions

    private mutating func parseExpression() throws(SkerryError) -> FormatExpression {
        let expression = try parseOperand()
        switch current {
        case .symbol("+"), .symbol("-"), .symbol("*"), .symbol("/"), .symbol("**"), .symbol(":="):
            throw error(expected: "a comparison operator (arithmetic and assignment are not supported)")
        case .symbol("["):
            throw error(expected: "a comparison operator (index subscripts are not supported)")
        default:
            return expression
        }
    }

    private mutating func parseOperand() throws(SkerryError) -> FormatExpression {
        let start = offset
        switch current {
        case .string(let text):
            advance()
            return .value(.string(text))
        case .integer(let value):
            advance()
            return .value(.int(value))
        case .double(let value):
            advance()
            return .value(.double(value))
        case .symbol("-"):
            advance()
            switch current {
            case .integer(let value):
                advance()
                return .value(.int(-value))
            case .double(let value):
                advance()
                return .value(.double(-value))
            default:
                throw error(expected: "a number after '-'")
            }
        case .keyword("TRUE", _), .keyword("YES", _):
            advance()
            return .value(.bool(true))
        case .keyword("FALSE", _), .keyword("NO", _):
            advance()
            return .value(.bool(false))
        case .keyword("NULL", _), .keyword("NIL", _):
            advance()
            return .value(.null)
        case .argument(let spec):
            advance()
            if spec == "K" {
                return try parseKeyPathRest([try keyPathArgument(at: start)])
            }
            return try nextArgument(spec, at: start)
        case .symbol("{"):
            advance()
            try nest()
            var elements: [FormatExpression] = []
            if !take("}") {
                repeat { elements.append(try parseExpression()) } while take(",")
                try expect("}")
            }
            depth -= 1
            return .list(elements)
        case .variable(let name):
            advance()
            guard let position = subqueryVariables.lastIndex(of: name) else { return .variable(name) }
            guard position == subqueryVariables.count - 1 else {
                throw error(
                    expected: "the innermost SUBQUERY's variable",
                    found: "'$\(name)' of an outer SUBQUERY (correlated subqueries are not supported)", at: start)
            }
            return try parseKeyPathRest([])
        case .keyword("SELF", _):
            advance()
            return try parseKeyPathRest([])
        case .identifier(let name):
            advance()
            return try parseKeyPathRest([name])
        case .aggregate(let name):
            advance()
            let function = try aggregateFunction(name, at: start)
            guard take(".") else { throw error(expected: "'.' and a key path after '@\(name)'") }
            guard case .keyPath(let path) = try parseKeyPathRest([try keyPathComponent()]) else {
                throw error(expected: "a key path after '@\(name).'", at: start)
            }
            return .aggregate(function, path)
        case .keyword("SUBQUERY", _):
            advance()
            return try parseSubquery(at: start)
        case .keyword(_, let word):
            throw error(expected: "a key path or a value", found: "'\(word)' (not supported in a fetch predicate)")
        default:
            throw error(expected: "a key path or a value")
        }
    }

    private func aggregateFunction(_ name: String, at offset: Int) throws(SkerryError) -> AggregateFunction {
        switch name {
        case "count": return .count
        case "sum": return .sum
        case "avg": return .average
        case "min": return .min
        case "max": return .max
        default:
            throw error(expected: "@count, @sum, @avg, @min or @max", found: "'@\(name)'", at: offset)
        }
    }

    /// A component after a `.`: any name, keywords included, or `%K`.
    private mutating func keyPathComponent() throws(SkerryError) -> String {
        let start = offset
        switch current {
        case .identifier(let name), .keyword(_, let name):
            advance()
            return name
        case .argument("K"):
            advance()
            return try keyPathArgument(at: start)
        default:
            throw error(expected: "a key path component")
        }
    }

    /// The rest of a key path after its first components: `.name`…, ending possibly in an
    /// aggregate (`.@count`, `.@sum.attribute`).
    private mutating func parseKeyPathRest(_ first: [String]) throws(SkerryError) -> FormatExpression {
        var components = first
        while take(".") {
            let start = offset
            if case .aggregate(let name) = current {
                advance()
                let function = try aggregateFunction(name, at: start)
                var attribute: [String] = []
                if function != .count {
                    guard take(".") else { throw error(expected: "'.' and an attribute after '@\(name)'") }
                    attribute.append(try keyPathComponent())
                    while take(".") { attribute.append(try keyPathComponent()) }
                }
                guard !components.isEmpty else { throw error(expected: "a to-many key path before '@\(name)'", at: start) }
                return .aggregate(function, (components + attribute).joined(separator: "."))
            }
            components.append(try keyPathComponent())
        }
        guard components.count <= FetchPredicate.maximumDepth else {
            throw error(
                expected: "a key path of at most \(FetchPredicate.maximumDepth) components", found: "\(components.count) components")
        }
        return .keyPath(components.joined(separator: "."))
    }

    /// `SUBQUERY(collection, $x, predicate).@count`.
    private mutating func parseSubquery(at start: Int) throws(SkerryError) -> FormatExpression {
        try expect("(")
        try nest()
        let collection: String
        switch try parseOperand() {
        case .keyPath(let path) where !path.isEmpty: collection = path
        default: throw error(expected: "a to-many key path as the collection of SUBQUERY", at: start)
        }
        try expect(",")
        guard case .variable(let variable) = current else { throw error(expected: "the SUBQUERY's variable ($x)") }
        advance()
        try expect(",")
        subqueryVariables.append(variable)
        let predicate = try parseOr()
        subqueryVariables.removeLast()
        try expect(")")
        depth -= 1
        guard take("."), case .aggregate("count") = current else {
            throw error(expected: "'.@count' after SUBQUERY(…) (the supported form)")
        }
        advance()
        return .subqueryCount(collection, predicate)
    }

    // MARK: Arguments

    private mutating func takeArgument(_ spec: String, at offset: Int) throws(SkerryError) -> Any {
        guard argumentIndex < arguments.count else {
            throw error(expected: "an argument for '%\(spec)'", found: "only \(arguments.count) argument(s)", at: offset)
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    private mutating func keyPathArgument(at offset: Int) throws(SkerryError) -> String {
        let argument = try takeArgument("K", at: offset)
        var name = argument as? String ?? (argument as? Substring).map(String.init)
        if case AttributeValue.string(let text)? = argument as? AttributeValue { name = text }
        guard let name, !name.isEmpty else {
            throw error(expected: "a key path string for '%K'", found: "\(type(of: argument))", at: offset)
        }
        return name
    }

    private mutating func nextArgument(_ spec: String, at offset: Int) throws(SkerryError) -> FormatExpression {
        let argument = try takeArgument(spec, at: offset)
        let conversion = spec.last ?? "@"
        do throws(FormatArgument.Mismatch) {
            switch conversion {
            case "@":
                return try FormatArgument.expression(argument)
            case "d", "i", "o", "u", "x", "X":
                return .value(.int(try FormatArgument.integer(argument)))
            case "f", "F", "e", "E", "g", "G", "a", "A":
                return .value(.double(try FormatArgument.double(argument)))
            case "s", "S":
                if case AttributeValue.string(let text)? = argument as? AttributeValue { return .value(.string(text)) }
                guard let text = argument as? String else { throw FormatArgument.Mismatch(wanted: "a String") }
                return .value(.string(text))
            default:
                throw FormatArgument.Mismatch(wanted: "a specifier Skerry supports (not %c or %p)")
            }
        } catch {
            throw self.error(expected: "\(error.wanted) for '%\(spec)'", found: "\(type(of: argument)) \(argument)", at: offset)
        }
    }
}
