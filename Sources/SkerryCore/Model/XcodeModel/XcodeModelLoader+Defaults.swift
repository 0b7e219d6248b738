import Foundation

/// Reads the default value Xcode wrote for an attribute (`defaultValueString`, or
/// `defaultDateTimeInterval` for dates) the way Core Data's model compiler reads it: with
/// Foundation's lenient `NSString` conversions, which never fail.
///
/// | type | rule (as `NSString`'s) | examples |
/// |---|---|---|
/// | Integer 16/32/64 | `longLongValue`: leading whitespace, an optional sign, then the longest run of digits; none gives 0; beyond the type's range, the nearest bound | `"0.0"` → 0, `" 12 "` → 12, `"NO"` → 0 |
/// | Boolean | `boolValue`: after leading whitespace, an optional sign and zeros, true when the next character is Y, y, T, t or a digit 1–9 | `"YES"`, `"true"`, `"1"`, `"100"` → true; `"NO"`, `"0"`, `"0.0"`, `""` → false |
/// | Float, Double | `doubleValue`: leading whitespace, then the longest decimal number (sign, digits, point, exponent); none gives 0 | `"0"` → 0.0, `"1.5kg"` → 1.5 |
/// | Decimal | `NSDecimalNumber(string:)`: the longest decimal number after leading whitespace; none gives no default (Core Data's would be NaN, which no store keeps) | `"30"` → 30 |
/// | Date | `defaultDateTimeInterval`: seconds since 2001-01-01 UTC, read like a Double | `"665122680"` |
/// | String | the text as written, also when empty | `""` → `""` |
/// | UUID, URI | parsed; text that is not one gives no default | `"empty"` → none |
/// | Binary, Transformable | none (Xcode offers no default) | |
enum XcodeDefaultValue {
    /// The default value `text` gives an attribute of `type`, or `.null` for none.
    static func parse(_ text: String, as type: AttributeType) -> AttributeValue {
        switch type {
        case .boolean:
            return .bool(boolValue(text))
        case .integer16, .integer32, .integer64:
            let range = type.integerRange
            return .int(min(max(integerValue(text), range.lowerBound), range.upperBound))
        case .float:
            return .double(Double(Float(doubleValue(text))))
        case .double:
            return .double(doubleValue(text))
        case .decimal:
            guard let number = decimalPrefix(text),
                let value = Decimal(string: String(number), locale: Locale(identifier: "en_US_POSIX")), !value.isNaN
            else { return .null }
            return .decimal(value)
        case .date:
            guard decimalPrefix(text) != nil else { return .null }
            let seconds = doubleValue(text)
            return seconds.isFinite ? .date(Date(timeIntervalSinceReferenceDate: seconds)) : .null
        case .string:
            return .string(text)
        case .binary:
            return .null
        case .uuid:
            return UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines)).map(AttributeValue.uuid) ?? .null
        case .url:
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, let url = URL(string: trimmed) else { return .null }
            return .url(url)
        }
    }

    /// The text after leading whitespace, as UTF-8 bytes.
    private static func trimmedStart(_ text: String) -> Substring.UTF8View {
        let bytes = Substring(text).utf8
        let start = bytes.firstIndex { !($0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D)) } ?? bytes.endIndex
        return bytes[start...]
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `NSString.boolValue`.
    static func boolValue(_ text: String) -> Bool {
        var bytes = trimmedStart(text)
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        bytes = bytes.drop { $0 == UInt8(ascii: "0") }
        guard let next = bytes.first else { return false }
        return next == UInt8(ascii: "Y") || next == UInt8(ascii: "y") || next == UInt8(ascii: "T") || next == UInt8(ascii: "t")
            || (next >= UInt8(ascii: "1") && next <= UInt8(ascii: "9"))
    }

    /// `NSString.longLongValue`: saturates at the bounds of Int64.
    static func integerValue(_ text: String) -> Int64 {
        var bytes = trimmedStart(text)
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var value: Int64 = 0
        for byte in bytes {
            guard isDigit(byte) else { break }
            let digit = Int64(byte - 0x30)
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return negative ? .min : .max }
            value = sum
        }
        return value
    }

    /// The longest decimal number at the start of `text` (after whitespace): sign, digits, an
    /// optional fraction and exponent; nil when it has no digit.
    static func decimalPrefix(_ text: String) -> Substring? {
        let bytes = trimmedStart(text)
        var index = bytes.startIndex
        func advance(while condition: (UInt8) -> Bool) -> Int {
            var count = 0
            while index < bytes.endIndex, condition(bytes[index]) {
                index = bytes.index(after: index)
                count += 1
            }
            return count
        }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            index = bytes.index(after: index)
        }
        var digits = advance(while: isDigit)
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
            index = bytes.index(after: index)
            digits += advance(while: isDigit)
        }
        guard digits > 0 else { return nil }
        var end = index
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index = bytes.index(after: index)
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index = bytes.index(after: index)
            }
            if advance(while: isDigit) > 0 { end = index }
        }
        return Substring(bytes[bytes.startIndex..<end])
    }

    /// `NSString.doubleValue`: 0 when the text does not start with a number; ±infinity beyond
    /// Double's range.
    static func doubleValue(_ text: String) -> Double {
        guard let number = decimalPrefix(text) else { return 0 }
        return Double(number) ?? 0
    }
}
