import Foundation
import Testing

@testable import SkerryCore

/// `isIn` lists of varying length: the statements a connection keeps stay few, and the padded
/// lists match exactly what the lists match.
@Suite struct StatementCacheTests {
    /// The number of statements each connection of the store's pool keeps: (writer, reader).
    private func cachedCounts(_ stack: PersistentStack) throws -> (writer: Int, reader: Int) {
        let store = try #require(stack.coordinator.loadedStores.first as? SQLiteStore)
        return (
            try store.pool.write { $0.cachedStatementCount },
            try store.pool.read { $0.cachedStatementCount }
        )
    }

    @Test func listsOfEveryLengthReuseAFewStatements() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let context = stack.newBackgroundContext()
        let titles = (0..<300).map { "Book \($0)" }
        try context.performAndWait {
            for (position, title) in titles.enumerated() where position.isMultiple(of: 3) {
                try context.insertBook(title, year: Int32(position))
            }
            try context.save()
            // Lists of 1 to 300 titles (a third of them stored), and of years, in both kinds of
            // IN list: each answer is what the list names, no more.
            for length in 1...titles.count {
                let listed = Array(titles.prefix(length))
                let found = try context.fetch(
                    FetchRequest(entityName: "Book", predicate: AttributeKey("title").isIn(listed), sortKeys: [SortKey("title")]))
                #expect(found.count == (length + 2) / 3, "\(length)")
                let years = (0..<length).map { Int32($0) }
                #expect(
                    try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("year").isIn(years))) == (length + 2)
                        / 3)
            }
        }
        // One statement per padded length (1, 2, 4 … 512: 10) and kind of request, not one per length.
        let counts = try cachedCounts(stack)
        #expect(counts.reader <= 24, "reader keeps \(counts.reader) statements")
        #expect(counts.writer <= 24, "writer keeps \(counts.writer) statements")
    }

    @Test func listsLongerThanThePaddingLimitAnswerAndShareOneStatement() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for year in [1, 5000, 9999] { try context.insertBook("Year \(year)", year: Int32(year)) }
            try context.save()
            _ = try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("year").isIn([Int32(1)])))
        }
        let before = try cachedCounts(stack)
        try context.performAndWait {
            for length in [SQLBuilder.preparedParameterLimit + 1, 3000, 5000] {
                let years = (0..<length).map { Int32($0 * 2 + 1) } // odd years from 1
                let expected = [1, 5000, 9999].filter { $0 % 2 == 1 && $0 < length * 2 }.count
                let found = try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("year").isIn(years)))
                #expect(found == expected, "\(length)")
            }
        }
        // Bound as one parameter: one statement for every long list (the fetch's count), kept.
        let after = try cachedCounts(stack)
        #expect(after.reader == before.reader + 1)
    }

    @Test func paddingRepeatsTheLastValueUpToAPowerOfTwo() {
        #expect(SQLBuilder.paddedList([Int]()) == [])
        #expect(SQLBuilder.paddedList([7]) == [7])
        #expect(SQLBuilder.paddedList([1, 2, 3]) == [1, 2, 3, 3])
        #expect(SQLBuilder.paddedList(Array(1...5)) == [1, 2, 3, 4, 5, 5, 5, 5])
        #expect(SQLBuilder.paddedList(Array(1...1024)).count == 1024)
        #expect(SQLBuilder.paddedList(Array(1...1025)).count == 1025)
    }
}
