import Foundation
import Skerry

// Plain model types, written the way Sworm's users write them: structs (and a class) with
// defaults for every property, conformances in Models+Skerry.swift.

enum Shelf {
    struct Writer: Equatable {
        var id: UUID = .init()
        var name: String = ""
        var born: Int = 0
    }

    struct Novel: Equatable {
        struct Chapter: Equatable {
            var id: UUID = .init()
            var title: String = ""
            var pages: Int = 0
        }

        struct Jacket: Equatable {
            var artwork: URL?
        }

        var id: UUID = .init()
        var title: String = ""
        var year: Int = 0
    }
}

/// Every primitive Sworm supports: the required ones, then the optional ones.
struct EveryPrimitive: Equatable {
    var flag: Bool = false

    var int: Int = .zero
    var int16: Int16 = .zero
    var int32: Int32 = .zero
    var int64: Int64 = .zero

    var float: Float = .zero
    var double: Double = .zero
    var decimal: Decimal = .zero

    var date: Date?
    var text: String?
    var blob: Data?
    var uuid: UUID?
    var link: URL?
}

/// Attributes of user-defined types: a JSON wrapper, a string wrapper, a lossless type stored
/// directly, and an enum.
struct Painted: Equatable {
    struct Stroke: Equatable, Codable, LosslessStringConvertible {
        init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }

        init?(_ description: String) {
            let parts = description.split(separator: ":")
            guard parts.count == 2, let from = Int(parts[0]), let to = Int(parts[1]) else {
                return nil
            }
            self.from = from
            self.to = to
        }

        let from: Int
        let to: Int

        var description: String { "\(from):\(to)" }
    }

    enum Colour: Int {
        case red
        case green
        case blue
    }

    var asJSON: Coded<Stroke> = .init(.init(from: 0, to: 0))
    var asText: Spelled<Stroke> = .init(.init(from: 0, to: 0))
    var first: Stroke?
    var second: Stroke?
    var colour: Colour = .red
    var accent: Colour = .red
}

/// A reference type as a model.
final class Counter: Equatable {
    var value: Int = .zero
    var limit: Int?

    static func == (lhs: Counter, rhs: Counter) -> Bool {
        lhs.value == rhs.value && lhs.limit == rhs.limit
    }
}

struct Gauge: Equatable {
    enum Mood: String {
        case calm
        case stormy
    }

    var low: Int = 0
    var high: Int = 0
    var label: String?
    var mood: Mood?
}

struct Locator: Equatable {
    var id: UUID?
    var link: URL?
}

/// The versions of a migrated store: `Ticket` (version 0) becomes `Token` (versions 1 and 2,
/// with `number` turned into a `Double` `serial`, then multiplied by ten), and version 3 adds
/// `Stamp`.
enum Migrating {
    struct Ticket {
        var number: Int = 0
        var holder: String = ""
    }

    struct Token: Comparable {
        var serial: Double = 0
        var holder: String = ""

        static func < (lhs: Token, rhs: Token) -> Bool {
            lhs.serial < rhs.serial
        }
    }

    struct Stamp: Comparable {
        var motif: String = ""

        static func < (lhs: Stamp, rhs: Stamp) -> Bool {
            lhs.motif < rhs.motif
        }
    }
}
