import Foundation
import Synchronization

/// How a string comparison treats case and diacritics.
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// "a" matches "A" (Core Data's `[c]`).
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// "e" matches "é" (Core Data's `[d]`).
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}

/// The string operators of a predicate.
public enum StringOperator: Int, Sendable, Hashable {
    /// The value starts with the pattern.
    case beginsWith = 1
    /// The value ends with the pattern.
    case endsWith = 2
    /// The value contains the pattern.
    case contains = 3
    /// The value matches the pattern, where `*` stands for any run of characters (also none)
    /// and `?` for exactly one character, as in Core Data's LIKE.
    case like = 4
    /// The whole value matches the pattern as a regular expression (ICU syntax, as
    /// `NSRegularExpression` has it): Core Data's MATCHES.
    case matches = 5
    /// The value equals the pattern under the options: Core Data's `==[c]`.
    case equal = 6
}

/// The one implementation of string matching, used both in memory and, as the SQL function
/// `skerry_string_match`, inside SQLite, so that both give the same answer.
enum StringMatching {
    /// Folds `text` for comparison under `options`.
    static func fold(_ text: String, _ options: StringComparisonOptions) -> String {
        var foldOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldOptions.insert(.diacriticInsensitive) }
        if foldOptions.isEmpty { return text }
        return text.folding(options: foldOptions, locale: nil)
    }

    /// Whether `value` matches `pattern` under `op` and `options`. A MATCHES pattern must have
    /// passed ``checkPattern(_:_:_:)`` (an invalid one matches nothing).
    static func matches(
        _ value: String, _ op: StringOperator, _ pattern: String,
        _ options: StringComparisonOptions
    ) -> Bool {
        if op == .matches {
            // Case is the regular expression's option; diacritics are folded on both sides.
            let folding = options.subtracting(.caseInsensitive)
            guard let regex = RegularExpressions.shared.expression(fold(pattern, folding), options.contains(.caseInsensitive)) else {
                return false
            }
            return regex.matchesWhole(fold(value, folding))
        }
        let value = fold(value, options)
        let pattern = fold(pattern, options)
        switch op {
        case .beginsWith: return value.hasPrefix(pattern)
        case .endsWith: return value.hasSuffix(pattern)
        case .contains: return pattern.isEmpty || value.contains(pattern)
        case .like: return like(Array(value), Array(pattern))
        case .equal: return value == pattern
        case .matches: return false // handled above
        }
    }

    /// Checks that a MATCHES pattern is a valid regular expression.
    /// - Throws: ``SkerryError/Code/invalidArgument`` naming the pattern.
    static func checkPattern(_ pattern: String, _ op: StringOperator, _ options: StringComparisonOptions) throws(SkerryError) {
        guard op == .matches else { return }
        let folded = fold(pattern, options.subtracting(.caseInsensitive))
        guard RegularExpressions.shared.expression(folded, options.contains(.caseInsensitive)) != nil else {
            throw SkerryError(.invalidArgument, "The MATCHES pattern \"\(pattern)\" is not a valid regular expression.")
        }
    }

    /// Wildcard matching with `*` and `?`. Complexity: O(value.count × pattern.count) worst case.
    private static func like(_ value: [Character], _ pattern: [Character]) -> Bool {
        var v = 0, p = 0
        var starP = -1, starV = 0
        while v < value.count {
            if p < pattern.count && (pattern[p] == "?" || pattern[p] == value[v]) {
                v += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                starP = p
                starV = v
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starV += 1
                v = starV
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

/// Compiled regular expressions for MATCHES, by pattern and case option, shared by every thread
/// (SQLite calls `skerry_string_match` once per row).
final class RegularExpressions: Sendable {
    static let shared = RegularExpressions()

    /// A compiled expression anchored to the whole string.
    /// `@unchecked Sendable`: `NSRegularExpression` is immutable after creation and documented
    /// as safe to use from several threads at once.
    final class Compiled: @unchecked Sendable {
        let regex: NSRegularExpression
        init(_ regex: NSRegularExpression) { self.regex = regex }

        func matchesWhole(_ value: String) -> Bool {
            let range = NSRange(value.startIndex..<value.endIndex, in: value)
            return regex.firstMatch(in: value, options: [], range: range) != nil
        }
    }

    private struct Key: Hashable {
        let pattern: String
        let caseInsensitive: Bool
    }

    /// Beyond this many patterns the cache is emptied.
    private static let limit = 64
    private let cache = Mutex<[Key: Compiled?]>([:])

    /// The compiled pattern, anchored at both ends; nil when the pattern is not valid.
    func expression(_ pattern: String, _ caseInsensitive: Bool) -> Compiled? {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        var compiled: Compiled?
        // The pattern alone must be valid (wrapped, "a)(b" would become valid); then anchored.
        if (try? NSRegularExpression(pattern: pattern, options: options)) != nil, // try?: invalid is the nil answer
            let anchored = try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options)
        { // try?: as above
            compiled = Compiled(anchored)
        }
        cache.withLock {
            if $0.count >= Self.limit { $0.removeAll() }
            $0[key] = compiled
        }
        return compiled
    }
}
