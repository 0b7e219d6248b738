import Foundation
import Testing

@testable import SkerryCore

/// Saving: what a save writes, atomic failure, optimistic locking, merging another context's
/// changes, durability across close/reopen and exact decimals.
@Suite struct SaveTests {
    // MARK: Helpers

    /// Saves books (title, year, isbn) in a context of its own; returns their IDs.
    static func saveBooks(_ stack: PersistentStack, _ books: [(String, Int32?, String?)]) throws -> [ObjectID] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let objects = try books.map { try context.insertBook($0.0, year: $0.1, isbn: $0.2) }
            try context.save()
            return objects.map(\.objectID)
        }
    }

    static let allBooks = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])

    /// The (title, year, isbn) of every book in the store, read by a fresh context, by title.
    static func storedBooks(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(allBooks).map {
                let title = try $0.value(forKey: "title", as: String.self)
                let year = try $0.value(forKey: "year", as: Int32?.self).map(String.init) ?? "nil"
                let isbn = try $0.value(forKey: "isbn", as: String?.self) ?? "nil"
                return "\(title)|\(year)|\(isbn)"
            }
        }
    }

    static func storeURL(_ directory: TemporaryDirectory?) throws -> URL {
        try #require(directory).file("Test.sqlite")
    }

    // MARK: What a save returns and writes

    @Test(arguments: StoreKind.allCases)
    func saveWithoutChangesDoesNothing(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965, nil)])[0]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            #expect(try context.save().isEmpty)
            let book = try context.existingObject(with: id)
            #expect(try context.save() == StoreChanges())
            try book.setValue("Changed", forKey: "title")
            try book.setValue("Dune", forKey: "title")
            #expect(try context.save().isEmpty)
        }
        if kind == .file {
            // Nothing was written: the row's version is still the one of its insert.
            #expect(try rawSQL(try Self.storeURL(directory), "SELECT title, _version FROM Book") == [["Dune", "1"]])
        }
        #expect(try Self.storedBooks(stack) == ["Dune|1965|nil"])
    }

    @Test(arguments: StoreKind.allCases)
    func saveReturnsInsertedUpdatedAndDeletedIDs(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Dune", 1965, nil), ("Emma", 1815, nil), ("Ulysses", 1922, nil)])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.existingObject(with: ids[0]).setValue(Int32(1966), forKey: "year")
            try context.delete(try context.existingObject(with: ids[1]))
            _ = try context.existingObject(with: ids[2]) // loaded, not changed
            let a = try context.insertBook("Added A")
            let b = try context.insertBook("Added B")

            let changes = try context.save()
            #expect(!a.objectID.isTemporary && !b.objectID.isTemporary)
            #expect(changes.inserted == [a.objectID, b.objectID])
            #expect(changes.updated == [ids[0]])
            #expect(changes.deleted == [ids[1]])
            #expect(!changes.isEmpty)
        }
        #expect(try Self.storedBooks(stack) == ["Added A|nil|nil", "Added B|nil|nil", "Dune|1966|nil", "Ulysses|1922|nil"])
    }

    /// A save writes only the columns that changed: a column changed in the store behind the
    /// context's back (without bumping `_version`) keeps the value written there.
    @Test func saveWritesOnlyChangedColumns() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let url = directory.file("Test.sqlite")
        let id = try Self.saveBooks(stack, [("Dune", 1965, "isbn-1")])[0]
        let context = stack.newBackgroundContext()
        var kept: EntityObject?
        try context.performAndWait {
            kept = try context.existingObject(with: id)
        }
        try rawSQL(url, "UPDATE Book SET year = 2001, isbn = 'raw' WHERE _pk = \(id.key)")
        try context.performAndWait {
            let book = try #require(kept)
            try book.setValue("Dune Messiah", forKey: "title")
            let changes = try context.save()
            #expect(changes.updated == [id])
        }
        #expect(
            try rawSQL(url, "SELECT title, year, isbn, _version FROM Book WHERE _pk = \(id.key)")
                == [["Dune Messiah", "2001", "raw", "2"]])
    }

    /// One save updating rows that changed different columns, in an interleaved order: each row
    /// gets exactly its own changes (the writer reuses a statement only for the same columns).
    @Test(arguments: StoreKind.allCases)
    func updatesOfDifferentColumnsInOneSaveEachWriteTheirOwn(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("A", 1, "a"), ("B", 2, "b"), ("C", 3, "c"), ("D", 4, "d"), ("E", 5, "e")])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try ids.map { try context.existingObject(with: $0) }
            try books[0].setValue("A2", forKey: "title")
            try books[1].setValue(Int32(20), forKey: "year")
            try books[2].setValue("C2", forKey: "title")
            try books[3].setValue("D2", forKey: "title")
            try books[3].setValue(Int32?.none, forKey: "year")
            try books[4].setValue("e2", forKey: "isbn")
            try context.save()
        }
        #expect(try Self.storedBooks(stack) == ["A2|1|a", "B|20|b", "C2|3|c", "D2|nil|d", "E|5|e2"])
    }

    // MARK: Failed saves are atomic

    @Test(arguments: StoreKind.allCases)
    func constraintViolationOnInsertLeavesStoreAndContextUnchanged(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("Existing", 1, "X"), ("Old", 2, "O"), ("Gone", 3, "G")])
        let before = try Self.storedBooks(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let old = try context.existingObject(with: ids[1])
            try old.setValue("Renamed", forKey: "title")
            let gone = try context.existingObject(with: ids[2])
            try context.delete(gone)
            let a = try context.insertBook("A", isbn: "1")
            let b = try context.insertBook("B", isbn: "2")
            let c = try context.insertBook("C", isbn: "X")
            let temporaryIDs = [a.objectID, b.objectID, c.objectID]

            let error = expectError(.constraintViolation) { try context.save() }
            #expect(error?.entityName == "Book")
            #expect(error?.key == "isbn")
            #expect(error?.objectID == c.objectID)

            // The context is as it was before the save.
            #expect([a, b, c].map(\.objectID) == temporaryIDs)
            #expect([a, b, c].allSatisfy { $0.isInserted && $0.objectID.isTemporary })
            #expect(context.insertedObjects == [a, b, c])
            #expect(context.updatedObjects == [old])
            #expect(context.deletedObjects == [gone])
            #expect(try old.value(forKey: "title", as: String.self) == "Renamed")
            #expect(context.registeredObject(for: c.objectID) === c)

            // Nothing reached the store.
            #expect(try Self.storedBooks(stack) == before)

            try c.setValue("3", forKey: "isbn")
            let changes = try context.save()
            #expect(changes.inserted == Set([a, b, c].map(\.objectID)))
            #expect([a, b, c].allSatisfy { !$0.isInserted && !$0.objectID.isTemporary })
            #expect(changes.updated == [ids[1]])
            #expect(changes.deleted == [ids[2]])
        }
        #expect(try Self.storedBooks(stack) == ["A|nil|1", "B|nil|2", "C|nil|3", "Existing|1|X", "Renamed|2|O"])
        if kind == .file {
            #expect(try rawSQL(try Self.storeURL(directory), "SELECT count(*) FROM Book") == [["5"]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func constraintViolationOnUpdateUndoesTheInsertsOfTheSameSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("P", nil, "P"), ("Q", nil, "Q")])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let n1 = try context.insertBook("N1", isbn: "N1")
            let n2 = try context.insertBook("N2", isbn: "N2")
            let q = try context.existingObject(with: ids[1])
            try q.setValue("P", forKey: "isbn")

            let error = expectError(.constraintViolation) { try context.save() }
            #expect(error?.entityName == "Book")
            #expect(error?.key == "isbn")
            #expect(error?.objectID == ids[1])
            #expect(n1.objectID.isTemporary && n2.objectID.isTemporary)
            #expect(try Self.storedBooks(stack) == ["P|nil|P", "Q|nil|Q"])

            try q.setValue("R", forKey: "isbn")
            try context.save()
        }
        #expect(try Self.storedBooks(stack) == ["N1|nil|N1", "N2|nil|N2", "P|nil|P", "Q|nil|R"])
    }

    @Test(arguments: StoreKind.allCases)
    func missingRequiredValuesAreAllListedAndNothingIsSaved(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Saved", nil, nil)])[0]
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let valid = try context.insertBook("Valid")
            let untitled1 = try context.insert(entityName: "Book")
            let untitled2 = try context.insert(entityName: "Book")
            let author = try context.insert(entityName: "Author")
            let saved = try context.existingObject(with: id)
            try saved.setValue(String?.none, forKey: "title")

            let error = expectError(.missingRequiredValue) { try context.save() }
            let expected = Set([untitled1, untitled2, author, saved].map(\.objectID))
            #expect(Set(error?.objectIDs ?? []) == expected)
            #expect(error?.objectIDs.count == 4)
            #expect(error?.entityName == "Book")
            #expect(error?.key == "title")
            let message = error?.message ?? ""
            for objectID in expected {
                #expect(message.contains("\(objectID)"), "message does not name \(objectID): \(message)")
            }
            #expect(message.contains("title") && message.contains("name"))

            #expect(valid.isInserted && valid.objectID.isTemporary)
            #expect(context.insertedObjects.count == 4)
            #expect(context.updatedObjects == [saved])
            #expect(try Self.storedBooks(stack) == ["Saved|nil|nil"])

            try untitled1.setValue("Untitled 1", forKey: "title")
            try untitled2.setValue("Untitled 2", forKey: "title")
            try author.setValue("Herbert", forKey: "name")
            try saved.setValue("Saved again", forKey: "title")
            let changes = try context.save()
            #expect(changes.inserted.count == 4)
            #expect(changes.updated == [id])
        }
        #expect(try Self.storedBooks(stack) == ["Saved again|nil|nil", "Untitled 1|nil|nil", "Untitled 2|nil|nil", "Valid|nil|nil"])
    }

    // MARK: Optimistic locking

    @Test(arguments: StoreKind.allCases)
    func secondSaveOfTheSameRowIsAMergeConflict(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let id = try Self.saveBooks(stack, [("Dune", 1965, nil)])[0]
        let first = stack.newBackgroundContext()
        let second = stack.newBackgroundContext()
        // This test is about the second context that has not merged the other save.
        second.automaticallyMergesChangesFromParent = false
        var firstBook: EntityObject?
        var secondBook: EntityObject?
        try first.performAndWait { firstBook = try first.existingObject(with: id) }
        try second.performAndWait { secondBook = try second.existingObject(with: id) }

        try first.performAndWait {
            try #require(firstBook).setValue("First", forKey: "title")
            try first.save()
        }
        try second.performAndWait {
            let book = try #require(secondBook)
            try book.setValue("Second", forKey: "title")
            try book.setValue(Int32(2000), forKey: "year")
            let added = try second.insertBook("Added")

            let error = expectError(.mergeConflict) { try second.save() }
            #expect(error?.objectIDs == [id])
            #expect(error?.entityName == "Book")
            #expect(try Self.storedBooks(stack) == ["First|1965|nil"])
            #expect(second.hasChanges)
            #expect(added.isInserted && added.objectID.isTemporary)
            #expect(try book.value(forKey: "title", as: String.self) == "Second")

            try second.refresh(book, mergeChanges: true)
            #expect(try book.value(forKey: "title", as: String.self) == "Second")
            #expect(try book.committedValues(forKeys: ["title"]) == ["title": .string("First")])
            let changes = try second.save()
            #expect(changes.updated == [id])
        }
        #expect(try Self.storedBooks(stack) == ["Added|nil|nil", "Second|2000|nil"])
    }

    @Test(arguments: StoreKind.allCases)
    func mergeConflictListsEveryConflictingObject(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("A", nil, nil), ("B", nil, nil), ("C", nil, nil)])
        let stale = stack.newBackgroundContext()
        stale.automaticallyMergesChangesFromParent = false // stale on purpose
        var staleBooks: [EntityObject] = []
        try stale.performAndWait { staleBooks = try ids.map { try stale.existingObject(with: $0) } }

        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            try writer.existingObject(with: ids[0]).setValue(Int32(1), forKey: "year")
            try writer.delete(try writer.existingObject(with: ids[1]))
            try writer.save()
        }
        try stale.performAndWait {
            for book in staleBooks { try book.setValue("Stale", forKey: "title") }
            let error = expectError(.mergeConflict) { try stale.save() }
            #expect(Set(error?.objectIDs ?? []) == [ids[0], ids[1]])
            #expect(error?.objectIDs.count == 2)
        }
        // Not even the row without a conflict was written.
        #expect(try Self.storedBooks(stack) == ["A|1|nil", "C|nil|nil"])
    }

    // MARK: Merging another context's save

    @Test(arguments: StoreKind.allCases)
    func mergeChangesFromAnotherContextsSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [("One", 1, nil), ("Two", 2, nil), ("Three", 3, nil)])
        let receiver = stack.newBackgroundContext()
        var one: EntityObject?, two: EntityObject?, three: EntityObject?, draft: EntityObject?
        try receiver.performAndWait {
            one = try receiver.existingObject(with: ids[0])
            two = try receiver.existingObject(with: ids[1])
            three = try receiver.existingObject(with: ids[2])
            try three?.setValue(Int32(33), forKey: "year")
            draft = try receiver.insertBook("Draft")
        }

        let sender = stack.newBackgroundContext()
        let changes = try sender.performAndWait {
            try sender.delete(try sender.existingObject(with: ids[0]))
            try sender.existingObject(with: ids[1]).setValue("Two (new)", forKey: "title")
            try sender.existingObject(with: ids[2]).setValue("Three (new)", forKey: "title")
            try sender.insertBook("Four")
            return try sender.save()
        }

        try receiver.performAndWait {
            let (one, two, three, draft) = try (#require(one), #require(two), #require(three), #require(draft))
            receiver.mergeChanges(changes)

            #expect(one.context == nil)
            #expect(receiver.registeredObject(for: ids[0]) == nil)
            expectError(.objectNotInContext) { _ = try one.value(forKey: "title", as: String.self) }

            #expect(try two.value(forKey: "title", as: String.self) == "Two (new)")
            #expect(!two.hasChanges)

            #expect(try three.value(forKey: "title", as: String.self) == "Three (new)")
            #expect(try three.value(forKey: "year", as: Int32?.self) == 33)
            #expect(three.isUpdated)

            #expect(draft.isInserted)
            #expect(receiver.insertedObjects == [draft])
            #expect(receiver.updatedObjects == [three])
            #expect(receiver.registeredObjects == [two, three, draft])

            let titles = try receiver.fetch(Self.allBooks).map { try $0.value(forKey: "title", as: String.self) }
            #expect(titles == ["Draft", "Four", "Three (new)", "Two (new)"])
            try receiver.save()
        }
        #expect(try Self.storedBooks(stack) == ["Draft|nil|nil", "Four|nil|nil", "Three (new)|33|nil", "Two (new)|2|nil"])
    }

    // MARK: Durability and exactness

    @Test func dataSurvivesCloseAndReopen() throws {
        let directory = TemporaryDirectory()
        /// Opens a stack on the file, runs `body` in a context, and releases everything.
        func session<T>(_ body: (ObjectContext) throws -> T) throws -> T {
            let stack = try makeFileStack(directory)
            let context = stack.newBackgroundContext()
            return try context.performAndWait { try body(context) }
        }

        let uris = try session { context in
            let books = try [("Dune", Int32(1965)), ("Emma", 1815), ("Ulysses", 1922)].map {
                try context.insertBook($0.0, year: $0.1, isbn: "isbn-\($0.0)")
            }
            try context.save()
            return books.map { $0.objectID.uriRepresentation() }
        }
        try session { context in
            let books = try context.fetch(Self.allBooks)
            #expect(books.map { $0.objectID.uriRepresentation() } == uris)
            #expect(try books.map { try $0.value(forKey: "year", as: Int32?.self) } == [1965, 1815, 1922])
            try books[0].setValue("Dune Messiah", forKey: "title")
            try context.delete(books[1])
            try context.insertBook("Walden", year: 1854)
            try context.save()
        }
        let final = try session { context in
            try context.fetch(Self.allBooks).map {
                "\(try $0.value(forKey: "title", as: String.self))|\(try $0.value(forKey: "year", as: Int32?.self) ?? 0)"
            }
        }
        #expect(final == ["Dune Messiah|1965", "Ulysses|1922", "Walden|1854"])
    }

    static let decimals = [
        "12345678901234567890.123456789",
        "-0.000000000000000000001",
        "0.1",
        "99999999999999999999999999999999999999",
        "-98765432109876543210.98765432109876543",
    ]

    @Test(arguments: StoreKind.allCases)
    func decimalsKeepEveryDigit(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let values = try Self.decimals.map { try #require(Decimal(string: $0)) }
        let context = stack.newBackgroundContext()
        let ids = try context.performAndWait {
            let books = try values.enumerated().map { offset, value in
                let book = try context.insertBook("Book \(offset)")
                try book.setValue(value, forKey: "price")
                return book
            }
            try context.save()
            return books.map(\.objectID)
        }
        let fresh = stack.newBackgroundContext()
        let read = try fresh.performAndWait {
            try ids.map { try fresh.existingObject(with: $0).value(forKey: "price", as: Decimal.self) }
        }
        #expect(read == values)
        #expect(read.map(\.description) == Self.decimals)
        if kind == .file {
            let stored = try rawSQL(try Self.storeURL(directory), "SELECT price FROM Book ORDER BY _pk")
            #expect(stored == Self.decimals.map { [$0] })
        }
    }
}
