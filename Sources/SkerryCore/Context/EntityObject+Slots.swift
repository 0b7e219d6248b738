import Synchronization

/// Direct access to a loaded object's value slots, for code that reads or writes many values of
/// one object at once (the typed layer decodes and encodes whole objects): the registration,
/// confinement and fault checks of ``EntityObject/value(at:as:)`` run once per object instead of
/// once per value, and values move without an ``AttributeValue`` in between.
///
/// Valid only inside the closure that received it (the object's storage may be freed or
/// replaced afterwards). Indexes are attribute indexes of the object's entity, and each call
/// must match the attribute's type: integers for integer and Boolean attributes (a Boolean as
/// 0 or 1, an integer within its attribute's width), doubles for floating-point numbers and
/// dates (never NaN), strings for string attributes. Nothing here checks it: callers decide
/// once, from the entity, which attributes they move this way.
package struct ObjectSlots {
    /// The object's storage: the value bitmap (one bit per attribute, in 64-bit words), then the
    /// slots at `ValueLayout.offsets`, for callers that move plain 8-byte values themselves.
    package let base: UnsafeMutableRawPointer
    let layout: ValueLayout

    init(base: UnsafeMutableRawPointer, layout: ValueLayout) {
        self.base = base
        self.layout = layout
    }

    /// The integer (a Boolean as 0 or 1) of attribute `index`, or nil when it has no value.
    @inline(__always)
    package func integer(at index: Int) -> Int64? {
        assertSlot(index, .integer)
        return layout.loadInteger(base, index)
    }

    /// The floating-point number (a date as seconds since 2001-01-01) of attribute `index`, or
    /// nil when it has no value.
    @inline(__always)
    package func double(at index: Int) -> Double? {
        assertSlot(index, .double)
        return layout.loadDouble(base, index)
    }

    /// The string of attribute `index`, or nil when it has no value.
    @inline(__always)
    package func string(at index: Int) -> String? {
        assertSlot(index, .string)
        return layout.loadString(base, index)
    }

    /// Sets attribute `index` (an integer or Boolean attribute) to `value`.
    @inline(__always)
    package func setInteger(_ value: Int64, at index: Int) {
        assertSlot(index, .integer)
        layout.storeInteger(base, index, value)
    }

    /// Sets attribute `index` (a floating-point or date attribute) to `value`, which is not NaN.
    @inline(__always)
    package func setDouble(_ value: Double, at index: Int) {
        assertSlot(index, .double)
        layout.storeDouble(base, index, value)
    }

    /// Sets attribute `index` (a string attribute) to `value`.
    @inline(__always)
    package func setString(_ value: String, at index: Int) {
        assertSlot(index, .string)
        layout.storeString(base, index, value)
    }

    /// Checks, in debug builds only, that attribute `index` is held in a slot of form `slot`: the
    /// accessors above trust their caller (``TypeLayout`` checks types once per type), and a
    /// mismatch would read or write the slot as the wrong type.
    @inline(__always)
    private func assertSlot(_ index: Int, _ slot: ValueLayout.Slot) {
        assert(layout.slots[index] == slot, "ObjectSlots: attribute \(index) is not held as \(slot)")
    }

    /// Clears attribute `index` (it has no value afterwards).
    @inline(__always)
    package func clear(at index: Int) {
        layout.store(base, index, .null)
    }
}

extension EntityObject {
    /// Runs `body` with the object's value slots for reading, after the checks of
    /// ``value(at:as:)``: the object is registered, the caller owns its context (else the process
    /// stops with a message naming `function`), and a fault is loaded.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` for an invalidated object;
    ///   ``SkerryError/Code/objectNotFound`` when a fault's row no longer exists; what `body` throws.
    @inline(__always)
    package func withSlots<R>(
        reading function: StaticString, _ body: (ObjectSlots) throws(SkerryError) -> R
    ) throws(SkerryError) -> R {
        try checkRegistered(function)
        if isFaultFlag { try withOwnerThrowing { context throws(SkerryError) in try context.fulfillFault(self) } }
        return try body(ObjectSlots(base: storage!, layout: entity.valueLayout))
    }

    /// The object's values for reading, laid out by `entity.valueLayout` (the value bitmap, then
    /// the slots at `ValueLayout.offsets`), after the checks of ``withSlots(reading:_:)``, with the
    /// same errors and the same stop for a caller that does not own the context. For code that
    /// moves values itself (the typed layer's whole-object decode) without a closure: the common
    /// case (a registered, loaded object of a context the calling thread owns) is inlined in the
    /// caller; anything else goes through `withSlots(reading:_:)`.
    ///
    /// The address is valid while the object lives and until it changes (a value set, a refault,
    /// an invalidation): read from it at once, with nothing run in between, while holding a
    /// reference to the object.
    /// - Throws: as ``withSlots(reading:_:)``.
    @inlinable @inline(__always)
    package func storageForReading(_ function: StaticString) throws(SkerryError) -> UnsafeRawPointer {
        if let storage = storageInPlace { return storage }
        return try checkedStorageForReading(function)
    }

    /// The common case of ``storageForReading(_:)`` alone: the values of a registered, loaded
    /// object of a context the calling thread owns; nil otherwise (for ``storageForReading(_:)``
    /// to check and report).
    @inlinable @inline(__always)
    package var storageInPlace: UnsafeRawPointer? {
        let state = self.state
        // Fields read in place, as in `readingSlot(at:)`: a copy of the registration would retain its ID.
        if state.pointee.registration.isRegistered && !state.pointee.registration.isFault,
            state.pointee.owner._withUnsafeGuaranteedRef({ $0.ownerThread.load(ordering: .relaxed) }) == currentThreadToken(),
            let storage = state.pointee.storage
        {
            return UnsafeRawPointer(storage)
        }
        return nil
    }

    /// ``storageForReading(_:)`` through every check of ``withSlots(reading:_:)``.
    @usableFromInline
    func checkedStorageForReading(_ function: StaticString) throws(SkerryError) -> UnsafeRawPointer {
        try withSlots(reading: function) { slots in UnsafeRawPointer(slots.base) }
    }

    /// Runs `body` with the object's value slots for writing, after the checks of
    /// ``setValue(_:at:)``, and after the context recorded the object's committed state, as before
    /// the first change of a saved object: every value `body` sets is a pending change, as if set
    /// with ``setValue(_:at:)``.
    /// - Throws: as ``withSlots(reading:_:)``.
    @inline(__always)
    package func withSlots<R>(
        writing function: StaticString, _ body: (ObjectSlots) throws(SkerryError) -> R
    ) throws(SkerryError) -> R {
        try checkRegistered(function)
        if isFaultFlag { try withOwnerThrowing { context throws(SkerryError) in try context.fulfillFault(self) } }
        if !isInsertedFlag && committedValues == nil { withOwner { $0.willChange(self) } }
        return try body(ObjectSlots(base: storage!, layout: entity.valueLayout))
    }
}

extension EntityObject {
    /// The identity of the object's entity, read in place: no call and no reference counting
    /// (``entity`` returns the entity retained), for code that only compares entities (the typed
    /// layer checks each wrapper's layout against its object's entity). Valid at any time, from
    /// any thread that holds the object: an object's entity never changes.
    @inlinable @inline(__always)
    package var entityIdentity: ObjectIdentifier { ObjectIdentifier(state.pointee.entity) }
}
