import Foundation
import Testing

@testable import SkerryCore

/// `ObjectContext.withFetched(_:_:)` (package, for the typed layer): what `fetch(_:)` returns,
/// borrowed, without an array. A context that holds no object yet reads its store and hands over
/// its own list of the objects it registered; any other fetch (objects registered already,
/// pending changes, batches, prefetching, a child context) hands over its array. Either way: the
/// objects `fetch(_:)` returns, in its order, each the one registered object of its row.
@Suite struct BorrowedFetchTests {
    /// The objects `withFetched` hands over, kept (retained) in an array.
    private func borrowed(_ context: ObjectContext, _ request: FetchRequest) throws -> [EntityObject] {
        try context.withFetched(request) { Array($0) }
    }

    /// `withFetched` in `context`, then `fetch` of the same request there: the same objects in the
    /// same order (a registered object is returned as it is), each registered, `count` of them.
    private func expectSameAsFetch(
        _ context: ObjectContext, _ request: FetchRequest, count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let objects = try borrowed(context, request)
        #expect(objects.count == count, sourceLocation: sourceLocation)
        let fetched = try context.fetch(request)
        #expect(fetched.count == objects.count && zip(objects, fetched).allSatisfy { $0 === $1 }, sourceLocation: sourceLocation)
        #expect(objects.allSatisfy { context.registeredObject(for: $0.objectID) === $0 }, sourceLocation: sourceLocation)
        context.registry.checkInvariants(context: context)
    }

    private func insertBooks(_ stack: PersistentStack, count: Int) throws {
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            // Years in another order than the inserts (7 and 300 are coprime: each year once).
            for index in 0..<count { try writer.insertBook("Book \(index)", year: Int32((index * 7) % count)) }
            try writer.save()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anEmptyContextHandsOverTheObjectsItRegisteredInTheRequestsOrder(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { _ = directory }
        try insertBooks(stack, count: 300)
        let request = FetchRequest(entityName: "Book", sortKeys: [SortKey("year", ascending: false)])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let objects = try borrowed(context, request)
            #expect(try objects.map { try $0.value(forKey: "year", as: Int32.self) } == (0..<300).reversed().map { Int32($0) })
            #expect(objects.allSatisfy { !$0.isFault && $0.context === context })
            #expect(context.registry.count == 300)
            #expect(context.statistics.sourceRequests == 1 && context.statistics.rowsRead == 300)
            #expect(Set(objects.map(ObjectIdentifier.init)).count == 300)
            #expect(objects.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
            context.registry.checkInvariants(context: context)
            // Fetched again (now through the array of a context holding objects): the same objects.
            try expectSameAsFetch(context, request, count: 300)
        }
        // A limit and an offset, into an empty context.
        var page = request
        page.fetchLimit = 20
        page.fetchOffset = 10
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            let objects = try borrowed(other, page)
            #expect(try objects.map { try $0.value(forKey: "year", as: Int32.self) } == (270..<290).reversed().map { Int32($0) })
            try expectSameAsFetch(other, page, count: 20)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyOtherFetchHandsOverWhatFetchReturns(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { _ = directory }
        try insertBooks(stack, count: 50)
        let all = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])
        // Objects registered already: those fetched before are handed over as they are.
        let holding = stack.newBackgroundContext()
        try holding.performAndWait {
            let early = try holding.fetch(FetchRequest(entityName: "Book", predicate: .comparison(key: "year", .lessThan, .int(10))))
            #expect(early.count == 10)
            let objects = try borrowed(holding, all)
            #expect(early.allSatisfy { book in objects.contains { $0 === book } })
            try expectSameAsFetch(holding, all, count: 50)
        }
        // Pending changes: an unsaved insert is in, a deleted object out.
        let pending = stack.newBackgroundContext()
        try pending.performAndWait {
            let deleted = try #require(try pending.fetch(all).first)
            try pending.delete(deleted)
            let inserted = try pending.insertBook("Aaa unsaved", year: 1)
            let objects = try borrowed(pending, all)
            #expect(objects.first === inserted && !objects.contains { $0 === deleted })
            try expectSameAsFetch(pending, all, count: 50)
        }
        // Batches: faults, loaded batch by batch.
        var batched = all
        batched.fetchBatchSize = 8
        let batches = stack.newBackgroundContext()
        try batches.performAndWait { try expectSameAsFetch(batches, batched, count: 50) }
        // A child context reads through its parent.
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        try child.performAndWait {
            try child.insertBook("Aaa in the child", year: 2)
            try expectSameAsFetch(child, all, count: 51)
        }
    }

    @Test func aFetchPrefetchingRelationshipsHandsOverWhatFetchReturns() throws {
        let stack = try makeMemoryStack(model: LibraryFixtures.model())
        let filler = stack.newBackgroundContext()
        try filler.performAndWait {
            try LibraryFixtures.fill(filler)
            try filler.save()
        }
        var request = FetchRequest(entityName: "Writer", sortKeys: [SortKey("name")])
        request.relationshipKeyPathsForPrefetching = ["books"]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let writers = try borrowed(context, request)
            #expect(try writers.map { try $0.value(forKey: "name", as: String.self) } == ["Austen", "Herbert", "Lem", "Nobody"])
            // The writers' books were loaded with them: registered, not faults.
            let books = context.registeredObjects.filter { $0.entity.name == "Novel" }
            #expect(books.count == 5 && books.allSatisfy { !$0.isFault })
            try expectSameAsFetch(context, request, count: 4)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anEmptyContextHandsOverTheObjectsOfSubentities(kind: StoreKind) throws {
        let media = EntityDescription(
            name: "Media", attributes: [AttributeDescription("title", .string)], isAbstract: true)
        let book = EntityDescription(
            name: "Book", attributes: [AttributeDescription("pages", .integer64, isOptional: true)], superentity: media)
        let film = EntityDescription(
            name: "Film", attributes: [AttributeDescription("minutes", .integer64, isOptional: true)], superentity: media)
        let (stack, directory) = try makeStack(kind, model: try ObjectModel(entities: [media, book, film]))
        defer { _ = directory }
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for (entity, title) in [("Book", "A"), ("Film", "B"), ("Book", "C"), ("Film", "D")] {
                try writer.insert(entityName: entity).setValue(title, forKey: "title")
            }
            try writer.save()
        }
        let request = FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let objects = try borrowed(context, request)
            #expect(objects.map(\.entity.name) == ["Book", "Film", "Book", "Film"])
            #expect(try objects.map { try $0.value(forKey: "title", as: String.self) } == ["A", "B", "C", "D"])
            try expectSameAsFetch(context, request, count: 4)
        }
        var films = FetchRequest(entityName: "Film", sortKeys: [SortKey("title")])
        films.includesSubentities = false
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            #expect(try borrowed(other, films).map(\.entity.name) == ["Film", "Film"])
            try expectSameAsFetch(other, films, count: 2)
        }
    }

    @Test func aFetchThatFailsMidwayHandsOverNothingAndKeepsTheWholeRowsRead() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        try insertBooks(stack, count: 6)
        // The row of year 3 cannot be read (a year that is not an integer).
        _ = try rawSQL(directory.file("Test.sqlite"), "UPDATE \"Book\" SET \"year\" = 'not a year' WHERE \"year\" = 3")
        let request = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var called = false
            expectError(.undecodableValue) { _ = try context.withFetched(request) { _ in called = true } }
            #expect(!called)
            // The rows before the bad one stay registered, whole; the context stays consistent.
            context.registry.checkInvariants(context: context)
            let registered = context.registeredObjects
            #expect(registered.count == 3 && registered.allSatisfy { !$0.isFault })
            // Fetched again (a context holding objects now: through the array), it fails alike.
            expectError(.undecodableValue) { _ = try context.withFetched(request) { _ in called = true } }
            #expect(!called)
            let readable = FetchRequest(
                entityName: "Book", predicate: .comparison(key: "title", .notEqual, .string("Book 3")), sortKeys: [SortKey("title")])
            try expectSameAsFetch(context, readable, count: 5)
            #expect(registered.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
        }
    }

    /// The identity map hands over its list itself when it has no hole, else a copy without the
    /// holes: objects forgotten (deleted and saved) are not handed over.
    @Test func theIdentityMapHandsOverItsObjectsWithoutHoles() throws {
        let stack = try makeMemoryStack()
        try insertBooks(stack, count: 10)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            var listed = context.registry.objects.withObjects { Array($0) }
            #expect(listed.count == 10 && zip(listed, books).allSatisfy { $0 === $1 })
            for index in [0, 4, 5, 9] { try context.delete(books[index]) }
            try context.save()
            listed = context.registry.objects.withObjects { Array($0) }
            let kept = [1, 2, 3, 6, 7, 8].map { books[$0] }
            #expect(listed.count == 6 && zip(listed, kept).allSatisfy { $0 === $1 })
            #expect(listed.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
        }
    }
}
