import Foundation
import SkerryCore
import Testing

@testable import Skerry

/// A plain type over an entity with sub-entities: its objects are of `Book` and `Film`.
private struct Medium: ManagedObjectConvertible {
    var title = ""
    var year: Int64 = 0

    static let entityName = "Media"
    static let attributes: Set<Attribute<Medium>> = [Attribute(\.title, "title"), Attribute(\.year, "year")]
    static let relations: Void = ()
}

/// The wrappers made together (the objects of a fetch, a run of inserts, a relation's members)
/// share one scope: the context they were wrapped in and their type's layout in their entity.
/// Each wrapper's scope must be the one of its own object's entity and context.
@Suite struct WrapperScopeTests {
    private func container(_ model: ObjectModel) throws -> (PersistentContainer, PersistentStack) {
        let stack = PersistentStack(name: "Scopes", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        return (PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }), stack)
    }

    /// An abstract `Media` (title, year) with sub-entities `Book` (pages) and `Film` (minutes).
    private func mediaModel() throws -> ObjectModel {
        let media = EntityDescription(
            name: "Media", attributes: [AttributeDescription("title", .string), AttributeDescription("year", .integer64)],
            isAbstract: true)
        let book = EntityDescription(
            name: "Book", attributes: [AttributeDescription("pages", .integer64, isOptional: true)], superentity: media)
        let film = EntityDescription(
            name: "Film", attributes: [AttributeDescription("minutes", .integer64, isOptional: true)], superentity: media)
        return try ObjectModel(entities: [media, book, film])
    }

    @Test func theObjectsOfAFetchOrOfARunOfInsertsShareOneScopeOfTheirContext() throws {
        let (container, _) = try container(try ObjectModel(types: [Book.self]))
        try container.perform { context in
            let inserted = try ["Dune", "Emma", "Ulysses"].map { try context.insert(Book(title: $0)) }
            #expect(inserted.allSatisfy { $0.scope === inserted[0].scope })
            #expect(inserted[0].scope.context === context.instance)
        }
        try container.perform { context in
            let fetched = try context.fetch(Book.all.sort(\.title))
            #expect(fetched.count == 3)
            #expect(fetched.allSatisfy { $0.scope === fetched[0].scope })
            #expect(fetched[0].scope.context === context.instance)
            #expect(fetched[0].scope.layout.entity === fetched[0].instance.entity)
            #expect(try fetched.map { try $0.decode().title } == ["Dune", "Emma", "Ulysses"])
            // A second fetch of the type in the same perform takes the same scope.
            #expect(try context.fetchOne(Book.all)?.scope === fetched[0].scope)
        }
    }

    /// A fetch into a perform's context, which holds no object yet, wraps the objects the
    /// context registered (borrowed from its own list), in the request's order; a fetch in a
    /// context holding objects, or with pending changes, wraps the same objects.
    @Test func aFetchWrapsTheContextsOwnObjectsInTheRequestsOrder() throws {
        let (container, _) = try container(try ObjectModel(types: [Book.self]))
        // Inserted in another order than the titles' (7 and 40 are coprime: each title once).
        let titles = (0..<40).map { "Book \(($0 * 7) % 40 + 100)" }
        try container.perform { context in for title in titles { try context.insert(Book(title: title)) } }
        try container.perform { context in
            let fetched = try context.fetch(Book.all.sort(\.title))
            #expect(try fetched.map { try $0.decode().title } == titles.sorted())
            #expect(fetched.allSatisfy { context.instance.registeredObject(for: $0.objectID) === $0.instance })
            #expect(Set(fetched.map { ObjectIdentifier($0.instance) }).count == 40)
            let engine = try context.instance.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(engine.count == 40 && zip(fetched, engine).allSatisfy { $0.instance === $1 })
            // With a pending insert: the same objects, and the new one.
            let new = try context.insert(Book(title: "Book 000"))
            let again = try context.fetch(Book.all.sort(\.title))
            #expect(again.count == 41 && again.first?.instance === new.instance)
            #expect(zip(again.dropFirst(), fetched).allSatisfy { $0.instance === $1.instance })
            #expect(again.allSatisfy { $0.scope.context === context.instance && $0.scope.layout.entity === $0.instance.entity })
        }
        #expect(try container.perform { try $0.count(of: Book.all) } == 41)
    }

    @Test func aFetchOfAnEntityWithSubentitiesWrapsEachObjectWithItsOwnEntitysLayout() throws {
        let (container, _) = try container(try mediaModel())
        try container.perform { context in
            for (entity, title, year) in [("Book", "A", 1965), ("Film", "B", 1984), ("Book", "C", 1851), ("Film", "D", 2021)] {
                let object = try context.instance.insert(entityName: entity)
                try object.setValue(title, forKey: "title")
                try object.setValue(Int64(year), forKey: "year")
            }
        }
        try container.perform { context in
            // Sorted by title, the entities alternate: the scope changes with every object.
            let fetched = try context.fetch(Medium.all.sort(\.title))
            #expect(fetched.map(\.instance.entity.name) == ["Book", "Film", "Book", "Film"])
            #expect(fetched.allSatisfy { $0.scope.layout.entity === $0.instance.entity })
            #expect(fetched.allSatisfy { $0.scope.context === context.instance })
            #expect(fetched[0].scope !== fetched[1].scope)
            let values = try fetched.map { try $0.decode() }
            #expect(values.map(\.title) == ["A", "B", "C", "D"])
            #expect(values.map(\.year) == [1965, 1984, 1851, 2021])
            #expect(try fetched.map { try $0.decode(\.year) } == [1965, 1984, 1851, 2021])
            // A fetch of one attribute's values reads each object with its entity's layout too.
            #expect(try context.fetch(Medium.all.sort(\.title), \.year) == [1965, 1984, 1851, 2021])
            #expect(try context.fetch(Medium.all.sort(\.title, ascending: false), \.title) == ["D", "C", "B", "A"])
            #expect(try context.fetchOne(Medium.all.sort(\.year), \.title) == "C")
        }
    }

    @Test func theMembersOfARelationShareOneScopeOfTheirContext() throws {
        let (container, _) = try container(try ObjectModel(types: [Writer.self, Work.self, Picture.self, Anthology.self]))
        try container.perform { context in
            let writer = try context.insert(Writer(name: "Lem"))
            for title in ["Solaris", "Eden", "Fiasco"] { writer.works.add(try context.insert(Work(title: title))) }
        }
        try container.perform { context in
            let writer = try #require(try context.fetchOne(Writer.all))
            let works = try writer.works.objects()
            #expect(works.count == 3)
            #expect(works.allSatisfy { $0.scope === works[0].scope })
            #expect(works[0].scope.context === context.instance)
            #expect(try works.map { try $0.decode().title }.sorted() == ["Eden", "Fiasco", "Solaris"])
            let writerOfWork = try #require(try context.fetchOne(Work.all)?.writer)
            #expect(writerOfWork.scope.context === context.instance)
            #expect(try writerOfWork.decode().name == "Lem")
        }
    }

    /// A wrapper records the errors of calls that cannot throw on the context it was wrapped in,
    /// even once its object has left that context (here: deleted, and the delete saved).
    @Test func aWrapperWhoseObjectLeftItsContextRecordsOnThatContext() throws {
        let (container, stack) = try container(try ObjectModel(types: [Book.self]))
        try container.perform { try $0.insert(Book(title: "Dune")) }
        let context = stack.newBackgroundContext()
        let kept = PersistentContainer(managedObjectContext: { context }, cleanUpAfterExecution: false)
        let book = try kept.perform { managed in try #require(try managed.fetchOne(Book.all)) }
        try kept.perform { managed in
            managed.delete(book)
            try managed.instance.save()
            #expect(book.instance.context == nil)
            book.encode(\.title, "Emma")
            #expect(context.recordedError != nil)
            _ = context.takeRecordedError()
        }
    }

    /// A wrapper whose scope holds the layout of another entity than its object's stops the
    /// process, in release builds too: a whole-object copy would move slots laid out for another
    /// entity. (No fetch or insert makes one: the wrapper is made by hand here.)
    @Test func aWrapperWithTheLayoutOfAnotherEntityStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let title = AttributeDescription("title", .string)
            let year = AttributeDescription("year", .integer64)
            let model = try ObjectModel(entities: [
                EntityDescription(name: "Media", attributes: [title, year]), EntityDescription(name: "Other", attributes: [year, title]),
            ])
            let stack = PersistentStack(name: "Scopes", model: model)
            stack.persistentStoreDescriptions = [.inMemory()]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let other = try context.insert(entityName: "Other")
                let media = try #require(model.entity(named: "Media"))
                _ = ManagedObject(instance: other, scope: WrapperScope<Medium>(context: context, entity: media))
            }
        }
        // Release builds stop without the message (a `preconditionFailure`).
        #if DEBUG
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("a ManagedObject<Medium> was made with the layout of another entity than its object's"), "\(message)")
        #else
            _ = result
        #endif
    }
}
