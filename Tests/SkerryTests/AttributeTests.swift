import Foundation
import Skerry
import SkerryCore
import Testing

/// Properties of `Book` that are not declared as attributes: the typed layer must refuse them.
private extension Book {
    var shoutedTitle: String { title.uppercased() }
    var titleAlias: String {
        get { title }
        set { title = newValue }
    }
}

/// Values of `AllTypes` worth a round trip.
enum AllTypesSample: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case defaults, maxima, minima, fractionsAndText

    var testDescription: String { rawValue }

    var value: AllTypes {
        switch self {
        case .defaults:
            return AllTypes()
        case .maxima:
            return AllTypes(
                bool: true, int: .max, int16: .max, int32: .max, int64: .max,
                float: .greatestFiniteMagnitude, double: .greatestFiniteMagnitude,
                decimal: Decimal(string: "12345678901234567890.123456789012345678")!,
                date: Date(timeIntervalSinceReferenceDate: 4_102_444_800.123456),
                string: "Skerry 🦀👩‍👩‍👧 ñ 中文 \u{0} end", data: Data((0...255).map { UInt8($0) }),
                uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
                url: URL(string: "https://example.com/a%20path?q=%C3%B1&x=1#frag")!,
                optionalBool: true, optionalInt: .max, optionalDouble: .leastNonzeroMagnitude,
                optionalString: "📚", optionalDate: Date(timeIntervalSince1970: 0.5),
                optionalData: Data([0, 0, 0xFF]), optionalUUID: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
                optionalURL: URL(fileURLWithPath: "/tmp/some file.txt"),
                optionalDecimal: Decimal(string: "0.00000000000000000000000000000000001")!)
        case .minima:
            return AllTypes(
                bool: false, int: .min, int16: .min, int32: .min, int64: .min,
                float: -.greatestFiniteMagnitude, double: -.greatestFiniteMagnitude,
                decimal: Decimal(string: "-98765432109876543210.987654321098765432")!,
                date: Date(timeIntervalSinceReferenceDate: -978_307_200.000_001),
                string: "", data: Data(),
                optionalBool: false, optionalInt: .min, optionalDouble: -0.000_001,
                optionalString: "", optionalDate: Date(timeIntervalSinceReferenceDate: -1.25),
                optionalData: Data(), optionalUUID: nil, optionalURL: nil,
                optionalDecimal: Decimal(-1))
        case .fractionsAndText:
            return AllTypes(
                bool: true, int: -1, int16: -1, int32: 1, int64: 0,
                float: 3.1415927, double: 0.1 + 0.2,
                decimal: Decimal(string: "0.1")! + Decimal(string: "0.2")!,
                date: Date(timeIntervalSinceReferenceDate: 0.001),
                string: "O'Brien \"quoted\" ; DROP TABLE AllTypes; --", data: Data("x".utf8),
                uuid: UUID(), url: URL(string: "mailto:someone@example.com")!,
                optionalDouble: 1e-300, optionalString: "  leading and trailing  ",
                optionalDate: Date(timeIntervalSinceReferenceDate: 123_456_789.987_654))
        }
    }
}

@Suite struct AttributeTests {
    private func container(_ stack: PersistentStack) -> PersistentContainer {
        PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
    }

    // MARK: Round trips

    @Test(arguments: AllTypesSample.allCases, TypedStoreKind.allCases)
    func everyPrimitiveRoundTrips(sample: AllTypesSample, kind: TypedStoreKind) throws {
        let (stack, folder) = try makeTypedStack(kind)
        let container = container(stack)
        let original = sample.value

        let beforeSave = try container.perform { context in
            try context.insert(original).decode()
        }
        #expect(beforeSave == original)

        let fetched = try container.perform { context in
            try context.fetch(AllTypes.all).map { try $0.decode() }
        }
        #expect(fetched == [original])
        let stored = try #require(fetched.first)
        // Field by field, so that a failure names the field.
        #expect(stored.int == original.int && stored.int16 == original.int16 && stored.int32 == original.int32)
        #expect(stored.int64 == original.int64)
        #expect(stored.float == original.float && stored.double == original.double)
        #expect(stored.decimal == original.decimal)
        #expect(stored.date == original.date)
        #expect(stored.string == original.string && stored.data == original.data)
        #expect(stored.uuid == original.uuid && stored.url == original.url)
        #expect(stored.optionalInt == original.optionalInt && stored.optionalBool == original.optionalBool)
        #expect(stored.optionalDouble == original.optionalDouble && stored.optionalDecimal == original.optionalDecimal)
        #expect(stored.optionalDate == original.optionalDate && stored.optionalString == original.optionalString)
        #expect(stored.optionalData == original.optionalData && stored.optionalUUID == original.optionalUUID)
        #expect(stored.optionalURL == original.optionalURL)
        withExtendedLifetime(folder) {}
    }

    @Test func allOptionalsNilRoundTripAsNil() throws {
        let stack = try makeStack()
        let container = container(stack)
        try container.perform { try $0.insert(AllTypes(int: 7)) }
        let stored = try container.perform { try #require(try $0.fetchOne(AllTypes.all)).decode() }
        #expect(stored == AllTypes(int: 7))
        #expect(stored.optionalBool == nil && stored.optionalInt == nil && stored.optionalDouble == nil)
        #expect(stored.optionalString == nil && stored.optionalDate == nil && stored.optionalData == nil)
        #expect(stored.optionalUUID == nil && stored.optionalURL == nil && stored.optionalDecimal == nil)
    }

    @Test func enumJSONAndConvertedValuesRoundTripInTheirStoredForms() throws {
        let stack = try makeStack()
        let container = container(stack)
        let book = Book(
            title: "Leaves of Grass", year: 1855, isbn: "978-0140421996", genre: .poetry,
            dimensions: Dimensions(width: 12.5, height: 19.75), price: Money(cents: 1999), inPrint: false)
        try container.perform { try $0.insert(book) }

        let (stored, genre, dimensions, price) = try container.perform { context in
            let object = try #require(try context.fetchOne(Book.all))
            return (
                try object.decode(),
                try object.instance.value(forKey: "genre", as: String.self),
                try object.instance.value(forKey: "dimensions", as: Data.self),
                try object.instance.value(forKey: "price", as: Int64.self)
            )
        }
        #expect(stored == book)
        #expect(genre == "poetry")
        #expect(String(decoding: dimensions, as: UTF8.self) == #"{"height":19.75,"width":12.5}"#)
        #expect(price == 1999)

        // Every case of the enum, and no dimensions at all.
        for genre in Genre.allCases {
            try container.perform { try $0.insert(Book(title: genre.rawValue, genre: genre)) }
        }
        let genres = try container.perform { context in
            try context.fetch(Book.all.where(\Book.dimensions == nil).sort(\Book.title), \Book.genre)
        }
        #expect(genres == [.essay, .fiction, .poetry])
    }

    // MARK: The derived model

    @Test func theEntityDescriptionFollowsTheDeclarations() throws {
        let entity = try Book.entityDescription()
        #expect(entity.name == "Book")
        #expect(entity.attributes.map(\.name) == ["dimensions", "genre", "inPrint", "isbn", "price", "title", "year"])

        func attribute(_ name: String) throws -> AttributeDescription {
            try #require(entity.attribute(named: name))
        }
        #expect(try attribute("year").type == .integer64)
        #expect(try attribute("year").isOptional)
        #expect(try attribute("title").type == .string)
        #expect(try !attribute("title").isOptional)
        #expect(try attribute("genre").type == .string)
        #expect(try !attribute("genre").isOptional)
        #expect(try attribute("dimensions").type == .binary)
        #expect(try attribute("dimensions").isOptional)
        #expect(try attribute("price").type == .integer64)
        #expect(try !attribute("price").isOptional)
        #expect(try attribute("isbn").type == .string)
        #expect(try attribute("isbn").isOptional)
        #expect(try attribute("inPrint").type == .boolean)
        #expect(try attribute("inPrint").defaultValue == .bool(true))
        #expect(try attribute("title").defaultValue == .null)

        #expect(entity.uniquenessConstraints == [["isbn"]])
        #expect(entity.indexes == [IndexDescription(["year"])])

        let all = try AllTypes.entityDescription()
        let types = Dictionary(uniqueKeysWithValues: all.attributes.map { ($0.name, ($0.type, $0.isOptional)) })
        #expect(types["int16"]?.0 == .integer16 && types["int32"]?.0 == .integer32 && types["int"]?.0 == .integer64)
        #expect(types["float"]?.0 == .float && types["double"]?.0 == .double && types["decimal"]?.0 == .decimal)
        #expect(types["date"]?.0 == .date && types["uuid"]?.0 == .uuid && types["url"]?.0 == .url)
        #expect(types["optionalURL"]?.1 == true && types["url"]?.1 == false)
    }

    @Test func theDefaultValueReachesObjectsInsertedThroughTheEngine() throws {
        let stack = try makeStack()
        let container = container(stack)
        // inPrint is never set: the model's default fills it.
        try insertRawBook(container, key: "year", value: 2001)
        let book = try container.perform { try #require(try $0.fetchOne(Book.all)).decode() }
        #expect(book.inPrint)
        #expect(book == Book(title: "Raw", year: 2001, genre: .fiction, price: Money(cents: 100), inPrint: true))
    }

    @Test func theUniqueConstraintIsEnforcedByTheStore() throws {
        let stack = try makeStack()
        let container = container(stack)
        try container.perform { try $0.insert(Book(title: "Dune", isbn: "978-0441013593")) }
        let error = #expect(throws: SkerryError.self) {
            try container.perform { try $0.insert(Book(title: "Dune", isbn: "978-0441013593")) }
        }
        #expect(error?.code == .constraintViolation)
        // nil is not a value: any number of books without an ISBN.
        try container.perform { context in
            try context.insert(Book(title: "A"))
            try context.insert(Book(title: "B"))
        }
        #expect(try storedTitles(in: stack) == ["A", "B", "Dune"])
    }

    @Test func anOptionNamingAnUndeclaredKeyPathIsAnError() {
        struct Loose: ManagedObjectConvertible {
            var name = ""
            var note = ""
            static let entityName = "Loose"
            static let attributes: Set<Attribute<Loose>> = [Attribute(\.name, "name")]
            static let relations: Void = ()
            static let entityOptions = EntityOptions<Loose>().index(\Loose.note)
        }
        let error = #expect(throws: SkerryError.self) { try Loose.entityDescription() }
        #expect(error?.code == .unknownAttribute)
        #expect(error?.entityName == "Loose")
    }

    // MARK: Values that cannot be decoded

    /// Inserts a book through the engine with `value` stored raw in `key`.
    private func insertRawBook(_ container: PersistentContainer, key: String, value: some AttributeValueConvertible) throws {
        try container.perform { context in
            let object = try context.instance.insert(entityName: Book.entityName)
            try object.setValue("Raw", forKey: "title")
            try object.setValue(Int64(100), forKey: "price")
            try object.setValue("fiction", forKey: "genre")
            try object.setValue(value, forKey: key)
        }
    }

    @Test func anUnknownEnumRawValueIsAnErrorNamingEntityAndAttribute() throws {
        let stack = try makeStack()
        let container = container(stack)
        try insertRawBook(container, key: "genre", value: "unknown")

        try container.perform { context in
            let object = try #require(try context.fetchOne(Book.all))
            let whole = #expect(throws: SkerryError.self) { try object.decode() }
            #expect(whole?.code == .undecodableValue)
            #expect(whole?.entityName == "Book")
            #expect(whole?.key == "genre")

            let single = #expect(throws: SkerryError.self) { try object.decode(\.genre) }
            #expect(single?.code == .undecodableValue && single?.key == "genre")

            let column = #expect(throws: SkerryError.self) { try context.fetch(Book.all, \Book.genre) }
            #expect(column?.code == .undecodableValue && column?.key == "genre")

            // The other attributes still read.
            #expect(try object.decode(\.title) == "Raw")
            #expect(try context.fetch(Book.all, \Book.price) == [Money(cents: 100)])
        }
    }

    @Test func invalidJSONIsAnErrorNamingEntityAndAttribute() throws {
        let stack = try makeStack()
        let container = container(stack)
        try insertRawBook(container, key: "dimensions", value: Data("{not json".utf8))

        let error = #expect(throws: SkerryError.self) {
            try container.perform { context in try context.fetch(Book.all).map { try $0.decode() } }
        }
        #expect(error?.code == .undecodableValue)
        #expect(error?.entityName == "Book")
        #expect(error?.key == "dimensions")

        // Valid JSON of the wrong shape is no better.
        try container.perform { context in
            let object = try #require(try context.fetchOne(Book.all))
            try object.instance.setValue(Data(#"{"width":"wide"}"#.utf8), forKey: "dimensions")
            let wrongShape = #expect(throws: SkerryError.self) { try object.decode(\.dimensions) }
            #expect(wrongShape?.code == .undecodableValue && wrongShape?.key == "dimensions")
        }
    }

    // MARK: Models that lay an entity out differently

    /// The same plain type over two models that order the entity's attributes differently: values
    /// land in the right properties in both, however the calls interleave.
    @Test func oneTypeDecodesCorrectlyAgainstModelsWithDifferentAttributeOrders() throws {
        struct Pair: ManagedObjectConvertible, Equatable {
            var name = ""
            var rank = 0
            static let entityName = "Pair"
            static let attributes: Set<Attribute<Pair>> = [Attribute(\.name, "name"), Attribute(\.rank, "rank")]
            static let relations: Void = ()
        }
        func stack(_ attributes: [AttributeDescription]) throws -> PersistentStack {
            let stack = PersistentStack(
                name: "Pairs", model: try ObjectModel(entities: [EntityDescription(name: "Pair", attributes: attributes)]))
            stack.persistentStoreDescriptions = [.inMemory()]
            try stack.loadPersistentStores()
            return stack
        }
        let nameFirst = PersistentContainer(managedObjectContext: {
            [
                stack = try stack([
                    AttributeDescription("name", .string), AttributeDescription("rank", .integer64),
                ])
            ] in stack.newBackgroundContext()
        })
        let rankFirst = PersistentContainer(managedObjectContext: {
            [
                stack = try stack([
                    AttributeDescription("note", .string, isOptional: true), AttributeDescription("rank", .integer64),
                    AttributeDescription("name", .string),
                ])
            ] in stack.newBackgroundContext()
        })
        for round in 0..<3 {
            try nameFirst.perform { try $0.insert(Pair(name: "first \(round)", rank: round)) }
            try rankFirst.perform { try $0.insert(Pair(name: "second \(round)", rank: 10 + round)) }
        }
        #expect(
            try nameFirst.perform { try $0.fetch(Pair.all.sort(\Pair.rank)).map { try $0.decode() } }
                == (0..<3).map { Pair(name: "first \($0)", rank: $0) })
        #expect(
            try rankFirst.perform { try $0.fetch(Pair.all.sort(\Pair.rank)).map { try $0.decode() } }
                == (0..<3).map { Pair(name: "second \($0)", rank: 10 + $0) })
    }

    // MARK: Undeclared key paths

    @Test func anUndeclaredKeyPathIsAnUnknownAttributeError() throws {
        let stack = try makeStack()
        let container = container(stack)
        try container.perform { try $0.insert(Book(title: "Dune")) }

        try container.perform { context in
            let inWhere = #expect(throws: SkerryError.self) {
                try context.fetch(Book.all.where(\Book.shoutedTitle == "DUNE"))
            }
            #expect(inWhere?.code == .unknownAttribute)
            #expect(inWhere?.entityName == "Book")

            let nested = #expect(throws: SkerryError.self) {
                try context.count(of: Book.all.where(\Book.title == "Dune" && !Query.contains(\Book.shoutedTitle, "D")))
            }
            #expect(nested?.code == .unknownAttribute)

            let inSort = #expect(throws: SkerryError.self) { try context.fetch(Book.all.sort(\Book.shoutedTitle)) }
            #expect(inSort?.code == .unknownAttribute)

            let inColumn = #expect(throws: SkerryError.self) { try context.fetch(Book.all, \Book.shoutedTitle) }
            #expect(inColumn?.code == .unknownAttribute)

            let object = try #require(try context.fetchOne(Book.all))
            let inDecode = #expect(throws: SkerryError.self) { try object.decode(\.shoutedTitle) }
            #expect(inDecode?.code == .unknownAttribute)
            object.encode(\.titleAlias, "Other") // cannot throw: the error is recorded
            #expect((context.instance.takeRecordedError() as? SkerryError)?.code == .unknownAttribute)
            #expect(try object.decode(\.title) == "Dune")

            let inBatchDelete = #expect(throws: SkerryError.self) {
                try context.batchDelete(Book.all.where(\Book.shoutedTitle == "DUNE"))
            }
            #expect(inBatchDelete?.code == .unknownAttribute)
        }
        #expect(try storedTitles(in: stack) == ["Dune"])
    }

    // MARK: Single attributes

    @Test func encodeAndDecodeSingleAttributes() throws {
        let stack = try makeStack()
        let container = container(stack)
        try container.perform { context in
            let book = try context.insert(Book(title: "Draft"))
            book.encode(\.title, "Dune")
                .encode(\.year, 1965)
                .encode(\.genre, .essay)
                .encode(\.dimensions, Dimensions(width: 1, height: 2))
                .encode(\.price, Money(cents: 995))
            #expect(try book.decode(\.title) == "Dune")
            #expect(try book.decode(\.year) == 1965)
            #expect(try book.decode(\.genre) == .essay)
            #expect(try book.decode(\.dimensions) == Dimensions(width: 1, height: 2))
            #expect(try book.decode(\.price) == Money(cents: 995))
            #expect(try book.decode(\.isbn) == nil)
        }
        #expect(
            try container.perform { try #require(try $0.fetchOne(Book.all)).decode() }
                == Book(
                    title: "Dune", year: 1965, genre: .essay, dimensions: Dimensions(width: 1, height: 2),
                    price: Money(cents: 995)))

        // nil clears an optional attribute; a whole value replaces every attribute.
        try container.perform { context in
            let book = try #require(try context.fetchOne(Book.all))
            book.encode(\.year, nil).encode(\.dimensions, nil)
            #expect(try book.decode(\.year) == nil)
        }
        let cleared = try container.perform { try #require(try $0.fetchOne(Book.all)).decode() }
        #expect(cleared.year == nil && cleared.dimensions == nil && cleared.title == "Dune")

        try container.perform { context in
            try #require(try context.fetchOne(Book.all)).encode(Book(title: "Solaris", year: 1961))
        }
        #expect(try container.perform { try #require(try $0.fetchOne(Book.all)).decode() } == Book(title: "Solaris", year: 1961))
        #expect(try container.perform { try $0.count(of: Book.all) } == 1)
    }

    // MARK: Values that cannot be encoded

    @Test func aValueThatCannotBeEncodedIsAnErrorNamingEntityAndAttribute() throws {
        let stack = try makeStack()
        let container = container(stack)
        let unencodable = Book(title: "NaN", dimensions: Dimensions(width: .nan, height: 1))
        let error = #expect(throws: SkerryError.self) {
            try container.perform { try $0.insert(unencodable) }
        }
        #expect(error?.code == .wrongValueType)
        #expect(error?.entityName == "Book")
        #expect(error?.key == "dimensions")
        #expect(try storedTitles(in: stack).isEmpty)

        // In a predicate, the fetch fails the same way.
        let inPredicate = #expect(throws: SkerryError.self) {
            try container.perform { try $0.count(of: Book.all.where(\Book.dimensions == Dimensions(width: .nan, height: 1))) }
        }
        #expect(inPredicate?.code == .wrongValueType)
        #expect(inPredicate?.key == "dimensions")
    }

    @Test func aFailedInsertLeavesNoHalfWrittenObjectBehind() throws {
        let stack = try makeStack()
        let container = container(stack)
        // The user catches the failed insert and carries on: only the good book may be saved.
        let failed = try container.perform { context in
            var failed = false
            do {
                try context.insert(Book(title: "Half", dimensions: Dimensions(width: .nan, height: 1), price: Money(cents: 1)))
            } catch {
                failed = true
            }
            try context.insert(Book(title: "Good"))
            return failed
        }
        #expect(failed)
        #expect(try storedTitles(in: stack) == ["Good"])
    }

    @Test func aDefaultValueThatCannotBeEncodedIsAModelError() {
        struct Shelf: ManagedObjectConvertible {
            var size = Dimensions()
            static let entityName = "Shelf"
            static let attributes: Set<Attribute<Shelf>> = [Attribute(\.size, "size")]
            static let relations: Void = ()
            static let entityOptions = EntityOptions<Shelf>().defaultValue(\Shelf.size, Dimensions(width: .infinity, height: 0))
        }
        let error = #expect(throws: SkerryError.self) { try ObjectModel(types: [Shelf.self]) }
        #expect(error?.code == .wrongValueType)
        #expect(error?.entityName == "Shelf")
    }

    @Test func aValueOutOfTheStoredRangeIsAnErrorNotACrash() throws {
        let stack = try makeStack()
        let container = container(stack)
        // An integer16 attribute written through the engine with a value Int16 cannot hold is
        // refused before it reaches the store.
        let error = #expect(throws: SkerryError.self) {
            try container.perform { context in
                let object = try context.insert(AllTypes())
                try object.instance.setValue(Int64(Int16.max) + 1, forKey: "int16")
            }
        }
        #expect(error?.code == .wrongValueType)
        #expect(error?.key == "int16")
        #expect(try container.perform { try $0.count(of: AllTypes.all) } == 0)
    }
}
