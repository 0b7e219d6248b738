import Foundation
import Testing

@testable import SkerryCore

/// `isIn` and object-ID lists longer than the stores' limits on parameters (SQLite: 32,766 in a
/// statement by default; PostgreSQL: 65,535, and libpq lost the connection past about 7,500):
/// they answer as the same short list does, on every store.
@Suite struct LongListHardeningTests {
    /// Past the padding limit (1,024), where a list is one parameter: enough to check that each
    /// type compares as in a short list.
    static let longCount = 1_500
    /// More values than PostgreSQL took (before: about 7,500, libpq lost the connection) and
    /// than SQLite's default limit (32,766).
    static let veryLongCount = 40_000

    /// Three books, each with a value of its own in every attribute.
    private static func insertBooks(_ context: ObjectContext) throws {
        for index in 0..<3 {
            let book = try context.insertBook("b\(index)", year: Int32(1990 + index), isbn: "isbn \"\(index)\" \\ é")
            try book.setValue(Int16(100 + index), forKey: "pages")
            try book.setValue(Int64(1) << 40 + Int64(index), forKey: "sales")
            try book.setValue(0.1 + Double(index), forKey: "rating")
            try book.setValue(Float(0.3) + Float(index), forKey: "weight")
            try book.setValue(Decimal(string: "12.\(index)5")!, forKey: "price")
            try book.setValue(Date(timeIntervalSinceReferenceDate: 0.123456 + Double(index) * 86_400 * 400), forKey: "published")
            try book.setValue(index == 1, forKey: "inPrint")
            try book.setValue(Data([0, UInt8(index), 0xFF]), forKey: "cover")
            try book.setValue(UUID(uuidString: "00000000-0000-0000-0000-00000000000\(index)")!, forKey: "uuid")
            try book.setValue(URL(string: "https://example.com/\(index)?q=\"x\"")!, forKey: "link")
        }
        try context.save()
    }

    /// The values of books 0 and 2 of `key`, and `count` other values of the same type that no
    /// book holds (with the two among them).
    private static func lists(_ key: String, count: Int) -> (short: [AttributeValue], long: [AttributeValue]) {
        func value(_ i: Int) -> AttributeValue {
            switch key {
            case "year": return .int(Int64(10_000 + i))
            case "pages": return .int(Int64(i % 2 == 0 ? -i : i + 1_000))
            case "sales": return .int(Int64(1) << 41 + Int64(i))
            case "rating": return .double(0.1 + Double(i) + 0.5)
            case "weight": return .double(Double(Float(0.3) + Float(i) + 0.5))
            case "price": return .decimal(Decimal(string: "13.\(i)")!)
            case "published": return .date(Date(timeIntervalSinceReferenceDate: 0.123456 + Double(i) * 3.5 + 1))
            case "isbn": return .string("isbn \"\(i + 3)\" \\ é")
            case "cover": return .data(Data([1, UInt8(i % 256), UInt8(i / 256 % 256), UInt8(i / 65_536)]))
            case "uuid": return .uuid(UUID(uuidString: String(format: "10000000-0000-0000-0000-%012x", i))!)
            case "link": return .url(URL(string: "https://example.com/\(i + 3)")!)
            default: fatalError(key)
            }
        }
        func stored(_ index: Int) -> AttributeValue {
            switch key {
            case "year": return .int(Int64(1990 + index))
            case "pages": return .int(Int64(100 + index))
            case "sales": return .int(Int64(1) << 40 + Int64(index))
            case "rating": return .double(0.1 + Double(index))
            case "weight": return .double(Double(Float(0.3) + Float(index)))
            case "price": return .decimal(Decimal(string: "12.\(index)5")!)
            case "published": return .date(Date(timeIntervalSinceReferenceDate: 0.123456 + Double(index) * 86_400 * 400))
            case "isbn": return .string("isbn \"\(index)\" \\ é")
            case "cover": return .data(Data([0, UInt8(index), 0xFF]))
            case "uuid": return .uuid(UUID(uuidString: "00000000-0000-0000-0000-00000000000\(index)")!)
            case "link": return .url(URL(string: "https://example.com/\(index)?q=\"x\"")!)
            default: fatalError(key)
            }
        }
        let short = [stored(0), stored(2)]
        var long = (0..<count).map(value)
        long.insert(short[0], at: count / 3)
        long.insert(.null, at: count / 2)
        long.append(short[1])
        return (short, long)
    }

    static let keys = ["year", "pages", "sales", "rating", "weight", "price", "published", "isbn", "cover", "uuid", "link"]

    @Test(arguments: StoreKind.allCases)
    func longIsInListsAnswerAsShortOnesDo(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try Self.insertBooks(context)
            func titles(_ predicate: FetchPredicate) throws -> [String] {
                let request = FetchRequest(entityName: "Book", predicate: predicate, sortKeys: [SortKey("title")])
                return try context.fetch(request).map { try #require($0.value(forKey: "title") as? String) }
            }
            for key in Self.keys {
                let (short, long) = Self.lists(key, count: Self.longCount)
                let expected = try titles(.isIn(key: key, short))
                #expect(expected == ["b0", "b2"], "\(key)")
                #expect(try titles(.isIn(key: key, long)) == expected, "\(key)")
                #expect(try titles(!.isIn(key: key, long)) == ["b1"], "\(key)")
                let count = try context.count(for: FetchRequest(entityName: "Book", predicate: .isIn(key: key, long)))
                #expect(count == 2, "\(key)")
            }
            // Integers compared with a list holding fractions too.
            let mixed: [AttributeValue] = (0..<Self.longCount).map { .double(Double($0) + 0.5) } + [.int(1990), .double(1992)]
            #expect(try titles(.isIn(key: "year", mixed)) == ["b0", "b2"])
            // Once, a list longer than the stores took: strings, the most common long list.
            let (_, veryLong) = Self.lists("isbn", count: Self.veryLongCount)
            #expect(try titles(.isIn(key: "isbn", veryLong)) == ["b0", "b2"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func longObjectIDListsAnswer(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try Self.insertBooks(context)
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            let first = books[0].objectID
            var ids = (0..<Self.veryLongCount).map { ObjectID(space: first.space, key: first.key + 1_000 + Int64($0)) }
            ids.insert(first, at: Self.veryLongCount / 2)
            ids.append(books[2].objectID)
            let request = FetchRequest(entityName: "Book", predicate: .isObject(keyPath: "", in: ids), sortKeys: [SortKey("title")])
            #expect(try context.fetch(request).map { $0.objectID } == [books[0].objectID, books[2].objectID])
            let deleted = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: .isObject(keyPath: "", in: ids)))
            #expect(deleted.count == 2)
        }
    }
}

extension LongListHardeningTests {
    @Test func aListLongerThanTheSQLiteLibraryTakesAsParametersAnswers() throws {
        // Before: one parameter per value, and SQLite refused the statement ("too many SQL
        // variables"). The limit is the linked library's: 32,766 by default, 250,000 in Debian's.
        let limit = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1).parameterLimit
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try Self.insertBooks(context)
            let years = (0...limit).map { Int64(3_000 + $0) } + [1991]
            let found = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("year").isIn(years)))
            #expect(try found.map { try $0.value(forKey: "title") as? String } == ["b1"])
        }
    }
}

extension LongListHardeningTests {
    @Test(.enabled(if: PostgresTestServer.isAvailable)) func aPostgreSQLStatementWithTooManyParametersIsRefusedBeforeItIsSent() throws {
        // Before: the server's description of a statement with more than about 7,500 parameters
        // made libpq drop the connection ("lost synchronization with server").
        let (stack, _) = try makeStack(.postgres)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try Self.insertBooks(context)
            let markers = Array(repeating: "?", count: 8_000).joined(separator: ", ")
            let raw = FetchPredicate.sql("year IN (\(markers))", (0..<8_000).map { .int(Int64($0)) })
            let error = try #require(throws: SkerryError.self) { try context.count(for: FetchRequest(entityName: "Book", predicate: raw)) }
            #expect(error.message.contains("8000 parameters"), "\(error)")
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 3)
        }
    }
}
