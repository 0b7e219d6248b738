// The examples of docs/typed-layer.md, verbatim between the `// doc:` markers (the check lives in
// SkerryCoreTests/DocExamplesTests.swift, which reads this file too).
import Foundation
import Skerry
import SkerryCore
import Testing

// doc: typed-model
struct Novel: ManagedObjectConvertible {
    enum Format: String, SupportedAttributeType { case hardcover, paperback, ebook }

    var title = ""
    var year: Int?
    var isbn: String?
    var format = Format.paperback

    static let entityName = "Novel"
    static let attributes: Set<Attribute<Novel>> = [
        Attribute(\.title, "title"),
        Attribute(\.year, "year"),
        Attribute(\.isbn, "isbn"),
        Attribute(\.format, "format"),
    ]
    static let relations: Void = ()
    static let entityOptions = EntityOptions<Novel>()
        .unique(\Novel.isbn)
        .index(\Novel.year)
}
// doc: end

@Suite struct TypedDocExamplesTests {
    @Test func containerExample() throws {
        let folder = TemporaryDirectory()
        // doc: typed-setup
        let stack = PersistentStack(name: "Library", model: try ObjectModel(types: [Novel.self]))
        stack.persistentStoreDescriptions = [StoreDescription(url: folder.url.appendingPathComponent("Library.sqlite"))]
        try stack.loadPersistentStores()

        let container = PersistentContainer(
            managedObjectContext: { stack.newBackgroundContext() },
            logError: { error in print("Skerry: \(error)") },
            cleanUpAfterExecution: true)

        let titles = try container.perform { context in
            try context.insert(Novel(title: "Dune", year: 1965, isbn: "0-441-17271-7"))
            try context.insert(Novel(title: "Solaris", year: 1961, format: .hardcover))
            try context.insert(Novel(title: "Neuromancer", year: 1984))
            return try context.fetch(Novel.all.where(\Novel.year < 1970).sort(\Novel.title), \Novel.title)
        }
        // titles == ["Dune", "Solaris"]; the perform saved the three novels, then reset its context.
        // doc: end
        #expect(titles == ["Dune", "Solaris"])
    }

    @Test func queriesExample() throws {
        let stack = PersistentStack(name: "Library", model: try ObjectModel(types: [Novel.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            for (title, year) in [("Dune", 1965), ("Dune Messiah", 1969), ("Solaris", 1961), ("Emma", 1815)] {
                try context.insert(Novel(title: title, year: year))
            }
        }
        // doc: typed-queries
        let result = try container.perform { context in
            let sixties = Novel.all
                .where(\Novel.year >= 1960 && \Novel.year < 1970 && !Query.beginsWith(\Novel.title, "sol"))
                .sort(\Novel.year, ascending: false)
            let newest = try context.fetchOne(sixties)?.decode()
            let counted = try context.count(of: Novel.all.where(\Novel.title === ["Emma", "Dune"]))
            try context.delete(Novel.all.where(\Novel.year < 1900)) // deleted when the perform saves
            return (newest?.title, counted)
        }
        // result == ("Dune Messiah", 2), and Emma is gone from the store.
        // doc: end
        #expect(result.0 == "Dune Messiah" && result.1 == 2)
        #expect(try container.perform { try $0.count(of: Novel.all) } == 3)
    }

    @Test func cacheExample() throws {
        let stack = PersistentStack(name: "Library", model: try ObjectModel(types: [Novel.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        // doc: typed-cache
        let cachedContext = stack.newBackgroundContext()
        let caching = PersistentContainer(
            managedObjectContext: { cachedContext },
            cleanUpAfterExecution: false)
        try caching.perform { context in
            try context.insert(Novel(title: "Dune", year: 1965))
        }
        let title = try caching.perform { context in
            try context.fetchOne(Novel.all)?.decode(\.title) // "Dune"
        }
        let stillInMemory = try caching.perform { context in
            context.instance.registeredObjects.count // 1: kept as a cache, not reset
        }
        // doc: end
        #expect(title == "Dune")
        #expect(stillInMemory == 1)
    }

    @Test func readWriteExample() throws {
        let model = try ObjectModel(types: [Novel.self])
        // doc: read-write
        let layer = try DataAccessLayer(inMemoryModel: model)
        var count = 0
        layer.writeSync { context in
            try Novel.create(in: context).encode(\.title, "Dune")
        }.writeSync { context in
            try context.insert(Novel(title: "Solaris"))
        }.read { context in
            count = try Novel.count(in: context) // 2: reads see every write at once
        }
        layer.saveOnShutdown() // SIGTERM / SIGINT save what main holds
        // doc: end
        #expect(count == 2)
    }
}
