import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore

/// A completed `migratePersistentStore` is reported to the stack's event observers as
/// `.storeMigrated`: both stores, their identifiers, how many objects moved, how long it took; a
/// move that fails reports none.
@Suite struct StoreMigratedEventTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)]),
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
        ])
    }

    /// A stack on a new SQLite file with `authors` authors of three books each, and the events it
    /// reports from now on.
    static func stack(_ directory: TemporaryDirectory, authors: Int) throws -> (PersistentStack, Locked<[StackEvent]>, EventObservation) {
        let stack = PersistentStack(name: "Library", model: try model())
        stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("Library.sqlite"))]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<authors {
                let author = try context.insert(entityName: "Author")
                try author.setValue("author \(index)", forKey: "name")
                for number in 0..<3 {
                    let book = try context.insert(entityName: "Book")
                    try book.setValue("book \(index).\(number)", forKey: "title")
                    try book.setRelatedObject(author, forKey: "author")
                }
            }
            try context.save()
        }
        let events = Locked<[StackEvent]>([])
        let observation = stack.addEventObserver { event in events.append(event) }
        return (stack, events, observation)
    }

    /// The store identifier in the URIs of `entity`'s objects in `stack`'s store.
    static func storeIdentifier(_ stack: PersistentStack) throws -> String? {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Author")).first?.objectID.uriRepresentation().host
        }
    }

    static func moves(_ events: [StackEvent]) -> [StoreMigrationEvent] {
        events.compactMap { if case .storeMigrated(let move) = $0 { move } else { nil } }
    }

    @Test func aMoveIsReportedWithBothStoresTheObjectsAndTheDuration() throws {
        let directory = TemporaryDirectory()
        let (stack, events, observation) = try Self.stack(directory, authors: 4)
        defer { observation.cancel() }
        let coordinator = stack.persistentStoreCoordinator
        let old = coordinator.persistentStores[0]
        let oldIdentifier = try #require(try Self.storeIdentifier(stack))

        let moved = try coordinator.migratePersistentStore(old, to: .inMemory())

        let reported = Self.moves(events.value)
        #expect(reported.count == 1)
        let move = try #require(reported.first)
        #expect(move.source == old)
        #expect(move.destination == moved)
        #expect(move.source.kind == .sqlite && move.destination.kind == .inMemory)
        #expect(move.sourceIdentifier == oldIdentifier)
        #expect(move.destinationIdentifier == (try Self.storeIdentifier(stack)))
        #expect(move.sourceIdentifier != move.destinationIdentifier)
        #expect(move.objectCount == 4 + 12)
        #expect(move.duration > .zero)
        // Reported after the destination's load.
        let loaded = events.value.lastIndex { if case .storeLoaded = $0 { true } else { false } }
        let migrated = events.value.firstIndex { if case .storeMigrated = $0 { true } else { false } }
        #expect(try #require(loaded) < #require(migrated))
    }

    @Test func aMoveThatFailsIsNotReported() throws {
        let directory = TemporaryDirectory()
        let (stack, events, observation) = try Self.stack(directory, authors: 2)
        defer { observation.cancel() }
        // A destination that holds objects is refused.
        let otherDirectory = TemporaryDirectory()
        let (other, _, otherObservation) = try Self.stack(otherDirectory, authors: 1)
        otherObservation.cancel()
        let full = other.persistentStoreCoordinator.persistentStores[0]
        let coordinator = stack.persistentStoreCoordinator
        #expect(throws: SkerryError.self) { try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: full) }
        #expect(Self.moves(events.value).isEmpty)
    }

    @Test func anEmptyStoreMoveReportsNoObjects() throws {
        let directory = TemporaryDirectory()
        let (stack, events, observation) = try Self.stack(directory, authors: 0)
        defer { observation.cancel() }
        let coordinator = stack.persistentStoreCoordinator
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: directory.file("New.sqlite"), withType: SQLiteStoreType)
        #expect(Self.moves(events.value).map(\.objectCount) == [0])
    }
}
