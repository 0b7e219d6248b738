import Foundation

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

    /// Whether `value` matches `pattern` under `op` and `options`.
    static func matches(_ value: String, _ op: StringOperator, _ pattern: String,
                        _ options: StringComparisonOptions) -> Bool {
        let value = fold(value, options)
        let pattern = fold(pattern, options)
        switch op {
        case .beginsWith: return value.hasPrefix(pattern)
        case .endsWith: return value.hasSuffix(pattern)
        case .contains: return pattern.isEmpty || value.contains(pattern)
        case .like: return like(Array(value), Array(pattern))
        }
    }

    /// Wildcard matching with `*` and `?`. Complexity: O(value.count × pattern.count) worst case.
    private static func like(_ value: [Character], _ pattern: [Character]) -> Bool {
        var v = 0, p = 0
        var starP = -1, starV = 0
        while v < value.count {
            if p < pattern.count && (pattern[p] == "?" || pattern[p] == value[v]) {
                v += 1; p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                starP = p; starV = v; p += 1
            } else if starP >= 0 {
                p = starP + 1; starV += 1; v = starV
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
