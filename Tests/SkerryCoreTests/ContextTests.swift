import Foundation
import Testing

@testable import SkerryCore

/// Contexts: object identity, IDs, typed values, change tracking, look-up by ID, delete,
/// rollback, reset, refresh and fetch refreshing.
@Suite struct ContextTests {
    // MARK: Helpers

    /// Runs `body`, expecting a `SkerryError` with `code`; returns it.
    @discardableResult
    /// Saves books with these titles (and years) in a context of its own; returns their IDs.
    static func saveBooks(_ stack: PersistentStack, _ books: [(String, Int32?)]) throws -> [ObjectID] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let objects = try books.map { try context.insertBook($0.0, year: $0.1) }
            try context.save()
            return objects.map(\.objectID)
        }
    }

    /// The titles in the store, read by a fresh context, sorted.
    static func storedTitles(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                .map { try $0.value(forKey: "title", as: String.self) }
        }
    }

    static let allBooks = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])

    // Sample values of every attribute type.
    static let sampleTitle = "Dune — 砂丘 🏜️"
    static let sampleYear = Int32.min
    static let samplePages = Int16.max
    static let sampleSales = Int64.max
    static let sampleRating = -1234.5678e-9
    static let sampleWeight = Float(1.1)
    static let samplePrice = Decimal(string: "12345678901234567890.123456789")!
    /// Whole half seconds: exactly representable whichever epoch the store counts from.
    static let samplePublished = Date(timeIntervalSince1970: 1_700_000_000.5)
    static let sampleCover = Data([0, 1, 2, 0, 255, 128, 0])
    static let sampleUUID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let sampleLink = URL(string: "https://example.com/books/dune?edition=1&lang=en#ch1")!

    /// Writes the sample values (and clears the optional isbn).
    static func writeSample(_ book: EntityObject) throws {
        try book.setValue(sampleTitle, forKey: "title")
        try book.setValue(sampleYear, forKey: "year")
        try book.setValue(samplePages, forKey: "pages")
        try book.setValue(sampleSales, forKey: "sales")
        try book.setValue(sampleRating, forKey: "rating")
        try book.setValue(sampleWeight, forKey: "weight")
        try book.setValue(samplePrice, forKey: "price")
        try book.setValue(samplePublished, forKey: "published")
        try book.setValue(false, forKey: "inPrint")
        try book.setValue(sampleCover, forKey: "cover")
        try book.setValue(String?.none, forKey: "isbn")
        try book.setValue(sampleUUID, forKey: "uuid")
        try book.setValue(sampleLink, forKey: "link")
    }

    /// Checks that `book` holds the sample values, read through every matching Swift type.
    static func checkSample(_ book: EntityObject, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try book.value(forKey: "title", as: String.self) == sampleTitle, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "title", as: String?.self) == sampleTitle, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "year", as: Int32.self) == sampleYear, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "year", as: Int32?.self) == sampleYear, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "year", as: Int64.self) == Int64(sampleYear), sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "pages", as: Int16.self) == samplePages, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "pages", as: Int.self) == Int(samplePages), sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "sales", as: Int64.self) == sampleSales, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "sales", as: Int.self) == Int(sampleSales), sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "rating", as: Double.self) == sampleRating, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "weight", as: Float.self) == sampleWeight, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "weight", as: Float?.self) == sampleWeight, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "price", as: Decimal.self) == samplePrice, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "published", as: Date.self) == samplePublished, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "inPrint", as: Bool.self) == false, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "cover", as: Data.self) == sampleCover, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "isbn", as: String?.self) == nil, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "uuid", as: UUID.self) == sampleUUID, sourceLocation: sourceLocation)
        #expect(try book.value(forKey: "link", as: URL.self) == sampleLink, sourceLocation: sourceLocation)
    }

    // MARK: Inserting and IDs

    @Test(arguments: StoreKind.allCases)
    func insertGivesTemporaryIDThatBecomesPermanentOnSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        let (temporaryID, permanentID) = try context.performAndWait {
            let book = try context.insertBook("Dune", year: 1965)
            let temporaryID = book.objectID
            #expect(temporaryID.isTemporary)
            #expect(book.isInserted)
            #expect(context.registeredObject(for: temporaryID) === book)
            #expect(temporaryID.uriRepresentation().lastPathComponent.hasPrefix("t"))

            try context.save()
            let permanentID = book.objectID
            #expect(!permanentID.isTemporary)
            #expect(permanentID != temporaryID)
            #expect(!book.isInserted)
            #expect(permanentID.uriRepresentation().lastPathComponent.hasPrefix("p"))
            #expect(context.registeredObject(for: permanentID) === book)
            #expect(context.registeredObject(for: temporaryID) == nil)
            return (temporaryID, permanentID)
        }

        let other = stack.newBackgroundContext()
        try other.performAndWait {
            let found = try other.existingObject(with: permanentID)
            #expect(found.objectID == permanentID)
            #expect(try found.value(forKey: "title", as: String.self) == "Dune")
            #expect(try found.value(forKey: "year", as: Int32?.self) == 1965)
            expectError(.objectNotFound) { _ = try other.existingObject(with: temporaryID) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func insertAppliesDefaultValues(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        let id = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            #expect(try book.value(forKey: "sales", as: Int64.self) == 0)
            #expect(try book.value(forKey: "inPrint", as: Bool.self) == true)
            #expect(try book.value(forKey: "title", as: String?.self) == nil)
            #expect(try book.value(forKey: "year", as: Int32?.self) == nil)
            #expect(try book.value(forKey: "rating", as: Double?.self) == nil)
            let author = try context.insert(entityName: "Author")
            #expect(try author.value(forKey: "name", as: String?.self) == nil)
            #expect(try author.value(forKey: "born", as: Int64?.self) == nil)
            context.rollback()

            let saved = try context.insertBook("Dune")
            try context.save()
            return saved.objectID
        }
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            let book = try other.existingObject(with: id)
            #expect(try book.value(forKey: "sales", as: Int64.self) == 0)
            #expect(try book.value(forKey: "inPrint", as: Bool.self) == true)
            #expect(try book.value(forKey: "year", as: Int32?.self) == nil)
        }
    }

    // MARK: Typed values

    @Test(arguments: StoreKind.allCases)
    func everyAttributeTypeRoundTripsThroughSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        let id = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try Self.writeSample(book)
            try Self.checkSample(book)
            try context.save()
            try Self.checkSample(book)
            return book.objectID
        }
        let fresh = stack.newBackgroundContext()
        try fresh.performAndWait {
            try Self.checkSample(try fresh.existingObject(with: id))
        }
        let fetching = stack.newBackgroundContext()
        try fetching.performAndWait {
            let books = try fetching.fetch(FetchRequest(entityName: "Book"))
            try #require(books.count == 1)
            try Self.checkSample(books[0])
        }
    }

    @Test func everyAttributeTypeRoundTripsThroughCloseAndReopen() throws {
        let directory = TemporaryDirectory()
        do {
            let stack = try makeFileStack(directory)
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                try Self.writeSample(try context.insert(entityName: "Book"))
                try context.save()
            }
        }
        let stack = try makeFileStack(directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book"))
            try #require(books.count == 1)
            try Self.checkSample(books[0])
        }
    }

    @Test func optionalValuesClearAndReadAsNil() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let id = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try Self.writeSample(book)
            try context.save()
            try book.setValue(Int32?.none, forKey: "year")
            try book.setValue(Decimal?.none, forKey: "price")
            try book.setValue(URL?.none, forKey: "link")
            try book.setValue(Data?.none, forKey: "cover")
            try context.save()
            return book.objectID
        }
        let fresh = stack.newBackgroundContext()
        try fresh.performAndWait {
            let book = try fresh.existingObject(with: id)
            #expect(try book.value(forKey: "year", as: Int32?.self) == nil)
            #expect(try book.value(forKey: "price", as: Decimal?.self) == nil)
            #expect(try book.value(forKey: "link", as: URL?.self) == nil)
            #expect(try book.value(forKey: "cover", as: Data?.self) == nil)
            #expect(try book.value(forKey: "uuid", as: UUID?.self) == Self.sampleUUID)
        }
    }

    /// Dates with sub-second precision, as `Date()` gives, come back equal after a save.
    @Test(arguments: StoreKind.allCases)
    func datesKeepFullPrecision(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let dates = (0..<20).map { Date(timeIntervalSinceReferenceDate: 721_692_800.123456789 + Double($0) * 0.001234567) }
        let context = stack.newBackgroundContext()
        let ids = try context.performAndWait {
            let books = try dates.enumerated().map { offset, date in
                let book = try context.insertBook("Book \(offset)")
                try book.setValue(date, forKey: "published")
                return book
            }
            try context.save()
            return books.map(\.objectID)
        }
        let fresh = stack.newBackgroundContext()
        let read = try fresh.performAndWait {
            try ids.map { try fresh.existingObject(with: $0).value(forKey: "published", as: Date.self) }
        }
        // PostgreSQL's timestamptz keeps microseconds: there a date comes back within half of one.
        let tolerance = kind == .postgres ? 0.000_000_5 + 1e-9 : 0
        let changed = zip(dates, read).filter { abs($0.timeIntervalSince($1)) > tolerance }
            .map { "\($0.timeIntervalSinceReferenceDate) -> \($1.timeIntervalSinceReferenceDate)" }
        let changedCount = changed.count
        #expect(changedCount == 0, "\(changedCount) of \(dates.count) dates changed in a save, e.g. \(changed.prefix(3))")
    }

    @Test func typeCheckingErrors() throws {
        let stack = try makeMemoryStack()
        let id = try Self.saveBooks(stack, [("Dune", nil)])[0]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.existingObject(with: id)

            let readError = expectError(.wrongValueType) { _ = try book.value(forKey: "title", as: Int.self) }
            #expect(readError?.key == "title")
            #expect(readError?.entityName == "Book")
            #expect(readError?.objectID == id)

            let setError = expectError(.wrongValueType) { try book.setValue(42, forKey: "title") }
            #expect(setError?.key == "title")
            #expect(try book.value(forKey: "title", as: String.self) == "Dune")

            let rangeError = expectError(.wrongValueType) { try book.setValue(Int32(100_000), forKey: "pages") }
            #expect(rangeError?.key == "pages")
            #expect(try book.value(forKey: "pages", as: Int16?.self) == nil)
            expectError(.wrongValueType) { try book.setValue(Int32(Int16.max) + 1, forKey: "pages") }
            expectError(.wrongValueType) { try book.setValue(Int64(Int32.max) + 1, forKey: "year") }

            let nanError = expectError(.wrongValueType) { try book.setValue(Double.nan, forKey: "rating") }
            #expect(nanError?.key == "rating")
            #expect(try book.value(forKey: "rating", as: Double?.self) == nil)
            expectError(.wrongValueType) { try book.setValue(Float.nan, forKey: "weight") }

            let nilError = expectError(.wrongValueType) { _ = try book.value(forKey: "year", as: Int32.self) }
            #expect(nilError?.key == "year")
            #expect(try book.value(forKey: "year", as: Int32?.self) == nil)

            // Reading a wider integer type into a narrower Swift type is refused too.
            expectError(.wrongValueType) { _ = try book.value(forKey: "sales", as: Int16.self) }
            expectError(.wrongValueType) { _ = try book.value(forKey: "inPrint", as: Int.self) }

            let unknownRead = expectError(.unknownAttribute) { _ = try book.value(forKey: "subtitle", as: String?.self) }
            #expect(unknownRead?.key == "subtitle")
            let unknownWrite = expectError(.unknownAttribute) { try book.setValue("x", forKey: "subtitle") }
            #expect(unknownWrite?.key == "subtitle")
            expectError(.unknownEntity) { _ = try context.insert(entityName: "Magazine") }

            // Values in range are accepted at the edge, and none of the refused writes is a change.
            #expect(!book.hasChanges)
            #expect(!context.hasChanges)
            try book.setValue(Int32(Int16.max), forKey: "pages")
            #expect(try book.value(forKey: "pages", as: Int16.self) == Int16.max)
            #expect(context.updatedObjects == [book])
        }
    }

    // MARK: Change tracking

    @Test(arguments: StoreKind.allCases)
    func changeTrackingSets(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        _ = try Self.saveBooks(stack, [("A", 1), ("B", 2), ("C", 3)])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(Self.allBooks)
            try #require(books.count == 3)
            let (a, b, c) = (books[0], books[1], books[2])
            #expect(!context.hasChanges)
            #expect(context.registeredObjects == [a, b, c])
            #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)

            try a.setValue("A2", forKey: "title")
            #expect(context.hasChanges)
            #expect(context.updatedObjects == [a])
            #expect(a.isUpdated && a.hasChanges)

            try context.delete(b)
            #expect(context.deletedObjects == [b])
            #expect(b.isDeleted && b.hasChanges)

            let d = try context.insertBook("D")
            #expect(context.insertedObjects == [d])
            #expect(d.isInserted && d.hasChanges && !d.isUpdated)
            #expect(context.registeredObjects == [a, b, c, d])
            #expect(!c.hasChanges)

            try context.save()
            #expect(!context.hasChanges)
            #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)
            #expect(context.registeredObjects == [a, c, d])
            #expect(!a.hasChanges && !d.hasChanges)
        }
        #expect(try Self.storedTitles(stack) == ["A2", "C", "D"])
    }

    @Test(arguments: StoreKind.allCases)
    func settingAValueBackToItsOriginalIsNotAnUpdate(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965)])[0]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.existingObject(with: id)
            try book.setValue("Changed", forKey: "title")
            try book.setValue(Int32(2000), forKey: "year")
            #expect(context.updatedObjects == [book])

            try book.setValue("Dune", forKey: "title")
            #expect(book.isUpdated)
            #expect(book.changedValues == ["year": .int(2000)])

            try book.setValue(Int32(1965), forKey: "year")
            #expect(!book.isUpdated)
            #expect(!book.hasChanges)
            #expect(book.changedValues.isEmpty)
            #expect(context.updatedObjects.isEmpty)
            #expect(!context.hasChanges)
            #expect(try context.save().isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changedValuesAndCommittedValues(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("Dune", year: 1965)
            #expect(book.changedValues == ["title": .string("Dune"), "year": .int(1965), "sales": .int(0), "inPrint": .bool(true)])
            #expect(try book.committedValues(forKeys: ["title"]).isEmpty)

            try context.save()
            #expect(book.changedValues.isEmpty)
            #expect(try book.committedValues(forKeys: ["title", "year"]) == ["title": .string("Dune"), "year": .int(1965)])
            let all = try book.committedValues()
            #expect(all.count == book.entity.attributes.count)
            #expect(all["isbn"] == .null)

            try book.setValue("Dune Messiah", forKey: "title")
            try book.setValue(Int32?.none, forKey: "year")
            #expect(book.changedValues == ["title": .string("Dune Messiah"), "year": .null])
            #expect(try book.committedValues(forKeys: ["title", "year"]) == ["title": .string("Dune"), "year": .int(1965)])
            #expect(try book.value(forKey: "title", as: String.self) == "Dune Messiah")
            expectError(.unknownAttribute) { _ = try book.committedValues(forKeys: ["subtitle"]) }

            try context.save()
            #expect(book.changedValues.isEmpty)
            #expect(try book.committedValues(forKeys: ["title", "year"]) == ["title": .string("Dune Messiah"), "year": .null])
        }
    }

    // MARK: Identity and look-up by ID

    @Test(arguments: StoreKind.allCases)
    func oneObjectPerRow(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("A", 1), ("B", 2)])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let first = try context.fetch(Self.allBooks)
            let second = try context.fetch(Self.allBooks)
            try #require(first.count == 2 && second.count == 2)
            #expect(first[0] === second[0])
            #expect(first[1] === second[1])
            var onlyB = FetchRequest(entityName: "Book")
            onlyB.predicate = AttributeKey("title") == "B"
            #expect(try context.fetch(onlyB).first === first[1])
            var batched = Self.allBooks
            batched.fetchBatchSize = 1
            #expect(try context.fetch(batched).first === first[0])
            #expect(context.object(with: ids[0]) === first[0])
            #expect(try context.existingObject(with: ids[1]) === first[1])
            #expect(context.registeredObject(for: ids[0]) === first[0])
            #expect(try context.fetchObjectIDs(Self.allBooks) == ids)
            #expect(context.registeredObjects.count == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func objectWithIDReturnsAFaultThatLoadsOnFirstRead(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965)])[0]
        let reader = stack.newBackgroundContext()
        let writer = stack.newBackgroundContext()
        var kept: EntityObject?
        reader.performAndWait {
            #expect(reader.registeredObject(for: id) == nil)
            let fault = reader.object(with: id)
            #expect(fault.isFault)
            #expect(fault.objectID == id)
            #expect(reader.registeredObject(for: id) === fault)
            #expect(reader.object(with: id) === fault)
            kept = fault
        }
        // The row changes after the fault was made: the fault's first read must see the change,
        // which it can only do if object(with:) did not read the row.
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue("Dune (revised)", forKey: "title")
            try writer.save()
        }
        try reader.performAndWait {
            let fault = try #require(kept)
            #expect(try fault.value(forKey: "title", as: String.self) == "Dune (revised)")
            #expect(!fault.isFault)
            #expect(try fault.value(forKey: "year", as: Int32?.self) == 1965)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func existingObjectLoadsOrThrowsObjectNotFound(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Kept", 1), ("Gone", 2)])
        let writer = stack.newBackgroundContext()
        let temporaryID = try writer.performAndWait {
            try writer.delete(try writer.existingObject(with: ids[1]))
            try writer.save()
            let unsaved = try writer.insertBook("Unsaved")
            #expect(try writer.existingObject(with: unsaved.objectID) === unsaved)
            return unsaved.objectID
        }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let kept = try context.existingObject(with: ids[0])
            #expect(!kept.isFault)
            #expect(try kept.value(forKey: "title", as: String.self) == "Kept")

            let deleted = expectError(.objectNotFound) { _ = try context.existingObject(with: ids[1]) }
            #expect(deleted?.objectID == ids[1])
            let temporary = expectError(.objectNotFound) { _ = try context.existingObject(with: temporaryID) }
            #expect(temporary?.objectID == temporaryID)

            // A fault for the deleted row is made without I/O; reading it finds the row gone.
            let fault = context.object(with: ids[1])
            #expect(fault.isFault)
            expectError(.objectNotFound) { _ = try fault.value(forKey: "title", as: String.self) }
            expectError(.objectNotFound) { _ = try context.existingObject(with: ids[1]) }
        }
    }

    /// When a context goes, the objects still held elsewhere are invalidated (they report no
    /// context and refuse reads), while the ones nobody holds go with it.
    @Test(arguments: StoreKind.allCases)
    func objectsHeldAfterTheirContextGoesAreInvalidated(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        _ = try Self.saveBooks(stack, [("Dune", 1965), ("Emma", 1815), ("Ulysses", 1922)])
        var held: EntityObject?
        do {
            let context = stack.newBackgroundContext()
            held = try context.performAndWait {
                let books = try context.fetch(Self.allBooks)
                try #require(books.count == 3)
                return books[1] // sorted by title: Dune, Emma, Ulysses
            }
            #expect(held?.context === context)
        }
        let emma = try #require(held)
        #expect(emma.context == nil)
        expectError(.objectNotInContext) { _ = try emma.value(forKey: "title", as: String.self) }
    }

    // MARK: Delete

    @Test(arguments: StoreKind.allCases)
    func deletingASavedObject(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Dune", 1965), ("Emma", 1815)])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try context.existingObject(with: ids[0])
            try context.delete(dune)
            #expect(dune.isDeleted)
            #expect(context.deletedObjects == [dune])
            #expect(try dune.value(forKey: "title", as: String.self) == "Dune")
            #expect(try context.fetch(Self.allBooks).map { try $0.value(forKey: "title", as: String.self) } == ["Emma"])

            let changes = try context.save()
            #expect(changes.deleted == [ids[0]])
            #expect(dune.context == nil)
            #expect(context.registeredObject(for: ids[0]) == nil)
            expectError(.objectNotInContext) { _ = try dune.value(forKey: "title", as: String.self) }
            expectError(.objectNotFound) { _ = try context.existingObject(with: ids[0]) }
        }
        #expect(try Self.storedTitles(stack) == ["Emma"])
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAnInsertedObjectJustRemovesIt(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("Draft")
            let id = book.objectID
            try context.delete(book)
            #expect(context.insertedObjects.isEmpty)
            #expect(context.deletedObjects.isEmpty)
            #expect(!context.hasChanges)
            #expect(context.registeredObject(for: id) == nil)
            expectError(.objectNotInContext) { _ = try book.value(forKey: "title", as: String.self) }
            #expect(try context.save().isEmpty)
        }
        #expect(try Self.storedTitles(stack).isEmpty)
    }

    // MARK: Rollback and reset

    @Test(arguments: StoreKind.allCases)
    func rollbackRestoresDropsAndUndeletes(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Dune", 1965), ("Emma", 1815)])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try context.existingObject(with: ids[0])
            let emma = try context.existingObject(with: ids[1])
            try dune.setValue("Changed", forKey: "title")
            try dune.setValue(Int32?.none, forKey: "year")
            try context.delete(emma)
            let draft = try context.insertBook("Draft")

            context.rollback()
            #expect(!context.hasChanges)
            #expect(try dune.value(forKey: "title", as: String.self) == "Dune")
            #expect(try dune.value(forKey: "year", as: Int32?.self) == 1965)
            #expect(!dune.isUpdated)
            #expect(!emma.isDeleted)
            #expect(context.deletedObjects.isEmpty)
            #expect(try emma.value(forKey: "title", as: String.self) == "Emma")
            #expect(draft.context == nil)
            let invalid = expectError(.objectNotInContext) { _ = try draft.value(forKey: "title", as: String.self) }
            #expect(invalid?.objectID == draft.objectID)
            expectError(.objectNotInContext) { try draft.setValue("Again", forKey: "title") }
            #expect(context.registeredObjects == [dune, emma])
            #expect(try context.save().isEmpty)
        }
        #expect(try Self.storedTitles(stack) == ["Dune", "Emma"])
    }

    @Test(arguments: StoreKind.allCases)
    func resetReleasesEveryRegisteredObject(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Dune", 1965), ("Emma", 1815)])
        let context = stack.newBackgroundContext()
        weak var weakFetched: EntityObject?
        weak var weakInserted: EntityObject?
        weak var weakFault: EntityObject?
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune"))
            try #require(books.count == 1)
            try books[0].setValue("Changed", forKey: "title")
            weakFetched = books[0]
            weakInserted = try context.insertBook("Draft")
            weakFault = context.object(with: ids[1])
            #expect(weakFault?.isFault == true)
        }
        // Without reset, the context keeps its objects alive.
        #expect(weakFetched != nil)
        #expect(weakInserted != nil)
        #expect(weakFault != nil)
        context.performAndWait {
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            #expect(!context.hasChanges)
        }
        #expect(weakFetched == nil)
        #expect(weakInserted == nil)
        #expect(weakFault == nil)
        #expect(try Self.storedTitles(stack) == ["Dune", "Emma"])
    }

    @Test(arguments: StoreKind.allCases)
    func objectsHeldAcrossResetAreInvalid(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965)])[0]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let old = try context.existingObject(with: id)
            try old.setValue("Changed", forKey: "title")
            context.reset()

            #expect(old.context == nil)
            expectError(.objectNotInContext) { _ = try old.value(forKey: "title", as: String.self) }
            expectError(.objectNotInContext) { try old.setValue("Again", forKey: "title") }
            expectError(.objectNotInContext) { try context.delete(old) }
            expectError(.objectNotInContext) { try context.refresh(old, mergeChanges: false) }
            #expect(context.registeredObject(for: id) == nil)

            let fresh = try context.existingObject(with: id)
            #expect(fresh !== old)
            #expect(try fresh.value(forKey: "title", as: String.self) == "Dune")
            #expect(try context.save().isEmpty)
        }
    }

    // MARK: Refresh

    @Test(arguments: StoreKind.allCases)
    func refreshWithoutMergeDropsChangesAndRefaults(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965)])[0]
        let context = stack.newBackgroundContext()
        let writer = stack.newBackgroundContext()
        var kept: EntityObject?
        try context.performAndWait {
            let book = try context.existingObject(with: id)
            try book.setValue("Local", forKey: "title")
            try context.refresh(book, mergeChanges: false)
            #expect(book.isFault)
            #expect(!book.hasChanges)
            #expect(!context.hasChanges)
            #expect(context.updatedObjects.isEmpty)
            #expect(context.registeredObject(for: id) === book)
            kept = book
        }
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue(Int32(1966), forKey: "year")
            try writer.save()
        }
        try context.performAndWait {
            let book = try #require(kept)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune")
            #expect(try book.value(forKey: "year", as: Int32?.self) == 1966)
            #expect(!book.isFault)
            #expect(try context.save().isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeTakesStoreValuesAndKeepsLocalChanges(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965)])[0]
        let context = stack.newBackgroundContext()
        // This test is about a context that has not merged the other save.
        context.automaticallyMergesChangesFromParent = false
        let writer = stack.newBackgroundContext()
        var kept: EntityObject?
        try context.performAndWait {
            let book = try context.existingObject(with: id)
            try book.setValue(Int32(2000), forKey: "year")
            kept = book
        }
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue("Dune Messiah", forKey: "title")
            try writer.save()
        }
        try context.performAndWait {
            let book = try #require(kept)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune")
            try context.refresh(book, mergeChanges: true)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune Messiah")
            #expect(try book.value(forKey: "year", as: Int32?.self) == 2000)
            #expect(book.isUpdated)
            #expect(book.changedValues == ["year": .int(2000)])
            #expect(try book.committedValues(forKeys: ["title", "year"]) == ["title": .string("Dune Messiah"), "year": .int(1965)])
            try context.save()
        }
        let fresh = stack.newBackgroundContext()
        try fresh.performAndWait {
            let book = try fresh.existingObject(with: id)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune Messiah")
            #expect(try book.value(forKey: "year", as: Int32?.self) == 2000)
        }
    }

    // MARK: Fetch refreshing

    @Test(arguments: StoreKind.allCases)
    func fetchBringsUnchangedObjectsUpToDate(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Dune", 1965), ("Emma", 1815)])
        let context = stack.newBackgroundContext()
        // This test is about a context that has not merged the other save.
        context.automaticallyMergesChangesFromParent = false
        let writer = stack.newBackgroundContext()
        var kept: [EntityObject] = []
        try context.performAndWait {
            kept = try ids.map { try context.existingObject(with: $0) }
            try kept[1].setValue(Int32(1816), forKey: "year")
        }
        try writer.performAndWait {
            for id in ids {
                let book = try writer.existingObject(with: id)
                try book.setValue(try book.value(forKey: "title", as: String.self) + " (2nd ed.)", forKey: "title")
            }
            try writer.save()
        }
        try context.performAndWait {
            #expect(try kept[0].value(forKey: "title", as: String.self) == "Dune")
            let fetched = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
            #expect(fetched.count == 2)
            #expect(fetched.contains { $0 === kept[0] } && fetched.contains { $0 === kept[1] })
            // Unchanged: takes the store's values.
            #expect(try kept[0].value(forKey: "title", as: String.self) == "Dune (2nd ed.)")
            // With a pending change: left as it is.
            #expect(try kept[1].value(forKey: "year", as: Int32?.self) == 1816)
            #expect(kept[1].isUpdated)
        }
    }

    /// An object whose change was undone by setting the old value back has no pending change
    /// (hasChanges is false), so a fetch must bring it up to date like any unchanged object.
    @Test(arguments: StoreKind.allCases)
    func fetchBringsRevertedObjectsUpToDate(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965)])[0]
        let context = stack.newBackgroundContext()
        let writer = stack.newBackgroundContext()
        var kept: EntityObject?
        try context.performAndWait {
            let book = try context.existingObject(with: id)
            try book.setValue("Typo", forKey: "title")
            try book.setValue("Dune", forKey: "title")
            #expect(!book.hasChanges)
            #expect(!context.hasChanges)
            kept = book
        }
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue("Dune Messiah", forKey: "title")
            try writer.save()
        }
        try context.performAndWait {
            let book = try #require(kept)
            _ = try context.fetch(Self.allBooks)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune Messiah")
        }
    }
}
