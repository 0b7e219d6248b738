import SkerryCore

/// The slot fields of a ``TypeLayout`` whose value is the same eight bytes in the property and in
/// the slot: required `Int64` (and `Int` on 64-bit platforms) properties of `integer64`
/// attributes, and required `Double` properties of `double` attributes. A whole-object copy
/// moves them as plain words, after one check of the value bitmap for all of them, instead of a
/// ``SlotField`` read or write each (a switch on the kind, a bit test and an optional per value).
struct PlainMoves: Sendable {
    /// One property: the byte offsets of its slot in the object's storage and of the property in
    /// a value of the model type.
    struct Move: Sendable {
        let slot: Int
        let field: Int
    }

    /// Integer moves, then double moves from `firstDouble` on (a double written must not be NaN).
    private let moves: [Move]
    private let firstDouble: Int
    /// Per 64-bit word of the value bitmap, the bits of the moved attributes.
    private let bits: [UInt64]

    /// The plain moves among `fields` (whose slots `layout` lays out), and the fields left.
    static func split(_ fields: [SlotField], layout: ValueLayout) -> (PlainMoves, rest: [SlotField]) {
        var integers: [Move] = []
        var doubles: [Move] = []
        var rest: [SlotField] = []
        var bits = [UInt64](repeating: 0, count: (layout.offsets.count + 63) / 64)
        for field in fields {
            let move = Move(slot: layout.offsets[field.position], field: field.copy.offset)
            switch field.copy.kind {
            case .int64 where !field.copy.isOptional: integers.append(move)
            case .int where !field.copy.isOptional && MemoryLayout<Int>.size == 8: integers.append(move)
            case .double where !field.copy.isOptional: doubles.append(move)
            default:
                rest.append(field)
                continue
            }
            bits[field.position >> 6] |= 1 << UInt64(field.position & 63)
        }
        return (PlainMoves(moves: integers + doubles, firstDouble: integers.count, bits: bits), rest)
    }

    var isEmpty: Bool { moves.isEmpty }

    /// Copies every moved slot of `storage` into the value at `base`; false, having copied
    /// nothing, when one of them holds no value (for the checked path to report).
    @inline(__always)
    func read(from storage: UnsafeRawPointer, into base: UnsafeMutableRawPointer) -> Bool {
        for word in bits.indices {
            let mask = bits[word]
            if storage.load(fromByteOffset: word << 3, as: UInt64.self) & mask != mask { return false }
        }
        for move in moves {
            base.storeBytes(of: storage.load(fromByteOffset: move.slot, as: UInt64.self), toByteOffset: move.field, as: UInt64.self)
        }
        return true
    }

    /// Copies every moved property of the value at `base` into its slot of `storage`, which then
    /// holds a value; false when a double is NaN (SQLite would store it as NULL), for the
    /// checked path to report (some slots may have been written by then).
    @inline(__always)
    func write(from base: UnsafeRawPointer, to storage: UnsafeMutableRawPointer) -> Bool {
        for i in moves.indices {
            let move = moves[i]
            let word = base.load(fromByteOffset: move.field, as: UInt64.self)
            if i >= firstDouble && Double(bitPattern: word).isNaN { return false }
            storage.storeBytes(of: word, toByteOffset: move.slot, as: UInt64.self)
        }
        for word in bits.indices where bits[word] != 0 {
            let bitmap = storage + (word << 3)
            bitmap.storeBytes(of: bitmap.load(as: UInt64.self) | bits[word], as: UInt64.self)
        }
        return true
    }
}
