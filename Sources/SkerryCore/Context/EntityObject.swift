import Foundation
import Synchronization

/// The value of one relationship of an object: the related objects' IDs, once loaded.
package enum RelationshipValue: Equatable, Sendable {
    case notLoaded
    case toOne(ObjectID?)
    case toMany(ObjectIDList)

    /// The related IDs (empty when not loaded).
    package var objectIDs: [ObjectID] {
        switch self {
        case .notLoaded: return []
        case .toOne(let id): return id.map { [$0] } ?? []
        case .toMany(let list): return list.ids
        }
    }

    /// Whether the value names a temporary ID.
    var holdsTemporaryIDs: Bool {
        switch self {
        case .notLoaded: return false
        case .toOne(let id): return id?.isTemporary ?? false
        case .toMany(let list): return list.ids.contains(where: \.isTemporary)
        }
    }

    /// The value with every ID replaced by `mapping[id]` where it has one.
    func mapped(_ mapping: [ObjectID: ObjectID]) -> RelationshipValue {
        switch self {
        case .notLoaded: return self
        case .toOne(let id): return .toOne(id.map { mapping[$0] ?? $0 })
        case .toMany(let list): return .toMany(ObjectIDList(list.ids.map { mapping[$0] ?? $0 }))
        }
    }
}

/// A group of objects fetched with a batch size, whose values load together the first time any
/// of them is read, with the relationships the fetch asked to prefetch.
final class FaultBatch {
    let objectIDs: [ObjectID]
    /// The fetched entity, and the indexes of its relationships to prefetch when the batch loads.
    let prefetching: (entity: EntityDescription, relationships: [Int])?
    init(objectIDs: [ObjectID], prefetching: (entity: EntityDescription, relationships: [Int])? = nil) {
        self.objectIDs = objectIDs
        self.prefetching = prefetching
    }
}

/// An object of an entity, registered in one ``ObjectContext``: NSManagedObject's role.
///
/// An object belongs to its context and is used only inside that context's `perform` or
/// `performAndWait` blocks. It is not `Sendable`, so the compiler refuses to send it to another
/// task or thread; pass its ``objectID`` instead and look it up in the other context.
///
/// Values are read and written by attribute name, with their Swift type checked against the
/// attribute's type:
///
/// ```swift
/// try book.setValue("Dune", forKey: "title")
/// let title: String = try book.value(forKey: "title")
/// let year = try book.value(forKey: "year", as: Int?.self)
/// ```
///
/// Two objects are equal only if they are the same instance; a context never holds two objects
/// for one row.
///
/// Subclasses (Core Data's `NSManagedObject` subclasses) declare computed properties only, no
/// stored property, and are registered for their entity; see ``ObjectModel/setManagedObjectClass(_:forEntityName:)``.
/// The class's own members cannot be overridden.
open class EntityObject: Hashable, CustomStringConvertible {
    // The class declares no stored property: an object's state, and its values when it was made
    // loaded, lie in its own memory after its header (see `State`, in EntityObject+Memory.swift).
    // DO NOT add a stored property: it would overlap `State` (the standard library checks this
    // only in debug builds). Subclasses may not either: registration checks their instance size
    // (EntityDescription+Class.swift). Members are `final` (public members of an open class cannot
    // be overridden outside the module anyway; `final` keeps calls from other modules, and from
    // the inlined reads, direct).

    /// Never called: objects are made by `make`, which allocates them with their state and values.
    private init() { preconditionFailure("EntityObject is made by EntityObject.make") }

    /// The object's entity.
    public final var entity: EntityDescription { state.pointee.entity }
    /// The object's ID: temporary until the object is saved, permanent after.
    public final var objectID: ObjectID { registration.objectID }
    /// The context the object is registered in; nil once the object was invalidated by
    /// `reset()`, by a rollback of its insert, by the save of its delete, by a merged delete, or
    /// by the end of its context.
    public final var context: ObjectContext? { registration.isRegistered ? owner.takeUnretainedValue() : nil }

    /// The context that created the object, held without a reference count, so that value access
    /// costs no reference counting (the context's count lives in a side table, because of the weak
    /// references of its observers: every count would take the slow path). Used only while
    /// `registration.isRegistered` is true: every path that ends the registration goes through
    /// ``ObjectRegistry`` (`unregister`, `unregisterAll` from `reset()` and from the context's
    /// deinit), which invalidates the object before the context can go away. Calls go through
    /// ``withOwner(_:)``, which borrows the reference without retaining it.
    private var owner: Unmanaged<ObjectContext> {
        @inline(__always) get { state.pointee.owner }
    }

    /// The object's ID, and whether (and how) `owner`'s registry holds it; written only by
    /// ``ObjectRegistry``.
    var registration: Registration {
        @inline(__always) get { state.pointee.registration }
        @inline(__always) _modify { yield &state.pointee.registration }
    }

    /// The values, laid out by `entity.valueLayout`; nil while the object is a fault (or invalid).
    /// Owned by the object: either ``inlineStorage`` (in the object's own memory) or a block of
    /// its own, freed when the object becomes a fault, is invalidated, or goes away.
    var storage: UnsafeMutableRawPointer? {
        @inline(__always) get { state.pointee.storage }
        @inline(__always) set { state.pointee.storage = newValue }
    }
    /// The relationships, indexed like `entity.relationships`.
    var relationshipValues: [RelationshipValue] {
        @inline(__always) get { state.pointee.relationshipValues }
        @inline(__always) _modify { yield &state.pointee.relationshipValues }
    }
    /// The row version last read from or written to the store (optimistic locking).
    var version: Int64 {
        @inline(__always) get { state.pointee.version }
        @inline(__always) set { state.pointee.version = newValue }
    }
    /// Whether the values are not loaded yet (kept in the registration's spare bytes).
    var isFaultFlag: Bool {
        @inline(__always) get { state.pointee.registration.isFault }
        @inline(__always) set { state.pointee.registration.isFault = newValue }
    }
    /// The state most objects never have (see ``SideState``); nil while all of it is empty.
    var side: SideState? {
        @inline(__always) get { state.pointee.side }
        @inline(__always) set { state.pointee.side = newValue }
    }

    /// What only some objects hold: a pending change's committed state, a fault's batch. Kept
    /// out of line, so that the object is 16 bytes smaller (a bulk fetch or insert makes
    /// hundreds of thousands of objects that have neither) and its teardown releases less.
    final class SideState {
        var committedValues: [AttributeValue]?
        var committedRelationships: [RelationshipValue]?
        var faultBatch: FaultBatch?

        var isEmpty: Bool { committedValues == nil && committedRelationships == nil && faultBatch == nil }
    }

    /// Sets one part of the side state, making or dropping the box as needed.
    @inline(__always)
    private func setSide(_ body: (SideState) -> Void) {
        let box = side ?? SideState()
        body(box)
        side = box.isEmpty ? nil : box
    }

    /// The values last read from or written to the store, captured on the first change of a
    /// saved object; nil while the object has no pending change.
    var committedValues: [AttributeValue]? {
        @inline(__always) get { side?.committedValues }
        set {
            if newValue == nil && side == nil { return }
            setSide { $0.committedValues = newValue }
        }
    }
    /// The relationships as committed, captured with `committedValues`.
    var committedRelationships: [RelationshipValue]? {
        @inline(__always) get { side?.committedRelationships }
        set {
            if newValue == nil && side == nil { return }
            setSide { $0.committedRelationships = newValue }
        }
    }
    /// Faults fetched together with a batch size, loaded together.
    var faultBatch: FaultBatch? {
        @inline(__always) get { side?.faultBatch }
        set {
            if newValue == nil && side == nil { return }
            setSide { $0.faultBatch = newValue }
        }
    }

    deinit {
        let state = self.state
        if let storage = state.pointee.storage {
            let layout = state.pointee.entity.valueLayout
            if state.pointee.hasRoomForValues && storage == inlineStorage {
                layout.destroyValues(storage)
            } else {
                layout.deallocate(storage)
            }
        }
        state.deinitialize(count: 1)
    }

    /// Runs `body` with the owning context, borrowed without retaining it. Only while registered.
    @inline(__always)
    func withOwner<T>(_ body: (ObjectContext) -> T) -> T {
        owner._withUnsafeGuaranteedRef(body)
    }

    /// ``withOwner(_:)`` for work that throws.
    @inline(__always)
    func withOwnerThrowing<T>(_ body: (ObjectContext) throws(SkerryError) -> T) throws(SkerryError) -> T {
        try owner._withUnsafeGuaranteedRef { context in Result { () throws(SkerryError) in try body(context) } }.get()
    }

    /// The current values, indexed like `entity.attributes`; empty while the object is a fault.
    /// Reading builds an array (use ``value(at:)`` for one). Setting writes every value (one per
    /// attribute: an entity without attributes takes the empty array), giving a value-less object
    /// its storage; an object drops its values only through ``releaseStorage()``, so a loaded
    /// object always has storage, whatever its entity.
    var values: [AttributeValue] {
        get {
            guard let storage else { return [] }
            let layout = entity.valueLayout
            return layout.types.indices.map { layout.load(storage, $0) }
        }
        set {
            let layout = entity.valueLayout
            assert(newValue.count == layout.count, "\(newValue.count) values for the \(layout.count) attributes of \(entity.name)")
            let base = storage ?? emptyStorage()
            for index in newValue.indices { layout.store(base, index, newValue[index]) }
            storage = base
        }
    }

    /// The value of attribute `index` (a valid index of a loaded object).
    @inline(__always)
    func value(at index: Int) -> AttributeValue {
        entity.valueLayout.load(storage!, index)
    }

    /// Sets attribute `index` of a loaded object to `value`, which fits the attribute.
    @inline(__always)
    func storeValue(_ value: AttributeValue, at index: Int) {
        entity.valueLayout.store(storage!, index, value)
    }

    // MARK: State

    /// Whether the object is a pending insert (see ``isInserted``).
    @inline(__always) var isInsertedFlag: Bool { registration.isInserted }
    /// Whether the object is a pending delete (see ``isDeleted``).
    @inline(__always) var isDeletedFlag: Bool { registration.isDeleted }

    /// Whether `context` is the context that made this object.
    func isOwned(by context: ObjectContext) -> Bool { owner.toOpaque() == Unmanaged.passUnretained(context).toOpaque() }

    /// Whether the object was inserted and not saved yet.
    public final var isInserted: Bool { isInsertedFlag }
    /// Whether the object is marked for deletion at the next save.
    public final var isDeleted: Bool { isDeletedFlag }
    /// Whether the object's values have not been loaded from the store yet.
    public final var isFault: Bool { isFaultFlag }
    /// Whether a saved object has values that differ from the store's.
    public final var isUpdated: Bool {
        checkConfinementIfRegistered()
        return isUpdatedFlag
    }
    /// Whether the object has unsaved changes: inserted, deleted or updated.
    public final var hasChanges: Bool {
        checkConfinementIfRegistered()
        return isInsertedFlag || isDeletedFlag || isUpdatedFlag
    }
    /// ``isUpdated``, unchecked, for the context's own use.
    var isUpdatedFlag: Bool {
        guard let committedValues, !isInsertedFlag else { return false }
        return committedValues != values || committedRelationships != relationshipValues
    }

    /// The names and new values of the attributes changed since the last save (every attribute
    /// with a value, for an inserted object).
    public final var changedValues: [String: AttributeValue] {
        checkConfinementIfRegistered()
        var changes: [String: AttributeValue] = [:]
        guard !isFaultFlag else { return changes }
        for (index, attribute) in entity.attributes.enumerated() {
            if let committedValues, !isInsertedFlag {
                let value = value(at: index)
                if committedValues[index] != value { changes[attribute.name] = value }
            } else if isInsertedFlag, case let value = value(at: index), !value.isNull {
                changes[attribute.name] = value
            }
        }
        return changes
    }

    // MARK: Values

    /// Reads an attribute.
    /// - Parameters:
    ///   - key: the attribute's name.
    ///   - type: the Swift type to read it as; an optional type reads a missing value as nil.
    /// - Returns: the value.
    /// - Throws: ``SkerryError/Code/unknownAttribute``; ``SkerryError/Code/wrongValueType`` when
    ///   `type` cannot hold the attribute's values or the attribute has no value and `type` is not
    ///   optional; ``SkerryError/Code/objectNotInContext`` for an invalidated object;
    ///   ``SkerryError/Code/objectNotFound`` when a fault's row no longer exists.
    public final func value<T: AttributeValueConvertible>(forKey key: String, as type: T.Type = T.self) throws(SkerryError) -> T {
        let index = try entity.requireAttributeIndex(key)
        return try value(at: index, as: type)
    }

    /// Reads the attribute at `index` of `entity.attributes`; see ``value(forKey:as:)``.
    /// Complexity: O(1) once the object is loaded.
    @inlinable @inline(__always)
    public final func value<T: AttributeValueConvertible>(at index: Int, as type: T.Type = T.self) throws(SkerryError) -> T {
        // Inlinable so that the conversion is specialized for `T` in the caller: a generic call
        // would look up `Optional<T>`'s metadata at run time on every read. The Swift types of
        // the integer, floating-point, date and string slots are read straight from the slot,
        // with the conversions and errors of the general path below. The tests of `T` fold away
        // in the caller's specialization (tests of optional types do not: they look metadata up,
        // so optional types take the general path).
        if T.self == Int64.self || (T.self == Int.self && MemoryLayout<Int>.size == 8) {
            let (slot, attributeType) = try readingSlot(at: index)
            guard attributeType.isInteger, let slot else { throw unreadableValueError(at: index, as: T.self) }
            return unsafeBitCast(slot.load(as: Int64.self), to: T.self)
        }
        if T.self == Double.self {
            let (slot, attributeType) = try readingSlot(at: index)
            guard attributeType == .double || attributeType == .float, let slot else { throw unreadableValueError(at: index, as: T.self) }
            return unsafeBitCast(slot.load(as: Double.self), to: T.self)
        }
        if T.self == Bool.self {
            let (slot, attributeType) = try readingSlot(at: index)
            guard attributeType == .boolean, let slot else { throw unreadableValueError(at: index, as: T.self) }
            return unsafeBitCast(slot.load(as: Int64.self) != 0, to: T.self)
        }
        if T.self == Date.self {
            let (slot, attributeType) = try readingSlot(at: index)
            guard attributeType == .date, let slot else { throw unreadableValueError(at: index, as: T.self) }
            return unsafeBitCast(Date(timeIntervalSinceReferenceDate: slot.load(as: Double.self)), to: T.self)
        }
        if T.self == String.self {
            let (slot, attributeType) = try readingSlot(at: index)
            guard attributeType == .string, let slot else { throw unreadableValueError(at: index, as: T.self) }
            return unsafeBitCast(slot.assumingMemoryBound(to: String.self).pointee, to: T.self)
        }
        let (value, attributeType) = try storedValue(at: index)
        guard T.canRead(attributeType), let result = T(attributeValue: value, type: attributeType) else {
            throw unreadableValueError(at: index, as: T.self)
        }
        return result
    }

    /// The stored value at `index` and its attribute type, after checking the index and the
    /// object's registration and loading a fault: everything of ``value(at:as:)`` but the
    /// conversion.
    @usableFromInline
    final func storedValue(at index: Int) throws(SkerryError) -> (AttributeValue, AttributeType) {
        guard UInt(bitPattern: index) < UInt(entity.valueLayout.count) else { throw noAttributeError(at: index) }
        // The owner is used in place, without a strong reference: this is the hot path of every read.
        try checkRegistered("value(forKey:as:)")
        if isFaultFlag { try withOwnerThrowing { context throws(SkerryError) in try context.fulfillFault(self) } }
        // The layout is read here, after the calls above, so that it is not held across them, and
        // borrowed: the entity (which the object holds) keeps it alive, and a reference count
        // per read would cost a third of this function.
        return Unmanaged.passUnretained(entity.valueLayout)._withUnsafeGuaranteedRef { layout in
            (layout.load(storage!, index), layout.type(at: index))
        }
    }

    /// ``slotForReading(at:)``, with its common case inlined in the caller: a registered, loaded
    /// object of a context the calling thread owns (the same checks, in the same order of
    /// outcome: anything else, and every error, goes through `slotForReading(at:)`).
    @inlinable @inline(__always)
    final func readingSlot(at index: Int) throws(SkerryError) -> (UnsafeRawPointer?, AttributeType) {
        let state = self.state
        // Fields read in place: a copy of the registration would retain its ID.
        if state.pointee.registration.isRegistered && !state.pointee.registration.isFault,
            state.pointee.owner._withUnsafeGuaranteedRef({ $0.ownerThread.load(ordering: .relaxed) }) == currentThreadToken()
        {
            // Borrowed, as in `storedValue(at:)`: the entity, which the object holds, keeps it alive.
            let slot: (UnsafeRawPointer?, AttributeType)? = Unmanaged.passUnretained(state.pointee.entity.valueLayout)
                ._withUnsafeGuaranteedRef { layout in
                    guard UInt(bitPattern: index) < UInt(layout.count), let base = state.pointee.storage else { return nil }
                    return (
                        layout.hasValue(base, index) ? UnsafeRawPointer(base + layout.offsetTable[index]) : nil, layout.typeTable[index]
                    )
                }
            if let slot { return slot }
        }
        return try slotForReading(at: index)
    }

    /// The address of attribute `index`'s slot (nil when it holds no value) and the attribute's
    /// type, after the checks of ``storedValue(at:)``: for the reads of ``value(at:as:)`` that
    /// take the value straight from its slot. The address is valid until the object changes and
    /// while the object lives: callers load from it at once, with nothing run in between, and a
    /// registered object (the checks above make sure it is) is held by its context's identity map,
    /// so the caller dropping its own reference early (an optimizer may) cannot free the memory.
    @usableFromInline
    final func slotForReading(at index: Int) throws(SkerryError) -> (UnsafeRawPointer?, AttributeType) {
        guard UInt(bitPattern: index) < UInt(entity.valueLayout.count) else { throw noAttributeError(at: index) }
        try checkRegistered("value(forKey:as:)")
        if isFaultFlag { try withOwnerThrowing { context throws(SkerryError) in try context.fulfillFault(self) } }
        // Borrowed, as in `storedValue(at:)`.
        return Unmanaged.passUnretained(entity.valueLayout)._withUnsafeGuaranteedRef { layout in
            let base = storage!
            return (layout.hasValue(base, index) ? UnsafeRawPointer(base + layout.offsetTable[index]) : nil, layout.type(at: index))
        }
    }

    /// The error of naming attribute `index`, which the entity does not have.
    @inline(never)
    func noAttributeError(at index: Int) -> SkerryError {
        SkerryError(.unknownAttribute, "Entity '\(entity.name)' has no attribute at index \(index).", entityName: entity.name)
    }

    /// The error of reading the attribute at `index` (a valid index of a loaded object) as `type`.
    @usableFromInline
    final func unreadableValueError(at index: Int, as type: Any.Type) -> SkerryError {
        let attribute = entity.attributes[index]
        let value = value(at: index)
        let why = value.isNull ? "it has no value; read it as an Optional" : "it is \(attribute.type) and holds \(value)"
        return SkerryError(
            .wrongValueType, "Cannot read '\(entity.name).\(attribute.name)' as \(type): \(why).",
            entityName: entity.name, key: attribute.name, objectID: objectID)
    }

    /// Writes an attribute.
    /// - Parameters:
    ///   - value: the new value; nil (an optional holding none) clears the attribute.
    ///   - key: the attribute's name.
    /// - Throws: ``SkerryError/Code/unknownAttribute``; ``SkerryError/Code/wrongValueType`` when the
    ///   value's type does not fit the attribute, an integer is out of the attribute's range, or a
    ///   floating-point value is NaN (SQLite cannot store NaN); ``SkerryError/Code/objectNotInContext``
    ///   for an invalidated object. Required values are checked at save, not here.
    public final func setValue<T: AttributeValueConvertible>(_ value: T, forKey key: String) throws(SkerryError) {
        let index = try entity.requireAttributeIndex(key)
        try setValue(value.attributeValue, at: index)
    }

    /// Writes the attribute at `index` of `entity.attributes`; see ``setValue(_:forKey:)-(T,_)``.
    public final func setValue(_ newValue: AttributeValue, at index: Int) throws(SkerryError) {
        // The layout is borrowed, not retained, for the checks and the store below: the entity
        // (which the object holds) keeps it alive, and a reference count per write is a good
        // part of this function's cost.
        let type = Unmanaged.passUnretained(entity.valueLayout)._withUnsafeGuaranteedRef { layout in
            UInt(bitPattern: index) < UInt(layout.count) ? layout.type(at: index) : nil
        }
        guard let type else { throw noAttributeError(at: index) }
        guard newValue.fits(type) else {
            let attribute = entity.attributes[index]
            throw SkerryError(
                .wrongValueType,
                "Cannot store a \(newValue.kindName) value \(newValue) in '\(entity.name).\(attribute.name)', which is \(attribute.type).",
                entityName: entity.name, key: attribute.name, objectID: objectID)
        }
        if newValue.isNaN {
            let attribute = entity.attributes[index]
            throw SkerryError(
                .wrongValueType, "Cannot store NaN in '\(entity.name).\(attribute.name)': SQLite would store it as NULL.",
                entityName: entity.name, key: attribute.name, objectID: objectID)
        }
        // The owner is used in place, without a strong reference: this is the hot path of every write.
        try checkRegistered("setValue(_:forKey:)")
        if isFaultFlag { try withOwnerThrowing { context throws(SkerryError) in try context.fulfillFault(self) } }
        if !isInsertedFlag && committedValues == nil { withOwner { $0.willChange(self) } }
        Unmanaged.passUnretained(entity.valueLayout)._withUnsafeGuaranteedRef { layout in
            // Numbers straight into their slots (which hold no references); the rest by form.
            switch newValue {
            case .int(let value): layout.storeInteger(storage!, index, value)
            case .double(let value): layout.storeDouble(storage!, index, value)
            default: layout.store(storage!, index, newValue)
            }
        }
    }

    /// The values of the attributes as they are in the store (or were at the last save),
    /// ignoring pending changes. Empty for an object never saved.
    /// - Throws: as ``value(forKey:as:)``.
    public final func committedValues(forKeys keys: [String]? = nil) throws(SkerryError) -> [String: AttributeValue] {
        try loadIfFault()
        guard !isInsertedFlag else { return [:] }
        let source = committedValues ?? values
        var result: [String: AttributeValue] = [:]
        for name in keys ?? entity.attributes.map(\.name) {
            result[name] = source[try entity.requireAttributeIndex(name)]
        }
        return result
    }

    // MARK: Context access

    /// The context, checked: it must still hold the object (every removal from a context goes
    /// through ``ObjectRegistry``, which clears the registration), and the caller must own the
    /// context now (``ObjectContext/checkConfinement(_:)``; `function` names the call in the
    /// message).
    @inline(__always)
    func activeContext(_ function: StaticString = #function) throws(SkerryError) -> ObjectContext {
        try checkRegistered(function)
        return owner.takeUnretainedValue()
    }

    /// Throws unless the object is registered (so that `owner` may be used), then stops the process
    /// unless the caller owns the context (``ObjectContext/checkConfinement(_:)``).
    @inline(__always)
    func checkRegistered(_ function: StaticString = #function) throws(SkerryError) {
        guard registration.isRegistered else {
            throw SkerryError(
                .objectNotInContext,
                "\(objectID) is no longer registered in a context (it was reset, rolled back, deleted or its context is gone).",
                entityName: entity.name, objectID: objectID)
        }
        withOwner { $0.checkConfinement(function) }
    }

    /// For reads of state that do not need the object registered: stops the process unless the
    /// caller owns the object's context, while it has one.
    @inline(__always)
    func checkConfinementIfRegistered(_ function: StaticString = #function) {
        if registration.isRegistered { withOwner { $0.checkConfinement(function) } }
    }

    private func loadIfFault(_ function: StaticString = #function) throws(SkerryError) {
        let context = try activeContext(function)
        if isFaultFlag { try context.fulfillFault(self) }
    }

    // MARK: Hashable, description

    public static func == (lhs: EntityObject, rhs: EntityObject) -> Bool { lhs === rhs }

    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public final var description: String {
        if isFaultFlag { return "<\(objectID) fault>" }
        let fields = zip(entity.attributes, values).map { "\($0.name)=\($1)" }.joined(separator: ", ")
        return "<\(objectID)\(isInsertedFlag ? " inserted" : "")\(isDeletedFlag ? " deleted" : "") \(fields)>"
    }
}

/// Managed objects never cross threads: the compiler is told so.
@available(*, unavailable, message: "An EntityObject belongs to its context's queue; pass its objectID to other threads instead.")
extension EntityObject: @unchecked Sendable {}
