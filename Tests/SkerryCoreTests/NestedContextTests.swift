import Foundation
import Testing

@testable import SkerryCore

@Suite struct NestedContextTests {
    private func titles(_ context: ObjectContext) throws -> [String] {
        try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                .map { try $0.value(forKey: "title", as: String.self) }
        }
    }

    /// The titles in the store, read by a fresh context of the stores.
    private func storedTitles(_ stack: PersistentStack) throws -> [String] {
        try titles(stack.newBackgroundContext())
    }

    @Test(arguments: StoreKind.allCases)
    func aChildSeesItsParentsUnsavedState(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let parent = stack.newBackgroundContext()
        try parent.performAndWait {
            let keep = try parent.insertBook("Kept")
            let gone = try parent.insertBook("Gone")
            try parent.insertBook("Renamed")
            try parent.save()
            try parent.delete(gone)
            try keep.setValue(Int32(1999), forKey: "year")
            try parent.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Renamed"))[0]
                .setValue("Renamed (unsaved)", forKey: "title")
            try parent.insertBook("Inserted (unsaved)")
        }
        let child = parent.newChildContext()
        #expect(child.parent === parent)
        #expect(try titles(child) == ["Inserted (unsaved)", "Kept", "Renamed (unsaved)"])
        let year = try child.performAndWait {
            try child.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Kept"))[0]
                .value(forKey: "year", as: Int32?.self)
        }
        #expect(year == 1999)
        #expect(try storedTitles(stack) == ["Gone", "Kept", "Renamed"])
    }

    @Test(arguments: StoreKind.allCases)
    func aChildSaveMovesItsChangesOneLevelUpAndTheParentSaveWritesThem(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let parent = stack.newBackgroundContext()
        try parent.performAndWait {
            try parent.insertBook("Dune")
            try parent.insertBook("Emma")
            try parent.save()
        }
        let child = parent.newChildContext()
        let changes = try child.performAndWait {
            let books = try child.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            try books[0].setValue("Dune (child)", forKey: "title")
            try child.delete(books[1])
            let new = try child.insertBook("New")
            #expect(try child.count(for: FetchRequest(entityName: "Book")) == 2) // the child's own view
            let changes = try child.save()
            #expect(!child.hasChanges)
            #expect(new.objectID.isTemporary) // the parent holds the insert, unsaved
            return changes
        }
        #expect(changes.inserted.count == 1 && changes.updated.count == 1 && changes.deleted.count == 1)
        // One level up only: the store has not changed, the parent has pending changes.
        #expect(try storedTitles(stack) == ["Dune", "Emma"])
        try parent.performAndWait {
            #expect(parent.hasChanges)
            #expect(parent.insertedObjects.count == 1 && parent.updatedObjects.count == 1 && parent.deletedObjects.count == 1)
            try parent.save()
        }
        #expect(try storedTitles(stack) == ["Dune (child)", "New"])
    }

    @Test func aParentDoesNotSeeItsChildsUnsavedChanges() throws {
        let stack = try makeMemoryStack()
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        try child.performAndWait { try child.insertBook("Unsaved in child") }
        #expect(try titles(parent) == [])
        #expect(try titles(child) == ["Unsaved in child"])
    }

    @Test(arguments: StoreKind.allCases)
    func temporaryIDsResolveAcrossTheChain(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        let temporaryID = try child.performAndWait {
            let book = try child.insertBook("Dune")
            try child.save()
            return book.objectID
        }
        // The parent finds the child's insert by its temporary ID.
        let permanentID = try parent.performAndWait {
            #expect(try parent.existingObject(with: temporaryID).value(forKey: "title", as: String.self) == "Dune")
            try parent.save()
            return try parent.fetchObjectIDs(FetchRequest(entityName: "Book"))[0]
        }
        #expect(!permanentID.isTemporary)
        // The child's object now carries the permanent ID, and can be changed and saved again.
        try child.performAndWait {
            let object = try #require(child.registeredObject(for: permanentID))
            #expect(object.objectID == permanentID)
            #expect(child.registeredObject(for: temporaryID) == nil)
            try object.setValue(Int32(1965), forKey: "year")
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        let reader = stack.newBackgroundContext()
        let year = try reader.performAndWait {
            try reader.existingObject(with: permanentID).value(forKey: "year", as: Int32?.self)
        }
        #expect(year == 1965)
    }

    /// The design documents' nested stack: the main context is a child of a private context that
    /// persists, and one `save()` saves both.
    @Test func theNestedStackOfTheDesignDocuments() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Nested.sqlite")
        do {
            let stack = PersistentStack(name: "Nested", model: Fixtures.model())
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let persisting = stack.newBackgroundContext()
            let main = persisting.newChildContext(name: "main")
            func save() throws {
                try main.performAndWait { try main.save() }
                try persisting.performAndWait { try persisting.save() }
            }
            try main.performAndWait {
                try main.insertBook("Dune", year: 1965)
                try main.insertBook("Solaris", year: 1961)
            }
            try save()
            try main.performAndWait {
                let dune = try main.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune"))[0]
                try dune.setValue(Int32(1966), forKey: "year")
            }
            try save()
        }
        // Reopened: both saves reached the file.
        let stack = PersistentStack(name: "Nested", model: Fixtures.model())
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let years = try stack.viewContext.performAndWait {
            try stack.viewContext.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                .map { try $0.value(forKey: "year", as: Int32?.self) }
        }
        #expect(years == [1966, 1961])
    }

    /// The Skopelos chain: a root private context writes to the store, the main context (its
    /// child) is the source of truth for reads, and each write runs on a short-lived child of main
    /// whose save travels up the chain.
    @Test func theSkopelosChain() async throws {
        let stack = try makeMemoryStack()
        let root = stack.newBackgroundContext()
        let main = root.newChildContext(name: "main")
        func saveUpTheChain(from writer: ObjectContext) throws {
            try writer.performAndWait { try writer.save() }
            try main.performAndWait { try main.save() }
            try root.performAndWait { try root.save() }
        }
        // writeSync
        let writer = main.newChildContext(name: "write")
        try writer.performAndWait { try writer.insertBook("Dune", year: 1965) }
        try saveUpTheChain(from: writer)
        // writeAsync
        let asyncWriter = main.newChildContext(name: "write")
        try await asyncWriter.perform { _ = try asyncWriter.insertBook("Solaris", year: 1961) }
        try saveUpTheChain(from: asyncWriter)
        // read on main, the source of truth
        #expect(try titles(main) == ["Dune", "Solaris"])
        #expect(try storedTitles(stack) == ["Dune", "Solaris"])
        // A later writer sees what main holds, edits it, and the edit reaches the store.
        let editor = main.newChildContext(name: "write")
        try editor.performAndWait {
            try editor.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") == "Dune"))[0]
                .setValue("Dune (edited)", forKey: "title")
        }
        try saveUpTheChain(from: editor)
        #expect(try titles(main) == ["Dune (edited)", "Solaris"])
        #expect(try storedTitles(stack) == ["Dune (edited)", "Solaris"])
    }

    @Test func aRefusedChildSaveChangesNeitherContext() throws {
        let stack = try makeMemoryStack()
        let parent = stack.newBackgroundContext()
        let id = try parent.performAndWait {
            let book = try parent.insertBook("Dune")
            try parent.save()
            return book.objectID
        }
        let child = parent.newChildContext()
        try child.performAndWait {
            try child.existingObject(with: id).setValue("Dune (child)", forKey: "title")
            try child.insertBook("New")
        }
        // The row disappears behind the parent's back, and the parent has not loaded it.
        parent.performAndWait { parent.reset() }
        let cleaner = stack.newBackgroundContext()
        let deleted = try cleaner.performAndWait { try cleaner.execute(BatchDeleteRequest(entityName: "Book")).count }
        #expect(deleted == 1)
        child.performAndWait {
            expectError(.objectNotFound) { try child.save() }
            #expect(child.hasChanges)
            #expect(child.insertedObjects.count == 1)
        }
        #expect(!parent.performAndWait { parent.hasChanges })
    }

    @Test func aChildThatMergesSeesItsSiblingsSavesIntoTheParent() throws {
        let stack = try makeMemoryStack()
        let parent = stack.newBackgroundContext()
        let id = try parent.performAndWait {
            let book = try parent.insertBook("Dune")
            try parent.save()
            return book.objectID
        }
        let reader = parent.newChildContext()
        reader.automaticallyMergesChangesFromParent = true
        let held = try reader.performAndWait { try reader.existingObject(with: id) }
        let sibling = parent.newChildContext()
        try sibling.performAndWait {
            try sibling.existingObject(with: id).setValue("Dune (sibling)", forKey: "title")
            try sibling.save()
        }
        let title = try reader.performAndWait { try held.value(forKey: "title", as: String.self) }
        #expect(title == "Dune (sibling)")
        // Stores' contexts do not merge a child's save into its parent: it is not in the store yet.
        let other = try stack.viewContext.performAndWait {
            try stack.viewContext.existingObject(with: id).value(forKey: "title", as: String.self)
        }
        #expect(other == "Dune")
    }
}
