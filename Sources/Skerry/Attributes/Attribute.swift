import SkerryCore

/// A stored property of a model type and its attribute name: Sworm's `Attribute`.
///
/// The attribute's type and optionality come from the property's type: `Int` is a required
/// `integer64`, `String?` an optional `string`, a `RawRepresentable` enum its raw value's type.
///
/// `@unchecked Sendable`: every stored property is a `let` set in `init` and never changed;
/// key paths and the codec are immutable, so reading them from any thread is safe. (Key paths
/// are not `Sendable` in Swift 6 only because their root type might not be.)
public final class Attribute<PlainObject: ManagedObjectConvertible>: Hashable, @unchecked Sendable {
    /// The attribute's name in the entity.
    public let name: String
    let keyPath: PartialKeyPath<PlainObject>
    let attributeType: AttributeType
    let isOptional: Bool
    /// Where the property lies in a `PlainObject` and the Swift type it has, when the typed layer
    /// can move it straight between a value's memory and an object's value slot (a stored property
    /// of a primitive the slots hold as is); nil otherwise.
    let slotCopy: SlotCopy?
    private let codec: AttributeCodec<PlainObject>

    /// A required attribute.
    /// - Parameters:
    ///   - keyPath: the stored property.
    ///   - name: the attribute's name in the entity.
    public init<Value: SupportedAttributeType>(_ keyPath: WritableKeyPath<PlainObject, Value>, _ name: String) {
        self.name = name
        self.keyPath = keyPath
        self.attributeType = Value.PrimitiveAttributeType.attributeType
        self.isOptional = false
        self.slotCopy = SlotCopy(PlainObject.self, keyPath, Value.self, isOptional: false)
        self.codec = RequiredCodec(keyPath: keyPath, name: name)
    }

    /// An optional attribute.
    /// - Parameters:
    ///   - keyPath: the stored property.
    ///   - name: the attribute's name in the entity.
    public init<Value: SupportedAttributeType>(_ keyPath: WritableKeyPath<PlainObject, Value?>, _ name: String) {
        self.name = name
        self.keyPath = keyPath
        self.attributeType = Value.PrimitiveAttributeType.attributeType
        self.isOptional = true
        self.slotCopy = SlotCopy(PlainObject.self, keyPath, Value.self, isOptional: true)
        self.codec = OptionalCodec(keyPath: keyPath, name: name)
    }

    /// The property of `object` in the engine's form, naming the entity and attribute on failure.
    func encodedValue(of object: PlainObject) throws(SkerryError) -> AttributeValue {
        try codec.encode(object)
    }

    /// `value`, a value of this attribute's property (nil for none), in the engine's form.
    func encodedValue<Value: SupportedAttributeType>(_ value: Value?) throws(SkerryError) -> AttributeValue {
        guard let value else { return .null }
        return try codec.encodeValue(value)
    }

    /// Sets the property of `object` from a stored value, naming the entity and attribute when it
    /// does not fit.
    func decode(_ value: AttributeValue, into object: inout PlainObject) throws(SkerryError) {
        try codec.decode(value, into: &object)
    }

    public static func == (lhs: Attribute, rhs: Attribute) -> Bool { lhs.keyPath == rhs.keyPath }
    public func hash(into hasher: inout Hasher) { hasher.combine(keyPath) }
}

/// Converts one property between its Swift type and the engine's values.
class AttributeCodec<PlainObject: ManagedObjectConvertible> {
    let name: String
    init(name: String) { self.name = name }
    func encode(_ object: PlainObject) throws(SkerryError) -> AttributeValue { fatalError("abstract") }
    func decode(_ value: AttributeValue, into object: inout PlainObject) throws(SkerryError) { fatalError("abstract") }

    /// Decodes a stored value as `Value`.
    final func decodeValue<Value: SupportedAttributeType>(_ value: AttributeValue) throws(SkerryError) -> Value {
        let entity = PlainObject.entityName
        let primitive: Value.PrimitiveAttributeType
        do {
            primitive = try Value.PrimitiveAttributeType.primitive(from: value)
        } catch {
            throw SkerryError(
                .undecodableValue, "The value \(value) of '\(entity).\(name)' is not a \(Value.self).",
                entityName: entity, key: name)
        }
        do {
            return try Value.decode(primitiveValue: primitive)
        } catch {
            throw SkerryError(
                .undecodableValue, "The value of '\(entity).\(name)' cannot be decoded as \(Value.self): \(error)",
                entityName: entity, key: name)
        }
    }

    /// Encodes `value`.
    final func encodeValue<Value: SupportedAttributeType>(_ value: Value) throws(SkerryError) -> AttributeValue {
        do {
            return try value.encodePrimitiveValue().attributeValue
        } catch {
            throw SkerryError(
                .wrongValueType, "The value of '\(PlainObject.entityName).\(name)' cannot be encoded: \(error)",
                entityName: PlainObject.entityName, key: name)
        }
    }
}

private final class RequiredCodec<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>: AttributeCodec<PlainObject> {
    let keyPath: WritableKeyPath<PlainObject, Value>
    init(keyPath: WritableKeyPath<PlainObject, Value>, name: String) {
        self.keyPath = keyPath
        super.init(name: name)
    }
    override func encode(_ object: PlainObject) throws(SkerryError) -> AttributeValue {
        try encodeValue(object[keyPath: keyPath])
    }
    override func decode(_ value: AttributeValue, into object: inout PlainObject) throws(SkerryError) {
        object[keyPath: keyPath] = try decodeValue(value)
    }
}

private final class OptionalCodec<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>: AttributeCodec<PlainObject> {
    let keyPath: WritableKeyPath<PlainObject, Value?>
    init(keyPath: WritableKeyPath<PlainObject, Value?>, name: String) {
        self.keyPath = keyPath
        super.init(name: name)
    }
    override func encode(_ object: PlainObject) throws(SkerryError) -> AttributeValue {
        guard let value = object[keyPath: keyPath] else { return .null }
        return try encodeValue(value)
    }
    override func decode(_ value: AttributeValue, into object: inout PlainObject) throws(SkerryError) {
        object[keyPath: keyPath] = value.isNull ? nil : try decodeValue(value) as Value
    }
}
