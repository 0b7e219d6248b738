import Foundation
import Testing

@testable import SkerryCore

@Suite struct RelationshipSmokeTests {
    @Test func oneToManyInversesPersistAndCascade() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Graph.sqlite")
        let model = GraphFixtures.model()
        do {
            let stack = PersistentStack(name: "Graph", model: model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let herbert = try context.insertNamed("Author", "Herbert")
                let dune = try context.insertNamed("Book", "Dune")
                let messiah = try context.insertNamed("Book", "Dune Messiah")
                try dune.setRelatedObject(herbert, forKey: "author")
                try herbert.addRelatedObject(messiah, forKey: "books")
                #expect(try herbert.relatedObjects(forKey: "books").map(\.label) == ["Dune", "Dune Messiah"])
                #expect(try messiah.relatedObject(forKey: "author") === herbert)
                let tag = try context.insertNamed("Tag", "sf")
                try dune.addRelatedObject(tag, forKey: "tags")
                #expect(try tag.relatedObjects(forKey: "books").map(\.label) == ["Dune"])
                try context.save()
            }
        }
        let stack = PersistentStack(name: "Graph", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.fetch(FetchRequest(entityName: "Author"))[0]
            #expect(try author.relatedObjects(forKey: "books").map(\.label).sorted() == ["Dune", "Dune Messiah"])
            let tag = try context.fetch(FetchRequest(entityName: "Tag"))[0]
            #expect(try tag.relatedObjects(forKey: "books").map(\.label) == ["Dune"])
            try context.delete(author) // cascade: the books go too
            try context.save()
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 0)
            #expect(try tag.relatedObjects(forKey: "books").isEmpty)
        }
        #expect(try rawSQL(url, "SELECT count(*) FROM _Book_tags") == [["0"]])
    }
}
