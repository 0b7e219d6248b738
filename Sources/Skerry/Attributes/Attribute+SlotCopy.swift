import Foundation
import SkerryCore

/// How a stored property of a model type moves straight between a plain value's memory and an
/// object's value slot, without an `AttributeValue`, a key path or a codec in between: the
/// property's byte offset in the value (`MemoryLayout.offset(of:)`) and its Swift type.
///
/// Only the primitives the slots hold as they are qualify (`Int64`, `Int`, `Int32`, `Int16`,
/// `Bool`, `Double`, `Date`, `String`, and their optionals), and only stored properties of a
/// struct (a class's or a computed property's key path has no offset); the others take the
/// checked path through the attribute's codec.
struct SlotCopy: Sendable {
    /// The property's Swift type.
    enum Kind: Sendable {
        case int64, int, int32, int16, bool, double, date, string

        init?(_ type: Any.Type) {
            switch ObjectIdentifier(type) {
            case ObjectIdentifier(Int64.self): self = .int64
            case ObjectIdentifier(Int.self): self = .int
            case ObjectIdentifier(Int32.self): self = .int32
            case ObjectIdentifier(Int16.self): self = .int16
            case ObjectIdentifier(Bool.self): self = .bool
            case ObjectIdentifier(Double.self): self = .double
            case ObjectIdentifier(Date.self): self = .date
            case ObjectIdentifier(String.self): self = .string
            default: return nil
            }
        }

        /// The Swift type itself.
        var swiftType: Any.Type {
            switch self {
            case .int64: return Int64.self
            case .int: return Int.self
            case .int32: return Int32.self
            case .int16: return Int16.self
            case .bool: return Bool.self
            case .double: return Double.self
            case .date: return Date.self
            case .string: return String.self
            }
        }

        /// The attribute type whose slot holds this type's values as they are.
        var attributeType: AttributeType {
            switch self {
            case .int64, .int: return .integer64
            case .int32: return .integer32
            case .int16: return .integer16
            case .bool: return .boolean
            case .double: return .double
            case .date: return .date
            case .string: return .string
            }
        }
    }

    /// The property's offset in a value of the model type.
    let offset: Int
    let kind: Kind
    /// Whether the property is an `Optional` of `kind`.
    let isOptional: Bool

    /// The copy of the property `keyPath` of type `value` (or `value?` when `isOptional`), or nil
    /// when it does not qualify.
    init?<Root>(_ root: Root.Type, _ keyPath: PartialKeyPath<Root>, _ value: Any.Type, isOptional: Bool) {
        guard let kind = Kind(value), let offset = MemoryLayout<Root>.offset(of: keyPath) else { return nil }
        self.offset = offset
        self.kind = kind
        self.isOptional = isOptional
    }
}

/// One property a ``TypeLayout`` copies slot to slot: its copy, the attribute's index in the
/// entity, whose type is `copy.kind.attributeType`, and the byte offset of its slot.
struct SlotField: Sendable {
    let position: Int
    let copy: SlotCopy
    /// The offset of the attribute's slot in the object's values (`ValueLayout.offsets`): reads
    /// take the value straight from the values' memory (`EntityObject.storageForReading(_:)`),
    /// as ``PlainMoves`` does.
    let slot: Int

    /// The field of attribute `position` of `entity`, whose type is `copy.kind.attributeType`.
    init(position: Int, copy: SlotCopy, in entity: EntityDescription) {
        self.position = position
        self.copy = copy
        slot = entity.valueLayout.offsets[position]
    }

    /// Sets this field of the value at `base` (a model value's memory) from `storage` (the
    /// object's values); false when it cannot be done this way (a required attribute without a
    /// value, an integer out of the property's range), for the checked path to report.
    @inline(__always)
    func read(from storage: UnsafeRawPointer, into base: UnsafeMutableRawPointer) -> Bool {
        let field = base + copy.offset
        switch copy.kind {
        case .int64: return put(integer(in: storage), field)
        case .int:
            guard let value = integer(in: storage) else { return put(Int?.none, field) }
            guard let narrow = Int(exactly: value) else { return false } // only on 32-bit platforms
            return put(narrow, field)
        case .int32:
            guard let value = integer(in: storage) else { return put(Int32?.none, field) }
            guard let narrow = Int32(exactly: value) else { return false }
            return put(narrow, field)
        case .int16:
            guard let value = integer(in: storage) else { return put(Int16?.none, field) }
            guard let narrow = Int16(exactly: value) else { return false }
            return put(narrow, field)
        case .bool: return put(integer(in: storage).map { $0 != 0 }, field)
        case .double: return put(double(in: storage), field)
        case .date: return put(double(in: storage).map { Date(timeIntervalSinceReferenceDate: $0) }, field)
        case .string: return put(string(in: storage), field)
        }
    }

    /// Whether the attribute holds a value in `storage`: its bit in the value bitmap, which
    /// starts the values (one bit per attribute, in 64-bit words).
    @inline(__always)
    private func hasValue(in storage: UnsafeRawPointer) -> Bool {
        storage.load(fromByteOffset: (position >> 6) << 3, as: UInt64.self) & (1 << UInt64(position & 63)) != 0
    }

    /// The integer (a Boolean as 0 or 1) in the slot, or nil when it holds no value.
    @inline(__always)
    private func integer(in storage: UnsafeRawPointer) -> Int64? {
        hasValue(in: storage) ? storage.load(fromByteOffset: slot, as: Int64.self) : nil
    }

    /// The floating-point number (a date as seconds since 2001-01-01) in the slot, or nil.
    @inline(__always)
    private func double(in storage: UnsafeRawPointer) -> Double? {
        hasValue(in: storage) ? storage.load(fromByteOffset: slot, as: Double.self) : nil
    }

    /// A copy of the string in the slot, or nil.
    @inline(__always)
    private func string(in storage: UnsafeRawPointer) -> String? {
        hasValue(in: storage) ? (storage + slot).assumingMemoryBound(to: String.self).pointee : nil
    }

    /// Sets the slot from this field of the value at `base`; false when it cannot be done this
    /// way (NaN), for the checked path to report.
    @inline(__always)
    func write(from base: UnsafeRawPointer, to slots: ObjectSlots) -> Bool {
        let field = base + copy.offset
        switch copy.kind {
        case .int64: setInteger(get(field, Int64.self), slots)
        case .int: setInteger(get(field, Int.self).map { Int64($0) }, slots)
        case .int32: setInteger(get(field, Int32.self).map { Int64($0) }, slots)
        case .int16: setInteger(get(field, Int16.self).map { Int64($0) }, slots)
        case .bool: setInteger(get(field, Bool.self).map { $0 ? 1 : 0 }, slots)
        case .double:
            let value = get(field, Double.self)
            if value?.isNaN == true { return false }
            setDouble(value, slots)
        case .date:
            let value = get(field, Date.self)?.timeIntervalSinceReferenceDate
            if value?.isNaN == true { return false }
            setDouble(value, slots)
        case .string:
            if let value = get(field, String.self) { slots.setString(value, at: position) } else { slots.clear(at: position) }
        }
        return true
    }

    /// Assigns `value` to the property at `field`: a `T?` property takes it as it is, a `T`
    /// property only a value (false for nil).
    @inline(__always)
    private func put<T>(_ value: T?, _ field: UnsafeMutableRawPointer) -> Bool {
        if copy.isOptional {
            field.assumingMemoryBound(to: T?.self).pointee = value
            return true
        }
        guard let value else { return false }
        field.assumingMemoryBound(to: T.self).pointee = value
        return true
    }

    /// The property at `field`, a `T` or `T?`.
    @inline(__always)
    private func get<T>(_ field: UnsafeRawPointer, _: T.Type) -> T? {
        copy.isOptional ? field.assumingMemoryBound(to: T?.self).pointee : field.assumingMemoryBound(to: T.self).pointee
    }

    @inline(__always)
    private func setInteger(_ value: Int64?, _ slots: ObjectSlots) {
        if let value { slots.setInteger(value, at: position) } else { slots.clear(at: position) }
    }

    @inline(__always)
    private func setDouble(_ value: Double?, _ slots: ObjectSlots) {
        if let value { slots.setDouble(value, at: position) } else { slots.clear(at: position) }
    }
}

/// One attribute's value moved alone between a value of its property's type and the object's
/// slot, for the single-attribute `decode(_:)` and `encode(_:_:)` of a ``ManagedObject``. The
/// generic code on either side only reinterprets a ``PropertyValue``'s payload as the property's
/// type (``SlotField/holds(_:)`` checks it is that type), so it needs no metadata but `Value`'s:
/// no `Optional<Value>`, no key path projection, no codec.
enum PropertyValue {
    /// No value (nil).
    case none
    case int64(Int64)
    case int(Int)
    case int32(Int32)
    case int16(Int16)
    case bool(Bool)
    case double(Double)
    case date(Date)
    case string(String)

    /// The payload as `Value`, which is its Swift type (the caller checked it with
    /// ``SlotField/holds(_:)``), of a value that is not ``none``. (Not an optional: in generic code
    /// a `Value?` would look `Optional<Value>`'s metadata up at run time.)
    @inline(__always)
    func payload<Value>(as _: Value.Type) -> Value {
        switch self {
        case .none: preconditionFailure("PropertyValue.payload of none")
        case .int64(let value): return unsafeBitCast(value, to: Value.self)
        case .int(let value): return unsafeBitCast(value, to: Value.self)
        case .int32(let value): return unsafeBitCast(value, to: Value.self)
        case .int16(let value): return unsafeBitCast(value, to: Value.self)
        case .bool(let value): return unsafeBitCast(value, to: Value.self)
        case .double(let value): return unsafeBitCast(value, to: Value.self)
        case .date(let value): return unsafeBitCast(value, to: Value.self)
        case .string(let value): return unsafeBitCast(value, to: Value.self)
        }
    }

    /// Whether it is ``none``.
    @inline(__always)
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}

extension SlotField {
    /// Whether `Value` is the property's own type (`T` for a `T` or a `T?` property): the only type
    /// a ``PropertyValue`` of this field may be reinterpreted as, or made from.
    @inline(__always)
    func holds<Value>(_: Value.Type) -> Bool {
        ObjectIdentifier(Value.self) == ObjectIdentifier(copy.kind.swiftType)
    }

    /// The field's value in `storage` (the object's values), or nil when it cannot be read this
    /// way (a stored integer the property cannot hold), for the checked path to report.
    @inline(__always)
    func propertyValue(in storage: UnsafeRawPointer) -> PropertyValue? {
        switch copy.kind {
        case .int64: return integer(in: storage).map { .int64($0) } ?? PropertyValue.none
        case .int:
            guard let value = integer(in: storage) else { return PropertyValue.none }
            return Int(exactly: value).map { .int($0) } // nil only on 32-bit platforms
        case .int32:
            guard let value = integer(in: storage) else { return PropertyValue.none }
            return Int32(exactly: value).map { .int32($0) }
        case .int16:
            guard let value = integer(in: storage) else { return PropertyValue.none }
            return Int16(exactly: value).map { .int16($0) }
        case .bool: return integer(in: storage).map { .bool($0 != 0) } ?? PropertyValue.none
        case .double: return double(in: storage).map { .double($0) } ?? PropertyValue.none
        case .date: return double(in: storage).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? PropertyValue.none
        case .string: return string(in: storage).map { .string($0) } ?? PropertyValue.none
        }
    }

    /// `value`, a value of the property's type (which the caller checked with ``holds(_:)``).
    @inline(__always)
    func propertyValue<Value>(_ value: Value) -> PropertyValue {
        assert(holds(Value.self), "SlotField: \(Value.self) is not \(copy.kind.swiftType)")
        switch copy.kind {
        case .int64: return .int64(unsafeBitCast(value, to: Int64.self))
        case .int: return .int(unsafeBitCast(value, to: Int.self))
        case .int32: return .int32(unsafeBitCast(value, to: Int32.self))
        case .int16: return .int16(unsafeBitCast(value, to: Int16.self))
        case .bool: return .bool(unsafeBitCast(value, to: Bool.self))
        case .double: return .double(unsafeBitCast(value, to: Double.self))
        case .date: return .date(unsafeBitCast(value, to: Date.self))
        case .string: return .string(unsafeBitCast(value, to: String.self))
        }
    }

    /// Whether ``store(_:in:)`` can take `value`: not NaN (SQLite would store it as NULL), which
    /// the checked path reports.
    @inline(__always)
    func canStore(_ value: PropertyValue) -> Bool {
        switch value {
        case .double(let number): return !number.isNaN
        case .date(let date): return !date.timeIntervalSinceReferenceDate.isNaN
        default: return true
        }
    }

    /// Sets the slot to `value`, a value of this field's kind (or none) that ``canStore(_:)``.
    @inline(__always)
    func store(_ value: PropertyValue, in slots: ObjectSlots) {
        switch value {
        case .none: slots.clear(at: position)
        case .int64(let value): slots.setInteger(value, at: position)
        case .int(let value): slots.setInteger(Int64(value), at: position)
        case .int32(let value): slots.setInteger(Int64(value), at: position)
        case .int16(let value): slots.setInteger(Int64(value), at: position)
        case .bool(let value): slots.setInteger(value ? 1 : 0, at: position)
        case .double(let value): slots.setDouble(value, at: position)
        case .date(let value): slots.setDouble(value.timeIntervalSinceReferenceDate, at: position)
        case .string(let value): slots.setString(value, at: position)
        }
    }
}
