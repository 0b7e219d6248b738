import Foundation

/// A Swift type that can be read from and written to an attribute.
///
/// The engine conforms `Bool`, `Int`, `Int16`, `Int32`, `Int64`, `Float`, `Double`, `Decimal`,
/// `Date`, `String`, `Data`, `UUID`, `URL`, ``AttributeValue`` itself, and `Optional` of each.
public protocol AttributeValueConvertible {
    /// The value in the engine's storage form.
    var attributeValue: AttributeValue { get }

    /// Creates a value from the storage form of an attribute of type `type`, or returns nil when
    /// the stored value cannot be represented by this Swift type.
    init?(attributeValue: AttributeValue, type: AttributeType)

    /// Whether values of this Swift type can be read from an attribute of type `type`.
    static func canRead(_ type: AttributeType) -> Bool
}

extension Bool: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .bool(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .bool(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .boolean }
}

extension Int64: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .int(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .int(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type.isInteger }
}

extension Int: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .int(Int64(self)) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .int(let v) = attributeValue, let x = Int(exactly: v) else { return nil }
        self = x
    }
    public static func canRead(_ type: AttributeType) -> Bool { type.isInteger }
}

extension Int32: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .int(Int64(self)) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .int(let v) = attributeValue, let x = Int32(exactly: v) else { return nil }
        self = x
    }
    public static func canRead(_ type: AttributeType) -> Bool {
        type == .integer16 || type == .integer32
    }
}

extension Int16: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .int(Int64(self)) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .int(let v) = attributeValue, let x = Int16(exactly: v) else { return nil }
        self = x
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .integer16 }
}

extension Double: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .double(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .double(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .double || type == .float }
}

extension Float: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .double(Double(self)) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .double(let v) = attributeValue else { return nil }
        let float = Float(v)
        guard float.isFinite || !v.isFinite else { return nil } // out of a Float's range
        self = float
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .float }
}

extension Decimal: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .decimal(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .decimal(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .decimal }
}

extension Date: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .date(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .date(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .date }
}

extension String: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .string(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .string(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .string }
}

extension Data: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .data(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .data(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .binary }
}

extension UUID: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .uuid(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .uuid(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .uuid }
}

extension URL: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .url(self) }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        guard case .url(let v) = attributeValue else { return nil }
        self = v
    }
    public static func canRead(_ type: AttributeType) -> Bool { type == .url }
}

extension AttributeValue: AttributeValueConvertible {
    public var attributeValue: AttributeValue { self }
    public init?(attributeValue: AttributeValue, type: AttributeType) { self = attributeValue }
    public static func canRead(_ type: AttributeType) -> Bool { true }
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
    public init?(attributeValue: AttributeValue, type: AttributeType) {
        if case .null = attributeValue {
            self = .none
        } else if let wrapped = Wrapped(attributeValue: attributeValue, type: type) {
            self = .some(wrapped)
        } else {
            return nil
        }
    }
    public static func canRead(_ type: AttributeType) -> Bool { Wrapped.canRead(type) }
}
