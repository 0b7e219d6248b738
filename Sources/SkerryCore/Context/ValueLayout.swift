import Foundation

/// How an entity's attribute values lie in an object's value storage: one block of memory per
/// object, a bitmap of which attributes hold a value, then one slot per attribute in its Swift
/// form (an `Int64` for integers and Booleans, a `Double` for floating-point numbers and dates, a
/// `String`, `Data`, `Decimal`, `UUID` or `URL`). Ten integers take 88 bytes.
///
/// The layout covers every attribute of the entity, whether a store keeps it or not, so that
/// attributes that live only in memory (transient ones) have their slots like the others.
///
/// A slot whose bit is clear holds nothing (no value, or not initialized yet): only slots with
/// their bit set are read or destroyed. Every function here takes a `base` allocated by
/// ``allocate()`` for this layout; none checks its arguments (the callers check the index and
/// the value's fit first). Immutable and shared, like the entity.
///
/// `@unchecked Sendable`: every property is a constant; the blocks of memory it owns
/// (`defaults` and the per-attribute tables) are written only while `init` runs and only read
/// afterwards.
@usableFromInline
package final class ValueLayout: @unchecked Sendable {
    /// The Swift form of a slot.
    enum Slot: UInt8, Sendable {
        case integer, double, string, data, decimal, uuid, url

        init(_ type: AttributeType) {
            switch type {
            case .boolean, .integer16, .integer32, .integer64: self = .integer
            case .float, .double, .date: self = .double
            case .string: self = .string
            case .binary: self = .data
            case .decimal: self = .decimal
            case .uuid: self = .uuid
            case .url: self = .url
            }
        }

        /// Whether values of this form hold references (and must be destroyed).
        var holdsReferences: Bool { self == .string || self == .data || self == .url }

        var size: Int {
            switch self {
            case .integer, .double: return 8
            case .string: return MemoryLayout<String>.size
            case .data: return MemoryLayout<Data>.size
            case .decimal: return MemoryLayout<Decimal>.size
            case .uuid: return MemoryLayout<UUID>.size
            case .url: return MemoryLayout<URL>.size
            }
        }

        var alignment: Int {
            switch self {
            case .integer, .double: return 8
            case .string: return MemoryLayout<String>.alignment
            case .data: return MemoryLayout<Data>.alignment
            case .decimal: return MemoryLayout<Decimal>.alignment
            case .uuid: return MemoryLayout<UUID>.alignment
            case .url: return MemoryLayout<URL>.alignment
            }
        }
    }

    /// Each attribute's type.
    package let types: [AttributeType]
    /// Each attribute's slot form.
    let slots: [Slot]
    /// Each attribute's slot offset from the start of the storage.
    package let offsets: [Int]
    /// The bytes of one object's storage (at least 8).
    @usableFromInline let size: Int
    /// The 64-bit words of the value bitmap at the start of the storage.
    @usableFromInline let bitmapWords: Int
    /// The attributes whose slots hold references.
    let referenceIndexes: [Int]
    /// Whether every slot is a plain integer (a copy of the bytes copies the values).
    let isAllIntegers: Bool
    /// The bits of the required attributes, word by word like the value bitmap.
    private let requiredBits: [UInt64]
    /// Storage holding each attribute's default value, which new objects start from (see
    /// ``initializeDefaults(_:)``). Written only by `init`; freed by `deinit`.
    private let defaults: UnsafeMutableRawPointer
    /// The number of attributes.
    @usableFromInline let count: Int
    /// `types`, `slots` and `offsets` as plain memory, for the per-value paths: no bounds check
    /// (callers check indexes first) and no reference counting of the arrays. (`offsetTable` is
    /// `@usableFromInline` for the initializers that stores in other modules inline.)
    @usableFromInline let typeTable: UnsafeMutablePointer<AttributeType>
    private let slotTable: UnsafeMutablePointer<Slot>
    @usableFromInline let offsetTable: UnsafeMutablePointer<Int>
    /// `referenceIndexes` as plain memory (`referenceCount` entries), for the teardown of every
    /// object: no reference counting of the array.
    private let referenceTable: UnsafeMutablePointer<Int>
    private let referenceCount: Int

    /// The layout of attributes of `types`, whose default values (`.null` for none, and for
    /// attributes past the end; one that does not fit its type is left out) new objects get, and
    /// of which those marked in `required` must have a value to be saved.
    init(types: [AttributeType], defaults defaultValues: [AttributeValue] = [], required: [Bool] = []) {
        self.types = types
        slots = types.map(Slot.init)
        bitmapWords = (types.count + 63) / 64
        var offset = bitmapWords * 8
        var offsets: [Int] = []
        offsets.reserveCapacity(types.count)
        for slot in slots {
            // An object's own room for its values is aligned to 8 bytes only (`EntityObject.Memory`
            // is a buffer of 8-byte words): a slot form that needed more would be misaligned there.
            precondition(slot.alignment <= MemoryLayout<UInt64>.alignment, "a value slot needs more than 8-byte alignment")
            offset = (offset + slot.alignment - 1) / slot.alignment * slot.alignment
            offsets.append(offset)
            offset += slot.size
        }
        self.offsets = offsets
        size = max(8, (offset + 7) / 8 * 8)
        let slots = self.slots
        referenceIndexes = slots.indices.filter { slots[$0].holdsReferences }
        isAllIntegers = slots.allSatisfy { $0 == .integer }
        var requiredBits = [UInt64](repeating: 0, count: bitmapWords)
        for (index, isRequired) in zip(types.indices, required) where isRequired {
            requiredBits[index >> 6] |= 1 << UInt64(index & 63)
        }
        self.requiredBits = requiredBits
        count = types.count
        typeTable = .allocate(capacity: max(1, types.count))
        typeTable.initialize(from: types, count: types.count)
        slotTable = .allocate(capacity: max(1, types.count))
        slotTable.initialize(from: slots, count: types.count)
        offsetTable = .allocate(capacity: max(1, types.count))
        offsetTable.initialize(from: offsets, count: types.count)
        referenceCount = referenceIndexes.count
        referenceTable = .allocate(capacity: max(1, referenceIndexes.count))
        referenceTable.initialize(from: referenceIndexes, count: referenceIndexes.count)
        // Every byte initialized, so that a copy of the whole block reads no uninitialized memory.
        defaults = Self.allocateBlock(size)
        defaults.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        // A default that does not fit its attribute (which model validation rejects later) is
        // left out: storing it would write past its slot.
        for (index, value) in zip(types.indices, defaultValues) where !value.isNull && value.fits(types[index]) {
            store(defaults, index, value)
        }
    }

    deinit {
        deallocate(defaults)
        typeTable.deallocate()
        slotTable.deallocate()
        offsetTable.deallocate()
        referenceTable.deallocate()
    }

    /// The type of attribute `index` (a valid index).
    @inlinable @inline(__always)
    func type(at index: Int) -> AttributeType { typeTable[index] }

    /// The slot form of attribute `index` (a valid index).
    @inline(__always)
    func slot(at index: Int) -> Slot { slotTable[index] }

    // MARK: Storage

    /// New storage with no value set. Inlinable, like the initializers below, so that a store in
    /// another module (PostgreSQL's row reading) fills storage without a call per value.
    @inlinable @inline(__always)
    package func allocate() -> UnsafeMutableRawPointer {
        let base = Self.allocateBlock(size)
        clearBitmap(base)
        return base
    }

    /// Clears the value bitmap of `base` (uninitialized or holding no value to destroy): one store
    /// for up to 64 attributes, not a call to `memset`.
    @inlinable @inline(__always)
    package func clearBitmap(_ base: UnsafeMutableRawPointer) {
        base.storeBytes(of: 0, as: UInt64.self) // (every layout has 8 bytes at least)
        if bitmapWords > 1 { (base + 8).initializeMemory(as: UInt64.self, repeating: 0, count: bitmapWords - 1) }
    }

    /// `size` bytes from `malloc`, whose blocks are aligned for every slot form (16 bytes on the
    /// platforms Swift runs on). Not `UnsafeMutableRawPointer.allocate`: with default alignment
    /// it goes through `posix_memalign`, about three times the cost of `malloc` per object.
    @usableFromInline @inline(__always)
    static func allocateBlock(_ size: Int) -> UnsafeMutableRawPointer {
        guard let base = malloc(size) else { fatalError("Skerry: out of memory allocating \(size) bytes of object values") }
        return base
    }

    /// New storage holding `values` (indexed like the attributes, each fitting its attribute).
    func allocate(holding values: [AttributeValue]) -> UnsafeMutableRawPointer {
        let base = allocate()
        store(values, into: base)
        return base
    }

    /// Sets the attributes of `base` (holding no value) to `values` (indexed like the attributes,
    /// each fitting its attribute).
    package func store(_ values: [AttributeValue], into base: UnsafeMutableRawPointer) {
        for index in values.indices where !values[index].isNull { store(base, index, values[index]) }
    }

    /// Fills `base` (uninitialized memory of `size` bytes, such as an object's room for its
    /// values) with the attributes' default values: a copy of the bytes when no slot holds
    /// references, else a copy of each default value. Returns `base`.
    @inline(__always)
    func initializeDefaults(_ base: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        if referenceIndexes.isEmpty {
            base.copyMemory(from: defaults, byteCount: size)
        } else {
            base.initializeMemory(as: UInt64.self, repeating: 0, count: bitmapWords)
            copy(defaults, to: base)
        }
        return base
    }

    /// Destroys the values of `base` and frees it.
    @inline(__always)
    package func deallocate(_ base: UnsafeMutableRawPointer) {
        destroyValues(base)
        free(base)
    }

    /// Destroys every value of `base` that holds references, leaving the bitmap as it is: the
    /// per-object part of a context's teardown. Only for storage that is freed, or dropped by its
    /// object (`storage = nil`), right after: the bitmap still marks the destroyed values, so a
    /// later `store`, `clear` or destroy of the same storage would destroy them a second time.
    @inline(__always)
    func destroyValues(_ base: UnsafeMutableRawPointer) {
        for position in 0..<referenceCount {
            let index = referenceTable[position]
            if hasValue(base, index) { destroy(base, index) }
        }
    }

    /// Destroys every value of `base`, leaving none set.
    func clear(_ base: UnsafeMutableRawPointer) {
        destroyValues(base)
        base.initializeMemory(as: UInt64.self, repeating: 0, count: bitmapWords)
    }

    /// Whether every required attribute has a value in `base`. Complexity: O(attributes / 64).
    @inline(__always)
    func hasEveryRequiredValue(_ base: UnsafeRawPointer) -> Bool {
        for word in requiredBits.indices {
            let required = requiredBits[word]
            if base.load(fromByteOffset: word << 3, as: UInt64.self) & required != required { return false }
        }
        return true
    }

    @inlinable @inline(__always)
    func hasValue(_ base: UnsafeRawPointer, _ index: Int) -> Bool {
        base.load(fromByteOffset: (index >> 6) << 3, as: UInt64.self) & (1 << UInt64(index & 63)) != 0
    }

    @inlinable @inline(__always)
    func setBit(_ base: UnsafeMutableRawPointer, _ index: Int, _ on: Bool) {
        let word = base.advanced(by: (index >> 6) << 3).assumingMemoryBound(to: UInt64.self)
        if on { word.pointee |= 1 << UInt64(index & 63) } else { word.pointee &= ~(1 << UInt64(index & 63)) }
    }

    /// Destroys the value in slot `index` (set, holding references); leaves its bit as it is.
    private func destroy(_ base: UnsafeMutableRawPointer, _ index: Int) {
        let slot = base + offsetTable[index]
        switch slotTable[index] {
        case .string: slot.assumingMemoryBound(to: String.self).deinitialize(count: 1)
        case .data: slot.assumingMemoryBound(to: Data.self).deinitialize(count: 1)
        case .url: slot.assumingMemoryBound(to: URL.self).deinitialize(count: 1)
        case .integer, .double, .decimal, .uuid: break
        }
    }

    // MARK: Reading

    /// The value of attribute `index`.
    @inline(__always)
    func load(_ base: UnsafeRawPointer, _ index: Int) -> AttributeValue {
        guard hasValue(base, index) else { return .null }
        let slot = base + offsetTable[index]
        switch typeTable[index] {
        case .boolean: return .bool(slot.load(as: Int64.self) != 0)
        case .integer16, .integer32, .integer64: return .int(slot.load(as: Int64.self))
        case .float, .double: return .double(slot.load(as: Double.self))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: slot.load(as: Double.self)))
        case .string: return .string(slot.assumingMemoryBound(to: String.self).pointee)
        case .binary: return .data(slot.assumingMemoryBound(to: Data.self).pointee)
        case .decimal: return .decimal(slot.loadUnaligned(as: Decimal.self))
        case .uuid: return .uuid(slot.loadUnaligned(as: UUID.self))
        case .url: return .url(slot.assumingMemoryBound(to: URL.self).pointee)
        }
    }

    /// The integer (or Boolean as 0/1) in slot `index`, or nil when it holds no value.
    @inline(__always)
    func loadInteger(_ base: UnsafeRawPointer, _ index: Int) -> Int64? {
        hasValue(base, index) ? base.load(fromByteOffset: offsetTable[index], as: Int64.self) : nil
    }

    /// The floating-point number (or date as seconds since the reference date) in slot `index`.
    @inline(__always)
    func loadDouble(_ base: UnsafeRawPointer, _ index: Int) -> Double? {
        hasValue(base, index) ? base.load(fromByteOffset: offsetTable[index], as: Double.self) : nil
    }

    /// The string in slot `index`.
    @inline(__always)
    func loadString(_ base: UnsafeRawPointer, _ index: Int) -> String? {
        hasValue(base, index) ? (base + offsetTable[index]).assumingMemoryBound(to: String.self).pointee : nil
    }

    // MARK: Writing

    /// Sets attribute `index` to `value`, which fits the attribute's type (`.null` clears it).
    package func store(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: AttributeValue) {
        if hasValue(base, index) && slotTable[index].holdsReferences { destroy(base, index) }
        let slot = base + offsetTable[index]
        switch value {
        case .null:
            setBit(base, index, false)
            return
        case .bool(let v): slot.storeBytes(of: v ? Int64(1) : 0, as: Int64.self)
        case .int(let v): slot.storeBytes(of: v, as: Int64.self)
        case .double(let v): slot.storeBytes(of: v, as: Double.self)
        case .date(let v): slot.storeBytes(of: v.timeIntervalSinceReferenceDate, as: Double.self)
        case .string(let v): slot.initializeMemory(as: String.self, repeating: v, count: 1)
        case .data(let v): slot.initializeMemory(as: Data.self, repeating: v, count: 1)
        case .decimal(let v): slot.storeBytes(of: v, toByteOffset: 0, as: Decimal.self)
        case .uuid(let v): slot.storeBytes(of: v, toByteOffset: 0, as: UUID.self)
        case .url(let v): slot.initializeMemory(as: URL.self, repeating: v, count: 1)
        }
        setBit(base, index, true)
    }

    /// Sets attribute `index`, an integer or Boolean attribute, holding no value yet.
    @inlinable @inline(__always)
    package func initializeInteger(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: Int64) {
        base.storeBytes(of: value, toByteOffset: offsetTable[index], as: Int64.self)
        setBit(base, index, true)
    }

    /// Sets attribute `index`, a floating-point or date attribute, holding no value yet.
    @inlinable @inline(__always)
    package func initializeDouble(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: Double) {
        base.storeBytes(of: value, toByteOffset: offsetTable[index], as: Double.self)
        setBit(base, index, true)
    }

    /// Sets attribute `index`, a string attribute, holding no value yet.
    @inlinable @inline(__always)
    package func initializeString(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: String) {
        (base + offsetTable[index]).initializeMemory(as: String.self, repeating: value, count: 1)
        setBit(base, index, true)
    }

    /// The string of a stored text value's UTF-8 bytes (a SQLite or PostgreSQL text cell): the
    /// string `String(decoding:as: UTF8.self)` makes (invalid UTF-8 repaired the same way), made
    /// faster for short text. A string of at most 15 bytes, which Swift keeps inside the string
    /// value with no allocation, is copied straight into it and checked for ASCII with one mask
    /// (the standard library's path; other bytes are validated and repaired there as by the
    /// general decoder), rather than going through the general decoder: 85 instructions per short
    /// string instead of 178 (callgrind, the benchmarks' 40,000-row PostgreSQL fetch of mixed
    /// rows, two strings of 5 to 10 bytes per row). Inlinable, for the stores' row reading.
    @inlinable @inline(__always)
    package static func string(utf8 raw: UnsafeRawBufferPointer) -> String {
        let count = raw.count
        guard count <= 15 else { return String(decoding: raw, as: UTF8.self) }
        guard count > 0, let source = raw.baseAddress else { return "" }
        return String(unsafeUninitializedCapacity: count) { buffer in
            // `buffer` has room for `count` bytes (what was asked), `source` holds `count`: the
            // bytes are copied with two loads and two stores, which overlap for lengths that are
            // not 8 or 4, all within both ranges (no call to `memcpy`).
            let target = UnsafeMutableRawPointer(buffer.baseAddress!)
            if count >= 8 {
                target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
                target.storeBytes(
                    of: source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self), toByteOffset: count - 8, as: UInt64.self)
            } else if count >= 4 {
                target.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
                target.storeBytes(
                    of: source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self), toByteOffset: count - 4, as: UInt32.self)
            } else {
                for offset in 0..<count {
                    target.storeBytes(of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
                }
            }
            return count
        }
    }

    /// Sets attribute `index`, an integer or Boolean attribute, to `value`.
    @inline(__always)
    func storeInteger(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: Int64) {
        initializeInteger(base, index, value)
    }

    /// Sets attribute `index`, a floating-point or date attribute, to `value`.
    @inline(__always)
    func storeDouble(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: Double) {
        initializeDouble(base, index, value)
    }

    /// Sets attribute `index`, a string attribute, to `value`, replacing the string it held.
    @inline(__always)
    func storeString(_ base: UnsafeMutableRawPointer, _ index: Int, _ value: String) {
        let slot = (base + offsetTable[index]).assumingMemoryBound(to: String.self)
        if hasValue(base, index) {
            slot.pointee = value
        } else {
            slot.initialize(to: value)
            setBit(base, index, true)
        }
    }

    /// Copies every value of `source` into `destination` (which holds none).
    func copy(_ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        if referenceIndexes.isEmpty {
            destination.copyMemory(from: source, byteCount: size)
            return
        }
        for index in types.indices where hasValue(source, index) { store(destination, index, load(source, index)) }
    }
}
