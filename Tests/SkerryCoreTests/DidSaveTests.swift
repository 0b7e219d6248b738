import Foundation
import Testing

@testable import SkerryCore

@Suite struct DidSaveTests {
    /// Saves "Dune" (and, to update and delete later, "Emma" and "Gone") and returns their IDs.
    private func seed(_ stack: PersistentStack) throws -> [ObjectID] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let books = try ["Dune", "Emma", "Gone"].map { try context.insertBook($0) }
            try context.save()
            return books.map(\.objectID)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func observersReceiveThePermanentIDsOfEverySuccessfulSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let ids = try seed(stack)
        let context = stack.newBackgroundContext()
        let events = Locked<[DidSaveEvent]>([])
        let observation = context.addDidSaveObserver { event in events.update { $0.append(event) } }
        let insertedID = try context.performAndWait {
            try context.existingObject(with: ids[1]).setValue(Int32(1815), forKey: "year")
            try context.delete(context.existingObject(with: ids[2]))
            let book = try context.insertBook("New")
            try context.save()
            try context.save() // no changes: no event
            try context.insertBook("Broken").setValue(nil as String?, forKey: "title")
            expectError(.missingRequiredValue) { try context.save() } // failed: no event
            context.rollback()
            return book.objectID
        }
        #expect(events.value.count == 1)
        let event = try #require(events.value.first)
        #expect(event.context === context)
        #expect(event.changes == StoreChanges(inserted: [insertedID], updated: [ids[1]], deleted: [ids[2]]))
        #expect(!insertedID.isTemporary)

        observation.cancel()
        try context.performAndWait {
            try context.insertBook("After")
            try context.save()
        }
        #expect(events.value.count == 1)
    }

    @Test func theStackObserverSeesEveryContextAndTheContextObserverOnlyItsOwn() throws {
        let stack = try makeMemoryStack()
        let a = stack.newBackgroundContext(), b = stack.newBackgroundContext()
        let all = Locked(0), onlyA = Locked(0)
        let stackObservation = stack.addDidSaveObserver { _ in all.update { $0 += 1 } }
        let contextObservation = a.addDidSaveObserver { _ in onlyA.update { $0 += 1 } }
        for context in [a, b, b] {
            try context.performAndWait {
                try context.insertBook("x")
                try context.save()
            }
        }
        #expect(all.value == 3)
        #expect(onlyA.value == 1)
        stackObservation.cancel()
        contextObservation.cancel()
    }

    @Test func didSaveEventsAreAnAsyncSequence() async throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let events = context.didSaveEvents
        let collector = Task {
            var counts: [Int] = []
            for await event in events {
                counts.append(event.changes.inserted.count)
                if counts.count == 2 { break }
            }
            return counts
        }
        try await context.perform {
            try context.insertBook("One")
            try context.save()
        }
        try await context.perform {
            try context.insertBook("Two")
            try context.insertBook("Three")
            try context.save()
        }
        #expect(await collector.value == [1, 2])
    }

    @Test(arguments: StoreKind.allCases)
    func mergingADidSaveKeepsTheReceiversOwnChanges(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let ids = try seed(stack)
        let receiver = stack.newBackgroundContext()
        receiver.automaticallyMergesChangesFromParent = false
        let writer = stack.newBackgroundContext()
        let event = Locked<DidSaveEvent?>(nil)
        let observation = writer.addDidSaveObserver { received in event.update { $0 = received } }
        defer { observation.cancel() }

        var held: [EntityObject] = []
        var pendingInsert: EntityObject?
        try receiver.performAndWait {
            held = try ids.map { try receiver.existingObject(with: $0) }
            try held[0].setValue(Int32(1965), forKey: "year") // unsaved change of the receiver
            pendingInsert = try receiver.insertBook("Unsaved") // unsaved insert of the receiver
        }
        try writer.performAndWait {
            try writer.existingObject(with: ids[0]).setValue("Dune (2nd ed.)", forKey: "title")
            try writer.existingObject(with: ids[1]).setValue("Emma (revised)", forKey: "title")
            try writer.delete(writer.existingObject(with: ids[2]))
            try writer.insertBook("Written elsewhere")
            try writer.save()
        }
        try receiver.performAndWait {
            #expect(try held[1].value(forKey: "title", as: String.self) == "Emma") // not merged yet
            receiver.mergeChanges(fromContextDidSave: try #require(event.value))
            #expect(try held[0].value(forKey: "title", as: String.self) == "Dune (2nd ed.)")
            #expect(try held[0].value(forKey: "year", as: Int32?.self) == 1965)
            #expect(try held[1].value(forKey: "title", as: String.self) == "Emma (revised)")
            expectError(.objectNotInContext) { _ = try held[2].value(forKey: "title", as: String.self) }
            #expect(try #require(pendingInsert).isInserted)
            let titles = try receiver.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                .map { try $0.value(forKey: "title", as: String.self) }
            #expect(titles == ["Dune (2nd ed.)", "Emma (revised)", "Unsaved", "Written elsewhere"])
            try receiver.save() // its own changes save cleanly
        }
        let year = try writer.performAndWait { try writer.existingObject(with: ids[0]).value(forKey: "year", as: Int32?.self) }
        #expect(year == 1965)
    }

    @Test func theStacksContextsMergeOtherSavesByThemselves() throws {
        let stack = try makeMemoryStack()
        let ids = try seed(stack)
        let view = stack.viewContext
        #expect(view.automaticallyMergesChangesFromParent)
        #expect(stack.newBackgroundContext().automaticallyMergesChangesFromParent)
        let held = try view.performAndWait { try ids.map { try view.existingObject(with: $0) } }
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            try writer.existingObject(with: ids[0]).setValue("Dune (2nd ed.)", forKey: "title")
            try writer.delete(writer.existingObject(with: ids[2]))
            try writer.save()
        }
        // The merge is queued on the view context's queue by the save; this block runs after it.
        try view.performAndWait {
            let title = try held[0].value(forKey: "title", as: String.self)
            #expect(title == "Dune (2nd ed.)")
            #expect(held[2].context == nil)
            #expect(view.registeredObject(for: ids[2]) == nil)
        }
    }

    @Test func turningAutomaticMergingOffLeavesTheContextAsItWas() throws {
        let stack = try makeMemoryStack()
        let ids = try seed(stack)
        let reader = stack.newBackgroundContext()
        reader.automaticallyMergesChangesFromParent = false
        #expect(!reader.automaticallyMergesChangesFromParent)
        let held = try reader.performAndWait { try reader.existingObject(with: ids[0]) }
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            try writer.existingObject(with: ids[0]).setValue("Changed", forKey: "title")
            try writer.save()
        }
        let title = try reader.performAndWait { try held.value(forKey: "title", as: String.self) }
        #expect(title == "Dune")
    }

    /// A context that saved is not kept alive by the merges other contexts still have queued:
    /// they keep the save's changes, not its event (which names the saving context). A service
    /// that makes a context per request must not keep each one until every other has merged.
    @Test func aSavingContextIsNotKeptByMergesQueuedElsewhere() throws {
        let stack = try makeMemoryStack()
        let reader = stack.newBackgroundContext()
        let held = try reader.performAndWait {
            try reader.insertBook("Dune")
            try reader.save()
            return try #require(try reader.fetch(FetchRequest(entityName: "Book")).first)
        }
        // The reader's queue is busy: the merge of the next save waits behind this block.
        let busy = DispatchSemaphore(value: 0)
        reader.perform { busy.wait() }
        weak var saved: ObjectContext?
        do {
            let writer = stack.newBackgroundContext()
            saved = writer
            try writer.performAndWait {
                let book = try #require(try writer.fetch(FetchRequest(entityName: "Book")).first)
                try book.setValue("Dune Messiah", forKey: "title")
                try writer.save()
            }
        }
        #expect(saved == nil)
        busy.signal()
        // The queued merge still arrives.
        #expect(try reader.performAndWait { try held.value(forKey: "title", as: String.self) } == "Dune Messiah")
    }
}
