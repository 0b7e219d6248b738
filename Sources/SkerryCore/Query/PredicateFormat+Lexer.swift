/// A syntax or argument error in a predicate format string: where it is, what was expected there
/// and what was found. It is carried by the ``SkerryError`` (code
/// ``SkerryError/Code/invalidPredicateFormat``) that ``FetchPredicate/init(format:_:)`` throws.
public struct PredicateSyntaxError: Sendable, Hashable, CustomStringConvertible {
    /// The format string.
    public let format: String
    /// Where the error is, in characters from the start of `format`.
    public let offset: Int
    /// What the parser expected there ("a value", "')'", …).
    public let expected: String
    /// What it found there ("end of the format", "'AND'", …).
    public let found: String

    public var description: String {
        "at offset \(offset) of \"\(format)\": expected \(expected), found \(found)"
    }
}

/// The tokens of Core Data's predicate format language.
enum FormatToken: Equatable {
    /// A key path component (possibly `#`-escaped, so never a keyword).
    case identifier(String)
    /// A reserved word: upper-cased, and as written.
    case keyword(String, String)
    /// `$NAME`.
    case variable(String)
    /// A quoted string, escapes applied.
    case string(String)
    case integer(Int64)
    case double(Double)
    /// A printf-style argument: `@`, `K`, `d`, `ld`, `f`, … (without the `%`).
    case argument(String)
    /// `@count`, `@sum`, … (the name after `@`, lower-cased).
    case aggregate(String)
    /// Punctuation and operators: `(`, `==`, `&&`, …
    case symbol(String)
    case end

    var display: String {
        switch self {
        case .identifier(let name): return "'\(name)'"
        case .keyword(_, let word): return "'\(word)'"
        case .variable(let name): return "'$\(name)'"
        case .string(let text): return "the string \"\(text)\""
        case .integer(let value): return "the number \(value)"
        case .double(let value): return "the number \(value)"
        case .argument(let spec): return "'%\(spec)'"
        case .aggregate(let name): return "'@\(name)'"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "the end of the format"
        }
    }
}

/// Splits a format string into tokens. Whitespace separates tokens and is otherwise ignored.
struct FormatLexer {
    /// The reserved words of the language (NSPredicate's list); any case. A key path component
    /// that is one of them is written with a leading `#` (`#size`), except after a `.`.
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "ALL", "ANY", "SOME", "NONE", "LIKE", "MATCHES", "CONTAINS",
        "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO",
        "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY", "FIRST", "LAST", "SIZE", "ANYKEY",
        "FUNCTION", "CAST", "FETCH", "CASEINSENSITIVE",
    ]

    let format: String
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ format: String) {
        self.format = format
        self.scalars = Array(format.unicodeScalars)
    }

    /// All tokens with their scalar offsets, ending with `.end`.
    static func tokenize(_ format: String) throws(SkerryError) -> [(token: FormatToken, offset: Int)] {
        var lexer = FormatLexer(format)
        var tokens: [(FormatToken, Int)] = []
        while true {
            lexer.skipWhitespace()
            let offset = lexer.position
            let token = try lexer.next()
            tokens.append((token, offset))
            if token == .end { return tokens }
        }
    }

    /// The error for `offset` (in Unicode scalars), reported in characters.
    static func error(_ format: String, scalarOffset: Int, expected: String, found: String) -> SkerryError {
        let scalars = format.unicodeScalars
        let index = scalars.index(scalars.startIndex, offsetBy: min(max(scalarOffset, 0), scalars.count))
        // Characters before the position (a position inside a character counts that character).
        let offset = String(scalars[..<index]).count
        let syntax = PredicateSyntaxError(format: format, offset: offset, expected: expected, found: found)
        var error = SkerryError(.invalidPredicateFormat, "Invalid predicate format \(syntax).")
        error.predicateSyntax = syntax
        return error
    }

    private func error(at offset: Int, expected: String, found: String) -> SkerryError {
        Self.error(format, scalarOffset: offset, expected: expected, found: found)
    }

    private var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }
    private func peek(_ ahead: Int = 1) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private mutating func skipWhitespace() {
        while let c = current, c.properties.isWhitespace { position += 1 }
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c.properties.isAlphabetic
    }

    private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c.properties.isAlphabetic || ("0"..."9").contains(c)
    }

    private mutating func identifierText() -> String {
        var text = String.UnicodeScalarView()
        while let c = current, Self.isIdentifierPart(c) {
            text.append(c)
            position += 1
        }
        return String(text)
    }

    private mutating func next() throws(SkerryError) -> FormatToken {
        guard let c = current else { return .end }
        let start = position
        if c == "#" {
            position += 1
            guard let first = current, Self.isIdentifierStart(first) else {
                throw error(at: position, expected: "a name after '#'", found: current.map { "'\($0)'" } ?? "the end of the format")
            }
            return .identifier(identifierText())
        }
        if Self.isIdentifierStart(c) {
            let text = identifierText()
            let upper = text.uppercased()
            return Self.keywords.contains(upper) ? .keyword(upper, text) : .identifier(text)
        }
        if ("0"..."9").contains(c) { return try number() }
        switch c {
        case "\"", "'":
            return try string(quote: c)
        case "$":
            position += 1
            guard let first = current, Self.isIdentifierStart(first) else {
                throw error(
                    at: position, expected: "a variable name after '$'", found: current.map { "'\($0)'" } ?? "the end of the format")
            }
            return .variable(identifierText())
        case "@":
            position += 1
            guard let first = current, Self.isIdentifierStart(first) else {
                throw error(
                    at: position, expected: "an aggregate name after '@' (count, sum, avg, min, max)",
                    found: current.map { "'\($0)'" } ?? "the end of the format")
            }
            return .aggregate(identifierText().lowercased())
        case "%":
            return try argument(start: start)
        default:
            return try symbol(start: start)
        }
    }

    private mutating func symbol(start: Int) throws(SkerryError) -> FormatToken {
        let c = scalars[position]
        let two = peek().map { String(c) + String($0) }
        let pairs: Set<String> = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**", ":="]
        if let two, pairs.contains(two) {
            position += 2
            return .symbol(two)
        }
        let singles: Set<Unicode.Scalar> = ["(", ")", "{", "}", ",", ".", "[", "]", "=", "<", ">", "!", "+", "-", "*", "/"]
        guard singles.contains(c) else {
            throw error(at: start, expected: "a key path, a value or an operator", found: "'\(c)'")
        }
        position += 1
        return .symbol(String(c))
    }

    /// `%@`, `%K`, `%d`, `%i`, `%ld`, `%lld`, `%u`, `%f`, `%lf`, `%g`, `%e`, `%x`, `%s`, … :
    /// the length modifiers `h hh l ll q L z t j` are accepted before the conversion.
    private mutating func argument(start: Int) throws(SkerryError) -> FormatToken {
        position += 1
        var spec = ""
        if let c = current, c == "@" || c == "K" {
            position += 1
            return .argument(String(c))
        }
        while let c = current, "hlqLztj".unicodeScalars.contains(c), spec.count < 2 {
            spec.unicodeScalars.append(c)
            position += 1
        }
        guard let c = current, "diouxXfFeEgGaAcsSp".unicodeScalars.contains(c) else {
            throw error(
                at: start, expected: "a format specifier (%@, %K, %d, %i, %ld, %u, %f, %g, %e, %x, %s)",
                found: current.map { "'%\(spec)\($0)'" } ?? "'%\(spec)' at the end of the format")
        }
        position += 1
        spec.unicodeScalars.append(c)
        return .argument(spec)
    }

    private mutating func number() throws(SkerryError) -> FormatToken {
        let start = position
        if scalars[position] == "0", let radixMark = peek(), "xXoObB".unicodeScalars.contains(radixMark) {
            let radix: Int
            switch radixMark {
            case "x", "X": radix = 16
            case "o", "O": radix = 8
            default: radix = 2
            }
            position += 2
            var digits = ""
            while let c = current, Self.isIdentifierPart(c) {
                digits.unicodeScalars.append(c)
                position += 1
            }
            guard let value = Int64(digits, radix: radix) else {
                throw error(at: start, expected: "a base-\(radix) integer that fits in 64 bits", found: "'0\(radixMark)\(digits)'")
            }
            return .integer(value)
        }
        var text = ""
        var isDouble = false
        func digits(_ lexer: inout FormatLexer, into text: inout String) {
            while let c = lexer.current, ("0"..."9").contains(c) {
                text.unicodeScalars.append(c)
                lexer.position += 1
            }
        }
        digits(&self, into: &text)
        if current == ".", let after = peek(), ("0"..."9").contains(after) {
            isDouble = true
            text += "."
            position += 1
            digits(&self, into: &text)
        }
        if let e = current, e == "e" || e == "E" {
            var lookahead = 1
            if let sign = peek(), sign == "+" || sign == "-" { lookahead = 2 }
            if let digit = peek(lookahead), ("0"..."9").contains(digit) {
                isDouble = true
                for _ in 0..<lookahead {
                    text.unicodeScalars.append(scalars[position])
                    position += 1
                }
                digits(&self, into: &text)
            }
        }
        if let c = current, Self.isIdentifierStart(c) {
            throw error(at: position, expected: "an operator or a separator after the number \(text)", found: "'\(c)'")
        }
        if !isDouble, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else {
            throw error(at: start, expected: "a number in the range of a 64-bit floating-point value", found: "'\(text)'")
        }
        return .double(value)
    }

    /// A string between `quote`s. Escapes: `\\ \' \" \n \t \r \0 \a \b \f \v`, `\xHH`, `\uHHHH`,
    /// and octal `\ooo`.
    private mutating func string(quote: Unicode.Scalar) throws(SkerryError) -> FormatToken {
        let start = position
        position += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let c = current else {
                throw error(at: start, expected: "a closing \(quote) for the string that starts here", found: "the end of the format")
            }
            position += 1
            if c == quote { return .string(String(text)) }
            guard c == "\\" else {
                text.append(c)
                continue
            }
            guard let escaped = current else {
                throw error(at: position - 1, expected: "an escaped character after '\\'", found: "the end of the format")
            }
            position += 1
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "a": text.append("\u{07}")
            case "b": text.append("\u{08}")
            case "f": text.append("\u{0C}")
            case "v": text.append("\u{0B}")
            case "x", "u":
                let count = escaped == "x" ? 2 : 4
                var hex = ""
                for _ in 0..<count {
                    guard let h = current, h.properties.isASCIIHexDigit else { break }
                    hex.unicodeScalars.append(h)
                    position += 1
                }
                guard hex.count == count, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw error(
                        at: position, expected: "\(count) hexadecimal digits of a character after '\\\(escaped)'",
                        found: current.map { "'\($0)'" } ?? "the end of the format")
                }
                text.append(scalar)
            case "0"..."7":
                var code = escaped.value - 48
                var taken = 1
                while taken < 3, let o = current, ("0"..."7").contains(o) {
                    code = code * 8 + (o.value - 48)
                    position += 1
                    taken += 1
                }
                guard let scalar = Unicode.Scalar(code) else {
                    throw error(at: position, expected: "an octal character code", found: "\(code)")
                }
                text.append(scalar)
            default:
                text.append(escaped) // \\, \', \" and any other character stand for themselves
            }
        }
    }
}
