import Foundation
import Skerry
import SkerryCore

/// The study's model: authors with their books.
struct Author: ManagedObjectConvertible {
    var name = ""
    static let entityName = "Author"
    static let attributes: Set<Attribute<Author>> = [Attribute(\.name, "name")]
    struct Relations {
        let books = ToManyRelation<Book>("books", inverse: "author", deleteRule: .cascade)
    }
    static let relations = Relations()
    static let entityOptions = EntityOptions<Author>().unique(\Author.name)
}

struct Book: ManagedObjectConvertible {
    var title = ""
    var year = 0
    var pages = 0
    var summary = ""
    static let entityName = "Book"
    static let attributes: Set<Attribute<Book>> = [
        Attribute(\.title, "title"), Attribute(\.year, "year"), Attribute(\.pages, "pages"), Attribute(\.summary, "summary"),
    ]
    struct Relations {
        let author = ToOneRelation<Author>("author", inverse: "books")
    }
    static let relations = Relations()
}

func studyModel() throws -> ObjectModel {
    try ObjectModel(types: [Author.self, Book.self])
}

/// A stack over the study's store.
func studyStack(_ store: StoreDescription) throws -> PersistentStack {
    let stack = PersistentStack(name: "Study", model: try studyModel())
    stack.persistentStoreDescriptions = [store]
    try stack.loadPersistentStores()
    return stack
}

/// The name of author number `index`.
func authorName(_ index: Int) -> String { "Author \(index)" }
