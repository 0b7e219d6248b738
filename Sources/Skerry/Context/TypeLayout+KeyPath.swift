import SkerryCore

/// One attribute of an object, named by its key path: the single-attribute `decode(_:)` and
/// `encode(_:_:)` of a ``ManagedObject``. A stored property the whole-object copy moves slot to
/// slot (``TypeLayout/fields``) is read or written alone in its slot, after one registration,
/// confinement and fault check; the others, and any value the slot cannot take, go through the
/// attribute's codec, with the same errors.
extension TypeLayout {
    /// The index in ``attributes`` of the attribute declared with `keyPath` (the same key path
    /// instance, as a key path literal of the declaring module is, or an equal one).
    /// - Throws: `SkerryError.Code.unknownAttribute` when no declared attribute has that key path.
    func attributeIndex(of keyPath: AnyKeyPath) throws(SkerryError) -> Int {
        let identity = ObjectIdentifier(keyPath)
        for i in keyPathIdentities.indices where keyPathIdentities[i] == identity { return i }
        if let i = recentKeyPaths.withLock({ $0.index(of: identity) }) { return i }
        // Hashing a key path costs about a thousand instructions: once per key path instance.
        guard let i = indexesByKeyPath[keyPath] else {
            throw SkerryError(
                .unknownAttribute, "\(keyPath) is not one of \(PlainObject.self).attributes.",
                entityName: PlainObject.entityName)
        }
        let held = RecentKeyPaths.Held(keyPath: keyPath)
        recentKeyPaths.withLock { $0.remember(held, i) }
        return i
    }

    /// The value of the attribute declared with `keyPath` in `object`, read alone from its slot
    /// when the slot holds it as it is, else decoded through the attribute's codec.
    /// - Throws: `SkerryError.Code.unknownAttribute` for a key path that is not one of the type's
    ///   declared attributes; `SkerryError.Code.undecodableValue` naming the entity and attribute
    ///   of a stored value that does not fit its property; the errors of reading the object's values.
    @inline(__always)
    func value<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>, of object: EntityObject) throws(SkerryError)
        -> Value
    {
        let i = try attributeIndex(of: keyPath)
        // A value its slot holds as it is: read alone (no value: the checked path reports it).
        if let field = fields[i], field.holds(Value.self), let value = try propertyValue(field, of: object), !value.isNone {
            return value.payload(as: Value.self)
        }
        return try decodeChecked(i, of: object, keyPath)
    }

    /// The value of the optional attribute declared with `keyPath` in `object`; see
    /// ``value(_:of:)-(KeyPath<PlainObject,Value>,_)``.
    @inline(__always)
    func value<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>, of object: EntityObject) throws(SkerryError)
        -> Value?
    {
        let i = try attributeIndex(of: keyPath)
        if let field = fields[i], field.holds(Value.self), let value = try propertyValue(field, of: object) {
            return value.isNone ? nil : value.payload(as: Value.self)
        }
        return try decodeChecked(i, of: object, keyPath)
    }

    /// The value of `field` in `object`'s slot, or nil when it cannot be read that way (for the
    /// checked path to report).
    /// - Throws: the errors of reading the object's values (an invalidated object, a fault whose
    ///   row is gone).
    func propertyValue(_ field: SlotField, of object: EntityObject) throws(SkerryError) -> PropertyValue? {
        field.propertyValue(in: try object.storageForReading("decode(_:)"))
    }

    /// Stores `value` (a value of `field`'s kind that `field.canStore`) in `object`'s slot, as a
    /// pending change.
    /// - Throws: the errors of writing the object's values (an invalidated object, a fault whose
    ///   row is gone).
    func store(_ value: PropertyValue, in field: SlotField, of object: EntityObject) throws(SkerryError) {
        try object.withSlots(writing: "encode(_:_:)") { slots in field.store(value, in: slots) }
    }

    /// Attribute `i` of `object` decoded through its codec into `PlainObject()`, and read back by
    /// `keyPath` (the attribute's key path).
    /// - Throws: `SkerryError.Code.undecodableValue` naming the entity and attribute of a stored
    ///   value that does not fit its property; the errors of reading the object's values.
    func decodeChecked<Property>(_ i: Int, of object: EntityObject, _ keyPath: KeyPath<PlainObject, Property>) throws(SkerryError)
        -> Property
    {
        var value = PlainObject()
        try decode(i, of: object, into: &value)
        return value[keyPath: keyPath]
    }

    /// Writes `value` (a value of attribute `i`'s property, nil for none) to `object` through the
    /// attribute's codec.
    /// - Throws: `SkerryError.Code.wrongValueType` for a value that cannot be stored; the errors of
    ///   writing the object's values.
    func writeChecked<Value: SupportedAttributeType>(_ value: Value?, _ i: Int, to object: EntityObject) throws(SkerryError) {
        try object.setValue(try attributes[i].encodedValue(value), at: try position(i))
    }

    /// ``writeChecked(_:_:to:)`` of a value. Not inlined: in generic code the `Value?` it makes
    /// costs a run-time look-up of `Optional<Value>`'s metadata, which only this path should pay.
    @inline(never)
    func writeChecked<Value: SupportedAttributeType>(required value: Value, _ i: Int, to object: EntityObject) throws(SkerryError) {
        try writeChecked(Optional(value), i, to: object)
    }
}
