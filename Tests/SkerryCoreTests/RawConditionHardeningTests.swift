import Foundation
import Testing

@testable import SkerryCore

/// Regression tests for the query-side bugs of the engine review: raw SQL conditions on unsaved
/// objects, their placeholders and their escapes, deep predicates, and errors during in-memory
/// evaluation.
@Suite struct RawConditionHardeningTests {
    private func titles(_ context: ObjectContext, _ predicate: FetchPredicate) throws -> [String] {
        try context.fetch(FetchRequest(entityName: "Book", predicate: predicate)).map { try $0.value(forKey: "title", as: String.self) }
            .sorted()
    }

    @Test(arguments: StoreKind.allCases)
    func unsavedObjectsCompareWithTheColumnsTypes(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        // Text compared with an INTEGER column is converted by the column's affinity, in the table
        // and now for unsaved objects too (before: no affinity, no match).
        let predicates: [FetchPredicate] = [
            .sql("year = ?", [.string("1965")]),
            .sql("year = '1965'", []),
            .sql("rating > '4'", []),
        ]
        try context.performAndWait {
            try context.insertBook("Dune", year: 1965).setValue(4.5, forKey: "rating")
            try context.insertBook("Emma", year: 1815)
            for predicate in predicates { #expect(try titles(context, predicate) == ["Dune"], "unsaved: \(predicate)") }
            try context.save()
            context.reset()
            for predicate in predicates { #expect(try titles(context, predicate) == ["Dune"], "saved: \(predicate)") }
        }
    }

    @Test func aRawConditionOnManyUnsavedObjectsIsOneStatement() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<200 { try context.insertBook("Book \(index)", year: Int32(1900 + index)) }
            let before = stack.statistics
            let found = try context.fetch(
                FetchRequest(entityName: "Book", predicate: .sql("year % 2 = ? AND title LIKE ?", [.int(0), .string("Book 1%")])))
            let statements = stack.statistics.since(before).statementsExecuted
            #expect(found.count == 55) // 10–19 and 100–199, even ones only
            #expect(statements <= 2, "\(statements) statements: one for the stored rows, one for all unsaved objects")
        }
    }

    @Test func questionMarksInsideStringsAreNotPlaceholders() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Why?", year: 1965)
            try context.insertBook("Because", year: 1965)
            let predicate = FetchPredicate.sql("title = 'Why?' AND year = ?", [.int(1965)])
            #expect(try titles(context, predicate) == ["Why?"])
            try context.save()
            context.reset()
            #expect(try titles(context, predicate) == ["Why?"])
            #expect(try titles(context, .sql("\"title\" = ? -- a comment with ? in it", [.string("Because")])) == ["Because"])
            expectError(.invalidArgument) { _ = try titles(context, .sql("title = ?1", [.string("Why?")])) }
            expectError(.invalidArgument) { _ = try titles(context, .sql("title = :name", [.string("Why?")])) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRawConditionCannotLeaveItsParenthesesOrReadOtherTables(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune", year: 1965)
            try context.insertBook("Emma", year: 1815)
            try context.save()
            let escapes = [
                "1) OR 1=1 --",
                "year = 0) OR (1 = 1",
                "1) UNION SELECT \"key\", \"value\" FROM _skerry_metadata --",
                "(SELECT count(*) FROM _skerry_metadata) > 0",
                "year IN (SELECT \"next\" FROM _skerry_keys)",
                "_pk > 0",
                "1; DROP TABLE Book",
                "title = 'unterminated",
                "1 /* open comment",
                "year > 1 UNION SELECT 1",
            ]
            for condition in escapes {
                expectError(.invalidArgument) { _ = try titles(context, .sql(condition, [])) }
                expectError(.invalidArgument) {
                    _ = try context.count(for: FetchRequest(entityName: "Book", predicate: .sql(condition, [])))
                }
                expectError(.invalidArgument) {
                    _ = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: .sql(condition, [])))
                }
            }
            // A condition may read its own table in a subquery, and end in a comment.
            #expect(try titles(context, .sql("year = (SELECT max(year) FROM \"Book\") -- the latest", [])) == ["Dune"])
            #expect(try titles(context, .sql("year > ? -- recent", [.int(1900)])) == ["Dune"])
            try context.insertBook("Solaris", year: 1961) // unsaved: evaluated by SQLite over its values
            #expect(try titles(context, .sql("year > ? -- recent", [.int(1900)])) == ["Dune", "Solaris"])
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 3)
        }
    }

    @Test func deepPredicatesAreATypedErrorNeverAStackOverflow() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune", year: 1965)
            var deepNot = AttributeKey("year") > 1960
            for _ in 0..<1_000 { deepNot = !deepNot }
            var deepAnd = AttributeKey("year") > 1960
            for index in 0..<1_000 { deepAnd = .and([deepAnd, AttributeKey("year") != Int32(index)]) }
            for predicate in [deepNot, deepAnd] {
                expectError(.invalidArgument) { _ = try titles(context, predicate) } // in memory
                expectError(.invalidArgument) { _ = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: predicate)) }
            }
            // `&&` in a loop stays flat: a thousand conditions work, in memory and in SQL.
            var flat = AttributeKey("year") > 1960
            for index in 0..<1_000 { flat = flat && AttributeKey("year") != Int32(index) }
            #expect(try titles(context, flat) == ["Dune"])
            // A predicate 28 levels deep runs in SQL and in memory alike. (SQLite's parser, with
            // its fixed stack, refuses SQL much deeper than that with a typed `.sqlite` error.)
            var deepest = AttributeKey("year") > 1960
            for _ in 0..<14 { deepest = .not(.and([deepest, .constant(true)])) }
            #expect(try titles(context, deepest) == ["Dune"])
            try context.save()
            context.reset()
            #expect(try titles(context, deepest) == ["Dune"])
            #expect(try titles(context, flat) == ["Dune"])
        }
    }

    @Test func anErrorLoadingARelatedObjectReachesTheFetch() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory, model: GraphFixtures.model(), name: "Graph")
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            let shelf = try writer.insertNamed("Shelf", "Top")
            try writer.insertNamed("Book", "Dune").setRelatedObject(shelf, forKey: "shelf")
            try writer.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let book = try reader.fetch(FetchRequest(entityName: "Book"))[0]
            // The shelf is not loaded: reading its name needs its row.
            try book.setValue("Dune (revised)", forKey: "title") // a pending change: matched in memory
        }
        // The shelf's row goes away behind the reader's back (another process).
        try rawSQL(directory.file("Graph.sqlite"), "DELETE FROM Shelf")
        reader.performAndWait {
            // Before: the missing shelf counted as "no match" and the fetch returned nothing.
            expectError(.objectNotFound) {
                _ = try reader.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("shelf.name") == "Top"))
            }
        }
    }
}
