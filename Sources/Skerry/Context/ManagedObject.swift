import SkerryCore

/// A typed view of an engine object inside a ``PersistentContainer`` perform: Sworm's
/// `ManagedObject`. Read it as a plain value with ``decode()``, change it with ``encode(_:)``.
///
/// As in Sworm, ``encode(_:)``, the relation setters and the relation sets' `add` and `remove`
/// do not throw. An error they meet (a value that cannot be stored, an object deleted meanwhile)
/// is recorded on the context: the enclosing perform then fails with it and saves nothing.
///
/// Like the object it wraps, it belongs to its context's queue and is not `Sendable`.
@dynamicMemberLookup
public final class ManagedObject<PlainObject: ManagedObjectConvertible> {
    /// The engine object.
    public let instance: EntityObject
    /// The context the object belonged to when it was wrapped: where the errors of operations
    /// that cannot throw are recorded, even after the object left the context.
    let context: ObjectContext?
    /// The layout of `PlainObject` in the object's entity, when the code that wrapped the object
    /// had it at hand (a fetch looks it up once for all its objects); else looked up when needed.
    private let knownLayout: TypeLayout<PlainObject>?

    init(instance: EntityObject, layout: TypeLayout<PlainObject>? = nil) {
        assert(layout == nil || layout!.entity === instance.entity, "a layout for another entity")
        self.instance = instance
        self.context = instance.context
        self.knownLayout = layout
    }

    /// The layout of `PlainObject` in the object's entity.
    private var layout: TypeLayout<PlainObject> {
        knownLayout ?? AttributeLayout.shared.layout(of: PlainObject.self, in: instance.entity)
    }

    /// Records `error` on the object's context (see `ObjectContext.recordError(_:)`),
    /// for an operation that cannot throw.
    func record(_ error: SkerryError) {
        context?.recordError(error)
    }

    /// The object's ID, to find it again from another context.
    public var objectID: ObjectID { instance.objectID }

    /// The object as a plain value: `PlainObject()` with every declared attribute decoded into it.
    /// - Throws: `SkerryError.Code.undecodableValue` naming the entity and attribute
    ///   of a stored value that does not fit its property.
    public func decode() throws(SkerryError) -> PlainObject {
        try layout.decode(instance)
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

    /// Writes every declared attribute of `value` to the object. It does not throw, as in Sworm:
    /// a value that cannot be stored is recorded on the context and fails the enclosing perform.
    @discardableResult
    public func encode(_ value: PlainObject) -> Self {
        do {
            try write(value)
        } catch {
            record(error)
        }
        return self
    }

    /// Writes every declared attribute of `value`, throwing the first error.
    func write(_ value: PlainObject) throws(SkerryError) {
        try layout.write(value, to: instance)
    }

    /// Writes one attribute; errors are recorded as for ``encode(_:)``.
    @discardableResult
    public func encode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>, _ value: Value) -> Self {
        encodeAttribute(keyPath, value)
    }

    /// Writes one optional attribute (nil clears it); errors are recorded as for ``encode(_:)``.
    @discardableResult
    public func encode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?) -> Self {
        encodeAttribute(keyPath, value)
    }

    private func encodeAttribute<Value: SupportedAttributeType>(_ keyPath: PartialKeyPath<PlainObject>, _ value: Value?) -> Self {
        do {
            let attribute = try Self.attribute(keyPath)
            try instance.setValue(try attribute.encodedValue(value), forKey: attribute.name)
        } catch {
            record(error)
        }
        return self
    }

    private static func attribute(_ keyPath: PartialKeyPath<PlainObject>) throws(SkerryError) -> Attribute<PlainObject> {
        guard let attribute = PlainObject.attribute(keyPath) else {
            throw SkerryError(
                .unknownAttribute, "\(keyPath) is not one of \(PlainObject.self).attributes.",
                entityName: PlainObject.entityName)
        }
        return attribute
    }
}

/// Typed objects never cross threads: the compiler is told so.
@available(*, unavailable, message: "A ManagedObject belongs to its context's queue; decode it to a plain value, or pass its objectID.")
extension ManagedObject: @unchecked Sendable {}
