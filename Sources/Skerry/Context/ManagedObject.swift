import SkerryCore

/// A typed view of an engine object inside a ``PersistentContainer`` perform: Sworm's
/// `ManagedObject`. Read it as a plain value with ``decode()``, change it with ``encode(_:)``.
///
/// Like the object it wraps, it belongs to its context's queue and is not `Sendable`.
@dynamicMemberLookup
public final class ManagedObject<PlainObject: ManagedObjectConvertible> {
    /// The engine object.
    public let instance: EntityObject

    init(instance: EntityObject) {
        self.instance = instance
    }

    /// The object's ID, to find it again from another context.
    public var objectID: ObjectID { instance.objectID }

    /// The object as a plain value: `PlainObject()` with every declared attribute decoded into it.
    /// - Throws: ``SkerryCore/SkerryError/Code/undecodableValue`` naming the entity and attribute
    ///   of a stored value that does not fit its property.
    public func decode() throws(SkerryError) -> PlainObject {
        var value = PlainObject()
        let layout = AttributeLayout.shared.layout(of: PlainObject.self, in: instance.entity)
        for i in layout.attributes.indices {
            let attribute = layout.attributes[i]
            try attribute.decode(try instance.value(at: try Self.position(layout.positions[i], attribute), as: AttributeValue.self),
                                 into: &value)
        }
        return value
    }

    /// The position of `attribute` in the entity, or the error of a model that lacks it.
    private static func position(_ index: Int, _ attribute: Attribute<PlainObject>) throws(SkerryError) -> Int {
        guard index >= 0 else {
            throw SkerryError(.unknownAttribute, "Entity '\(PlainObject.entityName)' has no attribute '\(attribute.name)'.",
                              entityName: PlainObject.entityName, key: attribute.name)
        }
        return index
    }

    /// One attribute's value.
    public func decode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>) throws(SkerryError) -> Value {
        let attribute = try Self.attribute(keyPath)
        var value = PlainObject()
        try attribute.decode(try instance.value(forKey: attribute.name, as: AttributeValue.self), into: &value)
        return value[keyPath: keyPath]
    }

    /// One optional attribute's value.
    public func decode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>) throws(SkerryError) -> Value? {
        let attribute = try Self.attribute(keyPath)
        var value = PlainObject()
        try attribute.decode(try instance.value(forKey: attribute.name, as: AttributeValue.self), into: &value)
        return value[keyPath: keyPath]
    }

    /// Writes every declared attribute of `value` to the object.
    @discardableResult
    public func encode(_ value: PlainObject) throws(SkerryError) -> Self {
        let layout = AttributeLayout.shared.layout(of: PlainObject.self, in: instance.entity)
        for i in layout.attributes.indices {
            let attribute = layout.attributes[i]
            try instance.setValue(try attribute.encodedValue(of: value), at: try Self.position(layout.positions[i], attribute))
        }
        return self
    }

    /// Writes one attribute.
    @discardableResult
    public func encode<Value: SupportedAttributeType>(_ keyPath: WritableKeyPath<PlainObject, Value>, _ value: Value) throws(SkerryError) -> Self {
        let attribute = try Self.attribute(keyPath)
        var object = PlainObject()
        object[keyPath: keyPath] = value
        try instance.setValue(try attribute.encodedValue(of: object), forKey: attribute.name)
        return self
    }

    /// Writes one optional attribute (nil clears it).
    @discardableResult
    public func encode<Value: SupportedAttributeType>(_ keyPath: WritableKeyPath<PlainObject, Value?>, _ value: Value?) throws(SkerryError) -> Self {
        let attribute = try Self.attribute(keyPath)
        var object = PlainObject()
        object[keyPath: keyPath] = value
        try instance.setValue(try attribute.encodedValue(of: object), forKey: attribute.name)
        return self
    }

    private static func attribute(_ keyPath: PartialKeyPath<PlainObject>) throws(SkerryError) -> Attribute<PlainObject> {
        guard let attribute = PlainObject.attribute(keyPath) else {
            throw SkerryError(.unknownAttribute, "\(keyPath) is not one of \(PlainObject.self).attributes.",
                              entityName: PlainObject.entityName)
        }
        return attribute
    }
}

/// Typed objects never cross threads: the compiler is told so.
@available(*, unavailable, message: "A ManagedObject belongs to its context's queue; decode it to a plain value, or pass its objectID.")
extension ManagedObject: @unchecked Sendable {}
