/// Sworm's attribute error, for the decoders of custom attribute types to throw:
///
/// ```swift
/// static func decode(primitiveValue: String) throws -> Point {
///     guard let point = Point(primitiveValue) else { throw AttributeError.badInput(primitiveValue) }
///     return point
/// }
/// ```
///
/// The typed layer reports a value it cannot decode as a `SkerryError` with code
/// `SkerryError.Code.undecodableValue` naming the entity and the attribute; its
/// message includes this error.
///
/// `@unchecked Sendable`, as Sworm declares it: `badInput` carries the value a decoder rejected,
/// typed `Any?` in Sworm's signature. Skerry never reads the payload except to describe it, and the
/// values decoders pass are primitives (`String`, numbers, `Data`), which are themselves `Sendable`;
/// a user who passes a reference type there is responsible for not mutating it afterwards.
public enum AttributeError: Error, @unchecked Sendable, CustomStringConvertible {
    /// The stored value is not one the type can be made from.
    case badInput(Any?)
    /// An attribute of an entity could not be decoded.
    case badAttribute(Context)

    /// Which attribute of which entity could not be decoded, and why.
    public struct Context: Sendable {
        /// The attribute's name.
        public let name: String
        /// The entity's name.
        public let entity: String
        /// The decoder's error.
        public let originalError: any Error

        /// Describes an attribute that could not be decoded.
        public init(name: String, entity: String, originalError: any Error) {
            self.name = name
            self.entity = entity
            self.originalError = originalError
        }
    }

    public var description: String {
        switch self {
        case .badInput(let value):
            return "AttributeError.badInput(\(value.map { "\($0)" } ?? "nil"))"
        case .badAttribute(let context):
            return "AttributeError.badAttribute(\(context.entity).\(context.name): \(context.originalError))"
        }
    }
}
