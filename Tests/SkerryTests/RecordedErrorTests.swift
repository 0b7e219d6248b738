import Foundation
import Skerry
import SkerryCore
import Testing

/// Calls whose signature cannot throw (a to-one relation's getter and setter, iterating a relation)
/// record the error they meet on the context; the enclosing perform fails with it, logs it once,
/// and saves nothing.
@Suite struct RecordedErrorTests {
    private func stack() throws -> PersistentStack {
        let stack = PersistentStack(
            name: "Recorded", model: try ObjectModel(types: [Writer.self, Work.self, Picture.self, Anthology.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        return stack
    }

    /// Saves a writer with one work; returns their IDs.
    private func seed(_ stack: PersistentStack) throws -> (writer: ObjectID, work: ObjectID) {
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            let writer = try context.insert(Writer(name: "Lem"))
            writer.works.add(try context.insert(Work(title: "Solaris")))
        }
        return try container.perform { context in
            (try #require(try context.fetchOne(Writer.all)).objectID, try #require(try context.fetchOne(Work.all)).objectID)
        }
    }

    /// Deletes the row of `objectID` from another context, behind the back of the perform's context.
    private func deleteBehindTheBack(_ stack: PersistentStack, _ objectID: ObjectID) throws {
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            try other.delete(try other.existingObject(with: objectID))
            try other.save()
        }
    }

    /// The number of works in the store, read by a fresh context.
    private func storedWorks(_ stack: PersistentStack) throws -> Int {
        try PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }).perform { try $0.count(of: Work.all) }
    }

    @Test func aToOneGetterThatFailsFailsThePerformAndSavesNothing() throws {
        let stack = try stack()
        let ids = try seed(stack)
        let errors = RecordedErrors()
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let container = PersistentContainer(managedObjectContext: { context }, logError: errors.handler)
        var writerSeen: Bool?
        #expect(throws: SkerryError.self) {
            try container.perform { context in
                let work = try context.existingObject(with: ids.work, as: Work.self)
                try context.insert(Work(title: "Not saved"))
                try deleteBehindTheBack(stack, ids.work)
                try context.instance.refresh(work.instance, mergeChanges: false) // its row must be read again
                writerSeen = work.writer != nil // cannot throw: recorded
            }
        }
        #expect(writerSeen == false)
        #expect(errors.all.count == 1)
        #expect((errors.all.first as? SkerryError)?.code == .objectNotFound)
        #expect(try storedWorks(stack) == 0) // the insert was not saved
    }

    @Test func aToOneSetterThatFailsFailsThePerformAndSavesNothing() throws {
        let stack = try stack()
        let ids = try seed(stack)
        let otherContext = stack.newBackgroundContext()
        let other = PersistentContainer(managedObjectContext: { otherContext }, cleanUpAfterExecution: false)
        let foreign = try other.perform { try $0.insert(Writer(name: "Of another context")) }
        let errors = RecordedErrors()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }, logError: errors.handler)
        #expect(throws: SkerryError.self) {
            try container.perform { context in
                let work = try context.existingObject(with: ids.work, as: Work.self)
                work.encode(Work(title: "Renamed, not saved"))
                work.writer = foreign // cannot throw: recorded
            }
        }
        #expect(errors.all.count == 1)
        #expect((errors.all.first as? SkerryError)?.code == .objectNotInContext)
        let title = try PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
            .perform { try $0.existingObject(with: ids.work, as: Work.self).decode().title }
        #expect(title == "Solaris")
    }

    @Test func iteratingARelationThatFailsFailsThePerformAndSavesNothing() throws {
        let stack = try stack()
        let ids = try seed(stack)
        let errors = RecordedErrors()
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let container = PersistentContainer(managedObjectContext: { context }, logError: errors.handler)
        var iterated = -1
        #expect(throws: SkerryError.self) {
            try container.perform { context in
                let writer = try context.existingObject(with: ids.writer, as: Writer.self)
                try context.insert(Work(title: "Not saved"))
                try deleteBehindTheBack(stack, ids.writer) // cascades to its work
                try context.instance.refresh(writer.instance, mergeChanges: false)
                iterated = 0
                for _ in writer.works { iterated += 1 } // cannot throw: recorded
            }
        }
        #expect(iterated == 0)
        #expect(errors.all.count == 1)
        #expect((errors.all.first as? SkerryError)?.code == .objectNotFound)
        #expect(try storedWorks(stack) == 0)
    }

    @Test func aPerformWhoseWorkHandledTheErrorItselfSaves() throws {
        let stack = try stack()
        let ids = try seed(stack)
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            let writer = try context.existingObject(with: ids.writer, as: Writer.self)
            writer.encode(Writer(name: "Stanisław Lem"))
            // The throwing form reports the error where it happens and records nothing.
            #expect(throws: SkerryError.self) { try writer.works.objects().first?.instance.setValue(Int64(1), forKey: "missing") }
            #expect(context.instance.recordedError == nil)
        }
        let name = try container.perform { try $0.existingObject(with: ids.writer, as: Writer.self).decode().name }
        #expect(name == "Stanisław Lem")
    }
}
