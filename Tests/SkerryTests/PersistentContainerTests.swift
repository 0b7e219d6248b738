import Dispatch
import Foundation
import Skerry
import SkerryCore
import Testing

@Suite struct PersistentContainerTests {
    // MARK: perform

    @Test func performReturnsTheClosuresValueAndSavesWhatItLeft() throws {
        let stack = try makeStack()
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)

        let returned = try container.perform { context in
            try context.insert(Book(title: "Dune", year: 1965))
            try context.insert(Book(title: "Solaris", year: 1961))
            return "two inserted"
        }
        #expect(returned == "two inserted")

        let books = try container.perform { context in
            try context.fetch(Book.all.sort(\Book.title)).map { try $0.decode() }
        }
        #expect(books == [Book(title: "Dune", year: 1965), Book(title: "Solaris", year: 1961)])
        #expect(try storedTitles(in: stack) == ["Dune", "Solaris"])
        #expect(log.all.isEmpty)
    }

    /// An ID taken in one perform finds the same row in a later one, through the typed layer;
    /// an ID of another entity, or of a row since deleted, is a typed error.
    @Test func anObjectIDFromOnePerformFindsTheObjectInAnother() throws {
        let stack = try makeStack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        // Inside the perform that inserts them, objects still have temporary IDs (the save comes
        // after the closure), as in Core Data: take IDs in a later perform.
        let temporaryID = try container.perform { context in
            try context.insert(AllTypes())
            return try context.insert(Book(title: "Dune", year: 1965)).objectID
        }
        #expect(temporaryID.isTemporary)
        let (bookID, otherID) = try container.perform { context in
            (try #require(try context.fetchOne(Book.all)).objectID, try #require(try context.fetchOne(AllTypes.all)).objectID)
        }
        #expect(!bookID.isTemporary)
        let book = try container.perform { try $0.existingObject(with: bookID, as: Book.self).decode() }
        #expect(book == Book(title: "Dune", year: 1965))

        let wrongEntity = #expect(throws: SkerryError.self) {
            try container.perform { try $0.existingObject(with: otherID, as: Book.self) }
        }
        #expect(wrongEntity?.code == .invalidArgument)

        try container.perform { context in context.delete(try context.existingObject(with: bookID, as: Book.self)) }
        let gone = #expect(throws: SkerryError.self) {
            try container.perform { try $0.existingObject(with: bookID, as: Book.self) }
        }
        #expect(gone?.code == .objectNotFound)
    }

    @Test func performThatOnlyReadsSavesNothingAndReturnsItsValue() throws {
        let stack = try makeStack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        let count = try container.perform { try $0.count(of: Book.all) }
        #expect(count == 0)
        let edited = try container.perform { context in
            try context.insert(Book(title: "Dune"))
            return try context.count(of: Book.all)
        }
        #expect(edited == 1)
    }

    @Test func nothingIsSavedWhenTheClosureThrowsAndTheErrorComesOutUnchanged() throws {
        let stack = try makeStack()
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)

        #expect(throws: SampleFailure(reason: "changed my mind")) {
            try container.perform { context in
                try context.insert(Book(title: "Dune"))
                throw SampleFailure(reason: "changed my mind")
            }
        }
        #expect(try storedTitles(in: stack).isEmpty)
        #expect(log.all.count == 1)
        #expect(log.all.first as? SampleFailure == SampleFailure(reason: "changed my mind"))
    }

    @Test func aFactoryErrorIsLoggedOnceAndRethrownWithoutRunningTheClosure() throws {
        let log = RecordedErrors()
        let ran = InvocationCounter()
        let container = PersistentContainer(
            managedObjectContext: { throw SampleFailure(reason: "no context") },
            logError: log.handler)
        #expect(throws: SampleFailure(reason: "no context")) {
            try container.perform { _ in ran.increment() }
        }
        #expect(ran.value == 0)
        #expect(log.all.count == 1)
        #expect(log.all.first as? SampleFailure == SampleFailure(reason: "no context"))
    }

    @Test func aSaveErrorIsLoggedOnceAndRethrown() throws {
        let stack = try makeStack()
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)
        try container.perform { try $0.insert(Book(title: "Dune", isbn: "978-0441013593")) }
        #expect(log.all.isEmpty)

        let error = #expect(throws: SkerryError.self) {
            try container.perform { try $0.insert(Book(title: "Dune (again)", isbn: "978-0441013593")) }
        }
        #expect(error?.code == .constraintViolation)
        #expect(log.all.count == 1)
        #expect((log.all.first as? SkerryError)?.code == .constraintViolation)
        #expect(try storedTitles(in: stack) == ["Dune"])
    }

    @Test func aFactoryThatThrowsUntilTheStoresAreLoaded() throws {
        let stack = try makeUnloadedTypedStack()
        let log = RecordedErrors()
        let container = PersistentContainer(
            managedObjectContext: {
                guard stack.hasLoadedStores else { throw SampleFailure(reason: "stores not loaded") }
                return stack.newBackgroundContext()
            },
            logError: log.handler)

        #expect(throws: SampleFailure(reason: "stores not loaded")) {
            try container.perform { try $0.insert(Book(title: "Too early")) }
        }
        #expect(log.all.count == 1)
        #expect(log.all.first as? SampleFailure == SampleFailure(reason: "stores not loaded"))

        try stack.loadPersistentStores()
        try container.perform { try $0.insert(Book(title: "Dune")) }
        #expect(try container.perform { try $0.fetch(Book.all, \Book.title) } == ["Dune"])
        #expect(log.all.count == 1)
    }

    // MARK: schedule

    @Test func scheduleReturnsValuesAndSaves() async throws {
        let stack = try makeStack()
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)
        let inserted = try await container.schedule { context in
            try context.insert(Book(title: "Dune", year: 1965))
            return 1
        }
        #expect(inserted == 1)
        let books = try await container.schedule { context in
            try context.fetch(Book.all).map { try $0.decode() }
        }
        #expect(books == [Book(title: "Dune", year: 1965)])
        #expect(log.all.isEmpty)
    }

    @Test func scheduleLogsEveryErrorOnceAndRethrowsIt() async throws {
        let stack = try makeStack()
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)

        // The closure's error, with nothing saved.
        await #expect(throws: SampleFailure(reason: "work")) {
            try await container.schedule { context in
                try context.insert(Book(title: "Lost"))
                throw SampleFailure(reason: "work")
            }
        }
        #expect(log.all.count == 1)
        #expect(try storedTitles(in: stack).isEmpty)

        // The save's error.
        try await container.schedule { _ = try $0.insert(Book(title: "Dune", isbn: "X")) }
        let error = await #expect(throws: SkerryError.self) {
            try await container.schedule { _ = try $0.insert(Book(title: "Copy", isbn: "X")) }
        }
        #expect(error?.code == .constraintViolation)
        #expect(log.all.count == 2)
        #expect((log.all.last as? SkerryError)?.code == .constraintViolation)

        // The factory's error.
        let broken = PersistentContainer(managedObjectContext: { throw SampleFailure(reason: "factory") }, logError: log.handler)
        await #expect(throws: SampleFailure(reason: "factory")) {
            try await broken.schedule { _ in 0 }
        }
        #expect(log.all.count == 3)
        #expect(log.all.last as? SampleFailure == SampleFailure(reason: "factory"))
        #expect(try storedTitles(in: stack) == ["Dune"])
    }

    @Test func aCancelledTaskGetsCancellationErrorWhichIsNotLogged() async throws {
        let stack = try makeStack()
        let log = RecordedErrors()
        let ran = InvocationCounter()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)

        let task = Task { () async throws -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await container.schedule { context in
                ran.increment()
                try context.insert(Book(title: "Never"))
                return 1
            }
        }
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(ran.value == 0)
        #expect(log.all.isEmpty)
        #expect(try storedTitles(in: stack).isEmpty)
    }

    // MARK: Concurrency

    @Test(arguments: TypedStoreKind.allCases)
    func concurrentPerformsFromThreadsAllSave(kind: TypedStoreKind) throws {
        let (stack, folder) = try makeTypedStack(kind)
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)
        let failures = RecordedErrors()

        DispatchQueue.concurrentPerform(iterations: 100) { index in
            do {
                try container.perform { try $0.insert(Book(title: "Book \(index)", year: index)) }
            } catch {
                failures.handler(error)
            }
        }

        #expect(failures.all.isEmpty, "\(failures.all)")
        #expect(log.all.isEmpty)
        #expect(try container.perform { try $0.count(of: Book.all) } == 100)
        #expect(try storedTitles(in: stack) == (0..<100).map { "Book \($0)" }.sorted())
        withExtendedLifetime(folder) {}
    }

    @Test(arguments: TypedStoreKind.allCases)
    func concurrentSchedulesFromATaskGroupAllSave(kind: TypedStoreKind) async throws {
        let (stack, folder) = try makeTypedStack(kind)
        let log = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: log.handler)

        let returned = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<100 {
                group.addTask {
                    try await container.schedule { context in
                        try context.insert(Book(title: "Book \(index)", year: index))
                        return index
                    }
                }
            }
            var all: [Int] = []
            for try await index in group { all.append(index) }
            return all
        }

        #expect(returned.sorted() == Array(0..<100))
        #expect(log.all.isEmpty)
        #expect(try await container.schedule { try $0.count(of: Book.all) } == 100)
        #expect(try storedTitles(in: stack) == (0..<100).map { "Book \($0)" }.sorted())
        withExtendedLifetime(folder) {}
    }

    // MARK: cleanUpAfterExecution

    @Test func cleanUpReleasesEveryObjectAfterThePerform() throws {
        let stack = try makeStack()
        let context = stack.newBackgroundContext()
        let container = PersistentContainer(managedObjectContext: { context }, cleanUpAfterExecution: true)

        weak var inserted: EntityObject?
        try container.perform { managed in
            let book = try managed.insert(Book(title: "Dune"))
            inserted = book.instance
            #expect(inserted != nil)
        }
        #expect(inserted == nil)
        #expect(context.performAndWait { context.registeredObjects.count } == 0)

        weak var fetched: EntityObject?
        let title = try container.perform { managed in
            let book = try #require(try managed.fetchOne(Book.all))
            fetched = book.instance
            return try book.decode(\.title)
        }
        #expect(title == "Dune")
        #expect(fetched == nil)
        #expect(context.performAndWait { context.registeredObjects.count } == 0)
    }

    /// A service makes a context per request (`{ stack.newBackgroundContext() }`): once the
    /// performs are over, the stack keeps none of those contexts, however many of the others'
    /// saves they were sent to merge. A context kept by the stack (its did-save observation, a
    /// merge block) would make a service's memory grow with every request.
    @Test func contextsMadePerPerformAreReleasedAfterwards() async throws {
        let stack = try makeStack()
        let made = Locked<[WeakContext]>([])
        let container = PersistentContainer(managedObjectContext: {
            let context = stack.newBackgroundContext()
            made.append(WeakContext(context: context))
            return context
        })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<40 {
                group.addTask {
                    try await container.schedule { context in
                        // Half of them save: each save is sent to every context alive to merge.
                        if number.isMultiple(of: 2) { try context.insert(Book(title: "Book \(number)")) }
                        _ = try context.count(of: Book.all)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(made.value.count == 40)
        // A merge block still queued holds its context until it ran: let every queue drain.
        for reference in made.value {
            if let context = reference.context { context.performAndWait {} }
        }
        #expect(made.value.filter { $0.context != nil }.isEmpty)
        #expect(try storedTitles(in: stack).count == 20)
    }

    @Test func withoutCleanUpAContextKeepsItsObjectsAsACacheThatReadsNothingFromTheStore() throws {
        let stack = try makeStack()
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let container = PersistentContainer(managedObjectContext: { context }, cleanUpAfterExecution: false)

        try container.perform { try $0.insert(Book(title: "Dune", year: 1965)) }
        let objectID = try #require(context.performAndWait { context.registeredObjects.first?.objectID })
        #expect(context.performAndWait { context.registeredObjects.count } == 1)
        #expect(!objectID.isTemporary)

        // Delete the row behind the context's back, without merging.
        let other = stack.newBackgroundContext()
        let deleted = try other.performAndWait { try other.execute(BatchDeleteRequest(entityName: "Book")).count }
        #expect(deleted == 1)
        #expect(try storedTitles(in: stack).isEmpty)

        let cached = try container.perform { managed -> (String, Int?, String, Int) in
            let registered = try #require(managed.instance.registeredObject(for: objectID))
            let existing = try managed.instance.existingObject(with: objectID)
            #expect(existing === registered)
            return (
                try registered.value(forKey: "title", as: String.self),
                try registered.value(forKey: "year", as: Int?.self),
                try existing.value(forKey: "title", as: String.self),
                try managed.count(of: Book.all)
            )
        }
        #expect(cached.0 == "Dune")
        #expect(cached.1 == 1965)
        #expect(cached.2 == "Dune")
        #expect(cached.3 == 0) // the store itself has no row any more
    }

    @Test func withoutCleanUpAFailedPerformLeavesNoPendingChangesBehind() throws {
        let stack = try makeStack()
        let context = stack.newBackgroundContext()
        let log = RecordedErrors()
        let container = PersistentContainer(
            managedObjectContext: { context }, logError: log.handler,
            cleanUpAfterExecution: false)

        #expect(throws: SampleFailure(reason: "abandon")) {
            try container.perform { managed in
                try managed.insert(Book(title: "Abandoned"))
                throw SampleFailure(reason: "abandon")
            }
        }
        #expect(context.performAndWait { context.hasChanges } == false)

        try container.perform { try $0.insert(Book(title: "Kept")) }
        #expect(try storedTitles(in: stack) == ["Kept"])
        #expect(log.all.count == 1)
    }

    @Test func withoutCleanUpAFailedSaveLeavesNoPendingChangesBehind() throws {
        let stack = try makeStack()
        let context = stack.newBackgroundContext()
        let log = RecordedErrors()
        let container = PersistentContainer(
            managedObjectContext: { context }, logError: log.handler,
            cleanUpAfterExecution: false)
        try container.perform { try $0.insert(Book(title: "Dune", isbn: "X")) }

        let error = #expect(throws: SkerryError.self) {
            try container.perform { managed in
                try managed.insert(Book(title: "Duplicate", isbn: "X"))
                try managed.insert(Book(title: "Innocent bystander"))
            }
        }
        #expect(error?.code == .constraintViolation)
        #expect(context.performAndWait { context.hasChanges } == false)

        try container.perform { try $0.insert(Book(title: "Kept")) }
        #expect(try storedTitles(in: stack) == ["Dune", "Kept"])
        #expect(log.all.count == 1)
    }
}

/// A context, not kept alive.
private struct WeakContext: Sendable {
    weak var context: ObjectContext?
}
