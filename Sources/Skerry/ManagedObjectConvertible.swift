import SkerryCore

/// A plain Swift type (struct or class) that maps to an entity: Sworm's model protocol.
///
/// ```swift
/// struct Book: ManagedObjectConvertible {
///     var title = ""
///     var year: Int?
///
///     static let entityName = "Book"
///     static let attributes: Set<Attribute<Book>> = [
///         Attribute(\.title, "title"),
///         Attribute(\.year, "year"),
///     ]
///     static let relations: Void = ()
/// }
/// ```
public protocol ManagedObjectConvertible {
    /// The type that lists the model's relations (`Void` for none).
    associatedtype Relations

    /// The entity's name.
    static var entityName: String { get }
    /// The stored properties, each with its attribute name.
    static var attributes: Set<Attribute<Self>> { get }
    /// The relations.
    static var relations: Relations { get }
    /// What the Swift type cannot say: uniqueness constraints, indexes and default values.
    /// Empty by default.
    static var entityOptions: EntityOptions<Self> { get }

    /// A value with every property at its default, before the stored values are decoded into it.
    init()
}

extension ManagedObjectConvertible {
    public static var entityOptions: EntityOptions<Self> { EntityOptions() }

    /// The declared attribute for `keyPath`, or nil.
    static func attribute(_ keyPath: PartialKeyPath<Self>) -> Attribute<Self>? {
        attributes.first { $0.keyPath == keyPath }
    }

    /// The attribute name for `keyPath`, or an error naming the undeclared key path.
    static func attributeName(_ keyPath: PartialKeyPath<Self>) throws(SkerryError) -> String {
        guard let attribute = attribute(keyPath) else {
            throw SkerryError(
                .unknownAttribute,
                "\(keyPath) is not one of \(Self.self).attributes; declare it as an Attribute to query, sort or index it.",
                entityName: entityName)
        }
        return attribute.name
    }
}

/// Uniqueness constraints, indexes and default values of a model type: what Swift types cannot say.
///
/// ```swift
/// static let entityOptions = EntityOptions<Book>()
///     .unique(\.isbn)
///     .index(\.year)
///     .defaultValue(\.inPrint, true)
/// ```
///
/// `@unchecked Sendable`: a value type whose key paths are immutable (they are not `Sendable` in
/// Swift 6 only because their root type might not be); it is never mutated after being built.
public struct EntityOptions<PlainObject: ManagedObjectConvertible>: @unchecked Sendable {
    var uniquenessConstraints: [[PartialKeyPath<PlainObject>]] = []
    var indexes: [[PartialKeyPath<PlainObject>]] = []
    var defaults: [(keyPath: PartialKeyPath<PlainObject>, value: AttributeValue)] = []
    var encodingError: SkerryError?

    /// No options.
    public init() {}

    /// Adds a uniqueness constraint over these properties together.
    public func unique(_ keyPaths: PartialKeyPath<PlainObject>...) -> Self {
        var copy = self
        copy.uniquenessConstraints.append(keyPaths)
        return copy
    }

    /// Adds an index over these properties, in order.
    public func index(_ keyPaths: PartialKeyPath<PlainObject>...) -> Self {
        var copy = self
        copy.indexes.append(keyPaths)
        return copy
    }

    /// Sets the default value of an optional property; see ``defaultValue(_:_:)-(KeyPath<PlainObject,Value>,_)``.
    public func defaultValue<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>, _ value: Value) -> Self {
        encodedDefault(keyPath, value)
    }

    /// Sets the default value of a property: new objects inserted through the engine start with it,
    /// and a store that gains the attribute gives existing rows this value.
    public func defaultValue<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>, _ value: Value) -> Self {
        encodedDefault(keyPath, value)
    }

    private func encodedDefault<Value: SupportedAttributeType>(_ keyPath: PartialKeyPath<PlainObject>, _ value: Value) -> Self {
        var copy = self
        do {
            copy.defaults.append((keyPath, try value.encodePrimitiveValue().attributeValue))
        } catch {
            copy.encodingError = SkerryError(
                .wrongValueType, "The default value of \(keyPath) cannot be encoded: \(error)",
                entityName: PlainObject.entityName)
        }
        return copy
    }
}
