import Foundation
import SkerryCore
import Synchronization

/// The positions of a model type's declared attributes in an entity, found once per (type, entity)
/// instead of by name for every property of every object decoded or encoded.
///
/// `@unchecked Sendable`: `layouts` is only touched while `lock` is held, and the layouts stored
/// are immutable. Each layout holds its entity strongly, so the entity's address (half of the
/// key) cannot be reused by another entity while the layout is cached. The cost is that the
/// entities of every model a process used stay alive: a process holds few models. (A weak
/// reference would put every entity's reference counting on Swift's slow path.)
final class AttributeLayout: @unchecked Sendable {
    static let shared = AttributeLayout()

    private struct Key: Hashable {
        let type: ObjectIdentifier
        let entity: ObjectIdentifier
    }

    private let lock = NSLock()
    private var layouts: [Key: AnyObject] = [:]

    /// The declared attributes of `PlainObject` and their positions in `entity`.
    /// Complexity: O(1) after the first call for a (type, entity) pair.
    func layout<PlainObject: ManagedObjectConvertible>(of type: PlainObject.Type, in entity: EntityDescription)
        -> TypeLayout<PlainObject>
    {
        let key = Key(type: ObjectIdentifier(PlainObject.self), entity: ObjectIdentifier(entity))
        if let cached = lock.withLock({ layouts[key] }) {
            // The key names `PlainObject`, so the stored layout is a `TypeLayout<PlainObject>`.
            return unsafeDowncast(cached, to: TypeLayout<PlainObject>.self)
        }
        let layout = TypeLayout<PlainObject>(entity: entity)
        lock.withLock { layouts[key] = layout }
        return layout
    }
}

/// What every ``TypeLayout`` is, whatever its model type: for caches that hold layouts of
/// several types.
@usableFromInline
class AnyTypeLayout {
    /// The entity the positions are for (kept alive; see ``AttributeLayout``).
    let entity: EntityDescription
    /// `entity`'s identity, for the check of every wrapper made (`ManagedObject.init`).
    let entityIdentity: ObjectIdentifier
    /// The model type.
    let type: ObjectIdentifier

    init(entity: EntityDescription, type: ObjectIdentifier) {
        self.entity = entity
        entityIdentity = ObjectIdentifier(entity)
        self.type = type
    }
}

/// A model type's declared attributes, in a fixed order, with each one's position in one entity,
/// and how the typed layer reads and writes a whole object: the properties a ``SlotCopy`` can
/// move straight between the value and the object's slots, the others through their codecs.
@usableFromInline
final class TypeLayout<PlainObject: ManagedObjectConvertible>: AnyTypeLayout {
    /// The declared attributes.
    let attributes: [Attribute<PlainObject>]
    /// `positions[i]` is the index of `attributes[i]` in `entity.attributes`, or -1 where the
    /// entity has no attribute of that name.
    let positions: [Int]
    /// The attributes copied slot to slot: those with a ``SlotCopy`` whose entity attribute has
    /// exactly the type the copy is for.
    let slotFields: [SlotField]
    /// The indexes (in `attributes`) of the others, read and written through their codecs.
    let codedAttributes: [Int]
    /// The `slotFields` a whole-object copy moves as plain words, and the others.
    let plainMoves: PlainMoves
    let otherSlotFields: [SlotField]
    /// `fields[i]` is the ``SlotField`` of `attributes[i]` when it is one of `slotFields`, else
    /// nil: how the single-attribute `decode(_:)` and `encode(_:_:)` of a ``ManagedObject`` move it.
    let fields: [SlotField?]
    /// The identities of the declared key paths, in the order of `attributes`, and the index of
    /// each declared key path, for key paths equal to one but not the same instance (see
    /// ``attributeIndex(of:)``).
    let keyPathIdentities: [ObjectIdentifier]
    let indexesByKeyPath: [AnyKeyPath: Int]
    /// The key paths last found in `indexesByKeyPath`, by identity: a key path literal is one
    /// instance per place in the code, so the calls of a loop find theirs here without hashing it.
    let recentKeyPaths = Mutex(RecentKeyPaths())

    init(entity: EntityDescription) {
        let attributes = Array(PlainObject.attributes)
        let positions = attributes.map { entity.attributeIndex(named: $0.name) ?? -1 }
        var slotFields: [SlotField] = []
        var codedAttributes: [Int] = []
        var fields: [SlotField?] = []
        for i in attributes.indices {
            if let copy = attributes[i].slotCopy, positions[i] >= 0, entity.attributes[positions[i]].type == copy.kind.attributeType {
                slotFields.append(SlotField(position: positions[i], copy: copy, in: entity))
                fields.append(slotFields.last)
            } else {
                codedAttributes.append(i)
                fields.append(nil)
            }
        }
        self.attributes = attributes
        self.positions = positions
        self.slotFields = slotFields
        (self.plainMoves, self.otherSlotFields) = PlainMoves.split(slotFields, layout: entity.valueLayout)
        self.codedAttributes = codedAttributes
        self.fields = fields
        self.keyPathIdentities = attributes.map { ObjectIdentifier($0.keyPath) }
        self.indexesByKeyPath = Dictionary(attributes.indices.map { (attributes[$0].keyPath as AnyKeyPath, $0) }) { first, _ in first }
        super.init(entity: entity, type: ObjectIdentifier(PlainObject.self))
    }

    /// `object` (of `entity`) as a plain value: `PlainObject()` with every declared attribute
    /// decoded into it.
    /// - Throws: `SkerryError.Code.undecodableValue` naming the entity and attribute of a stored
    ///   value that does not fit its property; `.unknownAttribute` for an attribute the entity
    ///   lacks; the errors of reading the object's values.
    func decode(_ object: EntityObject) throws(SkerryError) -> PlainObject {
        var value = PlainObject()
        if let failure = decode(object, into: &value) { throw failure.error }
        return value
    }

    /// ``decode(_:)`` into `value`, which holds `PlainObject()`, returning the error rather than
    /// throwing it: for a caller that borrows the layout in a closure (a typed `throws` does not
    /// pass through `Unmanaged._withUnsafeGuaranteedRef`). The error comes boxed: a reference is
    /// returned in a register, where a `SkerryError?` costs copies on the path without an error.
    @usableFromInline
    func decode(_ object: EntityObject, into value: UnsafeMutablePointer<PlainObject>) -> DecodeFailure? {
        // The common case (every attribute a slot field, of a registered, loaded object of a
        // context the calling thread owns, each value one its slot field takes) here; anything
        // else out of line, where the value a checked decode makes needs room of the generic
        // type's size on the stack, which this frame then does not set up per object.
        if codedAttributes.isEmpty, !slotFields.isEmpty, let storage = object.storageInPlace, read(storage, into: value) {
            return nil
        }
        return decodeOutOfLine(object, into: value)
    }

    /// ``decode(_:into:)`` through every check, with its errors. (A value the common case could
    /// not take is copied again here, then decoded through the codecs: each copy assigns the
    /// property, so copying twice changes nothing.)
    @inline(never)
    private func decodeOutOfLine(_ object: EntityObject, into value: UnsafeMutablePointer<PlainObject>) -> DecodeFailure? {
        do throws(SkerryError) {
            if !slotFields.isEmpty {
                // The object's values, read in place: no closure (`storageForReading` inlines the
                // checks' common case here).
                let storage = try object.storageForReading("decode()")
                // A value the copy could not take: the checked path decodes every attribute and
                // reports it.
                if !read(storage, into: value) {
                    value.pointee = try decodeChecked(object)
                    return nil
                }
            }
            for i in codedAttributes { try decode(i, of: object, into: &value.pointee) }
            return nil
        } catch {
            return DecodeFailure(error)
        }
    }

    /// Copies every slot field from `storage` (an object's values) into the value at `value`;
    /// false when one cannot be copied this way (for the checked path to report).
    @inline(__always)
    private func read(_ storage: UnsafeRawPointer, into value: UnsafeMutablePointer<PlainObject>) -> Bool {
        let base = UnsafeMutableRawPointer(value)
        guard plainMoves.read(from: storage, into: base) else { return false }
        for field in otherSlotFields where !field.read(from: storage, into: base) { return false }
        return true
    }

    /// ``decode(_:)`` attribute by attribute through the codecs.
    private func decodeChecked(_ object: EntityObject) throws(SkerryError) -> PlainObject {
        var value = PlainObject()
        for i in attributes.indices { try decode(i, of: object, into: &value) }
        return value
    }

    func decode(_ i: Int, of object: EntityObject, into value: inout PlainObject) throws(SkerryError) {
        let attribute = attributes[i]
        try attribute.decode(try object.value(at: try position(i), as: AttributeValue.self), into: &value)
    }

    /// Writes every declared attribute of `value` to `object` (of `entity`), throwing the first
    /// error (some attributes may have been written by then).
    func write(_ value: PlainObject, to object: EntityObject) throws(SkerryError) {
        if !slotFields.isEmpty {
            let copied = try object.withSlots(writing: "encode(_:)") { slots throws(SkerryError) in
                withUnsafeBytes(of: value) { bytes in
                    let base = bytes.baseAddress!
                    guard plainMoves.write(from: base, to: slots.base) else { return false }
                    for field in otherSlotFields where !field.write(from: base, to: slots) { return false }
                    return true
                }
            }
            // A value the copy could not take: the checked path writes every attribute and
            // reports it.
            if !copied {
                for i in attributes.indices { try write(i, of: value, to: object) }
                return
            }
        }
        for i in codedAttributes { try write(i, of: value, to: object) }
    }

    func write(_ i: Int, of value: PlainObject, to object: EntityObject) throws(SkerryError) {
        try object.setValue(try attributes[i].encodedValue(of: value), at: try position(i))
    }

    /// The position of `attributes[i]` in the entity, or the error of a model that lacks it.
    func position(_ i: Int) throws(SkerryError) -> Int {
        guard positions[i] >= 0 else {
            throw SkerryError(
                .unknownAttribute, "Entity '\(PlainObject.entityName)' has no attribute '\(attributes[i].name)'.",
                entityName: PlainObject.entityName, key: attributes[i].name)
        }
        return positions[i]
    }
}

/// The error of a decode, boxed (see ``TypeLayout/decode(_:into:)``).
@usableFromInline
final class DecodeFailure {
    @usableFromInline let error: SkerryError

    init(_ error: SkerryError) {
        self.error = error
    }
}

/// A few key paths and their attribute indexes, found by identity (see
/// ``TypeLayout/attributeIndex(of:)``). The key paths are kept alive, so that an identity cannot
/// come to name another key path.
struct RecentKeyPaths: ~Copyable {
    /// A key path held only to keep it alive.
    ///
    /// `@unchecked Sendable`: a key path is immutable, so holding it from any thread is safe (key
    /// paths are not `Sendable` in Swift 6 only because their root type might not be); it is
    /// never read here but for its identity.
    struct Held: @unchecked Sendable {
        let keyPath: AnyKeyPath
    }

    static let capacity = 8
    private var held: [Held] = []
    private var identities: [ObjectIdentifier] = []
    private var indexes: [Int] = []
    /// Where the next key path goes once the memo is full.
    private var next = 0

    /// The attribute index remembered for the key path of identity `identity`, or nil.
    @inline(__always)
    func index(of identity: ObjectIdentifier) -> Int? {
        for i in identities.indices where identities[i] == identity { return indexes[i] }
        return nil
    }

    /// Remembers `index` for `keyPath`, in place of the oldest key path once full.
    mutating func remember(_ keyPath: Held, _ index: Int) {
        if held.count < Self.capacity {
            held.append(keyPath)
            identities.append(ObjectIdentifier(keyPath.keyPath))
            indexes.append(index)
        } else {
            held[next] = keyPath
            identities[next] = ObjectIdentifier(keyPath.keyPath)
            indexes[next] = index
            next = (next + 1) % Self.capacity
        }
    }
}
