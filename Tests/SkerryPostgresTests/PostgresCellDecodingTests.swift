import Foundation
import Testing

@testable import SkerryPostgres

/// Cells read by the store's shortcuts read as the general decoders read them. A `numeric` cell is
/// the decimal that `Decimal(string:)` reads from its text, whether made from its digits directly
/// (the common case: `NumericCodec.exactDecimal`) or through the text: the same exponent,
/// significand, sign and text, for well-formed cells of every shape and malformed ones (nil on
/// both paths). A `text` cell is the string `String(decoding:as:)` makes, short or long, ASCII,
/// other UTF-8 or invalid bytes. No server: the cells are built here.
@Suite struct PostgresCellDecodingTests {
    /// A binary numeric: digit count, weight, sign, display scale, then the base-10000 digits.
    private static func cell(weight: Int, sign: UInt16, scale: Int, digits: [Int]) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ value: Int) {
            let bits = UInt16(truncatingIfNeeded: value)
            bytes += [UInt8(bits >> 8), UInt8(bits & 0xFF)]
        }
        append(digits.count)
        append(weight)
        append(Int(sign))
        append(scale)
        for digit in digits { append(digit) }
        return bytes
    }

    /// The reading through the text alone (the reading before `exactDecimal`).
    private static func throughText(_ raw: UnsafeRawBufferPointer) -> Decimal? {
        NumericCodec.text(raw).flatMap { Decimal(string: $0) }
    }

    private static func expectSameReading(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            let read = NumericCodec.decimal(raw)
            let expected = throughText(raw)
            #expect(read == expected, "cell \(bytes)")
            if let read, let expected {
                #expect(read.exponent == expected.exponent, "cell \(bytes)")
                #expect(read.significand == expected.significand, "cell \(bytes)")
                #expect(read.sign == expected.sign, "cell \(bytes)")
                #expect(read.description == expected.description, "cell \(bytes)")
            }
            return NumericCodec.exactDecimal(raw) != nil
        }
    }

    @Test func textCellsReadAsTheGeneralDecoderReadsThem() {
        var random = SplitMix64(seed: 0x7E_C7)
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("Z9 ".utf8), Array("é".utf8), Array("€".utf8), Array("🦀".utf8), [0], [0x80], [0xC3], [0xFF],
        ]
        var nonASCII = 0
        for length in 0...24 {
            for _ in 0..<200 {
                var bytes: [UInt8] = []
                let asciiOnly = random.next() % 2 == 0
                while bytes.count < length {
                    let piece = asciiOnly ? pieces[Int(random.next() % 2)] : pieces[Int(random.next() % UInt64(pieces.count))]
                    bytes += piece.prefix(length - bytes.count)
                }
                if bytes.contains(where: { $0 >= 0x80 }) { nonASCII += 1 }
                bytes.withUnsafeBytes { raw in
                    let read = PostgresResult.string(raw)
                    let expected = String(decoding: raw, as: UTF8.self)
                    #expect(Array(read.utf8) == Array(expected.utf8), "cell \(bytes)")
                }
            }
        }
        #expect(nonASCII > 1_000)
    }

    @Test func numericCellsReadAsTheirTextReads() {
        // What PostgreSQL sends for some values (`SELECT x::numeric` in binary).
        let known: [([UInt8], String)] = [
            (Self.cell(weight: 1, sign: 0x4000, scale: 3, digits: [1, 2345, 6780]), "-12345.678"),
            (Self.cell(weight: 0, sign: 0, scale: 2, digits: [1, 5000]), "1.5"),
            (Self.cell(weight: 1, sign: 0, scale: 0, digits: [1]), "10000"),
            (Self.cell(weight: -2, sign: 0x4000, scale: 5, digits: [1000]), "-0.00001"),
            (Self.cell(weight: 1, sign: 0, scale: 1, digits: [9999, 0, 5000]), "99990000.5"),
            (
                Self.cell(weight: 4, sign: 0, scale: 10, digits: [1234, 5678, 9012, 3456, 7890, 123, 4567, 8900]),
                "12345678901234567890.0123456789"
            ),
            (Self.cell(weight: 4, sign: 0, scale: 0, digits: [1844, 6744, 737, 955, 1615]), "18446744073709551615"),
            (Self.cell(weight: 0, sign: 0, scale: 3, digits: []), "0"),
        ]
        for (bytes, text) in known {
            _ = Self.expectSameReading(bytes)
            #expect(bytes.withUnsafeBytes { NumericCodec.decimal($0) } == Decimal(string: text), "\(text)")
        }
        // Random cells of every shape, from a fixed seed: well-formed ones (digits past the
        // display scale zero, as PostgreSQL sends them) and others (NaN and infinities, digits out
        // of range or past the scale, a short cell).
        var random = SplitMix64(seed: 0x5EED_0F_DEC1)
        var exact = 0
        var total = 0
        for _ in 0..<20_000 {
            let count = Int(random.next() % 7)
            var digits = (0..<count).map { _ in Int(random.next() % 10_000) }
            if count > 0 && random.next() % 4 == 0 { digits[0] = Int(random.next() % 10) }
            let weight = Int(random.next() % 16) - 7
            var scale = max(0, 4 * (count - weight - 1)) - Int(random.next() % 4)
            if random.next() % 8 == 0 { scale += Int(random.next() % 12) }
            scale = max(0, scale)
            let signs: [UInt16] = [0, 0x4000, 0, 0x4000, 0xC000, 0xD000, 0xF000]
            let sign = random.next() % 5 == 0 ? signs[Int(random.next() % 7)] : UInt16(random.next() % 2) * 0x4000
            if count > 0 && random.next() % 50 == 0 { digits[Int(random.next() % UInt64(count))] = 10_000 + Int(random.next() % 100) }
            var bytes = Self.cell(weight: weight, sign: sign, scale: scale, digits: digits)
            if random.next() % 100 == 0 { bytes.removeLast() }
            if Self.expectSameReading(bytes) { exact += 1 }
            total += 1
        }
        // Most cells take the direct path, and some do not: both were compared.
        #expect(exact > total / 3 && exact < total)
    }
}

/// A small seeded generator (SplitMix64), so that the random cells are the same in every run.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
