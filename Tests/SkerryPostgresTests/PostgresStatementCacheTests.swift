import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// `isIn` lists longer than the padding limit on a PostgreSQL store: they answer, as one array
/// parameter, so that lists of any length share one statement. Statements with many parameters
/// (raw SQL conditions) are not kept prepared on the server, so that they neither pile up there
/// nor fill the connection's cache (which, full, is emptied: hot statements too). The same rule
/// as the SQLite store's (`SQLBuilder.keepsPrepared(parameterCount:)`; StatementCacheTests).
@Suite(.postgres) struct PostgresStatementCacheTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(name: "Reading", attributes: [AttributeDescription("year", .integer64)])
    ])

    /// The SQL of every statement prepared on the store's one connection.
    private func preparedStatements(_ store: PostgresStore) throws -> Set<String> {
        try store.pool.withConnection { connection in
            let result = try connection.query("SELECT statement FROM pg_prepared_statements")
            return Set((0..<result.rowCount).map { result.text($0, 0) })
        }
    }

    @Test func listsLongerThanThePaddingLimitAnswerAndLeaveThePreparedStatementsAlone() throws {
        // One connection, so that the server's list of its prepared statements is the store's.
        let stack = try PostgresTestServer.stack(Self.model, PostgresTestServer.newSchema(), name: "Lists", maximumConnections: 1)
        let store = try #require(stack.coordinator.loadedStores.first as? PostgresStore)
        let context = stack.newBackgroundContext()
        let stored = [1, 5000, 9999]
        func request(_ years: [Int64]) -> FetchRequest {
            FetchRequest(entityName: "Reading", predicate: AttributeKey("year").isIn(years), sortKeys: [SortKey("year")])
        }
        try context.performAndWait {
            for year in stored { try context.insert(entityName: "Reading").setValue(Int64(year), forKey: "year") }
            try context.save()
            // The statements a store runs again and again: a short list, fetched and counted.
            #expect(try context.fetch(request([1])).count == 1)
            #expect(try context.count(for: request([1])) == 1)
        }
        let before = try preparedStatements(store)
        try context.performAndWait {
            // Lists of lengths no two alike, past the limit: each answer is what its list names.
            let lengths = Array(SQLBuilder.preparedParameterLimit + 1...SQLBuilder.preparedParameterLimit + 24) + [3000, 5000]
            for length in lengths {
                let years = (0..<length).map { Int64($0 * 2 + 1) } // odd years from 1
                let expected = stored.filter { $0 % 2 == 1 && $0 < length * 2 }
                let found = try context.fetch(request(years)).map { try $0.value(forKey: "year") as? Int64 }
                #expect(found == expected.map { Int64($0) }, "\(length)")
                #expect(try context.count(for: request(years)) == expected.count, "\(length)")
            }
        }
        // Nothing dropped: the kept statements are still prepared; the long lists, each one
        // array parameter, added one statement for the fetch and one for the count.
        let afterLists = try preparedStatements(store)
        #expect(afterLists.isSuperset(of: before))
        #expect(afterLists.subtracting(before).count == 2)
        #expect(afterLists.subtracting(before).allSatisfy { $0.contains("= ANY($1::bigint[])") }, "\(afterLists.subtracting(before))")
        try context.performAndWait {
            // Through the write path too: a batch delete by a long list.
            let deleted = try context.execute(
                BatchDeleteRequest(entityName: "Reading", predicate: AttributeKey("year").isIn((0..<2000).map { Int64($0) })))
            #expect(deleted.count == 1)
            #expect(try context.count(for: request(stored.map { Int64($0) })) == 2)
        }
        let longest = "$\(SQLBuilder.preparedParameterLimit + 1)"
        #expect(try preparedStatements(store).allSatisfy { !$0.contains(longest) })
        // Raw SQL conditions, short and as long, answer too. The server checks each one by a
        // statement of its own (prepared, explained, deallocated): none of those is left prepared.
        try context.performAndWait {
            #expect(try context.count(for: FetchRequest(entityName: "Reading", predicate: .sql("year > ?", [.int(6000)]))) == 1)
            let markers = Array(repeating: "?", count: 2000).joined(separator: ", ")
            let years = (0..<2000).map { AttributeValue.int(Int64($0 * 5)) }
            let raw = FetchRequest(entityName: "Reading", predicate: .sql("year IN (\(markers))", years))
            let found = try context.count(for: raw)
            #expect(found == 1)
        }
        let prepared = try preparedStatements(store)
        #expect(
            prepared.allSatisfy { !$0.contains(longest) && !$0.hasPrefix("EXPLAIN") && !$0.hasPrefix("SELECT 1 FROM (SELECT") },
            "\(prepared)")
    }
}
