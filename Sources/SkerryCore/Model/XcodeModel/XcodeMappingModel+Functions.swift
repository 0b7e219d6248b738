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
