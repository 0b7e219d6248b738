import Foundation

@testable import SkerryCore

/// A model with every kind of relationship:
/// Author.books (to-many, cascade) <-> Book.author (to-one, nullify);
/// Book.tags (to-many) <-> Tag.books (to-many): a join table;
/// Shelf.items (ordered to-many) <-> Book.shelf (to-one);
/// Author.portrait (to-one) <-> Portrait.author (to-one);
/// Publisher.authors (to-many, deny) <-> Author.publisher (to-one).
enum GraphFixtures {
    /// How the model has tags, for the migration tests: related to books (the full model),
    /// without the Book.tags <-> Tag.books relationship, or without the Tag entity at all.
    enum Tags {
        case related, unrelated, absent
    }

    static func model(tags: Tags = .related) -> ObjectModel {
        let related = tags == .related
        let entities = [
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
                    related ? RelationshipDescription("tags", destination: "Tag", inverse: "books", toMany: true) : nil,
                    RelationshipDescription("shelf", destination: "Shelf", inverse: "items"),
                ].compactMap { $0 }),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: related ? [RelationshipDescription("books", destination: "Book", inverse: "tags", toMany: true)] : []),
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
        ]
        return try! ObjectModel(entities: entities.filter { tags != .absent || $0.name != "Tag" })
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
