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
    /// The context the object was wrapped in and the layout of `PlainObject` in its entity,
    /// shared with the objects wrapped with it (the objects of one fetch).
    @usableFromInline let scope: WrapperScope<PlainObject>

    /// A wrapper of `instance`, an object of `scope`'s entity and context (see
    /// `WrapperScope.wrap(_:)`, which makes wrappers without looking their type up).
    init(instance: EntityObject, scope: WrapperScope<PlainObject>) {
        Self.check(instance, scope)
        self.instance = instance
        self.scope = scope
    }

    /// The same, inlined and without the check, for a fetch's loop, which makes many and checks
    /// each object's entity itself (`ManagedObjectContext.fetch`: an object of another entity than
    /// the scope's gets the scope of its own, checked with ``check(_:_:)``): 16 + 5 instructions
    /// per object (PostgreSQL typed fetch 10k int10, callgrind). Not for the other callers:
    /// inlined where the generic wrapper type is not at hand as a value (`WrapperScope.wrap(_:)`),
    /// the allocation looks the type's metadata up at run time (+323 instructions per typed insert).
    @inline(__always)
    init(fetched instance: EntityObject, checkedScope scope: WrapperScope<PlainObject>) {
        self.instance = instance
        self.scope = scope
    }

    /// Checks that `scope` serves `instance`'s entity, stopping the process otherwise.
    @inline(__always)
    static func check(_ instance: EntityObject, _ scope: WrapperScope<PlainObject>) {
        // Whole-object copies move the slots at the layout's positions: with another entity's
        // layout they would read and write memory laid out for something else. Every scope a
        // wrapper is made with is chosen for `instance.entity`, and an object's entity never
        // changes: `ManagedObjectContext.insert` inserts into the scope's entity or makes the
        // scope from the inserted object's; `fetch` compares each object's entity with its
        // scope's (`scope(of:in:)`), as do `ManagedObjectSet.objects()` and
        // `WrapperScope.relatedScope(for:)` (`serves`); `existingObject` and `inContext` ask
        // `scope(of:in: object.entity)`. Checked in release builds too: the entities' identities
        // are read in place (no call, no reference counting): 4 instructions per wrapper
        // (callgrind, PostgreSQL typed fetch 10k int10 54.35 M -> 54.39 M).
        if _slowPath(scope.anyLayout.entityIdentity != instance.entityIdentity) { wrongEntity(PlainObject.self) }
        assert(scope.context == nil || instance.context == nil || instance.context === scope.context, "an object of another context")
    }

    /// The context the object belonged to when it was wrapped: where the errors of operations
    /// that cannot throw are recorded (or, once the object left it, on the context of the running
    /// perform: see `recordError(_:wrappedIn:of:)`).
    var context: ObjectContext? { scope.context }

    /// The layout of `PlainObject` in the object's entity.
    @inline(__always)
    private var layout: TypeLayout<PlainObject> { scope.layout }

    /// Records `error` on the object's context, or the running perform's once the object left
    /// it (see `ObjectContext.recordError(_:)`), for an operation that cannot throw.
    func record(_ error: SkerryError) {
        recordError(error, wrappedIn: context, of: instance)
    }

    /// The object's ID, to find it again from another context.
    public var objectID: ObjectID { instance.objectID }

    /// The object as a plain value: `PlainObject()` with every declared attribute decoded into it.
    /// - Throws: `SkerryError.Code.undecodableValue` naming the entity and attribute
    ///   of a stored value that does not fit its property.
    @inlinable
    public func decode() throws(SkerryError) -> PlainObject {
        // Inlinable, so that the caller makes `PlainObject()` and holds the value itself, without
        // calls through the type's witnesses (36 instructions per object of a fetch's decode).
        var value = PlainObject()
        let instance = self.instance
        // The layout borrowed, not retained (a retain and a release per object otherwise): the
        // scope, which the wrapper holds, keeps it alive.
        let failure = Unmanaged.passUnretained(scope.layout)._withUnsafeGuaranteedRef { layout in layout.decode(instance, into: &value) }
        if let failure { throw failure.error }
        return value
    }

    /// One attribute's value.
    /// - Throws: `SkerryError.Code.unknownAttribute` for a key path that is not one of the type's
    ///   declared attributes; `SkerryError.Code.undecodableValue` naming the entity and attribute of
    ///   a stored value that does not fit its property.
    public func decode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>) throws(SkerryError) -> Value {
        try layout.value(keyPath, of: instance)
    }

    /// One optional attribute's value.
    /// - Throws: as ``decode(_:)-(KeyPath<PlainObject,Value>)``.
    public func decode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>) throws(SkerryError) -> Value? {
        try layout.value(keyPath, of: instance)
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
        do {
            let layout = self.layout
            let i = try layout.attributeIndex(of: keyPath)
            // A value its slot takes as it is: stored alone (NaN: the checked path reports it).
            if let field = layout.fields[i], field.holds(Value.self), case let property = field.propertyValue(value),
                field.canStore(property)
            {
                try layout.store(property, in: field, of: instance)
            } else {
                try layout.writeChecked(required: value, i, to: instance)
            }
        } catch {
            record(error)
        }
        return self
    }

    /// Writes one optional attribute (nil clears it); errors are recorded as for ``encode(_:)``.
    @discardableResult
    public func encode<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?) -> Self {
        do {
            let layout = self.layout
            let i = try layout.attributeIndex(of: keyPath)
            if let field = layout.fields[i], field.holds(Value.self),
                case let property = value.map({ field.propertyValue($0) }) ?? PropertyValue.none, field.canStore(property)
            {
                try layout.store(property, in: field, of: instance)
            } else {
                try layout.writeChecked(value, i, to: instance)
            }
        } catch {
            record(error)
        }
        return self
    }
}

/// Stops the process: a wrapper with a layout for another entity than its object's would move
/// slots laid out for something else. (Out of line. A `preconditionFailure`, whose message only
/// debug builds print: with `fatalError`, which may run anything, the optimizer retained and
/// released each fetched object once more around the wrapper's init, +47 instructions per object.)
@inline(never)
private func wrongEntity(_ type: Any.Type) -> Never {
    preconditionFailure("Skerry: a ManagedObject<\(type)> was made with the layout of another entity than its object's")
}

/// Typed objects never cross threads: the compiler is told so.
@available(*, unavailable, message: "A ManagedObject belongs to its context's queue; decode it to a plain value, or pass its objectID.")
extension ManagedObject: @unchecked Sendable {}
