import Foundation
import Skerry
import SkerryCore
import Testing

/// The typed layer's durable IDs: an ID obtained in the perform that inserts an object, and its
/// URI or string, find the object after the store is opened again.
@Suite struct TypedDurableObjectIDTests {
    @Test func anIDObtainedInTheInsertingPerformFindsTheObjectAfterReopening() throws {
        let folder = TemporaryDirectory()
        let (uri, string) = try {
            let stack = try makeStack(in: folder.url)
            let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
            return try container.perform { context in
                let book = try context.insert(Book(title: "Dune", year: 1965))
                try context.obtainPermanentIDs(for: [book])
                #expect(!book.objectID.isTemporary)
                return (book.objectID.uriRepresentation(), book.objectID.stringRepresentation)
            }
        }()
        let stack = try makeStack(in: folder.url)
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        let (fromURI, fromString) = try container.perform { context in
            (
                try context.existingObject(with: try context.objectID(forURIRepresentation: uri), as: Book.self).decode(),
                try context.existingObject(with: try context.objectID(forStringRepresentation: string), as: Book.self).decode()
            )
        }
        #expect(fromURI == Book(title: "Dune", year: 1965) && fromString == fromURI)

        let other = try makeStack()
        let foreign = #expect(throws: SkerryError.self) {
            try PersistentContainer(managedObjectContext: { other.newBackgroundContext() }).perform { context in
                try context.objectID(forURIRepresentation: uri)
            }
        }
        #expect(foreign?.code == .unknownObjectURI)
    }
}
