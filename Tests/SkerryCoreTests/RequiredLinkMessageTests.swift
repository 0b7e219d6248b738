import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore

/// The message of a migration step with code that leaves a required to-one relationship empty
/// says what may have left it so as it is, for each way the relationship came from the version
/// left: required there (to-one or to-many: every row had a link, so the step alone), optional
/// there, to-many and possibly empty there, new in this version (linked by its inverse's old
/// links or the step's code), or with a destination whose old objects it cannot hold.
@Suite struct RequiredLinkMessageTests {
    /// Opens `url` with `versions` (the last one current) through one step that keeps every row
    /// `keeps` accepts, and returns the error the migration fails with.
    private static func migrationError(
        _ url: URL, _ versions: [ObjectModel], keeps: @escaping @Sendable (String, MigrationRow) -> Bool = { _, _ in true }
    ) -> SkerryError? {
        let stack = PersistentStack(name: "Links", model: versions[versions.count - 1])
        var description = StoreDescription(url: url)
        description.migrationPlan = MigrationPlan(versions: versions, steps: [MigrationStep(from: 0, keepsRow: keeps)])
        stack.persistentStoreDescriptions = [description]
        let error = expectError(.modelMismatch) { try stack.loadPersistentStores() }
        #expect((error?.underlyingError as? SkerryError)?.code == .missingRequiredValue, "\(String(describing: error))")
        return error
    }

    /// Saves, with `model`, the objects `fill` inserts into a new store at `url`.
    private static func populate(_ url: URL, _ model: ObjectModel, _ fill: (ObjectContext) throws -> Void) throws {
        let stack = PersistentStack(name: "Links", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try fill(context)
            try context.save()
        }
        try stack.persistentStoreCoordinator.remove(stack.persistentStoreCoordinator.persistentStores[0])
    }

    /// Readers, each with the books `favorites` names, in a version where `Reader.favorites` is
    /// to-many (required: at least one book, or optional).
    private static func readers(_ url: URL, required: Bool, favorites: [String: [String]]) throws -> ObjectModel {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Reader", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("favorites", destination: "Book", toMany: true, isOptional: !required)]),
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)]),
        ])
        try populate(url, model) { context in
            var books: [String: EntityObject] = [:]
            for title in Set(favorites.values.joined()).sorted() {
                books[title] = try context.insert(entityName: "Book")
                try books[title]?.setValue(title, forKey: "title")
            }
            for (name, titles) in favorites.sorted(by: { $0.key < $1.key }) {
                let reader = try context.insert(entityName: "Reader")
                try reader.setValue(name, forKey: "name")
                try reader.setRelatedObjects(titles.map { books[$0]! }, forKey: "favorites")
            }
        }
        return model
    }

    /// The version where each reader has one required favorite (`favorites` renamed).
    private static func oneFavorite() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Reader", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("favorite", destination: "Book", isOptional: false, renamingIdentifier: "favorites")
                ]),
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)]),
        ])
    }

    /// A required to-many relationship becomes a required to-one: every reader had a favorite,
    /// so only the step (which left Emma out) emptied Bo's; the message blames the step alone,
    /// not "optional in the version left" (it was not).
    @Test func aRequiredToManyThatBecomesToOneIsEmptiedByTheStepAlone() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Required.sqlite")
        let old = try Self.readers(url, required: true, favorites: ["Ann": ["Dune"], "Bo": ["Emma"]])
        let error = Self.migrationError(url, [old, try Self.oneFavorite()]) { entity, row in
            entity != "Book" || row["title"] != .string("Emma")
        }
        let message = error?.message ?? ""
        #expect(message.contains("the required relationship 'Reader.favorite' is empty in 1 row(s)"), "\(message)")
        #expect(message.contains("the objects it linked to were left out"), "\(message)")
        #expect(!message.contains("optional in the version left"), "\(message)")
        #expect(!message.contains("had no link before the step"), "\(message)")
    }

    /// An optional to-many relationship becomes a required to-one: Bo had no favorite, and the
    /// message says the relationship was to-many there and could be empty.
    @Test func anOptionalToManyThatBecomesToOneMayHaveBeenEmptyBefore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Optional.sqlite")
        let old = try Self.readers(url, required: false, favorites: ["Ann": ["Dune"], "Bo": []])
        let message = Self.migrationError(url, [old, try Self.oneFavorite()])?.message ?? ""
        #expect(message.contains("is empty in 1 row(s)"), "\(message)")
        #expect(
            message.contains(
                "it was to-many in the version left ('Reader.favorites'), where an object could have no related object, so these may be rows that had no link before the step"
            ), "\(message)")
    }

    /// A required relationship new in this version (`Note.home`, no old relationship maps to
    /// it) whose inverse (`Folder.notes`) carried n1's link from the version left: the message
    /// says it is new and where its links come from, not that it carries no links (n1's came).
    @Test func aNewRelationshipLinkedThroughItsInverseSaysWhereItsLinksComeFrom() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("New.sqlite")
        func model(_ toOne: String, required: Bool) throws -> ObjectModel {
            try ObjectModel(entities: [
                EntityDescription(
                    name: "Folder", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("notes", destination: "Note", inverse: toOne, toMany: true)]),
                EntityDescription(
                    name: "Note", attributes: [AttributeDescription("text", .string)],
                    relationships: [RelationshipDescription(toOne, destination: "Folder", inverse: "notes", isOptional: !required)]),
            ])
        }
        let old = try model("folder", required: false)
        try Self.populate(url, old) { context in
            let folder = try context.insert(entityName: "Folder")
            try folder.setValue("F1", forKey: "name")
            for text in ["n1", "n2"] { try context.insert(entityName: "Note").setValue(text, forKey: "text") }
            let n1 = try #require(try context.fetch(FetchRequest(entityName: "Note", predicate: AttributeKey("text") == "n1")).first)
            try n1.setRelatedObject(folder, forKey: "folder")
        }
        let message = Self.migrationError(url, [old, try model("home", required: true)])?.message ?? ""
        #expect(message.contains("the required relationship 'Note.home' is empty in 1 row(s)"), "\(message)")
        #expect(
            message.contains(
                "it is new in this version (no relationship of the version left maps to it), so a row has a link only where the step's code gave it one"
            ), "\(message)")
        #expect(message.contains("or where its inverse linked the row in the version left"), "\(message)")
        #expect(!message.contains("carries no links"), "\(message)")
    }

    /// A required relationship whose destination changed to an entity the old objects did not
    /// become (`Reader.favorite` from Book to Magazine): no link is carried, and the message
    /// says so rather than blaming the step's code, which kept every row.
    @Test func aRequiredRelationshipWhoseDestinationChangedSaysItsLinksWereNotCarried() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Destination.sqlite")
        func model(favorite destination: String) throws -> ObjectModel {
            try ObjectModel(entities: [
                EntityDescription(
                    name: "Reader", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("favorite", destination: destination, isOptional: false)]),
                EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)]),
                EntityDescription(name: "Magazine", attributes: [AttributeDescription("title", .string)]),
            ])
        }
        let old = try model(favorite: "Book")
        try Self.populate(url, old) { context in
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            let reader = try context.insert(entityName: "Reader")
            try reader.setValue("Ann", forKey: "name")
            try reader.setRelatedObject(book, forKey: "favorite")
        }
        let message = Self.migrationError(url, [old, try model(favorite: "Magazine")])?.message ?? ""
        #expect(message.contains("the required relationship 'Reader.favorite' is empty in 1 row(s)"), "\(message)")
        #expect(
            message.contains(
                "its destination changed (it linked to 'Book' objects in the version left, which are not 'Magazine' objects now), so those links were not carried"
            ), "\(message)")
    }
}
