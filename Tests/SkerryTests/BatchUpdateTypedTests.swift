import Foundation
import Skerry
import SkerryCore
import Testing

/// The typed batch update with the attribute kinds a model type declares: an enum, a JSON value,
/// a custom primitive, a unique attribute.
@Suite struct BatchUpdateTypedTests {
    @Test(arguments: [false, true])
    func setsEnumsJSONValuesAndCustomTypesAsASaveWrites(inFile: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) } // a temporary folder; nothing to report
        let stack = try makeStack(in: inFile ? directory : nil)
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context throws in
            try context.insert(Book(title: "Dune", isbn: "1"))
            try context.insert(Book(title: "Emma", isbn: "2"))
        }
        let books = try container.perform { context throws in
            let held = try context.fetch(Book.all)
            #expect(try context.batchUpdate(Book.all, set: \Book.genre, to: .poetry) == 2)
            #expect(try context.batchUpdate(Book.all, set: \Book.dimensions, to: Dimensions(width: 1.5, height: 2)) == 2)
            #expect(try context.batchUpdate(Book.all.where(\Book.title == "Dune"), set: \Book.price, to: Money(cents: 42)) == 1)
            // Both books cannot take one ISBN: nothing is written.
            #expect(throws: SkerryError.self) { try context.batchUpdate(Book.all, set: \Book.isbn, to: "3") }
            // The objects this context holds were brought up to date.
            return try held.map { try $0.decode() }
        }
        let stored = try container.perform { try $0.fetch(Book.all.sort(\Book.title)).map { try $0.decode() } }
        for list in [books.sorted { $0.title < $1.title }, stored] {
            #expect(list.map(\.genre) == [.poetry, .poetry])
            #expect(list.map(\.dimensions) == [Dimensions(width: 1.5, height: 2), Dimensions(width: 1.5, height: 2)])
            #expect(list.map(\.price) == [Money(cents: 42), Money(cents: 0)])
            #expect(list.map(\.isbn) == ["1", "2"])
        }
        #expect(try container.perform { try $0.count(of: Book.all.where(\Book.genre == .poetry)) } == 2)
    }
}
