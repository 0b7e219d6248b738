import Foundation
import Skerry

// The conformances, exactly as a Sworm user declares them: entity name, attributes, relations
// by name only (no inverse, no delete rule: Skerry derives the inverses from the types).

extension Painted.Stroke: SupportedAttributeType {
    func encodePrimitiveValue() -> String {
        self.description
    }

    static func decode(primitiveValue: String) throws -> Painted.Stroke {
        guard let value = Painted.Stroke(primitiveValue) else {
            throw AttributeError.badInput(primitiveValue)
        }
        return value
    }
}

extension Painted.Colour: SupportedAttributeType {}

extension EveryPrimitive: ManagedObjectConvertible {
    static let entityName: String = "EveryPrimitive"

    static let attributes: Set<Attribute<EveryPrimitive>> = [
        .init(\.flag, "flag"),
        .init(\.int, "int"),
        .init(\.int16, "int16"),
        .init(\.int32, "int32"),
        .init(\.int64, "int64"),
        .init(\.float, "float"),
        .init(\.double, "double"),
        .init(\.decimal, "decimal"),
        .init(\.date, "date"),
        .init(\.text, "text"),
        .init(\.blob, "blob"),
        .init(\.uuid, "uuid"),
        .init(\.link, "link"),
    ]

    static let relations: Void = ()
}

extension Painted: ManagedObjectConvertible {
    static let entityName: String = "Painted"

    static let attributes: Set<Attribute<Painted>> = [
        .init(\.asJSON, "asJSON"),
        .init(\.asText, "asText"),
        .init(\.first, "first"),
        .init(\.second, "second"),
        .init(\.colour, "colour"),
        .init(\.accent, "accent"),
    ]

    static let relations: Void = ()
}

extension Counter: ManagedObjectConvertible {
    static let entityName: String = "Counter"

    static let attributes: Set<Attribute<Counter>> = [
        .init(\.value, "value"),
        .init(\.limit, "limit"),
    ]

    static let relations: Void = ()
}

extension Gauge.Mood: SupportedAttributeType {}

extension Gauge: ManagedObjectConvertible {
    static let entityName: String = "Gauge"

    static let attributes: Set<Attribute<Gauge>> = [
        .init(\.low, "low"),
        .init(\.high, "high"),
        .init(\.label, "label"),
        .init(\.mood, "mood"),
    ]

    static let relations: Void = ()
}

extension Locator: ManagedObjectConvertible {
    static let entityName: String = "Locator"

    static let attributes: Set<Attribute<Locator>> = [
        .init(\.id, "id"),
        .init(\.link, "link"),
    ]

    static let relations: Void = ()
}

extension Shelf.Writer: ManagedObjectConvertible {
    static let entityName: String = "Writer"

    static let attributes: Set<Attribute<Shelf.Writer>> = [
        .init(\.id, "id"),
        .init(\.name, "name"),
        .init(\.born, "born"),
    ]

    struct Relations {
        let novels = ToManyRelation<Shelf.Novel>("novels")
    }

    static let relations = Relations()
}

extension Shelf.Novel.Chapter: ManagedObjectConvertible {
    static let entityName: String = "Chapter"

    static let attributes: Set<Attribute<Shelf.Novel.Chapter>> = [
        .init(\.id, "id"),
        .init(\.title, "title"),
        .init(\.pages, "pages"),
    ]

    struct Relations {
        let novel = ToOneRelation<Shelf.Novel>("novel")
    }

    static let relations = Relations()
}

extension Shelf.Novel.Jacket: ManagedObjectConvertible {
    static let entityName: String = "Jacket"

    static let attributes: Set<Attribute<Shelf.Novel.Jacket>> = [
        .init(\.artwork, "artwork")
    ]

    struct Relations {
        let novel = ToOneRelation<Shelf.Novel>("novel")
    }

    static let relations = Relations()
}

extension Shelf.Novel: ManagedObjectConvertible {
    static let entityName: String = "Novel"

    static let attributes: Set<Attribute<Shelf.Novel>> = [
        .init(\.id, "id"),
        .init(\.title, "title"),
        .init(\.year, "year"),
    ]

    struct Relations {
        let writer = ToOneRelation<Shelf.Writer>("writer")
        let jacket = ToOneRelation<Shelf.Novel.Jacket>("jacket")
        let chapters = ToManyOrderedRelation<Shelf.Novel.Chapter>("chapters")
    }

    static let relations = Relations()
}

extension Migrating.Ticket: ManagedObjectConvertible {
    static let entityName: String = "Ticket"

    static let attributes: Set<Attribute<Migrating.Ticket>> = [
        .init(\.number, "number"),
        .init(\.holder, "holder"),
    ]

    static let relations: Void = ()
}

extension Migrating.Token: ManagedObjectConvertible {
    static let entityName: String = "Token"

    static let attributes: Set<Attribute<Migrating.Token>> = [
        .init(\.serial, "serial"),
        .init(\.holder, "holder"),
    ]

    static let relations: Void = ()
}

extension Migrating.Stamp: ManagedObjectConvertible {
    static let entityName: String = "Stamp"

    static let attributes: Set<Attribute<Migrating.Stamp>> = [
        .init(\.motif, "motif")
    ]

    static let relations: Void = ()
}
