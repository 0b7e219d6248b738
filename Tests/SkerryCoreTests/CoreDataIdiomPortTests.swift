import Foundation
import Testing

@testable import SkerryCore

// Core Data idioms of older and Objective-C-minded code (inserting through the entity
// description, predicate arguments as bridged Foundation objects), ported with the names page's
// renames only.

@Suite struct CoreDataIdiomPortTests {
    @Test func insertNewObjectAndPredicatesWithFoundationObjectsAsArguments() throws {
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        let id = UUID()
        let published = Date(timeIntervalSince1970: 1_000_000)
        try context.performAndWait {
            let book = try EntityDescription.insertNewObject(forEntityName: "Book", into: context)
            try book.setValue("Dune", forKey: "title")
            try book.setValue(id, forKey: "uuid")
            try book.setValue(published, forKey: "published")
            try book.setValue(Int32(1965), forKey: "year")
            try EntityDescription.insertNewObject(forEntityName: "Book", into: context).setValue("Emma", forKey: "title")
            try context.save()
            #expect(EntityDescription.entity(forEntityName: "Book", in: context)?.name == "Book")
            #expect(EntityDescription.entity(forEntityName: "Nope", in: context) == nil)
            expectError(.unknownEntity) { try EntityDescription.insertNewObject(forEntityName: "Nope", into: context) }
        }

        let arguments: [(String, Any)] = [
            ("uuid == %@", id as NSUUID),
            ("published == %@", published as NSDate),
            ("year == %@", NSNumber(value: 1965)),
            ("title == %@", "Dune" as NSString),
            ("title IN %@", ["Dune", "Ulysses"] as NSArray),
        ]
        for (format, argument) in arguments {
            var request = FetchRequest(entityName: "Book")
            request.predicate = try FetchPredicate(format: format, argument)
            let count = try context.performAndWait { try context.count(for: request) }
            #expect(count == 1, "\(format)")
        }
    }
}
