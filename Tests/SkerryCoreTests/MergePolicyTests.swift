import Foundation
import Testing

@testable import SkerryCore

/// Merge policies: how a save resolves optimistic-locking conflicts (a row changed or deleted in
/// the store since the context read it) and uniqueness conflicts (an insert with the constrained
/// values of an existing row, or of another insert of the same save).
@Suite struct MergePolicyTests {
    // MARK: Helpers

    /// The attributes the tests look at, of one book.
    struct Row: Equatable, CustomStringConvertible {
        var title: String
        var year: Int32?
        var pages: Int16?
        var isbn: String?

        init(_ title: String, _ year: Int32?, _ pages: Int16?, isbn: String? = nil) {
            self.title = title
            self.year = year
            self.pages = pages
            self.isbn = isbn
        }

        /// The values as a context holds them, by attribute name.
        var values: [String: AttributeValue] {
            [
                "title": .string(title),
                "year": year.map { .int(Int64($0)) } ?? .null,
                "pages": pages.map { .int(Int64($0)) } ?? .null,
                "isbn": isbn.map { .string($0) } ?? .null,
            ]
        }

        var description: String {
            "\(title)|\(year.map(String.init) ?? "nil")|\(pages.map(String.init) ?? "nil")|\(isbn ?? "nil")"
        }
    }

    static let keys = ["title", "year", "pages", "isbn"]
    static let allBooks = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])

    /// The row of a book as the object reads it.
    static func row(_ book: EntityObject) throws -> Row {
        Row(
            try book.value(forKey: "title", as: String.self),
            try book.value(forKey: "year", as: Int32?.self),
            try book.value(forKey: "pages", as: Int16?.self),
            isbn: try book.value(forKey: "isbn", as: String?.self))
    }

    /// `values` restricted to the attributes of ``Row``.
    static func restricted(_ values: [String: AttributeValue]?) -> [String: AttributeValue]? {
        values.map { $0.filter { keys.contains($0.key) } }
    }

    /// Every book in the store, read by a fresh context, by title.
    static func storedRows(_ stack: PersistentStack) throws -> [Row] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try context.fetch(allBooks).map { try row($0) } }
    }

    /// The versions of the rows on disk, by primary key (file stores only).
    static func storedVersions(_ directory: TemporaryDirectory?) throws -> [String] {
        let url = try #require(directory).file("Test.sqlite")
        return try rawSQL(url, "SELECT \"_version\" FROM \"Book\" ORDER BY \"_pk\"").map { $0[0] }
    }

    /// Saves books in a context of their own; returns their IDs.
    static func saveBooks(_ stack: PersistentStack, _ rows: [Row]) throws -> [ObjectID] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let books = try rows.map { row in
                let book = try context.insertBook(row.title, year: row.year, isbn: row.isbn)
                try book.setValue(row.pages, forKey: "pages")
                return book
            }
            try context.save()
            return books.map(\.objectID)
        }
    }

    /// A context that does not merge other saves, with the rows of `ids` loaded in it.
    static func staleContext(_ stack: PersistentStack, _ ids: [ObjectID]) throws -> (ObjectContext, [EntityObject]) {
        let stale = stack.newBackgroundContext()
        stale.automaticallyMergesChangesFromParent = false // stale on purpose
        let books = try stale.performAndWait { try ids.map { try stale.existingObject(with: $0) } }
        return (stale, books)
    }

    /// Another context changes the row of `id` with `body` and saves.
    static func writerSaves(
        _ stack: PersistentStack, _ id: ObjectID,
        _ body: (ObjectContext, EntityObject) throws -> Void
    ) throws {
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            try body(writer, try writer.existingObject(with: id))
            try writer.save()
        }
    }

    static let original = Row("Dune", 1965, 100)
    /// What the writer saves: a new title and year.
    static let written = Row("Dune (W)", 1966, 100)

    /// The scene of a version conflict: "Dune" (1965, 100 pages) is saved; a stale context loads
    /// it; another context sets its title to "Dune (W)" and its year to 1966, and saves.
    static func versionConflictScene(_ stack: PersistentStack) throws -> (id: ObjectID, stale: ObjectContext, book: EntityObject) {
        let id = try saveBooks(stack, [original])[0]
        let (stale, books) = try staleContext(stack, [id])
        try writerSaves(stack, id) { _, book in
            try book.setValue("Dune (W)", forKey: "title")
            try book.setValue(Int32(1966), forKey: "year")
        }
        return (id, stale, books[0])
    }

    /// The stale context's own changes: year 2000 (also changed by the writer) and 300 pages (not).
    static func staleChanges(_ book: EntityObject) throws {
        try book.setValue(Int32(2000), forKey: "year")
        try book.setValue(Int16(300), forKey: "pages")
    }

    // MARK: The default policy

    @Test func errorIsTheDefaultPolicy() throws {
        let stack = try makeMemoryStack()
        #expect(stack.newBackgroundContext().mergePolicy == .error)
        #expect(stack.viewContext.mergePolicy == .error)
    }

    @Test(arguments: StoreKind.allCases)
    func errorPolicyReportsAChangedRowWithEveryValue(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait {
            try Self.staleChanges(book)
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            #expect(error.objectIDs == [id])
            #expect(error.entityName == "Book")
            try #require(error.conflicts.count == 1)
            let conflict = error.conflicts[0]
            #expect(conflict.kind == .changedInStore)
            #expect(conflict.objectID == id)
            #expect(conflict.conflictingObjectID == nil)
            #expect(Self.restricted(conflict.objectValues) == Row("Dune", 2000, 300).values)
            #expect(Self.restricted(conflict.cachedValues) == Self.original.values)
            #expect(Self.restricted(conflict.storedValues) == Self.written.values)
            #expect(conflict.objectValues["sales"] == .int(0))
            #expect(conflict.objectValues.count == stack.model.entity(named: "Book")?.attributes.count)

            // Nothing changed in the context: the object keeps its changes.
            #expect(stale.hasChanges)
            #expect(book.isUpdated)
            #expect(try Self.row(book) == Row("Dune", 2000, 300))
            #expect(
                try book.committedValues(forKeys: ["title", "year", "pages"])
                    == ["title": .string("Dune"), "year": .int(1965), "pages": .int(100)])
        }
        // Nor in the store.
        #expect(try Self.storedRows(stack) == [Self.written])
        if kind == .file { #expect(try Self.storedVersions(directory) == ["2"]) }

        // Refreshed with its changes kept on top, the object saves.
        try stale.performAndWait {
            try stale.refresh(book, mergeChanges: true)
            #expect(try Self.row(book) == Row("Dune (W)", 2000, 300))
            #expect(try stale.save().updated == [id])
            #expect(!stale.hasChanges)
        }
        #expect(try Self.storedRows(stack) == [Row("Dune (W)", 2000, 300)])
    }

    @Test(arguments: StoreKind.allCases)
    func errorPolicyWritesNothingOfAConflictingSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let ids = try Self.saveBooks(stack, [Self.original, Row("Emma", 1815, nil)])
        let (stale, books) = try Self.staleContext(stack, ids)
        try Self.writerSaves(stack, ids[0]) { _, book in try book.setValue(Int32(1966), forKey: "year") }
        try stale.performAndWait {
            try books[0].setValue(Int16(300), forKey: "pages")
            try books[1].setValue("Emma (S)", forKey: "title")
            let added = try stale.insertBook("Added")
            expectError(.mergeConflict) { try stale.save() }
            #expect(added.isInserted && added.objectID.isTemporary)
            #expect(stale.hasChanges)
        }
        #expect(try Self.storedRows(stack) == [Row("Dune", 1966, 100), Row("Emma", 1815, nil)])
    }

    // MARK: Resolving a changed row

    /// Saves the stale context's changes under `policy`, and checks the row and the object after.
    func resolveVersionConflict(
        _ kind: StoreKind, _ policy: MergePolicy, expected: Row,
        written: Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait {
            try Self.staleChanges(book)
            stale.mergePolicy = policy
            let changes = try stale.save()
            #expect(changes.updated == (written ? [id] : []), sourceLocation: sourceLocation)
            #expect(changes.inserted.isEmpty && changes.deleted.isEmpty, sourceLocation: sourceLocation)
            #expect(!stale.hasChanges, sourceLocation: sourceLocation)
            #expect(stale.updatedObjects.isEmpty, sourceLocation: sourceLocation)
            #expect(!book.isUpdated && !book.hasChanges, sourceLocation: sourceLocation)
            #expect(book.changedValues.isEmpty, sourceLocation: sourceLocation)
            #expect(book.context === stale, sourceLocation: sourceLocation)
            #expect(book.objectID == id, sourceLocation: sourceLocation)
            #expect(try Self.row(book) == expected, sourceLocation: sourceLocation)
            #expect(try Self.restricted(book.committedValues()) == expected.values, sourceLocation: sourceLocation)
        }
        #expect(try Self.storedRows(stack) == [expected], sourceLocation: sourceLocation)
        if kind == .file {
            #expect(try Self.storedVersions(directory) == [written ? "3" : "2"], sourceLocation: sourceLocation)
        }

        // The object has the row's version now: a further change saves without a conflict, even
        // under the error policy.
        try stale.performAndWait {
            stale.mergePolicy = .error
            try book.setValue(Int16(999), forKey: "pages")
            #expect(try stale.save().updated == [id], sourceLocation: sourceLocation)
        }
        var next = expected
        next.pages = 999
        #expect(try Self.storedRows(stack) == [next], sourceLocation: sourceLocation)
    }

    @Test(arguments: StoreKind.allCases)
    func storeTrumpKeepsTheStoresChangesAndSavesTheOthers(kind: StoreKind) throws {
        // The title and the year are the store's (the writer changed them), the pages the object's.
        try resolveVersionConflict(kind, .mergeByPropertyStoreTrump, expected: Row("Dune (W)", 1966, 300), written: true)
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpKeepsTheObjectsChangesAndTakesTheStoresOthers(kind: StoreKind) throws {
        try resolveVersionConflict(kind, .mergeByPropertyObjectTrump, expected: Row("Dune (W)", 2000, 300), written: true)
    }

    @Test(arguments: StoreKind.allCases)
    func overwriteWritesTheObjectsWholeState(kind: StoreKind) throws {
        try resolveVersionConflict(kind, .overwrite, expected: Row("Dune", 2000, 300), written: true)
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackDropsTheObjectsChanges(kind: StoreKind) throws {
        try resolveVersionConflict(kind, .rollback, expected: Self.written, written: false)
    }

    @Test(arguments: StoreKind.allCases)
    func storeTrumpWritesNothingWhenTheStoreChangedEveryChangedProperty(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait {
            try book.setValue("Dune (S)", forKey: "title")
            try book.setValue(Int32(2000), forKey: "year")
            stale.mergePolicy = .mergeByPropertyStoreTrump
            #expect(try stale.save().isEmpty)
            #expect(!stale.hasChanges)
            #expect(try Self.row(book) == Self.written)
            // Its version is the store's: the next save is no conflict.
            try book.setValue(Int16(5), forKey: "pages")
            stale.mergePolicy = .error
            #expect(try stale.save().updated == [id])
        }
        #expect(try Self.storedRows(stack) == [Row("Dune (W)", 1966, 5)])
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback])
    func resolvedSaveAlsoWritesTheRestOfTheSave(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        let emma = try Self.saveBooks(stack, [Row("Emma", 1815, nil)])[0]
        try stale.performAndWait {
            try Self.staleChanges(book)
            try stale.existingObject(with: emma).setValue(Int16(474), forKey: "pages")
            let added = try stale.insertBook("Added", year: 2024)
            stale.mergePolicy = policy
            let changes = try stale.save()
            #expect(changes.inserted == [added.objectID])
            #expect(changes.updated.contains(emma))
            #expect(changes.updated.contains(id) == (policy != .rollback))
            #expect(!stale.hasChanges)
        }
        let rows = try Self.storedRows(stack)
        #expect(
            rows.map(\.title).sorted()
                == ["Added", "Dune", "Dune (W)", "Emma"].filter { $0 != (policy == .overwrite ? "Dune (W)" : "Dune") })
        #expect(rows.contains(Row("Emma", 1815, 474)))
        #expect(rows.contains(Row("Added", 2024, nil)))
    }

    // MARK: A row deleted from the store

    /// A stale context changes a row another context deleted, and saves under `policy` along
    /// with an insert.
    static func deletedRowScene(_ stack: PersistentStack) throws -> (id: ObjectID, stale: ObjectContext, book: EntityObject) {
        let id = try saveBooks(stack, [original])[0]
        let (stale, books) = try staleContext(stack, [id])
        try writerSaves(stack, id) { writer, book in try writer.delete(book) }
        return (id, stale, books[0])
    }

    @Test(arguments: StoreKind.allCases)
    func errorPolicyReportsADeletedRow(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.deletedRowScene(stack)
        try stale.performAndWait {
            try Self.staleChanges(book)
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            #expect(error.objectIDs == [id])
            try #require(error.conflicts.count == 1)
            #expect(error.conflicts[0].kind == .deletedInStore)
            #expect(error.conflicts[0].objectID == id)
            #expect(error.conflicts[0].storedValues == nil)
            #expect(Self.restricted(error.conflicts[0].cachedValues) == Self.original.values)
            #expect(Self.restricted(error.conflicts[0].objectValues) == Row("Dune", 2000, 300).values)
            #expect(book.context === stale && book.isUpdated)
        }
        #expect(try Self.storedRows(stack).isEmpty)
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .rollback])
    func storeSidePoliciesLetAnObjectGoWithItsDeletedRow(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.deletedRowScene(stack)
        try stale.performAndWait {
            try Self.staleChanges(book)
            let added = try stale.insertBook("Added")
            stale.mergePolicy = policy
            let changes = try stale.save()
            #expect(changes.inserted == [added.objectID])
            #expect(changes.updated.isEmpty)
            #expect(book.context == nil)
            #expect(stale.registeredObject(for: id) == nil)
            #expect(!stale.hasChanges)
            expectError(.objectNotInContext) { _ = try book.value(forKey: "title", as: String.self) }
        }
        #expect(try Self.storedRows(stack) == [Row("Added", nil, nil)])
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyObjectTrump, .overwrite])
    func objectSidePoliciesCannotBringADeletedRowBack(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.deletedRowScene(stack)
        try stale.performAndWait {
            try Self.staleChanges(book)
            let added = try stale.insertBook("Added")
            stale.mergePolicy = policy
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            #expect(error.objectIDs == [id])
            #expect(error.conflicts.map(\.kind) == [.deletedInStore])
            #expect(error.conflicts.first?.storedValues == nil)
            // Nothing changed in the context.
            #expect(added.isInserted && added.objectID.isTemporary)
            #expect(book.context === stale && book.isUpdated)
        }
        // Nothing was written: not the row, nor the insert.
        #expect(try Self.storedRows(stack).isEmpty)
    }

    // MARK: Deleting a changed row

    @Test(arguments: StoreKind.allCases)
    func errorPolicyRejectsDeletingARowChangedInTheStore(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait {
            try stale.delete(book)
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            #expect(error.objectIDs == [id])
            #expect(error.conflicts.map(\.kind) == [.changedInStore])
            #expect(Self.restricted(error.conflicts.first?.storedValues) == Self.written.values)
            #expect(book.isDeleted && stale.deletedObjects == [book])
        }
        #expect(try Self.storedRows(stack) == [Self.written])
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback])
    func otherPoliciesLetTheDeleteWin(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait {
            try stale.delete(book)
            stale.mergePolicy = policy
            let changes = try stale.save()
            #expect(changes.deleted == [id])
            #expect(book.context == nil)
            #expect(!stale.hasChanges)
        }
        #expect(try Self.storedRows(stack).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func deletingARowAlreadyDeletedIsNoConflict(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.deletedRowScene(stack)
        try stale.performAndWait {
            try stale.delete(book)
            #expect(stale.mergePolicy == .error)
            #expect(try stale.save().deleted == [id])
            #expect(book.context == nil)
        }
        #expect(try Self.storedRows(stack).isEmpty)
    }

    // MARK: Several conflicts

    /// Two rows, A and B, loaded in a stale context; another context changes A's year and
    /// deletes B; the stale context changes both titles.
    static func twoConflictsScene(_ stack: PersistentStack) throws -> (ids: [ObjectID], stale: ObjectContext, books: [EntityObject]) {
        let ids = try saveBooks(stack, [Row("A", 1, nil), Row("B", 2, nil)])
        let (stale, books) = try staleContext(stack, ids)
        try writerSaves(stack, ids[0]) { _, book in try book.setValue(Int32(10), forKey: "year") }
        try writerSaves(stack, ids[1]) { writer, book in try writer.delete(book) }
        try stale.performAndWait {
            for book in books { try book.setValue("Stale", forKey: "title") }
        }
        return (ids, stale, books)
    }

    @Test(arguments: StoreKind.allCases)
    func errorPolicyListsEveryConflict(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (ids, stale, _) = try Self.twoConflictsScene(stack)
        try stale.performAndWait {
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            #expect(error.conflicts.count == 2)
            #expect(error.objectIDs.count == 2)
            #expect(Set(error.objectIDs) == Set(ids))
            #expect(error.conflicts.map(\.objectID) == error.objectIDs)
            let kinds = Dictionary(uniqueKeysWithValues: error.conflicts.map { ($0.objectID, $0.kind) })
            #expect(kinds == [ids[0]: .changedInStore, ids[1]: .deletedInStore])
        }
        #expect(try Self.storedRows(stack) == [Row("A", 10, nil)])

        // The same save under a policy that resolves both.
        try stale.performAndWait {
            stale.mergePolicy = .mergeByPropertyStoreTrump
            let changes = try stale.save()
            #expect(changes.updated == [ids[0]])
            #expect(!stale.hasChanges)
        }
        #expect(try Self.storedRows(stack) == [Row("Stale", 10, nil)])
    }

    @Test(arguments: StoreKind.allCases)
    func unresolvedConflictsFailTheWholeSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (ids, stale, books) = try Self.twoConflictsScene(stack)
        try stale.performAndWait {
            stale.mergePolicy = .mergeByPropertyObjectTrump
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            // Only the conflict the policy could not resolve is listed.
            #expect(error.objectIDs == [ids[1]])
            #expect(error.conflicts.map(\.kind) == [.deletedInStore])
            #expect(books.allSatisfy { $0.context === stale && $0.isUpdated })
        }
        // The resolvable change was not written either.
        #expect(try Self.storedRows(stack) == [Row("A", 10, nil)])
    }

    // MARK: Changing the policy

    @Test(arguments: StoreKind.allCases)
    func policyCanChangeBetweenSaves(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait {
            try Self.staleChanges(book)
            expectError(.mergeConflict) { try stale.save() }
            stale.mergePolicy = .mergeByPropertyObjectTrump
            #expect(try stale.save().updated == [id])
        }
        #expect(try Self.storedRows(stack) == [Row("Dune (W)", 2000, 300)])
    }

    @Test(arguments: StoreKind.allCases)
    func policyCanBeSetFromAnotherThread(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.versionConflictScene(stack)
        try stale.performAndWait { try Self.staleChanges(book) }

        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "MergePolicyTests.setter").async {
            stale.mergePolicy = .overwrite
            done.signal()
        }
        done.wait()
        #expect(stale.mergePolicy == .overwrite)

        try stale.performAndWait {
            #expect(stale.mergePolicy == .overwrite)
            let changes = try stale.save()
            #expect(changes.updated == [id])
        }
        #expect(try Self.storedRows(stack) == [Row("Dune", 2000, 300)])
    }

    @Test func policyCanBeSetConcurrentlyWithReads() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let policies: [MergePolicy] = [.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback]
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            if index.isMultiple(of: 2) {
                context.mergePolicy = policies[index % policies.count]
            } else {
                #expect(policies.contains(context.mergePolicy))
            }
        }
        context.mergePolicy = .rollback
        #expect(context.performAndWait { context.mergePolicy } == .rollback)
    }

    // MARK: Uniqueness: an insert with an existing row's values

    static let existing = Row("Old", 1965, nil, isbn: "X")

    /// Saves the existing row (isbn "X"); returns its ID.
    static func saveExisting(_ stack: PersistentStack) throws -> ObjectID {
        try saveBooks(stack, [existing])[0]
    }

    @Test(arguments: StoreKind.allCases)
    func errorPolicyReportsAUniquenessConflict(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("New", isbn: "X")
            let temporaryID = book.objectID
            let error = try #require(expectError(.constraintViolation) { try context.save() })
            #expect(error.key == "isbn")
            #expect(error.entityName == "Book")
            #expect(error.objectIDs == [temporaryID])
            try #require(error.conflicts.count == 1)
            let conflict = error.conflicts[0]
            #expect(conflict.kind == .uniqueness(constraint: ["isbn"]))
            #expect(conflict.objectID == temporaryID)
            #expect(conflict.conflictingObjectID == existingID)
            #expect(conflict.cachedValues.isEmpty)
            #expect(Self.restricted(conflict.objectValues) == Row("New", nil, nil, isbn: "X").values)
            #expect(Self.restricted(conflict.storedValues) == Self.existing.values)

            #expect(book.isInserted && book.objectID == temporaryID && book.objectID.isTemporary)
            #expect(context.hasChanges)
        }
        #expect(try Self.storedRows(stack) == [Self.existing])
    }

    /// Inserts "New" with the existing row's isbn and saves under `policy`; checks that the
    /// object took the existing row's identity, and returns the row in the store.
    func upsert(
        _ kind: StoreKind, _ policy: MergePolicy, expected: Row, written: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("New", isbn: "X")
            context.mergePolicy = policy
            let changes = try context.save()
            #expect(changes.inserted.isEmpty, sourceLocation: sourceLocation)
            #expect(changes.updated == (written ? [existingID] : []), sourceLocation: sourceLocation)
            #expect(book.objectID == existingID, sourceLocation: sourceLocation)
            #expect(!book.objectID.isTemporary, sourceLocation: sourceLocation)
            #expect(!book.isInserted && !book.hasChanges, sourceLocation: sourceLocation)
            #expect(!context.hasChanges, sourceLocation: sourceLocation)
            #expect(context.registeredObject(for: existingID) === book, sourceLocation: sourceLocation)
            #expect(try Self.row(book) == expected, sourceLocation: sourceLocation)

            // The object has the row's version: a further change saves without a conflict.
            context.mergePolicy = .error
            try book.setValue(Int16(7), forKey: "pages")
            #expect(try context.save().updated == [existingID], sourceLocation: sourceLocation)
        }
        var next = expected
        next.pages = 7
        #expect(try Self.storedRows(stack) == [next], sourceLocation: sourceLocation)
        if kind == .file {
            #expect(try Self.storedVersions(directory) == [written ? "3" : "2"], sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpUpsertsEveryValueOfTheInsert(kind: StoreKind) throws {
        // Every property of an inserted object counts as changed, as in Core Data: the year the
        // object left nil (its default) replaces 1965.
        try upsert(kind, .mergeByPropertyObjectTrump, expected: Row("New", nil, nil, isbn: "X"), written: true)
    }

    /// An upsert writes values equal to the entity's defaults too: the row's sales (100) and
    /// inPrint (false) become the new object's defaults (0, true).
    @Test(arguments: StoreKind.allCases)
    func objectTrumpUpsertWritesValuesEqualToTheDefaults(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let writer = stack.newBackgroundContext()
        let existingID = try writer.performAndWait {
            let book = try writer.insertBook("Old", year: 1965, isbn: "X")
            try book.setValue(Int64(100), forKey: "sales")
            try book.setValue(false, forKey: "inPrint")
            try writer.save()
            return book.objectID
        }
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let (objectID, sales, inPrint, year) = try context.performAndWait {
            let book = try context.insertBook("New", isbn: "X")
            try book.setValue(Int64(0), forKey: "sales") // set explicitly, equal to the default
            try context.save()
            return (
                book.objectID, try book.value(forKey: "sales", as: Int64.self),
                try book.value(forKey: "inPrint", as: Bool.self), try book.value(forKey: "year", as: Int32?.self)
            )
        }
        #expect(objectID == existingID)
        #expect(sales == 0 && inPrint && year == nil)
        let reader = stack.newBackgroundContext()
        let stored = try reader.performAndWait {
            let book = try reader.existingObject(with: existingID)
            return (
                try book.value(forKey: "sales", as: Int64.self), try book.value(forKey: "inPrint", as: Bool.self),
                try book.value(forKey: "year", as: Int32?.self), try book.value(forKey: "title", as: String.self)
            )
        }
        #expect(stored.0 == 0 && stored.1 && stored.2 == nil && stored.3 == "New")
    }

    @Test(arguments: StoreKind.allCases)
    func overwriteUpsertsTheInsertsWholeState(kind: StoreKind) throws {
        try upsert(kind, .overwrite, expected: Row("New", nil, nil, isbn: "X"), written: true)
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .rollback])
    func storeSidePoliciesAdoptTheExistingRow(kind: StoreKind, policy: MergePolicy) throws {
        try upsert(kind, policy, expected: Self.existing, written: false)
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpUpsertWritesNothingWhenTheValuesAreTheRows(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("Old", year: 1965, isbn: "X") // every value equal to the row's
            context.mergePolicy = .mergeByPropertyObjectTrump
            #expect(try context.save().isEmpty)
            #expect(book.objectID == existingID)
            #expect(try Self.row(book) == Self.existing)
        }
        if kind == .file { #expect(try Self.storedVersions(directory) == ["1"]) }
        #expect(try Self.storedRows(stack) == [Self.existing])
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback])
    func upsertIntoARegisteredRowKeepsOneObjectPerRow(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let old = try context.existingObject(with: existingID)
            #expect(try Self.row(old) == Self.existing)
            let book = try context.insertBook("New", isbn: "X")
            context.mergePolicy = policy
            try context.save()
            #expect(context.registeredObject(for: existingID) === book)
            #expect(book.objectID == existingID)
            #expect(old.context == nil)
            expectError(.objectNotInContext) { _ = try old.value(forKey: "title", as: String.self) }
            #expect(context.registeredObjects.count == 1)
            #expect(context.registeredObjects.first === book)
            // A fetch finds the one object.
            let fetched = try context.fetch(Self.allBooks)
            #expect(fetched.count == 1)
            #expect(fetched.first === book)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func upsertChangesMergeIntoOtherContexts(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let other = stack.newBackgroundContext()
        other.automaticallyMergesChangesFromParent = false // merged by hand below
        let loaded = try other.performAndWait { try other.existingObject(with: existingID) }

        let context = stack.newBackgroundContext()
        let changes = try context.performAndWait {
            try context.insertBook("New", isbn: "X")
            context.mergePolicy = .mergeByPropertyObjectTrump
            return try context.save()
        }
        #expect(changes.updated == [existingID])
        try other.performAndWait {
            other.mergeChanges(changes)
            let row = try Self.row(loaded)
            #expect(row == Row("New", nil, nil, isbn: "X")) // every value of the insert, nil too
        }
    }

    @Test(arguments: StoreKind.allCases)
    func uniquenessConflictWithARowChangedInTheSameSaveIsNone(kind: StoreKind) throws {
        // Updates run before inserts: a save that moves the existing row off "X" and inserts a new
        // "X" conflicts with nothing.
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.existingObject(with: existingID).setValue("Y", forKey: "isbn")
            let book = try context.insertBook("New", isbn: "X")
            let changes = try context.save()
            #expect(changes.inserted == [book.objectID])
            #expect(changes.updated == [existingID])
        }
        #expect(try Self.storedRows(stack) == [Row("New", nil, nil, isbn: "X"), Row("Old", 1965, nil, isbn: "Y")])
    }

    // MARK: Uniqueness: two inserts of one save

    /// Inserts "First" (1999, isbn Y) and "Second" (50 pages, isbn Y) in one save under `policy`.
    static func saveTwoInserts(_ context: ObjectContext, _ policy: MergePolicy) throws -> (first: EntityObject, second: EntityObject) {
        let first = try context.insertBook("First", year: 1999, isbn: "Y")
        let second = try context.insertBook("Second", isbn: "Y")
        try second.setValue(Int16(50), forKey: "pages")
        context.mergePolicy = policy
        return (first, second)
    }

    @Test(arguments: StoreKind.allCases)
    func errorPolicyRejectsTwoInsertsWithOneValue(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let (first, second) = try Self.saveTwoInserts(context, .error)
            let error = try #require(expectError(.constraintViolation) { try context.save() })
            #expect(error.key == "isbn")
            try #require(error.conflicts.count == 1)
            #expect(error.conflicts[0].kind == .uniqueness(constraint: ["isbn"]))
            #expect(error.conflicts[0].objectID == second.objectID)
            #expect(error.conflicts[0].conflictingObjectID == first.objectID)
            #expect(Self.restricted(error.conflicts[0].storedValues) == Row("First", 1999, nil, isbn: "Y").values)
            #expect(first.isInserted && second.isInserted)
            #expect(first.objectID.isTemporary && second.objectID.isTemporary)
        }
        #expect(try Self.storedRows(stack).isEmpty)
    }

    /// Saves two inserts with one isbn under `policy`: one row, the first object's.
    func foldTwoInserts(
        _ kind: StoreKind, _ policy: MergePolicy, expected: Row,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let (first, second) = try Self.saveTwoInserts(context, policy)
            let changes = try context.save()
            #expect(changes.inserted == [first.objectID], sourceLocation: sourceLocation)
            #expect(!first.objectID.isTemporary && !first.isInserted, sourceLocation: sourceLocation)
            #expect(first.context === context, sourceLocation: sourceLocation)
            #expect(second.context == nil, sourceLocation: sourceLocation)
            #expect(try Self.row(first) == expected, sourceLocation: sourceLocation)
            #expect(!context.hasChanges, sourceLocation: sourceLocation)
            #expect(context.registeredObjects == [first], sourceLocation: sourceLocation)
        }
        #expect(try Self.storedRows(stack) == [expected], sourceLocation: sourceLocation)
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpFoldsTheSecondInsertsValuesIntoTheFirst(kind: StoreKind) throws {
        try foldTwoInserts(kind, .mergeByPropertyObjectTrump, expected: Row("Second", nil, 50, isbn: "Y"))
    }

    @Test(arguments: StoreKind.allCases)
    func overwriteKeepsTheSecondInsertsWholeState(kind: StoreKind) throws {
        try foldTwoInserts(kind, .overwrite, expected: Row("Second", nil, 50, isbn: "Y"))
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .rollback])
    func storeSidePoliciesKeepTheFirstInsert(kind: StoreKind, policy: MergePolicy) throws {
        try foldTwoInserts(kind, policy, expected: Row("First", 1999, nil, isbn: "Y"))
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback])
    func twoInsertsWithAnExistingRowsValueLeaveOneRowAndOneObject(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let first = try context.insertBook("First", isbn: "X")
            let second = try context.insertBook("Second", isbn: "X")
            context.mergePolicy = policy
            let changes = try context.save()
            #expect(changes.inserted.isEmpty)
            #expect(!context.hasChanges)
            let survivor = try #require(context.registeredObject(for: existingID))
            #expect(survivor === first || survivor === second)
            #expect([first, second].filter { $0.context != nil }.count == 1)
            #expect(context.registeredObjects.count == 1)
        }
        let rows = try Self.storedRows(stack)
        #expect(rows.count == 1)
        #expect(rows.first?.isbn == "X")
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpFoldsTwoInsertsIntoAnExistingRow(kind: StoreKind) throws {
        // As with two inserts and no existing row, the second insert's values replace the first's,
        // and both the existing row's: every value of Second, its nil year included.
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("First", year: 1999, isbn: "X")
            let second = try context.insertBook("Second", isbn: "X")
            try second.setValue(Int16(50), forKey: "pages")
            context.mergePolicy = .mergeByPropertyObjectTrump
            try context.save()
            let survivor = try #require(context.registeredObject(for: existingID))
            let row = try Self.row(survivor)
            #expect(row == Row("Second", nil, 50, isbn: "X"))
        }
        let rows = try Self.storedRows(stack)
        #expect(rows == [Row("Second", nil, 50, isbn: "X")])
    }

    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyObjectTrump, .overwrite])
    func threeInsertsWithAnExistingRowsValueSave(kind: StoreKind, policy: MergePolicy) throws {
        // Nothing else writes the row: the save must not give up as if it kept changing.
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existingID = try Self.saveExisting(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try ["First", "Second", "Third"].map { try context.insertBook($0, isbn: "X") }
            context.mergePolicy = policy
            try context.save()
            #expect(books.filter { $0.context != nil }.count == 1)
            #expect(context.registeredObjects.count == 1)
            #expect(context.registeredObject(for: existingID) != nil)
        }
        #expect(try Self.storedRows(stack).map(\.isbn) == ["X"])
    }
}
