import Foundation
import Skerry
import SkerryCore
import Testing

/// String predicates as Sworm writes them, in a file that imports Foundation too and names
/// `Predicate` unqualified.
@Suite struct StringPredicateTests {
    private static let books = [
        Book(title: "Dune", year: 1965, isbn: "1", genre: .fiction, price: Money(cents: 1000)),
        Book(title: "Solaris", year: 1961, isbn: "2", genre: .essay, price: Money(cents: 800), inPrint: false),
        Book(title: "The Waste Land", year: 1922, isbn: "3", genre: .poetry, price: Money(cents: 500)),
        Book(title: "Leaves of Grass", genre: .poetry, price: Money(cents: 500)),
    ]

    private func titles(_ request: Request<Book>) throws -> [String] {
        let stack = try makeStack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in for book in Self.books { try context.insert(book) } }
        let saved = try container.perform { try $0.fetch(request.sort(\Book.title), \Book.title) }
        // The same request over unsaved objects answers the same.
        let unsavedStack = try makeStack()
        let unsaved = PersistentContainer(managedObjectContext: { unsavedStack.newBackgroundContext() })
        let fromMemory = try unsaved.perform { context in
            for book in Self.books { try context.insert(book) }
            return try context.fetch(request.sort(\Book.title), \Book.title)
        }
        #expect(saved == fromMemory)
        return saved
    }

    @Test func stringsAndTypedPredicatesCombine() throws {
        // doc: typed-string-predicates
        let recentFiction: Predicate = \Book.year > 1960 && !"genre == 'poetry'"
        let request = Book.all.where(recentFiction || "title BEGINSWITH[c] 'leaves'")
        // doc: end
        #expect(try titles(request) == ["Dune", "Leaves of Grass", "Solaris"])
        #expect(try titles(Book.all.where("year == nil OR inPrint == NO")) == ["Leaves of Grass", "Solaris"])
        let format = "title CONTAINS 'a'"
        #expect(try titles(Book.all.where(format)) == ["Leaves of Grass", "Solaris", "The Waste Land"])
        #expect(try titles(Book.all.where(!"title CONTAINS 'a'" && \Book.inPrint == true)) == ["Dune"])
    }

    @Test func rawPredicatesTakeFormatsAndArgumentsAsInSworm() throws {
        // doc: typed-where-raw
        let request = Book.all.where(raw: "year BETWEEN {%d, %d} AND genre != %@", 1950, 1970, Genre.poetry)
        // doc: end
        #expect(try titles(request) == ["Dune", "Solaris"])
        #expect(
            try titles(Book.all.where(raw: "genre IN %@", [Genre.essay, Genre.poetry])) == ["Leaves of Grass", "Solaris", "The Waste Land"])
        #expect(try titles(Book.all.where(Predicate(format: "%K < %@", "year", 1962))) == ["Solaris", "The Waste Land"])
        #expect(try titles(Book.all.where(sql: "year < ? -- the early ones", 1962)) == ["Solaris", "The Waste Land"])
    }

    @Test func malformedStringsAreTypedErrorsAtFetch() throws {
        let stack = try makeStack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        do {
            _ = try container.perform { try $0.fetch(Book.all.where(\Book.year > 1 && "year >")) }
            Issue.record("no error")
        } catch let error as SkerryError {
            #expect(error.code == .invalidPredicateFormat)
            #expect(error.predicateSyntax?.offset == 6)
        }
    }

    @Test func sortThroughAToOneRelation() throws {
        let stack = PersistentStack(name: "Sorting", model: try ObjectModel(types: [Writer.self, Work.self, Picture.self, Anthology.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        func insert(_ context: ManagedObjectContext) throws {
            let lem = try context.insert(Writer(name: "Lem"))
            let austen = try context.insert(Writer(name: "Austen"))
            try context.insert(Work(title: "Solaris")).writer = lem
            try context.insert(Work(title: "Emma")).writer = austen
            try context.insert(Work(title: "Persuasion")).writer = austen
            _ = try context.insert(Work(title: "Anonymous"))
        }
        // doc: typed-sort-through-relation
        let request = Work.all.sort(\.writer, \Writer.name).sort(\Work.title)
        // doc: end
        let unsaved = try container.perform { context in
            try insert(context)
            return try context.fetch(request, \Work.title)
        }
        let saved = try container.perform { try $0.fetch(request, \Work.title) }
        #expect(unsaved == ["Anonymous", "Emma", "Persuasion", "Solaris"])
        #expect(saved == unsaved)
        #expect(
            try container.perform { try $0.fetch(Work.all.sort(\.writer, \Writer.name, ascending: false).sort(\Work.title), \Work.title) }
                == ["Solaris", "Emma", "Persuasion", "Anonymous"])
    }
}
