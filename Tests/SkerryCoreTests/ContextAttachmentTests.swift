import Dispatch
import Foundation
import Testing

@testable import SkerryCore

/// Contexts made as Core Data code makes them: by concurrency type, attached to a coordinator or
/// a parent after creation; main-queue contexts used from the main thread; `enqueue` from async code.
@Suite struct ContextAttachmentTests {
    @Test func aChildAttachedAfterCreationSavesIntoItsParent() throws {
        let stack = try makeMemoryStack()
        // doc: attach-by-hand
        let persisting = ObjectContext(concurrencyType: .privateQueueConcurrencyType, name: "persisting")
        persisting.persistentStoreCoordinator = stack.persistentStoreCoordinator
        let child = ObjectContext(concurrencyType: .privateQueueConcurrencyType, name: "child")
        child.parent = persisting
        // doc: end
        #expect(child.parent === persisting && child.persistentStoreCoordinator === stack.persistentStoreCoordinator)

        let objectID = try child.performAndWait {
            let book = try child.insertBook("Dune")
            try child.save()
            return book.objectID
        }
        // In the parent, not in the store yet.
        #expect(try persisting.performAndWait { try persisting.existingObject(with: objectID).isInserted })
        #expect(try ContextTests.storedTitles(stack).isEmpty)
        try persisting.performAndWait { try persisting.save() }
        #expect(try ContextTests.storedTitles(stack) == ["Dune"])
        // The parent's save gave the child's object its permanent ID.
        let childID = try child.performAndWait {
            try child.fetch(FetchRequest(entityName: "Book")).map(\.objectID)
        }
        #expect(childID.count == 1 && !childID[0].isTemporary)
    }

    @Test func aContextAttachedLaterMergesAutomaticallyFromItsNewCoordinator() throws {
        let stack = try makeMemoryStack()
        let reader = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.automaticallyMergesChangesFromParent = true
        reader.persistentStoreCoordinator = stack.persistentStoreCoordinator
        let book = try reader.performAndWait { try reader.fetch(FetchRequest(entityName: "Book")) }
        #expect(book.isEmpty)
        let objectID = try ContextTests.saveBooks(stack, [("Dune", 1965)])[0]
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            let book = try writer.existingObject(with: objectID)
            try book.setValue("Dune Messiah", forKey: "title")
            try writer.save()
        }
        _ = try reader.performAndWait { try reader.existingObject(with: objectID) }
        try writer.performAndWait {
            try writer.existingObject(with: objectID).setValue("Children of Dune", forKey: "title")
            try writer.save()
        }
        // The merge of the second save was enqueued on the reader's queue during that save.
        let title = try reader.performAndWait { try reader.existingObject(with: objectID).value(forKey: "title", as: String.self) }
        #expect(title == "Children of Dune")
    }

    @MainActor
    @Test func aMainQueueContextIsUsedDirectlyOnTheMainThreadAndRunsItsBlocksThere() async throws {
        let stack = try makeMemoryStack()
        let main = ObjectContext(concurrencyType: .mainQueueConcurrencyType, name: "main")
        main.persistentStoreCoordinator = stack.persistentStoreCoordinator
        #expect(main.concurrencyType == .mainQueueConcurrencyType)
        try main.insertBook("Dune") // no perform needed here
        #expect(main.hasChanges)
        let waited = try main.performAndWait { () throws -> Bool in // runs at once on the main thread
            try main.save()
            return isOnMainThreadOrQueue()
        }
        #expect(waited && !main.hasChanges)
        let ranOnMain = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            main.perform { continuation.resume(returning: isOnMainThreadOrQueue()) }
        }
        #expect(ranOnMain)
        // From another thread, performAndWait runs the block on the main queue.
        let fromElsewhere = try await Task.detached {
            try main.performAndWait { (isOnMainThreadOrQueue(), try main.count(for: FetchRequest(entityName: "Book"))) }
        }.value
        #expect(fromElsewhere.0 && fromElsewhere.1 == 1)
    }

    @Test func hasChangesIsReadableFromAnyThread() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        #expect(!context.hasChanges)
        try context.performAndWait { _ = try context.insertBook("Dune") }
        #expect(context.hasChanges)
    }

    /// In async code `context.perform { }` is the awaited form; `enqueue` is the one that returns
    /// at once, under a name that cannot be taken for it.
    @Test func enqueueFromAsyncCodeReturnsAtOnceAndRunsOnTheQueue() async throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let counted = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            context.enqueue {
                let count = (try? context.count(for: FetchRequest(entityName: "Book"))) ?? -1 // -1: recorded below
                continuation.resume(returning: count)
            }
        }
        #expect(counted == 0)
        let awaited = try await context.perform { try context.count(for: FetchRequest(entityName: "Book")) }
        #expect(awaited == 0)
    }

    @Test func aContextNotAttachedYetRefusesWorkWithATypedError() throws {
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType, name: "loose")
        #expect(context.persistentStoreCoordinator == nil && context.parent == nil)
        try context.performAndWait {
            let insert = expectError(.noStore) { _ = try context.insert(entityName: "Book") }
            #expect(insert?.message.contains("persistentStoreCoordinator") == true)
            expectError(.noStore) { _ = try context.fetch(FetchRequest(entityName: "Book")) }
            #expect(!context.hasChanges)
            try context.save() // nothing to save
        }
    }
}
