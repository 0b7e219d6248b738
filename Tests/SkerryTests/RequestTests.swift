import Foundation
import Skerry
import SkerryCore
import Testing

/// A small library, saved, with a container over fresh background contexts.
private struct Library {
    static let books = [
        Book(title: "Dune", year: 1965, isbn: "978-0441013593", genre: .fiction, price: Money(cents: 1000)),
        Book(title: "dune messiah", year: 1969, isbn: "978-0593098233", genre: .fiction, price: Money(cents: 1200)),
        Book(title: "Neuromancer", year: 1984, isbn: "978-0441569595", genre: .fiction, price: Money(cents: 1500)),
        Book(title: "Solaris", year: 1961, genre: .essay, price: Money(cents: 800), inPrint: false),
        Book(title: "Leaves of Grass", genre: .poetry, price: Money(cents: 500)),
        Book(title: "The Waste Land", year: 1922, isbn: "978-0393974997", genre: .poetry, price: Money(cents: 500)),
    ]
    static let allTitles = Set(books.map(\.title))

    let stack: PersistentStack
    let container: PersistentContainer

    init() throws {
        let stack = try makeStack()
        self.stack = stack
        container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context throws in
            for book in Self.books { try context.insert(book) }
        }
    }

    /// The titles `request` fetches, in order.
    func titles(_ request: Request<Book>) throws -> [String] {
        try container.perform { try $0.fetch(request, \Book.title) }
    }

    /// The titles of the books for which `predicate` holds.
    func titles(where predicate: Skerry.Predicate) throws -> Set<String> {
        Set(try titles(Book.all.where(predicate)))
    }
}

@Suite struct RequestTests {
    // MARK: all, sort, limit, offset

    @Test func allFetchesEveryObject() throws {
        let library = try Library()
        let books = try library.container.perform { try $0.fetch(Book.all).map { try $0.decode() } }
        #expect(books.count == Library.books.count)
        #expect(Set(books.map(\.title)) == Library.allTitles)
        #expect(try library.container.perform { try $0.count(of: Book.all) } == 6)
    }

    @Test func sortAscendingDescendingAndOnSeveralKeys() throws {
        let library = try Library()
        #expect(
            try library.titles(Book.all.sort(\Book.price).sort(\Book.title)) == [
                "Leaves of Grass", "The Waste Land", "Solaris", "Dune", "dune messiah", "Neuromancer",
            ])
        #expect(
            try library.titles(Book.all.sort(\Book.price, ascending: false).sort(\Book.title, ascending: false)) == [
                "Neuromancer", "dune messiah", "Dune", "Solaris", "The Waste Land", "Leaves of Grass",
            ])
        // genre ascending, then price descending, then title.
        #expect(
            try library.titles(Book.all.sort(\Book.genre).sort(\Book.price, ascending: false).sort(\Book.title)) == [
                "Solaris", "Neuromancer", "dune messiah", "Dune", "Leaves of Grass", "The Waste Land",
            ])
        // Strings sort by their bytes: upper case first.
        #expect(try library.titles(Book.all.where(Query.contains(\Book.title, "dune")).sort(\Book.title)) == ["Dune", "dune messiah"])
    }

    @Test func sortOnAnOptionalAttributePutsMissingValuesFirstWhenAscending() throws {
        let library = try Library()
        let ascending = try library.container.perform { try $0.fetch(Book.all.sort(\Book.year), \Book.year) }
        #expect(ascending == [nil, 1922, 1961, 1965, 1969, 1984])
        let descending = try library.container.perform { try $0.fetch(Book.all.sort(\Book.year, ascending: false), \Book.year) }
        #expect(descending == [1984, 1969, 1965, 1961, 1922, nil])
        #expect(try library.titles(Book.all.sort(\Book.isbn).sort(\Book.title)).prefix(2) == ["Leaves of Grass", "Solaris"])
    }

    @Test func limitAndOffset() throws {
        let library = try Library()
        let byPrice = Book.all.sort(\Book.price).sort(\Book.title)
        #expect(try library.titles(byPrice.limit(2)) == ["Leaves of Grass", "The Waste Land"])
        #expect(try library.titles(byPrice.offset(2).limit(2)) == ["Solaris", "Dune"])
        #expect(try library.titles(byPrice.limit(2).offset(4)) == ["dune messiah", "Neuromancer"])
        #expect(try library.titles(byPrice.offset(4)) == ["dune messiah", "Neuromancer"])
        #expect(try library.titles(byPrice.offset(10)).isEmpty)
        #expect(try library.titles(byPrice.limit(100)).count == 6)
        #expect(try library.titles(byPrice.where(\Book.genre == .fiction).limit(1).offset(1)) == ["dune messiah"])
    }

    @Test func whereReplacesAnEarlierCondition() throws {
        let library = try Library()
        let request = Book.all.where(\Book.genre == .poetry).where(\Book.genre == .essay)
        #expect(try library.titles(request) == ["Solaris"])
    }

    // MARK: Operators

    @Test func comparisonsOnRequiredAttributes() throws {
        let library = try Library()
        #expect(try library.titles(where: \Book.title == "Dune") == ["Dune"])
        #expect(try library.titles(where: \Book.title != "Dune") == Library.allTitles.subtracting(["Dune"]))
        #expect(try library.titles(where: \Book.title < "M") == ["Dune", "Leaves of Grass"])
        #expect(try library.titles(where: \Book.price < Money(cents: 800)) == ["Leaves of Grass", "The Waste Land"])
        #expect(try library.titles(where: \Book.price <= Money(cents: 800)) == ["Leaves of Grass", "The Waste Land", "Solaris"])
        #expect(try library.titles(where: \Book.price > Money(cents: 1200)) == ["Neuromancer"])
        #expect(try library.titles(where: \Book.price >= Money(cents: 1200)) == ["Neuromancer", "dune messiah"])
        #expect(try library.titles(where: \Book.price == Money(cents: 500)) == ["Leaves of Grass", "The Waste Land"])
        #expect(try library.titles(where: \Book.price != Money(cents: 500)).count == 4)
        #expect(try library.titles(where: \Book.inPrint == false) == ["Solaris"])
        #expect(try library.titles(where: \Book.inPrint == true).count == 5)
    }

    @Test func comparisonsOnOptionalAttributes() throws {
        let library = try Library()
        #expect(try library.titles(where: \Book.year == 1965) == ["Dune"])
        // != is nil-safe: a book without a year differs from 1965.
        #expect(try library.titles(where: \Book.year != 1965) == Library.allTitles.subtracting(["Dune"]))
        #expect(try library.titles(where: \Book.year < 1965) == ["Solaris", "The Waste Land"])
        #expect(try library.titles(where: \Book.year <= 1965) == ["Solaris", "The Waste Land", "Dune"])
        #expect(try library.titles(where: \Book.year > 1965) == ["dune messiah", "Neuromancer"])
        #expect(try library.titles(where: \Book.year >= 1965) == ["dune messiah", "Neuromancer", "Dune"])
        #expect(try library.titles(where: \Book.isbn == "978-0441569595") == ["Neuromancer"])
    }

    @Test func comparisonsWithNil() throws {
        let library = try Library()
        #expect(try library.titles(where: \Book.year == nil) == ["Leaves of Grass"])
        #expect(try library.titles(where: \Book.year != nil) == Library.allTitles.subtracting(["Leaves of Grass"]))
        #expect(try library.titles(where: \Book.isbn == nil) == ["Solaris", "Leaves of Grass"])
        #expect(try library.titles(where: \Book.isbn != nil).count == 4)
        #expect(try library.titles(where: \Book.dimensions == nil) == Library.allTitles)
        // Ordering with nil holds for nothing.
        #expect(try library.titles(where: \Book.year < nil).isEmpty)
        #expect(try library.titles(where: \Book.year >= nil).isEmpty)
    }

    @Test func inOnRequiredAndOptionalAttributes() throws {
        let library = try Library()
        #expect(try library.titles(where: \Book.title === ["Dune", "Solaris", "Missing"]) == ["Dune", "Solaris"])
        #expect(try library.titles(where: \Book.year === [1961, 1984, 2000]) == ["Solaris", "Neuromancer"])
        #expect(try library.titles(where: \Book.genre === [.essay, .poetry]) == ["Solaris", "Leaves of Grass", "The Waste Land"])
        #expect(try library.titles(where: \Book.price === [Money(cents: 800), Money(cents: 1500)]) == ["Solaris", "Neuromancer"])
        #expect(try library.titles(where: \Book.title === []).isEmpty)
        #expect(try library.titles(where: !(\Book.year === [1961, 1984])).count == 4)
    }

    @Test func enumAttributeComparison() throws {
        let library = try Library()
        #expect(try library.titles(where: \Book.genre == .poetry) == ["Leaves of Grass", "The Waste Land"])
        #expect(try library.titles(where: \Book.genre != .fiction) == ["Solaris", "Leaves of Grass", "The Waste Land"])
        #expect(try library.titles(where: \Book.genre == .essay) == ["Solaris"])
        let count = try library.container.perform { try $0.count(of: Book.all.where(\Book.genre == .fiction)) }
        #expect(count == 3)
    }

    @Test func andOrNot() throws {
        let library = try Library()
        #expect(try library.titles(where: \Book.genre == .fiction && \Book.year > 1966) == ["dune messiah", "Neuromancer"])
        #expect(try library.titles(where: \Book.genre == .poetry || \Book.year < 1962) == ["Leaves of Grass", "The Waste Land", "Solaris"])
        #expect(try library.titles(where: !(\Book.genre == .fiction)) == ["Solaris", "Leaves of Grass", "The Waste Land"])
        #expect(
            try library.titles(where: !(\Book.year == nil) && \Book.inPrint == true) == [
                "Dune", "dune messiah", "Neuromancer", "The Waste Land",
            ])
        // && binds tighter than ||.
        #expect(try library.titles(where: \Book.title == "Solaris" || \Book.genre == .fiction && \Book.year < 1966) == ["Solaris", "Dune"])
        #expect(
            try library.titles(where: (\Book.title == "Solaris" || \Book.genre == .fiction) && \Book.year < 1966) == ["Solaris", "Dune"])
        #expect(try library.titles(where: !(\Book.genre == .fiction || \Book.genre == .poetry)) == ["Solaris"])
        #expect(try library.titles(where: Query.and(\Book.price == Money(cents: 500), Query.not(\Book.year == nil))) == ["The Waste Land"])
        #expect(try library.titles(where: Query.or(\Book.year == 1922, \Book.year == 1984)) == ["The Waste Land", "Neuromancer"])
    }

    // MARK: Strings

    @Test func stringQueriesAreCaseInsensitiveByDefault() throws {
        let library = try Library()
        #expect(try library.titles(where: Query.contains(\Book.title, "DUNE")) == ["Dune", "dune messiah"])
        #expect(try library.titles(where: Query.contains(\Book.title, "une")) == ["Dune", "dune messiah"])
        #expect(try library.titles(where: Query.beginsWith(\Book.title, "the")) == ["The Waste Land"])
        #expect(try library.titles(where: Query.endsWith(\Book.title, "LAND")) == ["The Waste Land"])
        #expect(try library.titles(where: Query.endsWith(\Book.title, "MESSIAH")) == ["dune messiah"])
        #expect(try library.titles(where: Query.contains(\Book.isbn, "0441")) == ["Dune", "Neuromancer"])
        #expect(try library.titles(where: Query.beginsWith(\Book.isbn, "978-0593")) == ["dune messiah"])
        #expect(try library.titles(where: Query.endsWith(\Book.isbn, "97")) == ["The Waste Land"])
        #expect(try library.titles(where: Query.contains(\Book.title, "nothing like this")).isEmpty)
    }

    @Test func stringQueriesCanBeCaseSensitive() throws {
        let library = try Library()
        #expect(try library.titles(where: Query.contains(\Book.title, "Dune", caseInsensitive: false)) == ["Dune"])
        #expect(try library.titles(where: Query.contains(\Book.title, "dune", caseInsensitive: false)) == ["dune messiah"])
        #expect(try library.titles(where: Query.contains(\Book.title, "DUNE", caseInsensitive: false)).isEmpty)
        #expect(try library.titles(where: Query.beginsWith(\Book.title, "the", caseInsensitive: false)).isEmpty)
        #expect(try library.titles(where: Query.beginsWith(\Book.title, "The", caseInsensitive: false)) == ["The Waste Land"])
        #expect(try library.titles(where: Query.endsWith(\Book.title, "LAND", caseInsensitive: false)).isEmpty)
        #expect(try library.titles(where: Query.endsWith(\Book.title, "Land", caseInsensitive: false)) == ["The Waste Land"])
    }

    @Test func stringQueriesIgnoreDiacriticsByDefault() throws {
        let library = try Library()
        try library.container.perform { try $0.insert(Book(title: "Éloge de l'ombre", genre: .essay)) }
        #expect(try library.titles(where: Query.beginsWith(\Book.title, "eloge")) == ["Éloge de l'ombre"])
        #expect(try library.titles(where: Query.beginsWith(\Book.title, "eloge", caseInsensitive: false)).isEmpty)
    }

    // MARK: Fetching values

    @Test func fetchOneAttributesValues() throws {
        let library = try Library()
        try library.container.perform { context throws in
            #expect(
                try context.fetch(Book.all.sort(\Book.title), \Book.title) == [
                    "Dune", "Leaves of Grass", "Neuromancer", "Solaris", "The Waste Land", "dune messiah",
                ])
            #expect(try context.fetch(Book.all.where(\Book.genre == .poetry).sort(\Book.title), \Book.year) == [nil, 1922])
            #expect(
                try context.fetch(Book.all.sort(\Book.price).limit(3), \Book.price) == [
                    Money(cents: 500), Money(cents: 500), Money(cents: 800),
                ])
            #expect(try context.fetch(Book.all.sort(\Book.genre, ascending: false).limit(1), \Book.genre) == [.poetry])
            #expect(try context.fetch(Book.all.where(\Book.year > 3000), \Book.title).isEmpty)
        }
    }

    @Test func fetchOneObjectOrAttribute() throws {
        let library = try Library()
        try library.container.perform { context throws in
            let newest = try #require(try context.fetchOne(Book.all.sort(\Book.year, ascending: false)))
            #expect(try newest.decode() == Library.books[2])
            #expect(try context.fetchOne(Book.all.where(\Book.title == "Missing")) == nil)

            #expect(try context.fetchOne(Book.all.sort(\Book.year, ascending: false), \Book.title) == "Neuromancer")
            #expect(try context.fetchOne(Book.all.where(\Book.title == "Missing"), \Book.title) == nil)
            #expect(try context.fetchOne(Book.all.where(\Book.title == "Dune"), \Book.year) == 1965)
            // An optional attribute: no value and no object both read as nil.
            #expect(try context.fetchOne(Book.all.where(\Book.title == "Leaves of Grass"), \Book.year) == nil)
            #expect(try context.fetchOne(Book.all.where(\Book.title == "Missing"), \Book.year) == nil)
            // fetchOne respects an offset.
            #expect(try context.fetchOne(Book.all.sort(\Book.price).sort(\Book.title).offset(2), \Book.title) == "Solaris")
        }
    }

    @Test func countOf() throws {
        let library = try Library()
        try library.container.perform { context throws in
            #expect(try context.count(of: Book.all) == 6)
            #expect(try context.count(of: Book.all.where(\Book.year < 1970)) == 4)
            #expect(try context.count(of: Book.all.where(\Book.year > 3000)) == 0)
        }
    }

    // MARK: Deleting

    @Test func deleteOneObject() throws {
        let library = try Library()
        try library.container.perform { context throws in
            let dune = try #require(try context.fetchOne(Book.all.where(\Book.title == "Dune")))
            context.delete(dune)
            // The delete takes part in fetches before the save.
            #expect(try context.count(of: Book.all) == 5)
            #expect(try context.fetch(Book.all.where(\Book.title == "Dune")).isEmpty)
        }
        #expect(try Set(storedTitles(in: library.stack)) == Library.allTitles.subtracting(["Dune"]))
    }

    @Test func deleteARequest() throws {
        let library = try Library()
        try library.container.perform { context throws in
            try context.delete(Book.all.where(\Book.genre == .fiction))
            #expect(try context.fetch(Book.all, \Book.genre).allSatisfy { $0 != .fiction })
        }
        #expect(try Set(storedTitles(in: library.stack)) == ["Solaris", "Leaves of Grass", "The Waste Land"])

        // Nothing matched, nothing deleted.
        try library.container.perform { try $0.delete(Book.all.where(\Book.year > 3000)) }
        #expect(try storedTitles(in: library.stack).count == 3)
    }

    @Test func aRequestDeleteIsUndoneWhenThePerformFails() throws {
        let library = try Library()
        #expect(throws: SampleFailure(reason: "keep them")) {
            try library.container.perform { context throws in
                try context.delete(Book.all)
                throw SampleFailure(reason: "keep them")
            }
        }
        #expect(try Set(storedTitles(in: library.stack)) == Library.allTitles)
    }

    @Test func batchDeleteReturnsTheCountAndForgetsDeletedObjects() throws {
        let library = try Library()
        let (deleted, remaining, loaded) = try library.container.perform { context throws in
            let loaded = try context.fetch(Book.all) // registered before the batch delete
            let deleted = try context.batchDelete(Book.all.where(\Book.genre == .poetry))
            let remaining = try context.fetch(Book.all, \Book.title)
            return (deleted, Set(remaining), loaded.count)
        }
        #expect(loaded == 6)
        #expect(deleted == 2)
        #expect(remaining == Library.allTitles.subtracting(["Leaves of Grass", "The Waste Land"]))
        #expect(try Set(storedTitles(in: library.stack)) == remaining)

        let none = try library.container.perform { try $0.batchDelete(Book.all.where(\Book.year > 3000)) }
        #expect(none == 0)
        let all = try library.container.perform { try $0.batchDelete(Book.all) }
        #expect(all == 4)
        #expect(try storedTitles(in: library.stack).isEmpty)
    }

    @Test func batchUpdateSetsAnAttributeInTheStoreAndRefreshesTheContext() throws {
        let library = try Library()
        let (updated, outOfPrint, loadedStillInPrint) = try library.container.perform { context throws in
            let loaded = try context.fetch(Book.all.where(\Book.genre == .poetry)) // registered before the update
            let updated = try context.batchUpdate(Book.all.where(\Book.genre == .poetry), set: \Book.inPrint, to: false)
            let outOfPrint = try context.fetch(Book.all.where(\Book.inPrint == false), \Book.title)
            return (updated, Set(outOfPrint), try loaded.filter { try $0.decode().inPrint }.count)
        }
        #expect(updated == 2)
        #expect(outOfPrint == ["Leaves of Grass", "The Waste Land", "Solaris"])
        #expect(loadedStillInPrint == 0)
        // An optional attribute cleared; a limit refused, nothing written.
        let cleared = try library.container.perform { try $0.batchUpdate(Book.all, set: \Book.year, to: nil) }
        #expect(cleared == 6)
        #expect {
            try library.container.perform { try $0.batchUpdate(Book.all.limit(1), set: \Book.inPrint, to: true) }
        } throws: { ($0 as? SkerryError)?.code == .invalidArgument }
        let inPrint = try library.container.perform { try $0.count(of: Book.all.where(\Book.inPrint == true)) }
        #expect(inPrint == 3)
    }

    @Test func deleteAndBatchDeleteHonourTheRequestsLimit() throws {
        let cheapestTwo = Book.all.sort(\Book.price).sort(\Book.title).limit(2)

        let deleting = try Library()
        try deleting.container.perform { try $0.delete(cheapestTwo) }
        #expect(try Set(storedTitles(in: deleting.stack)) == Library.allTitles.subtracting(["Leaves of Grass", "The Waste Land"]))

        // A batch delete cannot honour a limit: it refuses the request and deletes nothing,
        // rather than the whole table.
        let batch = try Library()
        #expect {
            try batch.container.perform { try $0.batchDelete(cheapestTwo) }
        } throws: { ($0 as? SkerryError)?.code == .invalidArgument }
        #expect(try Set(storedTitles(in: batch.stack)) == Library.allTitles)
    }

    @Test func countOfHonoursLimitAndOffset() throws {
        let library = try Library()
        try library.container.perform { context throws in
            #expect(try context.count(of: Book.all.limit(2)) == 2)
            #expect(try context.count(of: Book.all.offset(5)) == 1)
            #expect(try context.count(of: Book.all.where(\Book.genre == .fiction).offset(1).limit(10)) == 2)
        }
    }

    @Test func predicatesOnEveryPrimitiveType() throws {
        let stack = try makeStack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        let early = Date(timeIntervalSinceReferenceDate: 100.25)
        let late = Date(timeIntervalSinceReferenceDate: 100.5)
        let uuid = UUID()
        try container.perform { context in
            try context.insert(
                AllTypes(
                    bool: true, int: 1, int16: -5, int32: 70_000, int64: .max, float: 0.1, double: 2.5,
                    decimal: Decimal(string: "10.25")!, date: early, string: "a",
                    data: Data([1, 2]), uuid: uuid, url: URL(string: "https://a.example")!,
                    optionalDate: early, optionalUUID: uuid))
            try context.insert(
                AllTypes(
                    bool: false, int: 2, int16: 5, int32: -70_000, int64: .min, float: 0.2, double: -2.5,
                    decimal: Decimal(string: "9.75")!, date: late, string: "b",
                    data: Data([3]), url: URL(string: "https://b.example")!,
                    optionalDecimal: Decimal(1)))
        }
        func ints(_ predicate: Skerry.Predicate) throws -> [Int] {
            try container.perform { try $0.fetch(AllTypes.all.where(predicate).sort(\AllTypes.int), \AllTypes.int) }
        }
        #expect(try ints(\AllTypes.bool == true) == [1])
        #expect(try ints(\AllTypes.int16 < 0) == [1])
        #expect(try ints(\AllTypes.int32 > 0) == [1])
        #expect(try ints(\AllTypes.int64 == .max) == [1])
        #expect(try ints(\AllTypes.int64 < 0) == [2])
        #expect(try ints(\AllTypes.float == Float(0.1)) == [1])
        #expect(try ints(\AllTypes.float > Float(0.15)) == [2])
        #expect(try ints(\AllTypes.double <= -2.5) == [2])
        #expect(try ints(\AllTypes.decimal > Decimal(10)) == [1])
        #expect(try ints(\AllTypes.decimal == Decimal(string: "9.75")!) == [2])
        #expect(try ints(\AllTypes.date < late) == [1])
        #expect(try ints(\AllTypes.date >= early) == [1, 2])
        #expect(try ints(\AllTypes.optionalDate == early) == [1])
        #expect(try ints(\AllTypes.optionalDate == nil) == [2])
        #expect(try ints(\AllTypes.string === ["b", "c"]) == [2])
        #expect(try ints(\AllTypes.data == Data([3])) == [2])
        #expect(try ints(\AllTypes.uuid == uuid) == [1])
        #expect(try ints(\AllTypes.optionalUUID == uuid) == [1])
        #expect(try ints(\AllTypes.url == URL(string: "https://b.example")!) == [2])
        #expect(try ints(\AllTypes.optionalDecimal != nil) == [2])
        #expect(try container.perform { try $0.fetch(AllTypes.all.sort(\AllTypes.date, ascending: false), \AllTypes.int) } == [2, 1])
        #expect(try container.perform { try $0.fetch(AllTypes.all.sort(\AllTypes.decimal), \AllTypes.int) } == [2, 1])
    }

    @Test func negatedStringQueriesOnAnOptionalAttributeIncludeMissingValues() throws {
        let library = try Library()
        #expect(
            try library.titles(where: !Query.contains(\Book.isbn, "0441")) == [
                "dune messiah", "Solaris", "Leaves of Grass", "The Waste Land",
            ])
        #expect(try library.titles(where: Query.contains(\Book.isbn, "")).count == 4)
    }

    // MARK: Unsaved changes

    @Test func unsavedInsertsAndChangesTakePartInFetchesOfTheSamePerform() throws {
        let library = try Library()
        let found = try library.container.perform { context throws in
            try context.insert(Book(title: "Foundation", year: 1951, genre: .fiction, price: Money(cents: 700)))
            try context.insert(Book(title: "DUNE II", year: 2030))
            let dune = try #require(try context.fetchOne(Book.all.where(\Book.title == "Dune")))
            dune.encode(\.year, 1900)
            return (
                old: Set(try context.fetch(Book.all.where(\Book.year < 1960), \Book.title)),
                dunes: Set(try context.fetch(Book.all.where(Query.contains(\Book.title, "dune")), \Book.title)),
                first: try context.fetchOne(Book.all.sort(\Book.price), \Book.title),
                count: try context.count(of: Book.all)
            )
        }
        #expect(found.old == ["Foundation", "The Waste Land", "Dune"])
        #expect(found.dunes == ["Dune", "dune messiah", "DUNE II"])
        #expect(found.first == "DUNE II") // price 0
        #expect(found.count == 8)
        #expect(try storedTitles(in: library.stack).count == 8)
    }

    /// Every query answers the same for unsaved objects (evaluated in memory) as for saved ones
    /// (evaluated by SQLite).
    @Test func unsavedObjectsMatchExactlyAsSavedOnesDo() throws {
        let queries: [(String, Request<Book>)] = [
            ("year == nil", Book.all.where(\Book.year == nil)),
            ("year != 1965", Book.all.where(\Book.year != 1965)),
            ("year < 1965", Book.all.where(\Book.year < 1965)),
            ("year >= 1965", Book.all.where(\Book.year >= 1965)),
            ("!(year < 1965)", Book.all.where(!(\Book.year < 1965))),
            ("isbn === [...]", Book.all.where(\Book.isbn === ["978-0441013593", "none"])),
            ("!(year === [...])", Book.all.where(!(\Book.year === [1961, 1984]))),
            ("title < M", Book.all.where(\Book.title < "M")),
            ("genre == poetry", Book.all.where(\Book.genre == .poetry)),
            ("price > 800", Book.all.where(\Book.price > Money(cents: 800))),
            ("contains DUNE", Book.all.where(Query.contains(\Book.title, "DUNE"))),
            ("contains Dune cs", Book.all.where(Query.contains(\Book.title, "Dune", caseInsensitive: false))),
            ("beginsWith the", Book.all.where(Query.beginsWith(\Book.title, "the"))),
            ("endsWith LAND", Book.all.where(Query.endsWith(\Book.title, "LAND"))),
            ("!contains isbn", Book.all.where(!Query.contains(\Book.isbn, "0441"))),
            ("or/and", Book.all.where(\Book.genre == .poetry || \Book.inPrint == false && \Book.year != nil)),
            ("sort title", Book.all.sort(\Book.title)),
            ("sort year desc", Book.all.sort(\Book.year, ascending: false).sort(\Book.title)),
            ("sort year asc", Book.all.sort(\Book.year).sort(\Book.title)),
            ("sort isbn", Book.all.sort(\Book.isbn).sort(\Book.title)),
            ("sort genre, price desc", Book.all.sort(\Book.genre).sort(\Book.price, ascending: false).sort(\Book.title)),
            ("page", Book.all.sort(\Book.price).sort(\Book.title).offset(1).limit(3)),
        ]
        let library = try Library()
        let stack = try makeStack()
        let unsavedContainer = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        for (name, request) in queries {
            let saved = try library.titles(request)
            let unsaved = try unsavedContainer.perform { context throws in
                for book in Library.books { try context.insert(book) }
                let titles = try context.fetch(request, \Book.title)
                context.instance.rollback()
                return titles
            }
            let ordered = name.hasPrefix("sort") || name == "page"
            if ordered {
                #expect(unsaved == saved, "\(name)")
            } else {
                #expect(Set(unsaved) == Set(saved), "\(name)")
            }
        }
    }

    @Test func unsavedChangesAreSortedAndPagedWithStoredObjects() throws {
        let library = try Library()
        let titles = try library.container.perform { context throws in
            try context.insert(Book(title: "Foundation", year: 1951))
            try context.insert(Book(title: "Hyperion", year: 1989))
            return try context.fetch(Book.all.where(\Book.year != nil).sort(\Book.year).offset(1).limit(3), \Book.title)
        }
        #expect(titles == ["Foundation", "Solaris", "Dune"])
    }
}

@Suite struct RawRequestTests {
    @Test func whereRawBindsItsArguments() throws {
        let stack = try makeStack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        let titles = try container.perform { context in
            try context.insert(Book(title: "Dune", year: 1965, genre: .fiction))
            try context.insert(Book(title: "Leaves of Grass", year: 1855, genre: .poetry))
            try context.insert(Book(title: "Solaris", year: 1961))
            return try context.fetch(Book.all.where(sql: "year < ? AND genre <> ?", 1962, Genre.poetry).sort(\Book.title), \Book.title)
        }
        #expect(titles == ["Solaris"])
    }
}
