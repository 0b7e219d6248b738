import Foundation
import Testing

@testable import SkerryCore

// MARK: - Data set

/// One book of the predicate data set, as plain Swift values.
private struct BookSpec: Sendable {
    var title: String
    var year: Int32?
    var pages: Int16?
    var sales: Int64
    var rating: Double?
    var weight: Float?
    var price: Decimal?
    var published: Date?
    var inPrint: Bool
    var cover: Data?
    var isbn: String?
    var uuid: UUID?
    var link: URL?

    func insert(into context: ObjectContext) throws {
        let book = try context.insert(entityName: "Book")
        try book.setValue(title, forKey: "title")
        try book.setValue(year, forKey: "year")
        try book.setValue(pages, forKey: "pages")
        try book.setValue(sales, forKey: "sales")
        try book.setValue(rating, forKey: "rating")
        try book.setValue(weight, forKey: "weight")
        try book.setValue(price, forKey: "price")
        try book.setValue(published, forKey: "published")
        try book.setValue(inPrint, forKey: "inPrint")
        try book.setValue(cover, forKey: "cover")
        try book.setValue(isbn, forKey: "isbn")
        try book.setValue(uuid, forKey: "uuid")
        try book.setValue(link, forKey: "link")
    }
}

private let dataSetTitles: [String] = [
    "Dune", "dune", "DUNE MESSIAH", "Children of Dune",
    "Crème brûlée", "creme fraiche", "CRÈME", "Cre\u{0300}me de\u{0301}compose\u{0301}e",
    "Café society", "cafe racer", "Über alles", "uber driver", "Straße", "STRASSE",
    "Ångström units", "naïve art", "Naive Bayes", "résumé", "Resume writing",
    "📚 Reading list", "Party 🎉 time", "👩‍💻 coder", "",
    "a?b", "a*b", "axb", "ab", "a", "100% pure", "under_score",
    "x' OR 1=1 --", "Robert'); DROP TABLE \"Book\";--",
    "Σίσυφος", "日本語の本", "Neuromancer", "Foundation", "foundation and empire",
    "The Hobbit", "the hobbit", "Zebra", "zebra crossing", "Hyperion",
]

private let priceTexts = ["9.5", "10.25", "100", "2", "0.1", "10", "-3.75", "9.75"]
private let years: [Int32?] = [nil, 1965, 1970, 1984, 1999, 2000, 2001, 2023, 1965, nil, 1984]

private func uuidNumber(_ i: Int) -> UUID {
    let a = UInt8(truncatingIfNeeded: i &* 37), b = UInt8(truncatingIfNeeded: i)
    return UUID(uuid: (a, b, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, b))
}

/// About 40 books with varied values, nils in every optional attribute and tricky titles.
private let dataSet: [BookSpec] = dataSetTitles.enumerated().map { i, title in
    BookSpec(
        title: title,
        year: years[i % years.count],
        pages: i % 5 == 0 ? nil : Int16(i * 37 % 900) - 20,
        sales: i % 6 == 0 ? 0 : Int64(i) * 123_457 % 5_000_000,
        rating: i % 4 == 0 ? nil : Double(i % 9) * 0.5 - 0.5,
        weight: i % 3 == 0 ? nil : Float(i % 7) * 0.25,
        price: i % 5 == 1 ? nil : Decimal(string: priceTexts[i % priceTexts.count])!,
        published: i % 6 == 2 ? nil : Date(timeIntervalSince1970: Double(i) * 86_400 * 97 - 100_000_000),
        inPrint: i % 3 != 1,
        cover: i % 4 == 1 ? nil : (i % 4 == 2 ? Data() : Data([UInt8(i % 3), UInt8(i)])),
        isbn: i % 7 == 3 ? nil : "isbn-\(i)",
        uuid: i % 5 == 4 ? nil : uuidNumber(i),
        link: i % 4 == 3 ? nil : URL(string: i % 2 == 0 ? "https://example.com/book/\(i)" : "http://Example.org/\(i)?q=\(i)")!
    )
}

private let referenceDate = Date(timeIntervalSince1970: 1_000_000_000)

/// Two contexts holding the data set: `saved` over a store where it was saved (fetches run as
/// SQL), `pending` over an empty store where it was inserted and not saved (fetches evaluate in
/// memory).
private struct TwoPaths {
    let savedStack: PersistentStack
    let pendingStack: PersistentStack
    let directories: [TemporaryDirectory?]
    let saved: ObjectContext
    let pending: ObjectContext

    init(_ kind: StoreKind, books: [BookSpec] = dataSet) throws {
        let (savedStack, d1) = try makeStack(kind)
        let (pendingStack, d2) = try makeStack(kind)
        self.savedStack = savedStack
        self.pendingStack = pendingStack
        directories = [d1, d2]
        saved = savedStack.newBackgroundContext()
        pending = pendingStack.newBackgroundContext()
        try saved.performAndWait {
            for book in books { try book.insert(into: saved) }
            try saved.save()
        }
        try pending.performAndWait {
            for book in books { try book.insert(into: pending) }
        }
    }

    /// Sorted titles fetched from the store (no pending changes).
    func storeTitles(_ predicate: FetchPredicate?) throws -> [String] {
        try saved.performAndWait {
            precondition(!saved.hasChanges)
            return try sortedTitles(saved.fetch(FetchRequest(entityName: "Book", predicate: predicate)))
        }
    }

    /// Sorted titles evaluated in memory over unsaved inserts.
    func memoryTitles(_ predicate: FetchPredicate?) throws -> [String] {
        try pending.performAndWait {
            precondition(pending.hasChanges)
            return try sortedTitles(pending.fetch(FetchRequest(entityName: "Book", predicate: predicate)))
        }
    }

    func storeCount(_ predicate: FetchPredicate?) throws -> Int {
        try saved.performAndWait { try saved.count(for: FetchRequest(entityName: "Book", predicate: predicate)) }
    }

    func memoryCount(_ predicate: FetchPredicate?) throws -> Int {
        try pending.performAndWait { try pending.count(for: FetchRequest(entityName: "Book", predicate: predicate)) }
    }
}

private func sortedTitles(_ objects: [EntityObject]) throws -> [String] {
    try objects.map { try $0.value(forKey: "title", as: String.self) }.sorted()
}

private let year: AttributeKey = "year"
private let title: AttributeKey = "title"

/// Predicates over every operator and attribute type, for the SQL/in-memory agreement test.
private let agreementCases: [(String, FetchPredicate)] = {
    let d = { (text: String) in Decimal(string: text)! }
    return [
        // Integers, with nils.
        ("year == 1965", year == Int32(1965)),
        ("year != 1965", year != Int32(1965)),
        ("year < 2000", year < Int32(2000)),
        ("year <= 1999", year <= Int32(1999)),
        ("year > 1984", year > Int32(1984)),
        ("year >= 2000", year >= Int32(2000)),
        ("year == nil (Optional)", year == Int32?.none),
        ("year != nil (Optional)", year != Int32?.none),
        ("year isNil", year.isNil),
        ("year isNotNil", year.isNotNil),
        ("year < nil", .comparison(key: "year", .lessThan, .null)),
        ("!(year < nil)", !.comparison(key: "year", .lessThan, .null)),
        ("year in [1965, 1984]", year.isIn([Int32(1965), 1984])),
        ("year in [1965, nil]", .isIn(key: "year", [.int(1965), .null])),
        ("!(year in [1965, nil])", !.isIn(key: "year", [.int(1965), .null])),
        ("year in []", year.isIn([Int32]())),
        ("!(year in [])", !year.isIn([Int32]())),
        ("year between 1970...2000", year.between(Int32(1970)...2000)),
        ("!(year between 1970...2000)", !year.between(Int32(1970)...2000)),
        ("year between nil and 2000", .between(key: "year", .null, .int(2000))),
        ("!(year between nil and 2000)", !.between(key: "year", .null, .int(2000))),
        ("year < 1984.5 (double operand)", year < 1984.5),
        ("year == 1965.0 (double operand)", year == 1965.0),
        ("!(year < 2000)", !(year < Int32(2000))),
        ("!(year == 1965)", !(year == Int32(1965))),
        ("!(year != 1965)", !(year != Int32(1965))),
        ("pages > 300", AttributeKey("pages") > Int16(300)),
        ("pages <= 0", AttributeKey("pages") <= Int16(0)),
        ("pages isNil", AttributeKey("pages").isNil),
        ("sales > 1_000_000", AttributeKey("sales") > Int64(1_000_000)),
        ("sales == 0", AttributeKey("sales") == Int64(0)),
        ("sales between", AttributeKey("sales").between(Int64(100_000)...Int64(2_000_000))),
        // Floating point.
        ("rating >= 2.5", AttributeKey("rating") >= 2.5),
        ("rating < 0", AttributeKey("rating") < 0.0),
        ("rating == 3 (int operand)", AttributeKey("rating") == 3),
        ("rating in [1.5, 2.5]", AttributeKey("rating").isIn([1.5, 2.5])),
        ("rating isNil", AttributeKey("rating").isNil),
        ("!(rating > 1)", !(AttributeKey("rating") > 1.0)),
        ("weight > 0.75 (Float)", AttributeKey("weight") > Float(0.75)),
        ("weight <= 1.25 (double operand)", AttributeKey("weight") <= 1.25),
        ("weight == 0.5", AttributeKey("weight") == Float(0.5)),
        // Decimal.
        ("price < 10", AttributeKey("price") < d("10")),
        ("price > 9.5", AttributeKey("price") > d("9.5")),
        ("price == 10.25", AttributeKey("price") == d("10.25")),
        ("price != 10.25", AttributeKey("price") != d("10.25")),
        ("price between 9.5...100", AttributeKey("price").between(d("9.5")...d("100"))),
        ("price in [2, 100]", AttributeKey("price").isIn([d("2"), d("100")])),
        ("price isNil", AttributeKey("price").isNil),
        ("price < 10 (int operand)", AttributeKey("price") < 10),
        ("price >= 9.75 (double operand)", AttributeKey("price") >= 9.75),
        ("!(price < 1)", !(AttributeKey("price") < d("1"))),
        // Dates, booleans, data, UUIDs, URLs, optional strings.
        ("published < reference", AttributeKey("published") < referenceDate),
        ("published between", AttributeKey("published").between(Date(timeIntervalSince1970: -50_000_000)...referenceDate)),
        ("published isNil", AttributeKey("published").isNil),
        ("inPrint == true", AttributeKey("inPrint") == true),
        ("inPrint == false", AttributeKey("inPrint") == false),
        ("inPrint != true", AttributeKey("inPrint") != true),
        ("cover == empty", AttributeKey("cover") == Data()),
        ("cover == [1, 5]", AttributeKey("cover") == Data([1, 5])),
        ("cover > [1]", AttributeKey("cover") > Data([1])),
        ("cover isNil", AttributeKey("cover").isNil),
        ("cover isNotNil", AttributeKey("cover").isNotNil),
        ("isbn == isbn-5", AttributeKey("isbn") == "isbn-5"),
        ("isbn beginsWith isbn-1", AttributeKey("isbn").beginsWith("isbn-1")),
        ("isbn isNil", AttributeKey("isbn").isNil),
        ("isbn in", AttributeKey("isbn").isIn(["isbn-2", "isbn-4", "nope"])),
        ("!(isbn contains 1)", !AttributeKey("isbn").contains("1")),
        ("uuid == #2", AttributeKey("uuid") == uuidNumber(2)),
        ("uuid < #7", AttributeKey("uuid") < uuidNumber(7)),
        ("uuid isNil", AttributeKey("uuid").isNil),
        ("link == #0", AttributeKey("link") == URL(string: "https://example.com/book/0")!),
        ("link beginsWith https", AttributeKey("link").beginsWith("https://")),
        ("link contains example.org [c]", AttributeKey("link").contains("example.org", options: .caseInsensitive)),
        ("link contains example.org", AttributeKey("link").contains("example.org")),
        ("link > http://F", AttributeKey("link") > URL(string: "http://F")!),
        ("link isNil", AttributeKey("link").isNil),
        // Strings: comparisons in byte order.
        ("title == Dune", title == "Dune"),
        ("title != Dune", title != "Dune"),
        ("title < M", title < "M"),
        ("title >= a", title >= "a"),
        ("title > empty", title > ""),
        ("title == empty", title == ""),
        ("title == Crème (precomposed)", title == "Crème brûlée"),
        ("title in", title.isIn(["Dune", "dune", "missing", ""])),
        ("title between", title.between("C"..."E")),
        // String operators.
        ("beginsWith Dune", title.beginsWith("Dune")),
        ("beginsWith dune [c]", title.beginsWith("dune", options: .caseInsensitive)),
        ("endsWith dune [c]", title.endsWith("dune", options: .caseInsensitive)),
        ("endsWith e", title.endsWith("e")),
        ("contains creme", title.contains("creme")),
        ("contains creme [c]", title.contains("creme", options: .caseInsensitive)),
        ("contains Creme [d]", title.contains("Creme", options: .diacriticInsensitive)),
        ("contains creme [cd]", title.contains("creme", options: [.caseInsensitive, .diacriticInsensitive])),
        ("contains crème [c]", title.contains("crème", options: .caseInsensitive)),
        ("contains uber [cd]", title.contains("uber", options: [.caseInsensitive, .diacriticInsensitive])),
        ("beginsWith über [c]", title.beginsWith("über", options: .caseInsensitive)),
        ("contains strasse [c]", title.contains("strasse", options: .caseInsensitive)),
        ("contains ss [cd]", title.contains("SS", options: [.caseInsensitive, .diacriticInsensitive])),
        ("contains angstrom [cd]", title.contains("angstrom", options: [.caseInsensitive, .diacriticInsensitive])),
        ("contains naive [d]", title.contains("naive", options: .diacriticInsensitive)),
        ("contains ΣΊΣΥΦΟΣ [cd]", title.contains("ΣΙΣΥΦΟΣ", options: [.caseInsensitive, .diacriticInsensitive])),
        ("contains 本", title.contains("本")),
        ("contains 🎉", title.contains("🎉")),
        ("contains 👩‍💻", title.contains("👩‍💻")),
        ("contains 💻", title.contains("💻")),
        ("contains empty", title.contains("")),
        ("beginsWith empty", title.beginsWith("")),
        ("endsWith empty", title.endsWith("")),
        ("contains %", title.contains("%")),
        ("contains _", title.contains("_")),
        ("contains quote", title.contains("'")),
        ("like *une*", title.like("*une*")),
        ("like *DUNE* [c]", title.like("*DUNE*", options: .caseInsensitive)),
        ("like D?ne", title.like("D?ne")),
        ("like d?NE [c]", title.like("d?NE", options: .caseInsensitive)),
        ("like a?b", title.like("a?b")),
        ("like a*b", title.like("a*b")),
        ("like *", title.like("*")),
        ("like empty", title.like("")),
        ("like ?", title.like("?")),
        ("like ??", title.like("??")),
        ("like *🎉*", title.like("*🎉*")),
        ("like ?? coder", title.like("? coder")),
        ("like *e [cd]", title.like("*E", options: [.caseInsensitive, .diacriticInsensitive])),
        ("like 100%*", title.like("100%*")),
        ("!(contains e)", !title.contains("e")),
        // Compounds.
        ("and", year >= Int32(1970) && AttributeKey("inPrint") == true),
        ("or", year == Int32(1965) || title.beginsWith("Z")),
        ("not and", !(year < Int32(2000) && AttributeKey("rating") > 1.0)),
        ("not or", !(year < Int32(1970) || AttributeKey("price") > d("10"))),
        ("or with nil comparisons", year < Int32(1970) || AttributeKey("rating") < 1.0),
        ("nested", (year > Int32(1965) || year.isNil) && !(AttributeKey("price") < d("9.6") && AttributeKey("weight") > Float(0.2))),
        ("double not", !(!(year < Int32(2000)))),
        ("and of one", .and([year == Int32(1984)])),
        ("or of three", .or([year == Int32(1984), title == "Dune", AttributeKey("isbn").isNil])),
        ("constant true", .constant(true)),
        ("constant false", .constant(false)),
        ("empty and", .and([])),
        ("empty or", .or([])),
        ("not empty and", !.and([])),
        ("not empty or", !.or([])),
        ("and with empty or", .and([.or([]), year.isNotNil])),
        ("or with empty and", .or([.and([]), year.isNil])),
    ]
}()

// MARK: - Tests

@Suite struct PredicateTests {
    /// The central property: a fetch answered by SQL from the store returns what the same fetch
    /// answers in memory over unsaved objects.
    @Test(arguments: StoreKind.allCases)
    func sqlAndInMemoryEvaluationAgree(kind: StoreKind) throws {
        let paths = try TwoPaths(kind)
        let all = dataSet.map(\.title).sorted()
        #expect(try paths.storeTitles(nil) == all)
        #expect(try paths.memoryTitles(nil) == all)
        var informative = 0
        for (name, predicate) in agreementCases {
            // PostgreSQL's LIKE matches `?` with one code point, not one grapheme cluster (the
            // emoji "👩‍💻" is three code points): a documented difference of the PostgreSQL store.
            if kind == .postgres && name == "like ?? coder" { continue }
            let fromStore = try paths.storeTitles(predicate)
            let inMemory = try paths.memoryTitles(predicate)
            #expect(fromStore == inMemory, "\(name): store \(fromStore) vs memory \(inMemory)")
            #expect(try paths.storeCount(predicate) == fromStore.count, "\(name)")
            #expect(try paths.memoryCount(predicate) == inMemory.count, "\(name)")
            if !fromStore.isEmpty && fromStore.count < all.count { informative += 1 }
        }
        // The cases are not trivially all-or-nothing.
        #expect(informative > agreementCases.count * 3 / 4)
    }

    /// Results also match the same condition written in plain Swift.
    @Test(arguments: StoreKind.allCases)
    func resultsMatchPlainSwift(kind: StoreKind) throws {
        let paths = try TwoPaths(kind)
        let d = { (text: String) in Decimal(string: text)! }
        let cases: [(String, FetchPredicate, (BookSpec) -> Bool)] = [
            ("year == 1965", year == Int32(1965), { $0.year == 1965 }),
            ("year != 1965", year != Int32(1965), { $0.year != 1965 }),
            ("year < 2000", year < Int32(2000), { $0.year.map { $0 < 2000 } ?? false }),
            ("year <= 1999", year <= Int32(1999), { $0.year.map { $0 <= 1999 } ?? false }),
            ("year > 1984", year > Int32(1984), { $0.year.map { $0 > 1984 } ?? false }),
            ("year >= 2000", year >= Int32(2000), { $0.year.map { $0 >= 2000 } ?? false }),
            ("year isNil", year.isNil, { $0.year == nil }),
            ("year == nil", year == Int32?.none, { $0.year == nil }),
            ("year isNotNil", year.isNotNil, { $0.year != nil }),
            ("year in", year.isIn([Int32(1970), 2023]), { $0.year == 1970 || $0.year == 2023 }),
            ("year between", year.between(Int32(1970)...2000), { $0.year.map { (1970...2000).contains($0) } ?? false }),
            ("!(year < 2000)", !(year < Int32(2000)), { !($0.year.map { $0 < 2000 } ?? false) }),
            ("sales > 1M", AttributeKey("sales") > Int64(1_000_000), { $0.sales > 1_000_000 }),
            ("rating >= 1.5", AttributeKey("rating") >= 1.5, { $0.rating.map { $0 >= 1.5 } ?? false }),
            ("weight < 1", AttributeKey("weight") < Float(1), { $0.weight.map { $0 < 1 } ?? false }),
            ("price < 10", AttributeKey("price") < d("10"), { $0.price.map { $0 < 10 } ?? false }),
            ("price >= 9.75", AttributeKey("price") >= d("9.75"), { $0.price.map { $0 >= d("9.75") } ?? false }),
            ("published < ref", AttributeKey("published") < referenceDate, { $0.published.map { $0 < referenceDate } ?? false }),
            ("inPrint", AttributeKey("inPrint") == true, { $0.inPrint }),
            ("cover == empty", AttributeKey("cover") == Data(), { $0.cover == Data() }),
            ("isbn isNil", AttributeKey("isbn").isNil, { $0.isbn == nil }),
            ("uuid == #2", AttributeKey("uuid") == uuidNumber(2), { $0.uuid == uuidNumber(2) }),
            ("beginsWith Dune", title.beginsWith("Dune"), { $0.title.hasPrefix("Dune") }),
            (
                "and", year >= Int32(1970) && AttributeKey("inPrint") == true,
                { ($0.year.map { $0 >= 1970 } ?? false) && $0.inPrint }
            ),
            ("or", year == Int32(1965) || title.beginsWith("Z"), { $0.year == 1965 || $0.title.hasPrefix("Z") }),
            ("constant true", .constant(true), { _ in true }),
            ("constant false", .constant(false), { _ in false }),
            ("empty and", .and([]), { _ in true }),
            ("empty or", .or([]), { _ in false }),
        ]
        for (name, predicate, condition) in cases {
            let expected = dataSet.filter(condition).map(\.title).sorted()
            #expect(try paths.storeTitles(predicate) == expected, "\(name) (store)")
            #expect(try paths.memoryTitles(predicate) == expected, "\(name) (memory)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nilSemantics(kind: StoreKind) throws {
        let paths = try TwoPaths(kind)
        let nilYearTitles = Set(dataSet.filter { $0.year == nil }.map(\.title))
        #expect(!nilYearTitles.isEmpty)
        for titles in [paths.storeTitles, paths.memoryTitles] {
            // A comparison with a nil value is false...
            let below = Set(try titles(year < Int32(2000)))
            #expect(below.isDisjoint(with: nilYearTitles))
            #expect(!below.isEmpty)
            // ...but != is nil-safe...
            let notSixtyFive = Set(try titles(year != Int32(1965)))
            #expect(nilYearTitles.isSubset(of: notSixtyFive))
            #expect(!notSixtyFive.contains("dune")) // dune's year is 1965
            // ...and negating a false comparison gives true.
            let notBelow = Set(try titles(!(year < Int32(2000))))
            #expect(nilYearTitles.isSubset(of: notBelow))
            #expect(notBelow.union(below) == Set(dataSet.map(\.title)))
            #expect(notBelow.isDisjoint(with: below))
            // The same holds for string operators on a nil optional string.
            let nilIsbns = Set(dataSet.filter { $0.isbn == nil }.map(\.title))
            #expect(Set(try titles(AttributeKey("isbn").beginsWith("isbn"))).isDisjoint(with: nilIsbns))
            #expect(nilIsbns.isSubset(of: Set(try titles(!AttributeKey("isbn").beginsWith("isbn")))))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func stringOperatorsAndOptions(kind: StoreKind) throws {
        let paths = try TwoPaths(kind)
        let cases: [(FetchPredicate, [String])] = [
            (
                title.contains("creme", options: [.caseInsensitive, .diacriticInsensitive]),
                ["CRÈME", "Cre\u{0300}me de\u{0301}compose\u{0301}e", "Crème brûlée", "creme fraiche"]
            ),
            (title.contains("creme"), ["creme fraiche"]),
            (title.contains("Creme", options: .diacriticInsensitive), ["Cre\u{0300}me de\u{0301}compose\u{0301}e", "Crème brûlée"]),
            // The decomposed "e\u{0300}" is canonically equivalent to "è".
            (
                title.contains("CRÈME", options: .caseInsensitive),
                ["CRÈME", "Cre\u{0300}me de\u{0301}compose\u{0301}e", "Crème brûlée"]
            ),
            (title.beginsWith("Dune"), ["Dune"]),
            (title.beginsWith("dune", options: .caseInsensitive), ["DUNE MESSIAH", "Dune", "dune"]),
            (title.endsWith("DUNE", options: .caseInsensitive), ["Children of Dune", "Dune", "dune"]),
            (title.endsWith("Dune"), ["Children of Dune", "Dune"]),
            (title.contains("uber", options: [.caseInsensitive, .diacriticInsensitive]), ["uber driver", "Über alles"]),
            (title.contains("uber", options: .caseInsensitive), ["uber driver"]),
            (title.contains("🎉"), ["Party 🎉 time"]),
            (title.like("a?b"), ["a*b", "a?b", "axb"]),
            (title.like("a*b"), ["a*b", "a?b", "ab", "axb"]),
            (title.like("?"), ["a"]),
            (title.like(""), [""]),
            (title.like("*DUNE*", options: .caseInsensitive), ["Children of Dune", "DUNE MESSIAH", "Dune", "dune"]),
            (title.like("d?NE", options: .caseInsensitive), ["Dune", "dune"]),
            (title.like("*t*h*"), ["the hobbit"]),
            (title == "", [""]),
            (title.isIn(["Dune", "dune", "nothing"]), ["Dune", "dune"]),
        ]
        for (predicate, expected) in cases {
            #expect(try paths.storeTitles(predicate) == expected.sorted(), "\(predicate) (store)")
            #expect(try paths.memoryTitles(predicate) == expected.sorted(), "\(predicate) (memory)")
        }
        let everything = dataSet.map(\.title).sorted()
        for predicate in [title.contains(""), title.beginsWith(""), title.endsWith(""), title.like("*")] {
            #expect(try paths.storeTitles(predicate) == everything, "\(predicate)")
            #expect(try paths.memoryTitles(predicate) == everything, "\(predicate)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func valuesAreBoundNeverSpliced(kind: StoreKind) throws {
        let paths = try TwoPaths(kind)
        let injection = "x' OR 1=1 --"
        let dropTable = "Robert'); DROP TABLE \"Book\";--"
        for titles in [paths.storeTitles, paths.memoryTitles] {
            #expect(try titles(title == injection) == [injection])
            #expect(try titles(title == dropTable) == [dropTable])
            #expect(try titles(title.contains("' OR 1=1")) == [injection])
            #expect(try titles(title.isIn([injection, "' OR ''='"])) == [injection])
            #expect(try titles(title.like("*'*")) == [dropTable, injection].sorted())
            #expect(try titles(AttributeKey("isbn") == "' OR 1=1 --").isEmpty)
        }
        // The table is still there, with every row.
        #expect(try paths.storeCount(nil) == dataSet.count)
        if let directory = paths.directories[0] {
            let rows = try rawSQL(directory.file("Test.sqlite"), "SELECT count(*) FROM \"Book\"")
            #expect(rows == [["\(dataSet.count)"]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func badPredicatesThrowTypedErrors(kind: StoreKind) throws {
        let paths = try TwoPaths(kind, books: Array(dataSet.prefix(3)))
        for context in [paths.saved, paths.pending] {
            context.performAndWait {
                func fetch(_ predicate: FetchPredicate?, entity: String = "Book") throws {
                    _ = try context.fetch(FetchRequest(entityName: entity, predicate: predicate))
                }
                expectError(.unknownAttribute) { try fetch(AttributeKey("nope") == 1) }
                expectError(.unknownAttribute) { try fetch(year == Int32(1) && AttributeKey("nope").isNil) }
                expectError(.unknownAttribute) { try fetch(!AttributeKey("nope").contains("x")) }
                expectError(.wrongValueType) { try fetch(year == "1965") }
                expectError(.wrongValueType) { try fetch(year.isIn(["1965"])) }
                expectError(.wrongValueType) { try fetch(year.between("a"..."b")) }
                expectError(.wrongValueType) { try fetch(year.contains("19")) }
                expectError(.wrongValueType) { try fetch(AttributeKey("price").beginsWith("9")) }
                expectError(.wrongValueType) { try fetch(title == 5) }
                expectError(.wrongValueType) { try fetch(AttributeKey("inPrint") == 1) }
                expectError(.wrongValueType) { try fetch(AttributeKey("rating") < Double.nan) }
                expectError(.wrongValueType) { try fetch(.or([title == "x", year > "y"])) }
                expectError(.unknownEntity) { try fetch(nil, entity: "Nope") }
                expectError(.unknownEntity) { try fetch(title == "x", entity: "Nope") }
                expectError(.unknownAttribute) {
                    _ = try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("nope") == 1))
                }
                expectError(.wrongValueType) {
                    _ = try context.fetchObjectIDs(FetchRequest(entityName: "Book", predicate: year == "x"))
                }
            }
        }
    }

    /// Integers compare with doubles by value in both paths, also beyond 2^53 where a double
    /// cannot hold every integer.
    @Test(arguments: StoreKind.allCases)
    func largeIntegersComparedWithDoublesAgree(kind: StoreKind) throws {
        var book = dataSet[0]
        book.sales = 9_007_199_254_740_993 // 2^53 + 1: no Double holds it
        let paths = try TwoPaths(kind, books: [book])
        let twoTo53 = 9_007_199_254_740_992.0
        let cases: [(FetchPredicate, Bool)] = [
            (AttributeKey("sales") > twoTo53, true),
            (AttributeKey("sales") >= twoTo53, true),
            (AttributeKey("sales") == twoTo53, false),
            (AttributeKey("sales") != twoTo53, true),
            (AttributeKey("sales") == Int64(9_007_199_254_740_993), true),
            (AttributeKey("sales") > Int64(9_007_199_254_740_992), true),
        ]
        for (predicate, matches) in cases {
            let expected = matches ? [book.title] : []
            #expect(try paths.storeTitles(predicate) == expected, "\(predicate) (store)")
            #expect(try paths.memoryTitles(predicate) == expected, "\(predicate) (memory)")
        }
    }

    /// A string holding a NUL character is matched on all of its characters in both paths.
    /// (PostgreSQL's text cannot hold NUL: PostgresStoreTests checks that such a save fails.)
    @Test(arguments: [StoreKind.file, .memory])
    func stringsWithNULCharacterAgree(kind: StoreKind) throws {
        var book = dataSet[0]
        book.title = "head\u{0}tail"
        let paths = try TwoPaths(kind, books: [book])
        #expect(try paths.storeTitles(nil) == ["head\u{0}tail"])
        for predicate in [
            title == "head\u{0}tail", title.contains("tail"), title.endsWith("tail"),
            title.like("head?tail"), title.beginsWith("head"),
        ] {
            #expect(try paths.memoryTitles(predicate) == ["head\u{0}tail"], "\(predicate) (memory)")
            #expect(try paths.storeTitles(predicate) == ["head\u{0}tail"], "\(predicate) (store)")
        }
    }
}
