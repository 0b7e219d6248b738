import Foundation
import Testing

@testable import SkerryCore

/// Durable object IDs: URIs and string forms that name the same row after the store is opened
/// again, permanent IDs obtained before a save, and typed errors for URIs that name nothing here.
@Suite struct DurableObjectIDTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)
                ]),
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription("author", destination: "Author", inverse: "books")
                ]),
        ])
    }

    static func open(_ directory: TemporaryDirectory, name: String = "Library") throws -> PersistentStack {
        try makeFileStack(directory, model: model(), name: name)
    }

    @Test func aURIAndAStringNameTheSameRowAfterTheStoreIsOpenedAgain() throws {
        let directory = TemporaryDirectory()
        let (uri, string) = try {
            let stack = try Self.open(directory)
            let context = stack.newBackgroundContext()
            return try context.performAndWait {
                let book = try context.insert(entityName: "Book")
                try book.setValue("Dune", forKey: "title")
                try context.save()
                return (book.objectID.uriRepresentation(), book.objectID.stringRepresentation)
            }
        }()
        #expect(uri.scheme == "skerry")
        #expect(!string.contains("/") && !string.contains("%") && string.hasPrefix("Book.1."))
        #expect(string.count < uri.absoluteString.count)

        // A new stack reads the store's identifier from the file, as a new process would.
        let stack = try Self.open(directory)
        let fromURI = try stack.objectID(forURIRepresentation: uri)
        let fromString = try stack.objectID(forStringRepresentation: string)
        #expect(fromURI == fromString)
        #expect(fromURI.uriRepresentation() == uri && fromURI.stringRepresentation == string)
        let context = stack.newBackgroundContext()
        let (title, again) = try context.performAndWait {
            (
                try context.existingObject(with: fromURI).value(forKey: "title", as: String.self),
                try context.objectID(forStringRepresentation: string)
            )
        }
        #expect(title == "Dune" && again == fromURI)
    }

    @Test func aURIOfAnotherStoreIsATypedErrorThatSaysSo() throws {
        let directory = TemporaryDirectory()
        let first = try Self.open(directory, name: "First")
        let second = try Self.open(directory, name: "Second")
        let context = first.newBackgroundContext()
        let (uri, string) = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try context.save()
            return (book.objectID.uriRepresentation(), book.objectID.stringRepresentation)
        }
        let error = expectError(.unknownObjectURI) { _ = try second.objectID(forURIRepresentation: uri) }
        #expect(error?.message.contains("not loaded in this stack") == true)
        expectError(.unknownObjectURI) { _ = try second.objectID(forStringRepresentation: string) }
        #expect(second.managedObjectID(forURIRepresentation: uri) == nil)
        #expect(first.managedObjectID(forURIRepresentation: uri) != nil)
    }

    @Test func malformedAndTemporaryURIsAreTypedErrors() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.open(directory)
        let context = stack.newBackgroundContext()
        let (temporaryURI, valid) = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            let temporary = book.objectID.uriRepresentation()
            try context.save()
            return (temporary, book.objectID.uriRepresentation())
        }
        let temporary = expectError(.unknownObjectURI) { _ = try stack.objectID(forURIRepresentation: temporaryURI) }
        #expect(temporary?.message.contains("temporary") == true)
        var otherEntity = URLComponents(url: valid, resolvingAgainstBaseURL: false)!
        otherEntity.path = "/Shelf/p1"
        let entity = expectError(.unknownObjectURI) { _ = try stack.objectID(forURIRepresentation: otherEntity.url!) }
        #expect(entity?.message.contains("'Shelf'") == true)
        for text in [
            "https://example.com/Book/p1", "skerry:///Book/p1", valid.absoluteString + "/extra",
            valid.absoluteString.replacingOccurrences(of: "/p1", with: "/p"),
            valid.absoluteString.replacingOccurrences(of: "/p1", with: "/p99999999999999999999"),
            valid.absoluteString + "?x=1",
        ] {
            expectError(.unknownObjectURI) { _ = try stack.objectID(forURIRepresentation: URL(string: text)!) }
        }
        for text in [
            "", "Book", "Book.1", "Book.x.AAAAAAAAAAAAAAAAAAAAAA", "Book.1.short", "Book.1.~%%", ".1.AAAAAAAAAAAAAAAAAAAAAA",
            "Book.1.AAAAAAAAAAAAAAAAAAAAAA.x", "Book.-1.AAAAAAAAAAAAAAAAAAAAAA",
        ] {
            expectError(.unknownObjectURI) { _ = try stack.objectID(forStringRepresentation: text) }
        }
        // A well-formed string of a store never loaded here.
        expectError(.unknownObjectURI) { _ = try stack.objectID(forStringRepresentation: "Book.1.AAAAAAAAAAAAAAAAAAAAAA") }
    }

    @Test func aURIOfADeletedRowIsFoundButItsObjectIsNot() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.open(directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try context.save()
            let uri = book.objectID.uriRepresentation()
            try context.delete(book)
            try context.save()
            let objectID = try stack.objectID(forURIRepresentation: uri)
            expectError(.objectNotFound) { _ = try context.existingObject(with: objectID) }
        }
    }

    @Test func obtainedPermanentIDsStayTheObjectsIDsAfterTheSave() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.open(directory)
        // doc: durable-ids
        let context = stack.newBackgroundContext()
        let (uri, token) = try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try context.obtainPermanentIDs(for: [book]) // permanent before the save
            try context.save()
            return (
                book.objectID.uriRepresentation(), // skerry://<store>/Book/p1
                book.objectID.stringRepresentation
            ) // Book.1.<store>, for a service's API
        }

        // Later, in this process or after a restart:
        let objectID = try stack.objectID(forURIRepresentation: uri)
        let same = try stack.objectID(forStringRepresentation: token) // == objectID
        // doc: end
        #expect(objectID.key == 1 && same == objectID)
        let (authorURI, bookIDs) = try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            let books = try ["Dune", "Children of Dune"].map { title in
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setRelatedObject(author, forKey: "author")
                return book
            }
            try context.obtainPermanentIDs(for: [author] + books + [author])
            #expect(!author.objectID.isTemporary && books.allSatisfy { !$0.objectID.isTemporary })
            #expect(author.isInserted && context.hasChanges)
            #expect(context.object(with: author.objectID) === author)
            let ids = books.map(\.objectID)
            let uri = author.objectID.uriRepresentation()
            try context.save()
            #expect(books.map(\.objectID) == ids)
            #expect(author.objectID.uriRepresentation() == uri)
            return (uri, ids)
        }
        // Another stack over the same file, as after a restart: the URI and the links hold.
        let reopened = try Self.open(directory)
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let author = try reader.existingObject(with: reopened.objectID(forURIRepresentation: authorURI))
            #expect(try author.value(forKey: "name", as: String.self) == "Herbert")
            let titles = try author.relatedObjects(forKey: "books").map { try $0.value(forKey: "title", as: String.self) }
            #expect(Set(titles) == ["Dune", "Children of Dune"])
            #expect(
                try reader.existingObject(with: reopened.objectID(forURIRepresentation: uri)).value(forKey: "title", as: String.self)
                    == "Dune")
            #expect(
                Set(try author.relatedObjects(forKey: "books").map(\.objectID.stringRepresentation))
                    == Set(bookIDs.map(\.stringRepresentation)))
            // Keys reserved before are never given again.
            let later = try reader.insert(entityName: "Book")
            try later.setValue("Dune Messiah", forKey: "title")
            try reader.save()
            #expect(!bookIDs.map(\.key).contains(later.objectID.key))
        }
    }

    @Test func reservedKeysOfObjectsNeverSavedAreNotReused() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.open(directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let abandoned = try context.insert(entityName: "Book")
            try abandoned.setValue("Abandoned", forKey: "title")
            try context.obtainPermanentIDs(for: [abandoned])
            let reserved = abandoned.objectID
            context.rollback()
            let saved = try context.insertBook(withTitle: "Kept")
            try context.save()
            #expect(saved.objectID.key > reserved.key)
            expectError(.objectNotFound) { _ = try context.existingObject(with: reserved) }
        }
    }

    @Test func anObjectOfAnotherContextIsRefusedAndNothingChanges() throws {
        let stack = try makeMemoryStack(model: Self.model())
        let first = stack.newBackgroundContext()
        let second = stack.newBackgroundContext()
        let book = try first.performAndWait {
            let book = try first.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            return book
        }
        try second.performAndWait {
            let own = try second.insert(entityName: "Book")
            try own.setValue("Emma", forKey: "title")
            expectError(.objectNotInContext) { try second.obtainPermanentIDs(for: [own, book]) }
            #expect(own.objectID.isTemporary)
        }
    }

    @Test func aChildsObtainedIDIsTheRowsIDOnceTheParentSaves() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.open(directory)
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        let objectID = try child.performAndWait {
            let book = try child.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try child.obtainPermanentIDs(for: [book])
            try child.save()
            return book.objectID
        }
        try parent.performAndWait {
            #expect(parent.object(with: objectID).isInserted)
            try parent.save()
        }
        let reader = stack.newBackgroundContext()
        let title = try reader.performAndWait {
            try reader.existingObject(with: objectID).value(forKey: "title", as: String.self)
        }
        #expect(title == "Dune")
    }
}

private extension ObjectContext {
    func insertBook(withTitle title: String) throws -> EntityObject {
        let book = try insert(entityName: "Book")
        try book.setValue(title, forKey: "title")
        return book
    }
}
