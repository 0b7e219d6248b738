import Foundation
import Testing

@testable import SkerryCore

/// A stack whose default store lives in a folder of its own choosing, as an app sharing its store
/// with an extension would do.
final class RelocatedStack: PersistentStack, @unchecked Sendable {
    static let base = FileManager.default.temporaryDirectory
        .appendingPathComponent("skerry-tests-default-\(UUID().uuidString)", isDirectory: true)
    static let folder = base.appendingPathComponent("Shared/Group", isDirectory: true)
    override class func defaultDirectoryURL() -> URL { folder }
}

/// Loading stores: creation, reopening, several stores, migration and refusal of stores that
/// cannot be used.
@Suite struct StoreLoadingTests {

    // MARK: Helpers

    /// A stack over `url`, loaded with the throwing form.
    private func load(
        _ url: URL, model: ObjectModel = Fixtures.model(),
        configure: (inout StoreDescription) -> Void = { _ in }
    ) throws(SkerryError) -> PersistentStack {
        var description = StoreDescription(url: url)
        configure(&description)
        let stack = PersistentStack(name: "Test", model: model)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }

    /// Expects loading `url` with `model` to fail with `code`; returns the error.
    private func expectLoadFailure(
        _ url: URL, model: ObjectModel = Fixtures.model(), code: SkerryError.Code,
        configure: (inout StoreDescription) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> SkerryError? {
        let error = #expect(throws: SkerryError.self, sourceLocation: sourceLocation) {
            _ = try load(url, model: model, configure: configure)
        }
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        return error
    }

    /// Titles of every Book, sorted.
    private func titles(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                .map { try $0.value(forKey: "title", as: String.self) }
        }
    }

    /// Creates a store at `url` with the fixture model, two books and an author, and closes it
    /// (every reference to the stack is dropped, which closes its connections).
    private func createFixtureStore(_ url: URL) throws {
        weak var released: PersistentStack?
        do {
            let stack = try load(url)
            released = stack
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let dune = try context.insertBook("Dune", year: 1965, isbn: "978-0441013593")
                try dune.setValue(Decimal(string: "9.99")!, forKey: "price")
                try dune.setValue(Int64(12), forKey: "sales")
                try context.insertBook("Emma", year: 1815)
                let author = try context.insert(entityName: "Author")
                try author.setValue("Frank Herbert", forKey: "name")
                try author.setValue(Int64(1920), forKey: "born")
                try context.save()
            }
        }
        #expect(released == nil, "the stack must be released once no reference to it is left")
    }

    /// What is on disk for a store: the database file and the journal files next to it.
    private struct DiskState: Equatable {
        var main: Data?
        var wal: Data?
        var shm: Data?
        var journal: Data?
    }

    private func diskState(_ url: URL) -> DiskState {
        func read(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
        return DiskState(
            main: read(url.path), wal: read(url.path + "-wal"), shm: read(url.path + "-shm"),
            journal: read(url.path + "-journal"))
    }

    /// Everything Skerry keeps in a fixture store, as text, via a separate raw connection.
    private func contents(_ url: URL) throws -> [[String]] {
        try rawSQL(url, "SELECT type, name, sql FROM sqlite_master ORDER BY name")
            + rawSQL(url, "SELECT * FROM \"_skerry_metadata\" ORDER BY key")
            + rawSQL(url, "SELECT * FROM Book ORDER BY _pk")
            + rawSQL(url, "SELECT * FROM Author ORDER BY _pk")
    }

    /// The tables of a store file other than SQLite's and Skerry's own, sorted.
    private func entityTables(_ url: URL) throws -> [String] {
        try rawSQL(url, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .map { $0[0] }
            .filter { !$0.hasPrefix("sqlite_") && !$0.hasPrefix("_skerry") }
    }

    /// The offsets at which two files differ (at most 20), for failure messages.
    private func differingOffsets(_ a: Data?, _ b: Data?) -> String {
        guard let a, let b else { return "one file is missing" }
        let offsets = zip(a, b).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        return "sizes \(a.count)/\(b.count), differing offsets \(offsets.prefix(20))"
    }

    private func metadata(_ url: URL, _ key: String) throws -> String? {
        try rawSQL(url, "SELECT value FROM _skerry_metadata WHERE key = '\(key)'").first?.first
    }

    // MARK: Creating and reopening

    @Test func dataSurvivesCloseAndReopen() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let identifier = try metadata(url, "storeIdentifier")

        // A second session changes and deletes.
        do {
            let stack = try load(url)
            #expect(try titles(stack) == ["Dune", "Emma"])
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                try books[0].setValue(Int64(13), forKey: "sales")
                try context.delete(books[1])
                try context.insertBook("Middlemarch", year: 1871)
                try context.save()
            }
        }

        let stack = try load(url)
        #expect(try titles(stack) == ["Dune", "Middlemarch"])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: "title" == "Dune")).first)
            #expect(try dune.value(forKey: "year", as: Int32?.self) == 1965)
            #expect(try dune.value(forKey: "isbn", as: String?.self) == "978-0441013593")
            #expect(try dune.value(forKey: "price", as: Decimal?.self) == Decimal(string: "9.99")!)
            #expect(try dune.value(forKey: "sales", as: Int64.self) == 13)
            #expect(try dune.value(forKey: "inPrint", as: Bool.self) == true)
            let author = try #require(try context.fetch(FetchRequest(entityName: "Author")).first)
            #expect(try author.value(forKey: "name", as: String.self) == "Frank Herbert")
        }
        #expect(try metadata(url, "storeIdentifier") == identifier)
    }

    @Test func newStoreRecordsTheModelInItsMetadata() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Test.sqlite")
        let stack = try load(url)
        #expect(try metadata(url, "modelVersionHash") == stack.model.versionHash)
        #expect(try metadata(url, "formatVersion") == "1")
        let identifier = try #require(try metadata(url, "storeIdentifier"))
        #expect(UUID(uuidString: identifier) != nil)
        #expect(try entityTables(url) == ["Author", "Book"])
        #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_skerry_metadata'") == [["1"]])
        // The uniqueness constraint and the index of the model exist.
        let indexes = try rawSQL(
            url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Book' AND sql IS NOT NULL ORDER BY name")
        #expect(indexes.count == 2)
    }

    @Test func twoStoresOnDifferentFilesGetDifferentIdentifiers() throws {
        let directory = TemporaryDirectory()
        _ = try load(directory.file("A.sqlite"))
        _ = try load(directory.file("B.sqlite"))
        #expect(try metadata(directory.file("A.sqlite"), "storeIdentifier") != metadata(directory.file("B.sqlite"), "storeIdentifier"))
    }

    @Test func storeFolderIsCreatedWhenMissing() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("not/there/yet/Store.sqlite")
        #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
        let stack = try load(url)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Nested")
            try context.save()
        }
        #expect(try rawSQL(url, "SELECT title FROM Book") == [["Nested"]])
    }

    @Test func nonFileURLIsRefused() {
        let error = expectLoadFailure(URL(string: "https://example.com/Store.sqlite")!, code: .storeLoadFailed)
        #expect(error?.message.contains("file URL") == true)
    }

    // MARK: Load reporting

    @Test func completionHandlerIsCalledOncePerDescriptionWithNilError() throws {
        let directory = TemporaryDirectory()
        var books = StoreDescription(url: directory.file("Books.sqlite"))
        books.entityNames = ["Book"]
        var authors = StoreDescription.inMemory()
        authors.entityNames = ["Author"]
        let stack = PersistentStack(name: "Test", model: Fixtures.model())
        stack.persistentStoreDescriptions = [books, authors]
        #expect(!stack.hasLoadedStores)

        var calls: [(StoreDescription, (any Error)?)] = []
        stack.loadPersistentStores { calls.append(($0, $1)) }
        #expect(calls.count == 2)
        #expect(calls.map(\.0) == [books, authors])
        #expect(calls.allSatisfy { $0.1 == nil })
        #expect(stack.hasLoadedStores)
        #expect(stack.coordinator.loadedStores.count == 2)

        // Loading again reports the stores as loaded and does not open them twice.
        calls = []
        stack.loadPersistentStores { calls.append(($0, $1)) }
        #expect(calls.count == 2)
        #expect(calls.allSatisfy { $0.1 == nil })
        #expect(stack.coordinator.loadedStores.count == 2)
    }

    @Test func completionHandlerReportsEachStoresErrorAndOthersStillLoad() throws {
        let directory = TemporaryDirectory()
        let junk = directory.file("Junk.sqlite")
        try Data("not a database at all, just some words\n".utf8).write(to: junk)
        var bad = StoreDescription(url: junk)
        bad.entityNames = ["Book"]
        var good = StoreDescription(url: directory.file("Good.sqlite"))
        good.entityNames = ["Author"]
        let stack = PersistentStack(name: "Test", model: Fixtures.model())
        stack.persistentStoreDescriptions = [bad, good]

        var calls: [(StoreDescription, SkerryError.Code?)] = []
        stack.loadPersistentStores { description, error in
            calls.append((description, error.map { ($0 as? SkerryError)?.code ?? .sqlite }))
        }
        #expect(calls.count == 2)
        #expect(calls.first?.0 == bad)
        #expect(calls.first?.1 == .storeLoadFailed)
        #expect(calls.last?.0 == good)
        #expect(calls.last?.1 == nil)
        #expect(stack.coordinator.loadedStores.count == 1)

        // The loaded store is usable; the entity of the failed one has no store.
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Austen", forKey: "name")
            try context.save()
            let error = #expect(throws: SkerryError.self) { try context.insert(entityName: "Book") }
            #expect(error?.code == .noStore)
        }
    }

    @Test func throwingFormThrowsTheFirstErrorAfterTryingEveryStore() throws {
        let directory = TemporaryDirectory()
        let junk = directory.file("Junk.sqlite")
        try Data(repeating: 0xAB, count: 4096).write(to: junk)
        var bad = StoreDescription(url: junk)
        bad.entityNames = ["Book"]
        var good = StoreDescription(url: directory.file("Good.sqlite"))
        good.entityNames = ["Author"]
        let stack = PersistentStack(name: "Test", model: Fixtures.model())
        stack.persistentStoreDescriptions = [bad, good]
        let error = #expect(throws: SkerryError.self) { try stack.loadPersistentStores() }
        #expect(error?.code == .storeLoadFailed)
        #expect(stack.hasLoadedStores)
        #expect(FileManager.default.fileExists(atPath: directory.file("Good.sqlite").path))
    }

    // MARK: In-memory stores

    @Test func inMemoryStoreWorks() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Ephemeral", year: 2024, isbn: "1")
            try context.save()
        }
        #expect(try titles(stack) == ["Ephemeral"])
        let other = stack.newBackgroundContext()
        let count = try other.performAndWait { try other.count(for: FetchRequest(entityName: "Book", predicate: "year" == Int32(2024))) }
        #expect(count == 1)
        // The uniqueness constraint holds in memory too.
        try context.performAndWait {
            try context.insertBook("Duplicate", isbn: "1")
            let error = #expect(throws: SkerryError.self) { try context.save() }
            #expect(error?.code == .constraintViolation)
        }
    }

    @Test func inMemoryStacksDoNotShareData() throws {
        let first = try makeMemoryStack()
        let second = try makeMemoryStack()
        let context = first.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Only in the first")
            try context.save()
        }
        #expect(try titles(first) == ["Only in the first"])
        #expect(try titles(second) == [])
        #expect(try titles(try makeMemoryStack()) == [])
    }

    // MARK: Several stores

    @Test func entityNamesPutEachEntityInItsOwnFile() throws {
        let directory = TemporaryDirectory()
        let booksURL = directory.file("Books.sqlite"), authorsURL = directory.file("Authors.sqlite")
        func makeStack() throws -> PersistentStack {
            var books = StoreDescription(url: booksURL)
            books.entityNames = ["Book"]
            var authors = StoreDescription(url: authorsURL)
            authors.entityNames = ["Author"]
            let stack = PersistentStack(name: "Split", model: Fixtures.model())
            stack.persistentStoreDescriptions = [books, authors]
            try stack.loadPersistentStores()
            return stack
        }
        do {
            let stack = try makeStack()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                try context.insertBook("Persuasion")
                let author = try context.insert(entityName: "Author")
                try author.setValue("Austen", forKey: "name")
                try context.save()
            }
        }
        #expect(try entityTables(booksURL) == ["Book"])
        #expect(try entityTables(authorsURL) == ["Author"])
        #expect(try rawSQL(booksURL, "SELECT title FROM Book") == [["Persuasion"]])
        #expect(try rawSQL(authorsURL, "SELECT name FROM Author") == [["Austen"]])
        #expect(try metadata(booksURL, "storeIdentifier") != metadata(authorsURL, "storeIdentifier"))

        let reopened = try makeStack()
        #expect(try titles(reopened) == ["Persuasion"])
        let context = reopened.newBackgroundContext()
        let names = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Author")).map { try $0.value(forKey: "name", as: String.self) }
        }
        #expect(names == ["Austen"])
    }

    @Test func entityInTwoDescriptionsLivesInTheFirst() throws {
        let directory = TemporaryDirectory()
        let first = directory.file("First.sqlite"), second = directory.file("Second.sqlite")
        var everything = StoreDescription(url: first)
        everything.entityNames = ["Book", "Author"]
        var authors = StoreDescription(url: second)
        authors.entityNames = ["Author"]
        let stack = PersistentStack(name: "Overlap", model: Fixtures.model())
        stack.persistentStoreDescriptions = [everything, authors]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Eliot", forKey: "name")
            try context.save()
        }
        #expect(try rawSQL(first, "SELECT name FROM Author") == [["Eliot"]])
        #expect(try rawSQL(second, "SELECT name FROM Author") == [])
    }

    // MARK: Default location

    @Test func subclassChoosesTheDefaultDirectory() throws {
        defer { try? FileManager.default.removeItem(at: RelocatedStack.base) }
        let expected = RelocatedStack.folder.appendingPathComponent("Relocated.sqlite")
        let stack = RelocatedStack(name: "Relocated", model: Fixtures.model())
        #expect(stack.persistentStoreDescriptions.count == 1)
        #expect(stack.persistentStoreDescriptions.first?.url?.standardizedFileURL == expected.standardizedFileURL)
        #expect(stack.persistentStoreDescriptions.first?.kind == .sqlite)
        try stack.loadPersistentStores()
        #expect(FileManager.default.fileExists(atPath: expected.path))
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Shared")
            try context.save()
        }
        #expect(try rawSQL(expected, "SELECT title FROM Book") == [["Shared"]])
    }

    @Test func baseStackNamesItsDefaultStoreAfterItself() {
        let stack = PersistentStack(name: "Named", model: Fixtures.model())
        let url = stack.persistentStoreDescriptions.first?.url
        #expect(url?.lastPathComponent == "Named.sqlite")
        #expect(url?.deletingLastPathComponent().standardizedFileURL == PersistentStack.defaultDirectoryURL().standardizedFileURL)
        #expect(!stack.hasLoadedStores)
    }

    // MARK: Additive migration

    private static let addedDate = Date(timeIntervalSince1970: 1_000_000)

    /// The fixture model plus a new entity, a new optional attribute, new required attributes
    /// with defaults, and a new index.
    private func additiveModel() throws -> ObjectModel {
        let base = Fixtures.bookEntity(extraAttributes: [
            AttributeDescription("subtitle", .string, isOptional: true),
            AttributeDescription("edition", .integer32, defaultValue: Int32(1)),
            AttributeDescription("addedOn", .date, defaultValue: Self.addedDate),
            AttributeDescription("language", .string, defaultValue: "en"),
        ])
        let book = EntityDescription(
            name: "Book", attributes: base.attributes,
            uniquenessConstraints: base.uniquenessConstraints,
            indexes: base.indexes + [IndexDescription(["edition"])])
        let publisher = EntityDescription(
            name: "Publisher",
            attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("founded", .integer16, isOptional: true),
            ], uniquenessConstraints: [["name"]])
        return try ObjectModel(entities: [book, Fixtures.authorEntity(), publisher])
    }

    @Test func additiveChangesMigrateAutomatically() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let identifier = try metadata(url, "storeIdentifier")
        let model = try additiveModel()

        do {
            let stack = try load(url, model: model)
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                #expect(books.count == 2)
                let dune = books[0]
                #expect(try dune.value(forKey: "title", as: String.self) == "Dune")
                #expect(try dune.value(forKey: "year", as: Int32?.self) == 1965)
                #expect(try dune.value(forKey: "isbn", as: String?.self) == "978-0441013593")
                #expect(try dune.value(forKey: "sales", as: Int64.self) == 12)
                #expect(try dune.value(forKey: "price", as: Decimal?.self) == Decimal(string: "9.99")!)
                for book in books {
                    #expect(try book.value(forKey: "subtitle", as: String?.self) == nil)
                    #expect(try book.value(forKey: "edition", as: Int32.self) == 1)
                    #expect(try book.value(forKey: "addedOn", as: Date.self) == Self.addedDate)
                    #expect(try book.value(forKey: "language", as: String.self) == "en")
                }
                // The new attributes can be written, and the new entity is usable.
                try dune.setValue("Book One", forKey: "subtitle")
                try dune.setValue(Int32(2), forKey: "edition")
                let publisher = try context.insert(entityName: "Publisher")
                try publisher.setValue("Chilton", forKey: "name")
                try publisher.setValue(Int16(1904), forKey: "founded")
                try context.insertBook("New")
                try context.save()

                // Constraints of existing entities survived the migration.
                try context.insertBook("Copy", isbn: "978-0441013593")
                let error = #expect(throws: SkerryError.self) { try context.save() }
                #expect(error?.code == .constraintViolation)
                context.rollback()
            }
        }

        #expect(try metadata(url, "modelVersionHash") == model.versionHash)
        #expect(try metadata(url, "storeIdentifier") == identifier)
        #expect(try indexes(url).contains("index edition"))

        // Reopened with the new model: everything is there, nothing is migrated twice.
        let stack = try load(url, model: model)
        #expect(try titles(stack) == ["Dune", "Emma", "New"])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: "title" == "Dune")).first)
            #expect(try dune.value(forKey: "subtitle", as: String?.self) == "Book One")
            #expect(try dune.value(forKey: "edition", as: Int32.self) == 2)
            let new = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: "title" == "New")).first)
            #expect(try new.value(forKey: "edition", as: Int32.self) == 1)
            let publishers = try context.fetch(FetchRequest(entityName: "Publisher"))
            #expect(try publishers.map { try $0.value(forKey: "founded", as: Int16?.self) } == [1904])
        }
    }

    /// The fixture model with Book's indexes replaced by `indexes`.
    private func reindexedModel(_ indexes: [IndexDescription]) throws -> ObjectModel {
        let base = Fixtures.bookEntity()
        let book = EntityDescription(
            name: "Book", attributes: base.attributes,
            uniquenessConstraints: base.uniquenessConstraints, indexes: indexes)
        return try ObjectModel(entities: [book, Fixtures.authorEntity()])
    }

    /// The indexes of a table, as "unique a,b" / "index a", sorted.
    private func indexes(_ url: URL, table: String = "Book") throws -> [String] {
        try rawSQL(
            url,
            """
            SELECT CASE WHEN l."unique" THEN 'unique ' ELSE 'index ' END || \
            (SELECT group_concat(name, ',') FROM (SELECT i.name FROM pragma_index_info(l.name) i ORDER BY i.seqno)) \
            FROM pragma_index_list('\(table)') l WHERE l.origin = 'c' ORDER BY 1
            """
        ).map { $0[0] }
    }

    @Test func addedIndexIsCreatedOnLoad() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let model = try reindexedModel([IndexDescription(["year"]), IndexDescription(["title", "year"])])
        let stack = try load(url, model: model)
        #expect(try indexes(url) == ["index title,year", "index year", "unique isbn"])
        #expect(try metadata(url, "modelVersionHash") == model.versionHash)
        #expect(try titles(stack) == ["Dune", "Emma"])
    }

    @Test func removedIndexIsDroppedOnLoad() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let model = try reindexedModel([])
        let stack = try load(url, model: model)
        #expect(try indexes(url) == ["unique isbn"])
        #expect(try metadata(url, "modelVersionHash") == model.versionHash)
        #expect(try titles(stack) == ["Dune", "Emma"])
    }

    // MARK: Changes lightweight migration infers

    /// One change to the fixture model that Core Data's lightweight migration infers: the store
    /// migrates on load with every row that the new model can hold.
    enum LightweightChange: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case removedAttribute, removedAttributeOfOtherEntity, widenedInteger, optionalToRequiredWithDefault,
            removedEntity, uniquenessChanged, uniquenessRemoved, uniquenessAdded

        var testDescription: String { rawValue }

        var model: ObjectModel {
            let book = Fixtures.bookEntity()
            func bookWith(_ attributes: [AttributeDescription], unique: [[String]] = [["isbn"]]) -> EntityDescription {
                EntityDescription(name: "Book", attributes: attributes, uniquenessConstraints: unique, indexes: book.indexes)
            }
            func replacing(_ name: String, with attribute: AttributeDescription) -> [AttributeDescription] {
                book.attributes.map { $0.name == name ? attribute : $0 }
            }
            let entities: [EntityDescription]
            switch self {
            case .removedAttribute:
                entities = [bookWith(book.attributes.filter { $0.name != "rating" }), Fixtures.authorEntity()]
            case .removedAttributeOfOtherEntity:
                entities = [book, EntityDescription(name: "Author", attributes: [AttributeDescription("name", .string)])]
            case .widenedInteger:
                entities = [
                    bookWith(replacing("year", with: AttributeDescription("year", .integer64, isOptional: true))), Fixtures.authorEntity(),
                ]
            case .optionalToRequiredWithDefault:
                entities = [
                    bookWith(replacing("isbn", with: AttributeDescription("isbn", .string, defaultValue: "none"))), Fixtures.authorEntity(),
                ]
            case .removedEntity:
                entities = [book]
            case .uniquenessChanged:
                entities = [bookWith(book.attributes, unique: [["title"]]), Fixtures.authorEntity()]
            case .uniquenessRemoved:
                entities = [bookWith(book.attributes, unique: []), Fixtures.authorEntity()]
            case .uniquenessAdded:
                entities = [bookWith(book.attributes, unique: [["isbn"], ["title", "year"]]), Fixtures.authorEntity()]
            }
            return try! ObjectModel(entities: entities)
        }
    }

    @Test(arguments: LightweightChange.allCases)
    func lightweightChangeMigratesEveryRow(change: LightweightChange) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let stack = try load(url, model: change.model)
        #expect(try titles(stack) == ["Dune", "Emma"])
        #expect(try metadata(url, "modelVersionHash") == change.model.versionHash)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(try books.map { try $0.value(forKey: "year", as: Int64?.self) } == [1965, 1815])
            let isbns = try books.map { try $0.value(forKey: "isbn", as: String?.self) }
            #expect(isbns == (change == .optionalToRequiredWithDefault ? ["978-0441013593", "none"] : ["978-0441013593", nil]))
            if change != .removedEntity {
                #expect(
                    try context.fetch(FetchRequest(entityName: "Author")).map { try $0.value(forKey: "name", as: String.self) } == [
                        "Frank Herbert"
                    ])
            }
            // The store keeps working: a new object gets a key no row had.
            let added = try context.insertBook("Ubik", year: 1969, isbn: "0-394-71830-1")
            try context.save()
            #expect(try context.fetch(FetchRequest(entityName: "Book")).count == 3)
            #expect(!added.objectID.isTemporary)
        }
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migrating"))
    }

    // MARK: Changes that need more than lightweight migration

    /// One change to the fixture model that lightweight migration cannot apply to the fixture's
    /// data: the load fails and the store is left exactly as it was.
    enum IncompatibleChange: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case typeChanged, requiredWithoutDefault, optionalToRequiredWithoutDefault, uniquenessViolatedByData

        var testDescription: String { rawValue }

        var model: ObjectModel {
            let book = Fixtures.bookEntity()
            func bookWith(_ attributes: [AttributeDescription], unique: [[String]] = [["isbn"]]) -> EntityDescription {
                EntityDescription(name: "Book", attributes: attributes, uniquenessConstraints: unique, indexes: book.indexes)
            }
            func replacing(_ name: String, with attribute: AttributeDescription) -> [AttributeDescription] {
                book.attributes.map { $0.name == name ? attribute : $0 }
            }
            let entities: [EntityDescription]
            switch self {
            case .typeChanged:
                entities = [
                    bookWith(replacing("year", with: AttributeDescription("year", .string, isOptional: true))), Fixtures.authorEntity(),
                ]
            case .requiredWithoutDefault:
                entities = [Fixtures.bookEntity(extraAttributes: [AttributeDescription("subtitle", .string)]), Fixtures.authorEntity()]
            case .optionalToRequiredWithoutDefault:
                entities = [bookWith(replacing("isbn", with: AttributeDescription("isbn", .string))), Fixtures.authorEntity()]
            case .uniquenessViolatedByData:
                entities = [bookWith(book.attributes, unique: [["isbn"], ["inPrint"]]), Fixtures.authorEntity()]
            }
            return try! ObjectModel(entities: entities)
        }

        /// What the error message must name.
        var mentions: [String] {
            switch self {
            case .typeChanged: return ["Book.year", "integer32", "string"]
            case .requiredWithoutDefault: return ["Book.subtitle", "no default value", "2 of the 2 rows", "new in this model"]
            case .optionalToRequiredWithoutDefault: return ["Book.isbn", "no default value", "1 of the 2 rows", "was optional"]
            case .uniquenessViolatedByData: return ["UNIQUE"]
            }
        }
    }

    @Test(arguments: IncompatibleChange.allCases)
    func incompatibleChangeIsRefusedAndLeavesTheStoreUntouched(change: IncompatibleChange) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let before = diskState(url)
        let contentsBefore = try contents(url)
        #expect(before.main != nil)

        let error = expectLoadFailure(url, model: change.model, code: .modelMismatch)
        for mention in change.mentions {
            #expect(error?.message.contains(mention) == true, "\(String(describing: error?.message)) should name \(mention)")
        }

        let after = diskState(url)
        #expect(after == before, "the store files changed: \(differingOffsets(before.main, after.main))")
        #expect(try contents(url) == contentsBefore)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migrating"))

        // The completion-handler form reports the same error.
        let stack = PersistentStack(name: "Test", model: change.model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        var codes: [SkerryError.Code?] = []
        stack.loadPersistentStores { _, error in codes.append((error as? SkerryError)?.code) }
        #expect(codes == [.modelMismatch])
        #expect(!stack.hasLoadedStores)

        // The store still opens with the model it was written with.
        #expect(try titles(try load(url)) == ["Dune", "Emma"])
    }

    @Test func migrationOffRefusesAnAdditiveChange() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        let before = diskState(url)
        let contentsBefore = try contents(url)

        let error = expectLoadFailure(url, model: try additiveModel(), code: .modelMismatch) {
            $0.shouldMigrateAutomatically = false
        }
        #expect(error?.message.contains("migration") == true)
        #expect(diskState(url) == before)
        #expect(try contents(url) == contentsBefore)

        // With the model the store was written with, migration being off does not matter.
        let stack = try load(url) { $0.shouldMigrateAutomatically = false }
        #expect(try titles(stack) == ["Dune", "Emma"])
    }

    // MARK: Files that are not Skerry stores

    @Test(arguments: [
        Data("This is a plain text file, not a database.\n".utf8),
        Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }),
        Data("SQLite format 3\u{0}".utf8) + Data(repeating: 0xFF, count: 4080),
    ])
    func fileThatIsNotADatabaseIsRefusedAndUnchanged(junk: Data) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Junk.sqlite")
        try junk.write(to: url)

        let error = expectLoadFailure(url, code: .storeLoadFailed)
        #expect(error?.sqlite?.resultCode == 26 || error?.sqlite?.resultCode == 11, "\(String(describing: error))") // NOTADB or CORRUPT
        #expect(FileManager.default.contents(atPath: url.path) == junk)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(leftovers == ["Junk.sqlite"])
    }

    @Test func foreignSQLiteDatabaseIsRefusedAndUntouched() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Foreign.sqlite")
        try rawSQL(url, "CREATE TABLE people (name TEXT NOT NULL)")
        try rawSQL(url, "INSERT INTO people VALUES ('Ada')")
        let before = diskState(url)
        #expect(try rawSQL(url, "PRAGMA journal_mode") == [["delete"]])

        let error = expectLoadFailure(url, code: .storeLoadFailed)
        #expect(error?.message.contains("did not create") == true)

        #expect(try rawSQL(url, "SELECT name FROM sqlite_master ORDER BY name") == [["people"]])
        #expect(try rawSQL(url, "SELECT name FROM people") == [["Ada"]])
        #expect(try rawSQL(url, "PRAGMA journal_mode") == [["delete"]], "the foreign database's journal mode was changed")
        let after = diskState(url)
        #expect(after == before, "the foreign database's file changed: \(differingOffsets(before.main, after.main))")
    }

    @Test func storeWithANewerFormatIsRefusedAndUntouched() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        try rawSQL(url, "UPDATE _skerry_metadata SET value = '2' WHERE key = 'formatVersion'")
        let before = diskState(url)
        let contentsBefore = try contents(url)

        let error = expectLoadFailure(url, code: .storeLoadFailed)
        #expect(error?.message.contains("format 2") == true)
        #expect(diskState(url) == before)
        #expect(try contents(url) == contentsBefore)
    }

    @Test func storeWithUnreadableMetadataIsRefusedAndUntouched() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        try createFixtureStore(url)
        try rawSQL(url, "UPDATE _skerry_metadata SET value = '{not json' WHERE key = 'schema'")
        let before = diskState(url)
        let contentsBefore = try contents(url)

        _ = expectLoadFailure(url, code: .storeLoadFailed)
        #expect(diskState(url) == before)
        #expect(try contents(url) == contentsBefore)
    }

    @Test func emptyFileBecomesANewStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Empty.sqlite")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        let stack = try load(url)
        #expect(try titles(stack) == [])
        #expect(try metadata(url, "modelVersionHash") == stack.model.versionHash)
    }
}
