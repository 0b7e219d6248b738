import SkerryCore

/// Suites over the Item hierarchy, on any kind of store: an abstract Item with a `code` (unique
/// across the hierarchy unless `constrained` is false) and its sub-entities Book and Film (and,
/// with `ebooks`, Book's sub-entity Ebook), each in a table of its own. A suite adopts it for
/// the model and the helpers below (`Self.model()`, `Self.insert`, `Self.codes`).
public protocol ItemHierarchyFixture {}

extension ItemHierarchyFixture {
    public static func model(constrained: Bool = true, ebooks: Bool = false) throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription("code", .string, isOptional: true)],
            uniquenessConstraints: constrained ? [["code"]] : [], isAbstract: true)
        let book = EntityDescription(
            name: "Book", attributes: [AttributeDescription("pages", .integer32, isOptional: true)], superentity: item)
        let film = EntityDescription(
            name: "Film", attributes: [AttributeDescription("minutes", .integer32, isOptional: true)], superentity: item)
        let ebook = EntityDescription(
            name: "Ebook", attributes: [AttributeDescription("size", .integer64, isOptional: true)], superentity: book)
        return try ObjectModel(entities: [item, book, film] + (ebooks ? [ebook] : []))
    }

    /// Inserts an object of `entity` with `code` (none when nil).
    @discardableResult
    public static func insert(_ entity: String, _ code: String?, in context: ObjectContext) throws -> EntityObject {
        let object = try context.insert(entityName: entity)
        try object.setValue(code.map(AttributeValue.string) ?? .null, forKey: "code")
        return object
    }

    /// The codes of the objects of `entity` (and its sub-entities) that have one, in order.
    public static func codes(_ entity: String, in stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: entity, sortKeys: [SortKey("code")])).compactMap {
                try $0.value(forKey: "code", as: String?.self)
            }
        }
    }
}
