import Foundation
import Testing

@testable import SkerryCore

/// Predicates through relationships answer the same from SQL (saved data) and in memory
/// (the same data unsaved).
@Suite struct RelationshipPredicateTests {
    /// Authors, books, tags and a publisher, inserted into `context` (not saved).
    private func fill(_ context: ObjectContext) throws {
        let tags = Dictionary(uniqueKeysWithValues: try ["sf", "classic", "unused"].map { ($0, try context.insertNamed("Tag", $0)) })
        let publisher = try context.insertNamed("Publisher", "Ace")
        let library: [(String, [(String, Int32, [String])])] = [
            ("Herbert", [("Dune", 1965, ["sf"]), ("Dune Messiah", 1969, ["sf"])]),
            ("Lem", [("Solaris", 1961, ["sf", "classic"])]),
            ("Austen", [("Emma", 1815, ["classic"])]),
            ("Nobody", []),
        ]
        for (name, books) in library {
            let author = try context.insertNamed("Author", name)
            if name == "Herbert" { try author.setRelatedObject(publisher, forKey: "publisher") }
            for (title, _, tagNames) in books {
                let book = try context.insertNamed("Book", title)
                try book.setRelatedObject(author, forKey: "author")
                for tag in tagNames { try book.addRelatedObject(tags[tag]!, forKey: "tags") }
            }
        }
    }

    private static let cases: [(String, String, FetchPredicate)] = [
        ("Book", "author.name == Herbert", AttributeKey("author.name") == "Herbert"),
        ("Book", "author.name != Herbert", AttributeKey("author.name") != "Herbert"),
        ("Book", "author.publisher.name == Ace", AttributeKey("author.publisher.name") == "Ace"),
        ("Book", "author.publisher.name is nil", AttributeKey("author.publisher.name").isNil),
        ("Book", "author.name begins with he (c)", AttributeKey("author.name").beginsWith("he", options: .caseInsensitive)),
        ("Book", "tags any classic", RelationshipKey("tags").any(AttributeKey("label") == "classic")),
        ("Book", "tags count 2", RelationshipKey("tags").count == 2),
        ("Author", "books any Dune*", RelationshipKey("books").any(AttributeKey("title").beginsWith("Dune"))),
        ("Author", "books all not Emma", RelationshipKey("books").all(AttributeKey("title") != "Emma")),
        ("Author", "books count >= 2", RelationshipKey("books").count >= 2),
        ("Author", "books count == 0", RelationshipKey("books").count == 0),
        ("Author", "not books any sf", !RelationshipKey("books").any(RelationshipKey("tags").any(AttributeKey("label") == "sf"))),
        ("Tag", "books any author Lem", RelationshipKey("books").any(AttributeKey("author.name") == "Lem")),
        ("Tag", "books count 0", RelationshipKey("books").count == 0),
        ("Publisher", "authors any Herbert", RelationshipKey("authors").any(AttributeKey("name") == "Herbert")),
    ]

    private static let expected: [String: [String]] = [
        "author.name == Herbert": ["Dune", "Dune Messiah"],
        "author.name != Herbert": ["Emma", "Solaris"],
        "author.publisher.name == Ace": ["Dune", "Dune Messiah"],
        "author.publisher.name is nil": ["Emma", "Solaris"],
        "author.name begins with he (c)": ["Dune", "Dune Messiah"],
        "tags any classic": ["Emma", "Solaris"],
        "tags count 2": ["Solaris"],
        "books any Dune*": ["Herbert"],
        "books all not Emma": ["Herbert", "Lem", "Nobody"],
        "books count >= 2": ["Herbert"],
        "books count == 0": ["Nobody"],
        "not books any sf": ["Austen", "Nobody"],
        "books any author Lem": ["classic", "sf"],
        "books count 0": ["unused"],
        "authors any Herbert": ["Ace"],
    ]

    private func labels(_ context: ObjectContext, _ entity: String, _ predicate: FetchPredicate) throws -> [String] {
        try context.fetch(FetchRequest(entityName: entity, predicate: predicate)).map(\.label).sorted()
    }

    @Test(arguments: StoreKind.allCases)
    func sqlAndMemoryAgreeThroughRelationships(kind: StoreKind) throws {
        let (saved, directory) = try makeStack(kind, model: GraphFixtures.model())
        _ = directory
        let savedContext = saved.newBackgroundContext()
        try savedContext.performAndWait {
            try fill(savedContext)
            try savedContext.save()
            savedContext.reset() // answers come from SQL
        }
        let unsaved = try makeMemoryStack(model: GraphFixtures.model())
        let unsavedContext = unsaved.newBackgroundContext()
        try unsavedContext.performAndWait { try fill(unsavedContext) } // answers come from memory
        for (entity, name, predicate) in Self.cases {
            let fromSQL = try savedContext.performAndWait { try labels(savedContext, entity, predicate) }
            let fromMemory = try unsavedContext.performAndWait { try labels(unsavedContext, entity, predicate) }
            #expect(fromSQL == Self.expected[name], "SQL: \(name)")
            #expect(fromMemory == Self.expected[name], "memory: \(name)")
        }
    }

    @Test func badKeyPathsAreTypedErrors() throws {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let context = stack.newBackgroundContext()
        context.performAndWait {
            expectError(.unknownAttribute) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("author.nope") == "x"))
            }
            expectError(.unknownAttribute) {
                _ = try context.fetch(FetchRequest(entityName: "Author", predicate: AttributeKey("books.nope") == "x"))
            }
            expectError(.unknownAttribute) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: RelationshipKey("author").count == 1))
            }
            expectError(.unknownAttribute) { _ = try context.fetch(FetchRequest(entityName: "Author", sortKeys: [SortKey("books.title")])) }
        }
    }
}

@Suite struct PrefetchTests {
    @Test func prefetchedRelationshipsNeedNoFurtherReads() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory, model: GraphFixtures.model(), name: "Graph")
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for name in ["Herbert", "Lem"] {
                let author = try writer.insertNamed("Author", name)
                for index in 1...3 { try writer.insertNamed("Book", "\(name) \(index)").setRelatedObject(author, forKey: "author") }
            }
            try writer.save()
        }
        let reader = stack.newBackgroundContext()
        reader.automaticallyMergesChangesFromParent = false
        let authors = try reader.performAndWait {
            var request = FetchRequest(entityName: "Author", sortKeys: [SortKey("name")])
            request.relationshipKeyPathsForPrefetching = ["books"]
            let authors = try reader.fetch(request)
            for author in authors {
                guard case .toMany(let ids) = author.relationshipValues[0] else {
                    Issue.record("books not loaded")
                    continue
                }
                #expect(ids.count == 3)
                #expect(ids.allSatisfy { reader.registeredObject(for: $0)?.isFault == false })
            }
            return authors.count
        }
        #expect(authors == 2)
        // Behind the context's back: every book row goes. The prefetched objects still read.
        try rawSQL(directory.file("Graph.sqlite"), "DELETE FROM Book")
        let titles = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Author", predicate: nil, sortKeys: [SortKey("name")]))
                .flatMap { try $0.relatedObjects(forKey: "books") }.map(\.label).sorted()
        }
        #expect(titles.count == 6)
    }

    /// With a batch size, each batch prefetches its objects' relationships when it loads (Core
    /// Data's fetchBatchSize with relationshipKeyPathsForPrefetching), instead of skipping them.
    @Test func aBatchedFetchPrefetchesEachBatchWhenItLoads() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory, model: GraphFixtures.model(), name: "Graph")
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for name in ["Herbert", "Lem", "Le Guin"] {
                let author = try writer.insertNamed("Author", name)
                for index in 1...3 { try writer.insertNamed("Book", "\(name) \(index)").setRelatedObject(author, forKey: "author") }
            }
            try writer.save()
        }
        let reader = stack.newBackgroundContext()
        reader.automaticallyMergesChangesFromParent = false
        try reader.performAndWait {
            var request = FetchRequest(entityName: "Author", sortKeys: [SortKey("name")])
            request.fetchBatchSize = 2
            request.relationshipKeyPathsForPrefetching = ["books"]
            let authors = try reader.fetch(request)
            #expect(authors.count == 3 && authors.allSatisfy(\.isFault))
            #expect(authors[0].label == "Herbert") // loads the first batch: Herbert and Le Guin
            for author in authors.prefix(2) {
                guard case .toMany(let ids) = author.relationshipValues[0] else {
                    Issue.record("books not prefetched")
                    continue
                }
                #expect(ids.count == 3)
                #expect(ids.allSatisfy { reader.registeredObject(for: $0)?.isFault == false })
            }
            #expect(authors[2].isFault) // the second batch is not loaded yet
        }
        // Behind the context's back: every book row goes. The first batch's books still read.
        try rawSQL(directory.file("Graph.sqlite"), "DELETE FROM Book")
        let titles = try reader.performAndWait {
            var request = FetchRequest(entityName: "Author", sortKeys: [SortKey("name")])
            request.fetchLimit = 2
            return try reader.fetch(request).flatMap { try $0.relatedObjects(forKey: "books") }.map(\.label).sorted()
        }
        #expect(titles == ["Herbert 1", "Herbert 2", "Herbert 3", "Le Guin 1", "Le Guin 2", "Le Guin 3"])
    }
}
