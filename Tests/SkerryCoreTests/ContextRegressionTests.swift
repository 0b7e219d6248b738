import Foundation
import Testing

@testable import SkerryCore

/// Regressions of the object core (issue 11): each test failed before its fix.
@Suite struct ContextRegressionTests {
    // MARK: A child after its parent saves

    @Test func aChildKeepsOneObjectPerRowAfterItsParentSavesRelatedInserts() throws {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let parent = stack.newBackgroundContext()
        try parent.performAndWait {
            let author = try parent.insertNamed("Author", "Le Guin")
            try parent.insertNamed("Book", "Earthsea").setRelatedObject(author, forKey: "author")
        }
        let child = parent.newChildContext()
        let bookInChild = try child.performAndWait {
            try #require(try child.fetch(FetchRequest(entityName: "Book")).first)
        }
        let authorID = try parent.performAndWait {
            try parent.save()
            return try #require(parent.registeredObjects.first { $0.entity.name == "Author" }).objectID
        }
        child.performAndWait {} // the child hears of the save on its queue
        try child.performAndWait {
            let related = try #require(try bookInChild.relatedObject(forKey: "author"))
            let byID = try child.existingObject(with: authorID)
            #expect(related === byID) // one object for the row
            #expect(related.label == "Le Guin")
            #expect(try byID.relatedObjects(forKey: "books") == [bookInChild])
            #expect(child.registeredObjects.filter { $0.entity.name == "Author" }.count == 1)
            // A change made now names the permanent IDs, and saves through the parent.
            try bookInChild.setRelatedObject(nil, forKey: "author")
            try child.save()
        }
        try parent.performAndWait {
            try parent.save()
            let author = try parent.existingObject(with: authorID)
            #expect(try author.relatedObjects(forKey: "books").isEmpty)
        }
    }

    @Test func aChildReadingThroughItsParentReportsWhatReallyFailed() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let root = stack.newBackgroundContext()
        let id = try root.performAndWait {
            let book = try root.insertBook("Dune", year: 1965)
            try root.save()
            return book.objectID
        }
        try rawSQL(directory.file("Test.sqlite"), "UPDATE \"Book\" SET \"year\" = 'not a year'")
        let child = root.newChildContext()
        try child.performAndWait { () throws in
            let fault = child.object(with: id)
            root.performAndWait { root.reset() } // the parent reads the row again
            // The row exists but cannot be decoded: that is the error, not "no such row".
            expectError(.undecodableValue) { _ = try fault.value(forKey: "title", as: String.self) }
        }
    }

    // MARK: Automatic merges never drop pending changes

    @Test(arguments: StoreKind.allCases)
    func aMergedUpdateOfARowDeletedMeanwhileKeepsThePendingChange(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let book = try context.performAndWait {
            let book = try context.insertBook("Dune")
            try context.save()
            try book.setValue("Dune (edited)", forKey: "title")
            return book
        }
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            try other.delete(try other.existingObject(with: book.objectID))
            try other.save()
        }
        try context.performAndWait { () throws in
            context.mergeChanges(StoreChanges(updated: [book.objectID])) // its refresh finds no row
            #expect(book.context === context) // not dropped...
            #expect(try book.value(forKey: "title", as: String.self) == "Dune (edited)")
            expectError(.mergeConflict) { try context.save() } // ...and the save says why
        }
    }

    @Test func aMergeWhoseRefreshFailsRecordsTheErrorAndKeepsTheChange() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let book = try context.performAndWait {
            let book = try context.insertBook("Dune", year: 1965)
            try context.save()
            try book.setValue("Dune (edited)", forKey: "title")
            return book
        }
        try rawSQL(directory.file("Test.sqlite"), "UPDATE \"Book\" SET \"year\" = 'not a year'")
        try context.performAndWait { () throws in
            context.mergeChanges(StoreChanges(updated: [book.objectID]))
            #expect(book.context === context)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune (edited)")
            #expect((context.recordedError as? SkerryError)?.code == .undecodableValue)
            expectError(.undecodableValue) { try context.save() }
        }
    }

    @Test func mergedUpdatesOfChangedObjectsAreReadInOneQueryPerEntity() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let ids = try context.performAndWait {
            let books = try (0..<20).map { try context.insertBook("Book \($0)") }
            try context.save()
            for book in books { try book.setValue(Int32(2000), forKey: "year") }
            return Set(books.map(\.objectID))
        }
        let before = stack.statistics
        try context.performAndWait { () throws in
            context.mergeChanges(StoreChanges(updated: ids))
            #expect(context.updatedObjects.count == 20)
        }
        #expect(stack.statistics.since(before).statementsExecuted == 1)
    }

    // MARK: Links that cannot be kept

    @Test(arguments: StoreKind.allCases)
    func aLinkToAnInsertDeletedBeforeItsSaveFailsTheSave(kind: StoreKind) throws {
        // Without an inverse, deleting the destination leaves the link in place.
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription("author", destination: "Author"),
                    RelationshipDescription("tags", destination: "Tag", toMany: true),
                ]),
            EntityDescription(name: "Author", attributes: [AttributeDescription("name", .string)]),
            EntityDescription(name: "Tag", attributes: [AttributeDescription("label", .string)]),
        ])
        let (stack, directory) = try makeStack(kind, model: model)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertNamed("Book", "Dune")
            let author = try context.insertNamed("Author", "Herbert")
            try book.setRelatedObject(author, forKey: "author")
            try context.delete(author) // never saved: gone at once
            let error = expectError(.relationshipViolation) { try context.save() }
            #expect(error?.key == "author")
            #expect(book.isInserted) // nothing changed
            try book.setRelatedObject(nil, forKey: "author")
            let tag = try context.insertNamed("Tag", "classic")
            try book.addRelatedObject(tag, forKey: "tags")
            try context.delete(tag)
            expectError(.relationshipViolation) { try context.save() }
            try book.setRelatedObjects([], forKey: "tags")
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Book")) } == 1)
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Author")) } == 0)
    }

    // MARK: Values out of range

    @Test func aFloatAttributeRefusesValuesBeyondAFloatsRange() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let context = stack.newBackgroundContext()
        let id = try context.performAndWait { () throws in
            let book = try context.insertBook("Heavy")
            expectError(.wrongValueType) { try book.setValue(1e300, forKey: "weight") } // a Double too big for Float
            expectError(.wrongValueType) { try book.setValue(-1e39, forKey: "weight") }
            try book.setValue(Float.greatestFiniteMagnitude, forKey: "weight")
            try book.setValue(Double.infinity, forKey: "weight") // infinity is a Float
            #expect(try book.value(forKey: "weight", as: Float.self) == .infinity)
            try book.setValue(Float(2.5), forKey: "weight")
            try context.save()
            return book.objectID
        }
        // A value written by another program is read as what it is, never as infinity.
        try rawSQL(directory.file("Test.sqlite"), "UPDATE \"Book\" SET \"weight\" = 1e300")
        let reader = stack.newBackgroundContext()
        try reader.performAndWait { () throws in
            let book = try reader.existingObject(with: id)
            expectError(.wrongValueType) { _ = try book.value(forKey: "weight", as: Float.self) }
            #expect(try book.value(forKey: "weight", as: AttributeValue.self) == .double(1e300))
        }
    }
}
