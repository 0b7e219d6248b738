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

/// One property a ``TypeLayout`` copies slot to slot: its copy and the attribute's index in the
/// entity, whose type is `copy.kind.attributeType`.
struct SlotField: Sendable {
    let position: Int
    let copy: SlotCopy

    /// Sets this field of the value at `base` (a model value's memory) from `slots`; false when
    /// it cannot be done this way (a required attribute without a value, an integer out of the
    /// property's range), for the checked path to report.
    @inline(__always)
    func read(from slots: ObjectSlots, into base: UnsafeMutableRawPointer) -> Bool {
        let field = base + copy.offset
        switch copy.kind {
        case .int64: return put(slots.integer(at: position), field)
        case .int:
            guard let value = slots.integer(at: position) else { return put(Int?.none, field) }
            guard let narrow = Int(exactly: value) else { return false } // only on 32-bit platforms
            return put(narrow, field)
        case .int32:
            guard let value = slots.integer(at: position) else { return put(Int32?.none, field) }
            guard let narrow = Int32(exactly: value) else { return false }
            return put(narrow, field)
        case .int16:
            guard let value = slots.integer(at: position) else { return put(Int16?.none, field) }
            guard let narrow = Int16(exactly: value) else { return false }
            return put(narrow, field)
        case .bool: return put(slots.integer(at: position).map { $0 != 0 }, field)
        case .double: return put(slots.double(at: position), field)
        case .date: return put(slots.double(at: position).map { Date(timeIntervalSinceReferenceDate: $0) }, field)
        case .string: return put(slots.string(at: position), field)
        }
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
