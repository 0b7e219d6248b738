import SkerryCore
import Testing

/// People who are friends of each other, for migration tests of every kind of store: a to-many
/// relationship that is its own inverse (a link made from either side is seen from both), before
/// and after a migration that renames the entity and the relationship (Person.friends becomes
/// Member.contacts), which no store can make by adding columns: the links must move.
public enum Friendships {
    /// Person, with `friends`.
    public static let before = model("Person", "friends")
    /// Member (was Person), with `contacts` (was friends).
    public static let after = model("Member", "contacts", renaming: ("Person", "friends"))

    /// Each person's friends after ``populate(_:)``, from both sides of each link.
    public static let populated: [String: [String]] = ["Ann": ["Bob", "Cy"], "Bob": ["Ann"], "Cy": ["Ann"], "Dee": []]

    private static func model(_ entity: String, _ key: String, renaming: (entity: String, key: String)? = nil) -> ObjectModel {
        try! ObjectModel(entities: [
            EntityDescription(
                name: entity, attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription(key, destination: entity, inverse: key, toMany: true, renamingIdentifier: renaming?.key)
                ],
                renamingIdentifier: renaming?.entity)
        ])
    }

    /// Saves Ann, Bob, Cy and Dee in a store of ``before``: Ann makes Bob her friend, and Cy makes
    /// Ann his (one link from each side); Dee has none.
    public static func populate(_ stack: PersistentStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var people: [String: EntityObject] = [:]
            for name in populated.keys {
                let person = try context.insert(entityName: "Person")
                try person.setValue(name, forKey: "name")
                people[name] = person
            }
            try people["Ann"]!.addRelatedObject(people["Bob"]!, forKey: "friends")
            try people["Cy"]!.addRelatedObject(people["Ann"]!, forKey: "friends")
            try context.save()
        }
    }

    /// Each member's contacts by name, read from a store of ``after``.
    public static func contacts(_ stack: PersistentStack) throws -> [String: [String]] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            var contacts: [String: [String]] = [:]
            for member in try context.fetch(FetchRequest(entityName: "Member")) {
                contacts[try member.value(forKey: "name", as: String.self)] = try member.relatedObjects(forKey: "contacts").map {
                    try $0.value(forKey: "name", as: String.self)
                }.sorted()
            }
            return contacts
        }
    }

    /// Removes `other` from `name`'s contacts (one side of the link) and saves.
    public static func removeContact(_ other: String, of name: String, in stack: PersistentStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let members = try context.fetch(FetchRequest(entityName: "Member", predicate: AttributeKey("name").isIn([name, other])))
            let member = try #require(members.first { try $0.value(forKey: "name", as: String.self) == name })
            let contact = try #require(members.first { try $0.value(forKey: "name", as: String.self) == other })
            try member.removeRelatedObject(contact, forKey: "contacts")
            try context.save()
        }
    }
}
