import Foundation
import Testing

@testable import SkerryCore

@Suite struct RawPredicateTests {
    @Test(arguments: StoreKind.allCases)
    func aRawConditionAnswersTheSameForSavedAndUnsavedObjects(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let condition = FetchPredicate.sql("(year BETWEEN ? AND ?) OR title LIKE ?", [.int(1960), .int(1969), .string("E%")])
        let request = FetchRequest(entityName: "Book", predicate: condition, sortKeys: [SortKey("title")])
        let books: [(String, Int32?)] = [("Dune", 1965), ("Solaris", 1961), ("Emma", 1815), ("Neuromancer", 1984), ("Untitled", nil)]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for (title, year) in books { try context.insertBook(title, year: year) }
            let unsaved = try context.fetch(request).map(\.title) // SQLite over each object's values
            try context.save()
            context.reset()
            let saved = try context.fetch(request).map(\.title) // SQL on the table
            #expect(unsaved == ["Dune", "Emma", "Solaris"])
            #expect(saved == unsaved)
        }
    }

    @Test func valuesAreBoundAndBadConditionsAreRefused() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("x' OR 1=1 --")
            try context.insertBook("Dune")
            try context.save()
            let match = try context.fetch(FetchRequest(entityName: "Book", predicate: .sql("title = ?", [.string("x' OR 1=1 --")])))
            #expect(match.map(\.title) == ["x' OR 1=1 --"])
            expectError(.invalidArgument) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: .sql("1); DROP TABLE Book", [])))
            }
            expectError(.invalidArgument) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: .sql("title = ? AND year = ?", [.string("Dune")])))
            }
            expectError(.invalidArgument) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: .sql("no_such_column = 1", [])))
            }
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 2)
        }
    }
}

private extension EntityObject {
    var title: String { (try? value(forKey: "title", as: String.self)) ?? "?" }
}
