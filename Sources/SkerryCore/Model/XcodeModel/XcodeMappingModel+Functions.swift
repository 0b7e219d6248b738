import Foundation

/// The values a mapping model's expressions compute: the Foundation methods a
/// `FUNCTION(receiver, "selector", ...)` expression calls on a string, number, date, URL or
/// UUID, and the conversion of a value to its destination attribute's type.
enum MappingValue {
    /// The selectors ``apply(_:to:_:)`` carries out.
    static let selectors: Set<String> = [
        "uppercaseString", "lowercaseString", "capitalizedString", "length", "stringByAppendingString:",
        "stringValue", "description", "integerValue", "intValue", "longLongValue", "doubleValue", "floatValue",
        "boolValue", "timeIntervalSinceReferenceDate", "timeIntervalSince1970", "absoluteString", "UUIDString",
    ]

    /// `receiver.selector(arguments...)` as Foundation answers it; nil (a message to nil)
    /// answers nil, and so does a method the receiver's class does not have (Core Data's
    /// migration would stop there with an exception; the destination attribute's type check
    /// then reports the row).
    static func apply(_ selector: String, to receiver: AttributeValue, _ arguments: [AttributeValue]) -> AttributeValue {
        switch (receiver, selector) {
        case (.null, _): return .null
        case (.string(let text), "uppercaseString"): return .string(text.uppercased())
        case (.string(let text), "lowercaseString"): return .string(text.lowercased())
        case (.string(let text), "capitalizedString"): return .string(text.capitalized)
        case (.string(let text), "length"): return .int(Int64(text.utf16.count))
        case (.string(let text), "stringByAppendingString:"):
            guard case .string(let suffix)? = arguments.first else { return .null }
            return .string(text + suffix)
        case (.string, "stringValue"), (.string, "description"): return receiver
        case (.string(let text), "integerValue"), (.string(let text), "longLongValue"):
            return .int(XcodeDefaultValue.integerValue(text))
        case (.string(let text), "intValue"):
            return .int(Int64(Int32(clamping: XcodeDefaultValue.integerValue(text))))
        case (.string(let text), "doubleValue"), (.string(let text), "floatValue"):
            return .double(XcodeDefaultValue.doubleValue(text))
        case (.string(let text), "boolValue"): return .bool(XcodeDefaultValue.boolValue(text))
        case (.bool(let flag), "stringValue"), (.bool(let flag), "description"): return .string(flag ? "1" : "0")
        case (.bool(let flag), "boolValue"): return .bool(flag)
        case (.bool(let flag), "integerValue"), (.bool(let flag), "intValue"), (.bool(let flag), "longLongValue"):
            return .int(flag ? 1 : 0)
        case (.bool(let flag), "doubleValue"), (.bool(let flag), "floatValue"): return .double(flag ? 1 : 0)
        case (.int(let number), "stringValue"), (.int(let number), "description"): return .string(String(number))
        case (.int(let number), "boolValue"): return .bool(number != 0)
        case (.int, "integerValue"), (.int, "longLongValue"): return receiver
        case (.int(let number), "intValue"): return .int(Int64(Int32(truncatingIfNeeded: number)))
        case (.int(let number), "doubleValue"), (.int(let number), "floatValue"): return .double(Double(number))
        case (.double(let number), "stringValue"), (.double(let number), "description"):
            return .string(NSNumber(value: number).stringValue)
        case (.double(let number), "boolValue"): return .bool(number != 0)
        case (.double(let number), "integerValue"), (.double(let number), "longLongValue"), (.double(let number), "intValue"):
            guard number.isFinite, let integer = Int64(exactly: number.rounded(.towardZero)) else { return .null }
            return .int(selector == "intValue" ? Int64(Int32(truncatingIfNeeded: integer)) : integer)
        case (.double, "doubleValue"), (.double, "floatValue"): return receiver
        case (.decimal(let number), "stringValue"), (.decimal(let number), "description"): return .string("\(number)")
        case (.decimal(let number), "doubleValue"), (.decimal(let number), "floatValue"):
            return .double(NSDecimalNumber(decimal: number).doubleValue)
        case (.decimal(let number), "integerValue"), (.decimal(let number), "longLongValue"):
            return .int(NSDecimalNumber(decimal: number).int64Value)
        case (.decimal(let number), "boolValue"): return .bool(number != 0)
        case (.date(let date), "timeIntervalSinceReferenceDate"): return .double(date.timeIntervalSinceReferenceDate)
        case (.date(let date), "timeIntervalSince1970"): return .double(date.timeIntervalSince1970)
        case (.url(let url), "absoluteString"), (.url(let url), "description"): return .string(url.absoluteString)
        case (.uuid(let uuid), "UUIDString"), (.uuid(let uuid), "description"): return .string(uuid.uuidString)
        default: return .null
        }
    }

    /// The predefined `NSExpression` functions ``predefined(_:_:)`` carries out, with their
    /// number of arguments.
    static let predefinedFunctions: [String: Int] = [
        "now": 0, "uppercase:": 1, "lowercase:": 1, "abs:": 1, "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2,
        "divide:by:": 2, "modulus:by:": 2,
    ]

    /// The predefined function `name` of `arguments`, as `NSExpression` computes it: `now` is
    /// the current time; the text functions answer nil for anything but a text; arithmetic on
    /// integers stays integral (a division too when exact), on other numbers is a double, and
    /// answers nil when an argument is no number or for a division by zero.
    static func predefined(_ name: String, _ arguments: [AttributeValue]) -> AttributeValue {
        switch (name, arguments.first) {
        case ("now", _): return .date(Date())
        case ("uppercase:", .string(let text)?): return .string(text.uppercased())
        case ("lowercase:", .string(let text)?): return .string(text.lowercased())
        case ("abs:", .int(let number)?): return number == .min ? .double(-Double(number)) : .int(abs(number))
        case ("abs:", let value?): return number(value).map { .double(abs($0)) } ?? .null
        default: break
        }
        guard arguments.count == 2 else { return .null }
        if case .int(let a) = arguments[0], case .int(let b) = arguments[1] {
            switch name {
            case "add:to:": return a.addingReportingOverflow(b).overflow ? .double(Double(a) + Double(b)) : .int(a + b)
            case "from:subtract:": return a.subtractingReportingOverflow(b).overflow ? .double(Double(a) - Double(b)) : .int(a - b)
            case "multiply:by:": return a.multipliedReportingOverflow(by: b).overflow ? .double(Double(a) * Double(b)) : .int(a * b)
            case "divide:by:":
                guard b != 0 else { return .null }
                return a.remainderReportingOverflow(dividingBy: b).partialValue == 0 && !(a == .min && b == -1)
                    ? .int(a / b) : .double(Double(a) / Double(b))
            case "modulus:by:":
                guard b != 0, !(a == .min && b == -1) else { return .null }
                return .int(a % b)
            default: return .null
            }
        }
        guard let a = number(arguments[0]), let b = number(arguments[1]) else { return .null }
        switch name {
        case "add:to:": return .double(a + b)
        case "from:subtract:": return .double(a - b)
        case "multiply:by:": return .double(a * b)
        case "divide:by:": return b == 0 ? .null : .double(a / b)
        case "modulus:by:": return b == 0 ? .null : .double(a.truncatingRemainder(dividingBy: b))
        default: return .null
        }
    }

    /// A number value as a double, or nil.
    private static func number(_ value: AttributeValue) -> Double? {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number): return number
        case .decimal(let number): return NSDecimalNumber(decimal: number).doubleValue
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    /// `value` as a value of an attribute of `type`, as Core Data would store it: the value when
    /// it is one already, a number converted exactly (``SchemaMapping/convert(_:to:)``), a text
    /// that is a URL or UUID for those types; nil when it does not fit.
    static func convert(_ value: AttributeValue, to type: AttributeType) -> AttributeValue? {
        if let converted = SchemaMapping.convert(value, to: type) { return converted }
        switch (value, type) {
        case (.string(let text), .url): return URL(string: text).map(AttributeValue.url)
        case (.string(let text), .uuid): return UUID(uuidString: text).map(AttributeValue.uuid)
        case (.bool(let flag), .integer16), (.bool(let flag), .integer32), (.bool(let flag), .integer64):
            return .int(flag ? 1 : 0)
        default: return nil
        }
    }
}
