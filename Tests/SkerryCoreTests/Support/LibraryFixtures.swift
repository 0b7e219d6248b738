import Foundation

@testable import SkerryCore

/// A model with numbers, dates and decimals on both sides of relationships, for predicates:
/// Writer.books (to-many) <-> Novel.writer (to-one); Novel.tags (to-many) <-> Label.novels;
/// Writer.agency (to-one) <-> Agency.writers (to-many).
enum LibraryFixtures {
    static func model() -> ObjectModel {
        try! ObjectModel(entities: [
            EntityDescription(
                name: "Writer",
                attributes: [
                    AttributeDescription("name", .string),
                    AttributeDescription("born", .integer32, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription("books", destination: "Novel", inverse: "writer", toMany: true),
                    RelationshipDescription("agency", destination: "Agency", inverse: "writers"),
                ]),
            EntityDescription(
                name: "Novel",
                attributes: [
                    AttributeDescription("title", .string),
                    AttributeDescription("year", .integer32, isOptional: true),
                    AttributeDescription("pages", .integer64, isOptional: true),
                    AttributeDescription("rating", .double, isOptional: true),
                    AttributeDescription("price", .decimal, isOptional: true),
                    AttributeDescription("published", .date, isOptional: true),
                    AttributeDescription("inPrint", .boolean, defaultValue: true),
                ],
                relationships: [
                    RelationshipDescription("writer", destination: "Writer", inverse: "books"),
                    RelationshipDescription("tags", destination: "Label", inverse: "novels", toMany: true),
                ]),
            EntityDescription(
                name: "Label", attributes: [AttributeDescription("text", .string)],
                relationships: [
                    RelationshipDescription("novels", destination: "Novel", inverse: "tags", toMany: true)
                ]),
            EntityDescription(
                name: "Agency", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("writers", destination: "Writer", inverse: "agency", toMany: true)
                ]),
        ])
    }

    /// A small library, inserted into `context` (not saved).
    static func fill(_ context: ObjectContext) throws {
        let agency = try context.insertNamed("Agency", "Ace")
        let labels = Dictionary(uniqueKeysWithValues: try ["sf", "classic", "unused"].map { ($0, try context.insertNamed("Label", $0)) })
        let shelf: [(String, Int32?, [(String, Int32?, Int64?, Double?, String?, [String])])] = [
            ("Herbert", 1920, [("Dune", 1965, 412, 4.5, "9.99", ["sf"]), ("Dune Messiah", 1969, 256, 3.5, "7.50", ["sf"])]),
            ("Lem", 1921, [("Solaris", 1961, 204, 4.0, "8.00", ["sf", "classic"])]),
            ("Austen", nil, [("Emma", 1815, 474, nil, nil, ["classic"]), ("Persuasion", nil, nil, 4.0, "5.25", [])]),
            ("Nobody", nil, []),
        ]
        for (name, born, books) in shelf {
            let writer = try context.insertNamed("Writer", name)
            try writer.setValue(born, forKey: "born")
            if name == "Herbert" || name == "Lem" { try writer.setRelatedObject(agency, forKey: "agency") }
            for (title, year, pages, rating, price, tags) in books {
                let book = try context.insertNamed("Novel", title)
                try book.setValue(year, forKey: "year")
                try book.setValue(pages, forKey: "pages")
                try book.setValue(rating, forKey: "rating")
                try book.setValue(price.flatMap { Decimal(string: $0) }, forKey: "price")
                try book.setValue(year.map { Date(timeIntervalSince1970: Double($0 - 1970) * 31_557_600) }, forKey: "published")
                try book.setRelatedObject(writer, forKey: "writer")
                for tag in tags { try book.addRelatedObject(labels[tag]!, forKey: "tags") }
            }
        }
    }
}

/// The same library three ways: saved and read back by SQL, unsaved (answered in memory), and
/// saved then fetched in a context holding pending changes of none (the answers must agree).
struct LibraryStacks {
    let saved: ObjectContext
    let unsaved: ObjectContext
    private let stacks: [PersistentStack]
    private let directory: TemporaryDirectory?

    init(_ kind: StoreKind = .memory) throws {
        let (savedStack, directory) = try makeStack(kind, model: LibraryFixtures.model())
        self.directory = directory
        let unsavedStack = try makeMemoryStack(model: LibraryFixtures.model())
        saved = savedStack.newBackgroundContext()
        unsaved = unsavedStack.newBackgroundContext()
        stacks = [savedStack, unsavedStack]
        try saved.performAndWait {
            try LibraryFixtures.fill(saved)
            try saved.save()
            saved.reset()
        }
        try unsaved.performAndWait { try LibraryFixtures.fill(unsaved) }
    }

    /// The labels (first attribute) of the `entity` objects matching `predicate`, sorted, from SQL
    /// and from memory; the test fails where they differ.
    func labels(_ entity: String, _ predicate: FetchPredicate) throws -> [String] {
        let request = FetchRequest(entityName: entity, predicate: predicate)
        let fromSQL = try saved.performAndWait { try saved.fetch(request).map(\.label).sorted() }
        let fromMemory = try unsaved.performAndWait { try unsaved.fetch(request).map(\.label).sorted() }
        if fromSQL != fromMemory {
            throw Mismatch(description: "\(predicate): SQL \(fromSQL), memory \(fromMemory)")
        }
        return fromSQL
    }

    /// `labels` of a format predicate.
    func labels(_ entity: String, _ format: String, _ arguments: Any...) throws -> [String] {
        try labels(entity, try FetchPredicate(format: format, argumentArray: arguments))
    }

    struct Mismatch: Error, CustomStringConvertible { let description: String }
}
