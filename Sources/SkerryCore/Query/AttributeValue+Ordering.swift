import Foundation

/// The order SQLite gives the stored forms of values, reproduced in memory.
///
/// - nil sorts before everything and compares unequal to everything but nil;
/// - numbers (integers, doubles, decimals, booleans as 0/1, dates as seconds) compare by value;
/// - strings and URLs by their UTF-8 bytes (SQLite's BINARY collation);
/// - data and UUIDs by their bytes, shorter first on a common prefix.
extension AttributeValue {
    /// Three-way comparison of two non-nil values of the same attribute. Returns nil when either is
    /// nil.
    static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int? {
        switch (lhs, rhs) {
        case (.null, _), (_, .null): return nil
        case (.string(let a), .string(let b)): return compareBytes(a.utf8, b.utf8)
        case (.url(let a), .url(let b)): return compareBytes(a.absoluteString.utf8, b.absoluteString.utf8)
        case (.data(let a), .data(let b)): return compareBytes(a, b)
        case (.uuid(let a), .uuid(let b)):
            return withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in compareBytes(x, y) } }
        case (.decimal(let a), .decimal(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.int(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.int(let a), .double(let b)): return compareExactly(a, b)
        case (.double(let a), .int(let b)): return -compareExactly(b, a)
        default:
            guard let a = lhs.numericValue, let b = rhs.numericValue else { return nil }
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }

    /// The value as a number, for the numeric and date forms.
    var numericValue: Double? {
        switch self {
        case .bool(let v): return v ? 1 : 0
        case .int(let v): return Double(v)
        case .double(let v): return v
        // Through the decimal text, as SQLite's CAST(text AS REAL) does: correctly rounded, where
        // NSDecimalNumber.doubleValue is not (0.07 would become 0.06999999999999999).
        case .decimal(let v): return Double(v.description)
        case .date(let v): return v.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    /// Compares an integer with a double exactly, as SQLite does (converting the integer to a
    /// double would round integers beyond 2^53).
    static func compareExactly(_ integer: Int64, _ double: Double) -> Int {
        if double.isNaN { return 1 } // unreachable (NaN is refused on input); never trap
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.towardZero) // in Int64's range here, and exact
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return integer < wholeInteger ? -1 : 1 }
        let fraction = double - whole
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    /// Sort order of values of one attribute: nil first, then `compare`.
    static func sortOrder(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int {
        switch (lhs.isNull, rhs.isNull) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        case (false, false): return compare(lhs, rhs) ?? 0
        }
    }

    private static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var left = a.makeIterator(), right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }
}
