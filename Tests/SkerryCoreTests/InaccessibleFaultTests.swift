import Foundation
import Testing

@testable import SkerryCore

/// Deleting an object whose row another context deleted meanwhile is not an error, as in Core
/// Data (`shouldDeleteInaccessibleFaults`).
@Suite struct InaccessibleFaultTests {
    /// An author with two books saved; a context holding the author and its books as faults; the
    /// books' rows then deleted by another context.
    private func setUp() throws -> (PersistentStack, ObjectContext, author: ObjectID, books: [ObjectID]) {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let setup = stack.newBackgroundContext()
        let (author, books) = try setup.performAndWait {
            let author = try setup.insertNamed("Author", "Herbert")
            for title in ["Dune", "Dune Messiah"] { try setup.insertNamed("Book", title).setRelatedObject(author, forKey: "author") }
            try setup.save()
            return (author.objectID, try author.relatedObjects(forKey: "books").map(\.objectID))
        }
        let context = stack.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = false
        let loaded = try context.performAndWait {
            try context.existingObject(with: author).relatedObjects(forKey: "books")
        }
        #expect(loaded.count == 2)
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            for id in books { try other.delete(try other.existingObject(with: id)) }
            try other.save()
        }
        return (stack, context, author, books)
    }

    @Test func deletingAnObjectDeletedElsewhereSucceeds() throws {
        let (stack, context, authorID, bookIDs) = try setUp()
        try context.performAndWait {
            let author = try context.existingObject(with: authorID)
            for book in try author.relatedObjects(forKey: "books") {
                try context.delete(book)
                #expect(book.isDeleted)
            }
            #expect(
                context.deletedObjects.map(\.objectID).sorted { $0.description < $1.description }
                    == bookIDs.sorted { $0.description < $1.description })
            #expect(try author.relatedObjects(forKey: "books").isEmpty)
            #expect(!author.hasChanges) // the store no longer links them: no change of its own
            try context.save()
            #expect(context.registeredObject(for: bookIDs[0]) == nil)
        }
        let reader = stack.newBackgroundContext()
        let count = try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Book")) }
        #expect(count == 0)
    }

    @Test func removingAnObjectDeletedElsewhereFromARelationshipSucceeds() throws {
        let (_, context, authorID, _) = try setUp()
        // The other context's deletes changed the author's row (its books): adding a book to it
        // conflicts under the default policy, as any change of a row changed meanwhile does.
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait {
            let author = try context.existingObject(with: authorID)
            let books = try author.relatedObjects(forKey: "books")
            for book in books { try author.removeRelatedObject(book, forKey: "books") }
            #expect(books.allSatisfy { $0.isDeleted })
            let newBook = try context.insertNamed("Book", "Children of Dune")
            try author.addRelatedObject(newBook, forKey: "books")
            try context.save()
            #expect(try author.relatedObjects(forKey: "books").map(\.label) == ["Children of Dune"])
        }
    }

    /// Reads are not deletes: reading a vanished row is still an error, never a made-up value.
    @Test func readingAnObjectDeletedElsewhereStillFails() throws {
        let (_, context, authorID, bookIDs) = try setUp()
        context.performAndWait {
            let fault = context.object(with: bookIDs[0])
            expectError(.objectNotFound) { _ = try fault.value(forKey: "title", as: String.self) }
            expectError(.objectNotFound) { _ = try context.existingObject(with: bookIDs[1]) }
            #expect(!fault.isDeleted)
            _ = authorID
        }
    }

    @Test func theCoreDataSwitchTurnsItOff() throws {
        let (_, context, authorID, _) = try setUp()
        context.shouldDeleteInaccessibleFaults = false
        context.performAndWait {
            let books = (try? context.existingObject(with: authorID).relatedObjects(forKey: "books")) ?? []
            #expect(books.count == 2)
            for book in books { expectError(.objectNotFound) { try context.delete(book) } }
        }
    }
}
