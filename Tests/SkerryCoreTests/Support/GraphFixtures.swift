import Foundation

@testable import SkerryCore

/// A model with every kind of relationship:
/// Author.books (to-many, cascade) <-> Book.author (to-one, nullify);
/// Book.tags (to-many) <-> Tag.books (to-many): a join table;
/// Shelf.items (ordered to-many) <-> Book.shelf (to-one);
/// Author.portrait (to-one) <-> Portrait.author (to-one);
/// Publisher.authors (to-many, deny) <-> Author.publisher (to-one).
enum GraphFixtures {
    static func model() -> ObjectModel {
        try! ObjectModel(entities: [
            EntityDescription(
                name: "Author", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true, deleteRule: .cascade),
                    RelationshipDescription("portrait", destination: "Portrait", inverse: "author"),
                    RelationshipDescription("publisher", destination: "Publisher", inverse: "authors"),
                ]),
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription("author", destination: "Author", inverse: "books"),
                    RelationshipDescription("tags", destination: "Tag", inverse: "books", toMany: true),
                    RelationshipDescription("shelf", destination: "Shelf", inverse: "items"),
                ]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "tags", toMany: true)
                ]),
            EntityDescription(
                name: "Shelf", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("items", destination: "Book", inverse: "shelf", toMany: true, ordered: true)
                ]),
            EntityDescription(
                name: "Portrait", attributes: [AttributeDescription("file", .string)],
                relationships: [
                    RelationshipDescription("author", destination: "Author", inverse: "portrait")
                ]),
            EntityDescription(
                name: "Publisher", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("authors", destination: "Author", inverse: "publisher", toMany: true, deleteRule: .deny)
                ]),
        ])
    }
}

extension ObjectContext {
    /// Inserts an object of `entity` with its one string attribute set.
    @discardableResult
    func insertNamed(_ entity: String, _ value: String) throws -> EntityObject {
        let object = try insert(entityName: entity)
        let key = object.entity.attributes[0].name
        try object.setValue(value, forKey: key)
        return object
    }
}

extension EntityObject {
    /// The one string attribute of a graph fixture object.
    var label: String { (try? value(at: 0, as: String.self)) ?? "?" }
}
