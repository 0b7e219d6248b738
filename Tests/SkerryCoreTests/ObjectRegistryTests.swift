import Foundation
import Testing

@testable import SkerryCore

/// The one owner of object identity (`ObjectRegistry`), and errors recorded by calls that cannot
/// throw. Debug builds check the registry's invariants after every context operation; these tests
/// also call the check themselves, so that it runs in release test builds too.
@Suite struct ObjectRegistryTests {
    private func checked(_ context: ObjectContext) {
        context.registry.checkInvariants(context: context)
    }

    @Test(arguments: StoreKind.allCases)
    func invariantsHoldThroughInsertsDeletesSavesAndRollbacks(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insertNamed("Author", "Le Guin")
            let books = try (0..<5).map { try context.insertNamed("Book", "Book \($0)") }
            for book in books { try book.setRelatedObject(author, forKey: "author") }
            checked(context)
            try context.delete(books[4]) // an insert deleted: gone at once
            #expect(context.registry.insertedCount == 5)
            checked(context)
            try context.save()
            #expect(context.registry.insertedCount == 0)
            #expect(context.registeredObjects.allSatisfy { !$0.objectID.isTemporary })
            checked(context)

            try books[0].setValue("Changed", forKey: "title")
            try context.delete(author) // cascades to the remaining books
            #expect(context.deletedObjects.count == 5)
            checked(context)
            context.rollback()
            #expect(context.deletedObjects.isEmpty && context.updatedObjects.isEmpty)
            #expect(try books[0].value(forKey: "title", as: String.self) == "Book 0")
            checked(context)

            try context.delete(author)
            try context.save()
            #expect(context.registeredObjects.isEmpty)
            checked(context)
        }
    }

    @Test func aChildsObjectsAreRekeyedWhenTheParentSavesTheirInserts() throws {
        let stack = try makeMemoryStack()
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        let temporaryID = try child.performAndWait {
            let book = try child.insertBook("From the child")
            try child.save()
            #expect(!book.isInserted && book.objectID.isTemporary) // the parent holds the insert
            checked(child)
            return book.objectID
        }
        let permanentID = try parent.performAndWait {
            checked(parent)
            try parent.save()
            checked(parent)
            let book = try #require(parent.registeredObjects.first)
            #expect(parent.registeredObject(for: temporaryID) == nil)
            return book.objectID
        }
        #expect(!permanentID.isTemporary)
        // The child hears of the parent's save on its queue; a synchronous block runs after it.
        child.performAndWait {}
        try child.performAndWait {
            let book = try #require(child.registeredObject(for: permanentID))
            #expect(child.registeredObject(for: temporaryID) == nil)
            #expect(try book.value(forKey: "title", as: String.self) == "From the child")
            checked(child)
        }
    }

    @Test func aRegisteredObjectIsTheOneObjectOfItsRow() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let inserted = try context.insertBook("One")
            try context.save()
            let fetched = try context.fetch(FetchRequest(entityName: "Book"))
            let byID = context.object(with: inserted.objectID)
            let existing = try context.existingObject(with: inserted.objectID)
            #expect(fetched == [inserted] && byID === inserted && existing === inserted)
            #expect(context.registry.count == 1)
            checked(context)
            context.reset()
            #expect(inserted.context == nil && context.registry.isEmpty)
            checked(context)
        }
    }

    /// The identity map lists objects in registration order and leaves a hole for each one it
    /// removes, compacting the list when holes outnumber objects: through deletes of most objects,
    /// re-keying saves and many more inserts, every row keeps its one object and its values.
    @Test func objectsStayTheOneObjectOfTheirRowThroughHeavyChurn() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var books = try (0..<200).map { try context.insertBook("Book \($0)", year: Int32($0)) }
            try context.save()
            for (index, book) in books.enumerated() where index % 4 != 0 { try context.delete(book) }
            try context.save()
            books = books.enumerated().filter { $0.offset % 4 == 0 }.map(\.element)
            #expect(context.registry.count == 50)
            checked(context)
            let more = try (200..<500).map { try context.insertBook("Book \($0)", year: Int32($0)) }
            checked(context)
            try context.save()
            checked(context)
            books += more
            for book in books {
                #expect(context.registeredObject(for: book.objectID) === book)
                #expect(try "Book \(book.value(forKey: "year", as: Int32.self))" == book.value(forKey: "title", as: String.self))
            }
            let fetched = try context.fetch(FetchRequest(entityName: "Book"))
            #expect(Set(fetched.map(ObjectIdentifier.init)) == Set(books.map(ObjectIdentifier.init)))
            context.reset()
            #expect(books.allSatisfy { $0.context == nil } && context.registry.isEmpty)
            checked(context)
        }
    }

    /// A fetch into a context that holds no object registers its objects all at once (sorted by
    /// where they go in the identity map): each row still has exactly one object, found by ID.
    @Test func aBulkFetchIntoAnEmptyContextRegistersEveryRowOnce() throws {
        let stack = try makeMemoryStack()
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for index in 0..<3000 { try writer.insertBook("Book \(index)", year: Int32(index)) }
            try writer.save()
        }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let fetched = try context.fetch(FetchRequest(entityName: "Book"))
            #expect(fetched.count == 3000 && context.registry.count == 3000)
            checked(context)
            for book in fetched { #expect(context.registeredObject(for: book.objectID) === book) }
            let again = try context.fetch(FetchRequest(entityName: "Book"))
            #expect(zip(fetched, again).allSatisfy { $0 === $1 })
            let years = try fetched.map { try $0.value(forKey: "year", as: Int32.self) }
            #expect(Set(years) == Set(0..<3000))
        }
    }

    /// Whether objects of a bulk registration wait for `context`'s identity map's table.
    private static func waiting(_ context: ObjectContext) -> Bool { context.registry.objects.hasPending }

    /// A bulk fetch leaves its objects waiting for the identity map's table (listed, not indexed)
    /// until something looks an object up, adds or removes one by ID: a context whose objects are
    /// read and dropped never indexes them. Whatever comes first finds every object under its ID.
    @Test func aBulkFetchsObjectsAreIndexedAtTheFirstLookUpOrChangeByID() throws {
        let stack = try makeMemoryStack()
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for index in 0..<1500 { try writer.insertBook("Book \(index)", year: Int32(index)) }
            try writer.save()
        }
        let firsts: [(String, (ObjectContext, [EntityObject]) throws -> Void)] = [
            ("look-up", { context, fetched in #expect(context.registeredObject(for: fetched[7].objectID) === fetched[7]) }),
            (
                "fetch again",
                { context, fetched in
                    let again = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
                    #expect(again == fetched)
                }
            ),
            ("insert", { context, _ in _ = try context.insertBook("New", year: 5000) }),
            (
                "delete and save",
                { context, fetched in
                    try context.delete(fetched[3])
                    try context.save()
                    #expect(fetched[3].context == nil)
                }
            ),
            (
                "change and save",
                { context, fetched in
                    try fetched[9].setValue("Changed", forKey: "title")
                    #expect(Self.waiting(context))
                    self.checked(context)
                    try context.save()
                }
            ),
            ("refresh", { context, fetched in try context.refresh(fetched[2], mergeChanges: false) }),
        ]
        for (name, first) in firsts {
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let fetched = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
                #expect(Self.waiting(context), "\(name)")
                #expect(context.registry.count == fetched.count && context.registeredObjects.count == fetched.count, "\(name)")
                checked(context)
                try first(context, fetched)
                for book in fetched where book.context != nil {
                    #expect(context.registeredObject(for: book.objectID) === book, "\(name): \(book.objectID)")
                }
                #expect(!Self.waiting(context), "\(name)")
                checked(context)
                let again = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
                #expect(again.allSatisfy { $0.context === context }, "\(name)")
                #expect(
                    Set(again.map(ObjectIdentifier.init)).isSuperset(of: fetched.filter { $0.context != nil }.map(ObjectIdentifier.init)))
                context.reset()
                #expect(fetched.allSatisfy { $0.context == nil } && context.registry.isEmpty, "\(name)")
            }
        }
        // Dropped without a look-up: the objects go with the context, never indexed.
        let reader = stack.newBackgroundContext()
        let dropped = try reader.performAndWait {
            let fetched = try reader.fetch(FetchRequest(entityName: "Book"))
            #expect(Self.waiting(reader))
            return fetched.count
        }
        #expect(dropped >= 1499)
    }

    // MARK: Recorded errors

    @Test(arguments: StoreKind.allCases)
    func aRecordedErrorMakesSaveRefuseAndRollbackForgetsIt(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Not saved")
            context.recordError(SkerryError(.objectNotFound, "A member could not be read."))
            context.recordError(SkerryError(.wrongValueType, "A second error is not kept."))
            #expect((context.recordedError as? SkerryError)?.code == .objectNotFound)
            let refusal = expectError(.objectNotFound) { try context.save() }
            #expect(refusal?.message.contains("A member could not be read.") == true)
            #expect(context.hasChanges) // nothing lost, nothing written
            #expect(context.recordedError != nil) // still refusing
            context.rollback()
            #expect(context.recordedError == nil && !context.hasChanges)
            try context.insertBook("Saved")
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        let titles = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }
        }
        #expect(titles == ["Saved"])
    }

    @Test func resetAndTakingTheErrorClearIt() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            context.recordError(SkerryError(.objectNotFound, "gone"))
            context.reset()
            #expect(context.recordedError == nil)
            context.recordError(SkerryError(.objectNotFound, "gone again"))
            #expect((context.takeRecordedError() as? SkerryError)?.message == "gone again")
            #expect(context.recordedError == nil)
            try context.insertBook("Saved after the error was taken")
            try context.save()
        }
    }

    @Test func aChildWithARecordedErrorPushesNothingToItsParent() throws {
        let stack = try makeMemoryStack()
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        try child.performAndWait {
            try child.insertBook("Stays in the child")
            child.recordError(SkerryError(.objectNotFound, "gone"))
            expectError(.objectNotFound) { try child.save() }
        }
        #expect(parent.performAndWait { parent.hasChanges } == false)
    }
}
