import Foundation
import SkerryCore

/// A Swift type the engine stores as is: Bool, Int, Int16, Int32, Int64, Float, Double, Decimal,
/// Date, String, Data, UUID and URL.
public protocol PrimitiveAttribute: AttributeValueConvertible, Sendable {
    /// The attribute type a property of this type gets in the model.
    static var attributeType: AttributeType { get }

    /// A stored value as this type: the non-optional form of `init(attributeValue:type:)`, which
    /// generic code calls without building `Optional<Self>`'s metadata at run time on every value.
    /// - Throws: `SkerryError.Code.undecodableValue` when `value` is not a value of
    ///   this type.
    static func primitive(from value: AttributeValue) throws(SkerryError) -> Self
}

extension PrimitiveAttribute {
    public static func primitive(from value: AttributeValue) throws(SkerryError) -> Self {
        guard let result = Self(attributeValue: value, type: attributeType) else {
            throw SkerryError(.undecodableValue, "The value \(value) is not a \(Self.self).")
        }
        return result
    }
}

/// A Swift type that can be a model attribute: it converts to and from a ``PrimitiveAttribute``.
///
/// The primitives conform as themselves. `RawRepresentable` types whose raw value is supported
/// conform by declaring it (`extension Genre: SupportedAttributeType {}`), `Codable` types stored
/// as JSON by conforming to ``JSONAttribute``, and any other type by implementing the two methods.
public protocol SupportedAttributeType {
    /// The primitive type the value is stored as.
    associatedtype PrimitiveAttributeType: PrimitiveAttribute

    /// The value as its primitive.
    func encodePrimitiveValue() throws -> PrimitiveAttributeType

    /// A value from its primitive.
    /// - Throws: any error, when the primitive does not make a valid value; the typed layer reports
    ///   it as `SkerryError.Code.undecodableValue` naming the entity and attribute.
    static func decode(primitiveValue: PrimitiveAttributeType) throws -> Self
}

extension PrimitiveAttribute {
    /// A primitive is stored as itself.
    public func encodePrimitiveValue() -> Self { self }
    /// A primitive is stored as itself.
    public static func decode(primitiveValue: Self) -> Self { primitiveValue }
}

extension Bool: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .boolean }
}
extension Int: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .integer64 }
}
extension Int16: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .integer16 }
}
extension Int32: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .integer32 }
}
extension Int64: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .integer64 }
}
extension Float: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .float }
}
extension Double: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .double }
}
extension Decimal: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .decimal }
}
extension Date: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .date }
}
extension String: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .string }
}
extension Data: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .binary }
}
extension UUID: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .uuid }
}
extension URL: PrimitiveAttribute, SupportedAttributeType {
    public static var attributeType: AttributeType { .url }
}

/// A raw value that names no case of the type it was stored for.
public struct UnknownRawValueError: Error, Sendable, CustomStringConvertible {
    /// The stored raw value.
    public let rawValue: String
    /// The type it was read as.
    public let type: String
    public var description: String { "\(rawValue) is not a raw value of \(type)" }
}

/// A `RawRepresentable` type whose raw value is supported becomes an attribute type by declaring
/// the conformance: `extension Genre: SupportedAttributeType {}`.
extension RawRepresentable where RawValue: SupportedAttributeType {
    /// The raw value, as its primitive.
    public func encodePrimitiveValue() throws -> RawValue.PrimitiveAttributeType {
        try rawValue.encodePrimitiveValue()
    }

    /// The value whose raw value the primitive holds.
    /// - Throws: ``UnknownRawValueError`` when no value has that raw value.
    public static func decode(primitiveValue: RawValue.PrimitiveAttributeType) throws -> Self {
        let raw = try RawValue.decode(primitiveValue: primitiveValue)
        guard let value = Self(rawValue: raw) else {
            throw UnknownRawValueError(rawValue: "\(raw)", type: "\(Self.self)")
        }
        return value
    }
}

/// The common case, an enum whose raw value is a primitive (`String`, `Int`...): encoding cannot
/// fail, so it does not throw, as in Sworm (`genre.encodePrimitiveValue()` needs no `try`).
extension RawRepresentable where RawValue: SupportedAttributeType & PrimitiveAttribute, RawValue.PrimitiveAttributeType == RawValue {
    /// The raw value, stored as itself.
    public func encodePrimitiveValue() -> RawValue { rawValue }
}

/// A `Codable` value stored as JSON in a binary attribute.
///
/// ```swift
/// struct Dimensions: Codable, JSONAttribute { var width, height: Double }
/// ```
public protocol JSONAttribute: Codable, SupportedAttributeType where PrimitiveAttributeType == Data {}

extension JSONAttribute {
    public func encodePrimitiveValue() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    public static func decode(primitiveValue: Data) throws -> Self {
        try JSONDecoder().decode(Self.self, from: primitiveValue)
    }
}
