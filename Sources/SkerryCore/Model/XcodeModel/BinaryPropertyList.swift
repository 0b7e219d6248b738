import Foundation

/// A value of a binary property list (`bplist00`), as Foundation's keyed archives write them:
/// what a mapping model's value expressions are stored as. Read by hand because Foundation on
/// Linux hides the values of keyed-archive UIDs.
indirect enum PropertyListValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case real(Double)
    case date(Double)
    case data(Data)
    case string(String)
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let dictionary) = self { return dictionary[key] }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

/// Reads a binary property list.
struct BinaryPropertyList {
    /// Counts the objects read, so that a list whose objects share children cannot make the
    /// reader build an exponential tree.
    private final class Budget {
        var remaining: Int
        init(_ remaining: Int) { self.remaining = remaining }
    }

    private let budget: Budget
    private let bytes: [UInt8]
    private let offsets: [Int]
    private let referenceSize: Int

    /// Why a property list could not be read.
    struct Failure: Error {
        let reason: String
    }

    /// Parses `data`; returns its top object.
    /// - Parameter budget: the most objects read (shared ones count each time they are reached).
    static func parse(_ data: Data, budget: Int = 100_000) throws(Failure) -> PropertyListValue {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, Array(bytes.prefix(8)) == Array("bplist00".utf8) else {
            throw Failure(reason: "not a binary property list")
        }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        let count = Self.integer(bytes, trailer + 8, 8), top = Self.integer(bytes, trailer + 16, 8)
        let tableStart = Self.integer(bytes, trailer + 24, 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count < 1_000_000, top >= 0, top < count,
            tableStart >= 8, tableStart <= trailer, count * offsetSize <= trailer - tableStart
        else { throw Failure(reason: "a damaged trailer") }
        let offsets = (0..<count).map { Self.integer(bytes, tableStart + $0 * offsetSize, offsetSize) }
        let list = BinaryPropertyList(budget: Budget(budget), bytes: bytes, offsets: offsets, referenceSize: referenceSize)
        return try list.object(top, depth: 0)
    }

    /// The big-endian unsigned integer of `size` bytes at `start` (bytes past the end read as
    /// none); wraps rather than traps on a hostile size.
    private static func integer(_ bytes: [UInt8], _ start: Int, _ size: Int) -> Int {
        guard start >= 0, size > 0, start < bytes.count else { return 0 }
        var value = 0
        for index in start..<min(start &+ size, bytes.count) { value = (value &<< 8) | Int(bytes[index]) }
        return value
    }

    private func object(_ reference: Int, depth: Int) throws(Failure) -> PropertyListValue {
        guard depth < 64 else { throw Failure(reason: "objects nested too deep") }
        budget.remaining -= 1
        guard budget.remaining >= 0 else { throw Failure(reason: "too many objects") }
        guard reference >= 0, reference < offsets.count, offsets[reference] >= 0, offsets[reference] < bytes.count else {
            throw Failure(reason: "a reference out of range")
        }
        var position = offsets[reference]
        let marker = bytes[position]
        position += 1
        let kind = marker >> 4, low = Int(marker & 0x0F)
        func length() throws(Failure) -> Int {
            guard low == 0x0F else { return low }
            guard position < bytes.count, bytes[position] >> 4 == 1 else { throw Failure(reason: "a bad length") }
            let size = 1 << Int(bytes[position] & 0x0F)
            let value = Self.integer(bytes, position + 1, size)
            position += 1 + size
            guard value >= 0, value <= bytes.count else { throw Failure(reason: "a length past the end") }
            return value
        }
        func take(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard count >= 0, position + count <= bytes.count else { throw Failure(reason: "an object past the end") }
            defer { position += count }
            return bytes[position..<(position + count)]
        }
        switch kind {
        case 0x0:
            return low == 0x09 ? .bool(true) : (low == 0x08 ? .bool(false) : .null)
        case 0x1:
            let size = 1 << min(low, 4)
            let raw = UInt64(truncatingIfNeeded: Self.integer(bytes, position, min(size, 8)))
            return .int(size >= 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2:
            let slice = try take(1 << min(low, 3))
            let bits = slice.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
            return .real(low == 2 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))) : Double(bitPattern: bits))
        case 0x3:
            let slice = try take(8)
            return .date(Double(bitPattern: slice.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }))
        case 0x4:
            return .data(Data(try take(try length())))
        case 0x5:
            return .string(String(decoding: try take(try length()), as: UTF8.self))
        case 0x6:
            let slice = try take(try length() * 2)
            let units = stride(from: slice.startIndex, to: slice.endIndex, by: 2).map { UInt16(slice[$0]) << 8 | UInt16(slice[$0 + 1]) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            return .uid(Self.integer(bytes, position, low + 1))
        case 0xA, 0xD:
            let count = try length()
            guard position + count * (kind == 0xD ? 2 : 1) * referenceSize <= bytes.count else {
                throw Failure(reason: "a collection past the end")
            }
            let references = (0..<(kind == 0xD ? count * 2 : count)).map {
                Self.integer(bytes, position + $0 * referenceSize, referenceSize)
            }
            var values: [PropertyListValue] = []
            for reference in references { values.append(try object(reference, depth: depth + 1)) }
            if kind == 0xA { return .array(values) }
            var dictionary: [String: PropertyListValue] = [:]
            for index in 0..<count {
                guard let key = values[index].string else { throw Failure(reason: "a dictionary key that is not a string") }
                dictionary[key] = values[count + index]
            }
            return .dictionary(dictionary)
        default:
            throw Failure(reason: "an unknown object type \(marker)")
        }
    }
}
