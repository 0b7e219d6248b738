import Foundation
import SkerryCore

/// A model with every attribute type and every kind of relationship, filled with objects and
/// read back as text, for the suites that move a store's objects into another store
/// (`StoreCoordinator.migratePersistentStore`) on SQLite, in-memory and PostgreSQL stores.
///
/// Teams have members (one-to-many) and sponsors (tags, ordered many-to-many, ordered on both
/// sides); people have tags (many-to-many), items (ordered one-to-many, whose items may be
/// gadgets, a sub-entity), a favourite tag (to-one without inverse), mentors (to-many without
/// inverse, to people), friends (symmetric: its own inverse), a desk (one-to-one) and a mood
/// (a transient attribute with a default); a tag has a creator (to-one whose inverse, the
/// person's `createdTags`, is transient) and a sample item (to-one without inverse into a
/// hierarchy). Names, labels, codes and spots are unique.
public enum StoreMoveFixture {
    public static func model() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription("code", .string)],
            relationships: [RelationshipDescription("owner", destination: "Person", inverse: "items")],
            uniquenessConstraints: [["code"]])
        let gadget = EntityDescription(
            name: "Gadget", attributes: [AttributeDescription("watts", .integer32, isOptional: true)], superentity: item)
        return try ObjectModel(entities: [
            EntityDescription(
                name: "Team", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("members", destination: "Person", inverse: "team", toMany: true),
                    RelationshipDescription("sponsors", destination: "Tag", inverse: "sponsored", toMany: true, ordered: true),
                ],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription("name", .string),
                    AttributeDescription("active", .boolean, isOptional: true),
                    AttributeDescription("small", .integer16, isOptional: true),
                    AttributeDescription("medium", .integer32, isOptional: true),
                    AttributeDescription("large", .integer64, isOptional: true),
                    AttributeDescription("ratio", .float, isOptional: true),
                    AttributeDescription("score", .double, isOptional: true),
                    AttributeDescription("balance", .decimal, isOptional: true),
                    AttributeDescription("born", .date, isOptional: true),
                    AttributeDescription("photo", .binary, isOptional: true),
                    AttributeDescription("badge", .uuid, isOptional: true),
                    AttributeDescription("homepage", .url, isOptional: true),
                    AttributeDescription("note", .string, isOptional: true),
                    AttributeDescription("mood", .string, isOptional: true, defaultValue: "calm", isTransient: true),
                ],
                relationships: [
                    RelationshipDescription("team", destination: "Team", inverse: "members"),
                    RelationshipDescription("tags", destination: "Tag", inverse: "people", toMany: true),
                    RelationshipDescription("items", destination: "Item", inverse: "owner", toMany: true, ordered: true),
                    RelationshipDescription("favorite", destination: "Tag"),
                    RelationshipDescription("mentors", destination: "Person", toMany: true),
                    RelationshipDescription("friends", destination: "Person", inverse: "friends", toMany: true),
                    RelationshipDescription("desk", destination: "Desk", inverse: "occupant"),
                    RelationshipDescription("createdTags", destination: "Tag", inverse: "creator", toMany: true, isTransient: true),
                ],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: [
                    RelationshipDescription("people", destination: "Person", inverse: "tags", toMany: true),
                    RelationshipDescription("sponsored", destination: "Team", inverse: "sponsors", toMany: true, ordered: true),
                    RelationshipDescription("creator", destination: "Person", inverse: "createdTags"),
                    RelationshipDescription("sample", destination: "Item"),
                ],
                uniquenessConstraints: [["label"]]),
            EntityDescription(
                name: "Desk", attributes: [AttributeDescription("spot", .string)],
                relationships: [RelationshipDescription("occupant", destination: "Person", inverse: "desk")],
                uniquenessConstraints: [["spot"]]),
            item, gadget,
        ])
    }

    /// Inserts `people` people (with 1 team per 10 people, sponsored by 3 of 5 tags, 2 items
    /// each, every third one a gadget, a desk for every other person, a friend for every fifth)
    /// in `context` and saves, 500 people per save. Each tag's creator is one of the first
    /// people, its sample one of their items.
    public static func fill(_ context: ObjectContext, people: Int) throws {
        try context.performAndWait {
            var tags: [EntityObject] = []
            for index in 0..<5 {
                let tag = try context.insert(entityName: "Tag")
                try tag.setValue("tag\(index)", forKey: "label")
                tags.append(tag)
            }
            var team: EntityObject?
            var previous: EntityObject?
            for index in 0..<people {
                if index % 10 == 0 {
                    team = try context.insert(entityName: "Team")
                    try team!.setValue("team\(index / 10)", forKey: "name")
                    // Not in key order, and each tag's teams in no key order either.
                    let t = index / 10
                    try team!.setRelatedObjects([tags[(t + 3) % 5], tags[t % 5], tags[(t + 1) % 5]], forKey: "sponsors")
                }
                let person = try context.insert(entityName: "Person")
                try person.setValue(String(format: "person%05d", index), forKey: "name")
                if index % 7 != 3 {
                    // Every type; the seventh person of each run has no values at all.
                    try person.setValue(index % 2 == 0, forKey: "active")
                    try person.setValue(Int16(index % 30_000) - 15_000, forKey: "small")
                    try person.setValue(Int32(index) * 40_000, forKey: "medium")
                    try person.setValue(Int64(index) * 5_000_000_000 + 1, forKey: "large")
                    try person.setValue(Float(index) + 0.5, forKey: "ratio")
                    try person.setValue(Double(index) / 3, forKey: "score")
                    try person.setValue(Decimal(string: "\(index).01")!, forKey: "balance")
                    try person.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400 + 0.25), forKey: "born")
                    try person.setValue(Data([UInt8(index % 256), 0, 255]), forKey: "photo")
                    try person.setValue(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", index))!, forKey: "badge")
                    try person.setValue(URL(string: "https://example.com/p/\(index)")!, forKey: "homepage")
                    try person.setValue("línea ✓ \(index)", forKey: "note")
                }
                try person.setRelatedObject(team, forKey: "team")
                try person.setRelatedObjects([tags[index % 5], tags[(index + 2) % 5]], forKey: "tags")
                if index % 4 == 0 { try person.setRelatedObject(tags[index % 5], forKey: "favorite") }
                if let previous, index % 3 == 0 { try person.setRelatedObjects([previous], forKey: "mentors") }
                if let previous, index % 5 == 1 { try person.setRelatedObjects([previous], forKey: "friends") }
                try person.setValue("busy", forKey: "mood")
                if index % 2 == 0 {
                    let desk = try context.insert(entityName: "Desk")
                    try desk.setValue("desk\(index)", forKey: "spot")
                    try person.setRelatedObject(desk, forKey: "desk")
                }
                var items: [EntityObject] = []
                for slot in 0..<2 {
                    let gadget = (index + slot) % 3 == 0
                    let item = try context.insert(entityName: gadget ? "Gadget" : "Item")
                    try item.setValue("item\(index)-\(slot)", forKey: "code")
                    if gadget { try item.setValue(Int32(index), forKey: "watts") }
                    items.append(item)
                }
                // Order by code reversed, so that the order is not the keys' order.
                try person.setRelatedObjects(items.reversed(), forKey: "items")
                if index < tags.count {
                    try tags[index].setRelatedObject(person, forKey: "creator")
                    try tags[index].setRelatedObject(items[index % 2], forKey: "sample")
                }
                previous = person
                if index % 500 == 499 { try context.save() }
            }
            try context.save()
        }
    }

    /// Every object of the store `context` reaches, as lines of text naming objects by their
    /// unique values (never by ID): equal for two stores that hold the same objects and links.
    public static func contents(_ context: ObjectContext) throws -> [String] {
        try context.performAndWait {
            var lines: [String] = []
            func name(_ object: EntityObject?) throws -> String {
                guard let object else { return "-" }
                for key in ["name", "label", "code", "spot"] where object.entity.attributeIndex(named: key) != nil {
                    return "\(object.entity.name):\(try object.value(forKey: key) ?? "?")"
                }
                return "?"
            }
            for (entity, key) in [("Team", "name"), ("Person", "name"), ("Tag", "label"), ("Item", "code"), ("Desk", "spot")] {
                for object in try context.fetch(FetchRequest(entityName: entity, sortKeys: [SortKey(key)])) {
                    var line = try name(object)
                    for attribute in object.entity.attributes {
                        line += " \(attribute.name)=\(try object.value(forKey: attribute.name).map { "\($0)" } ?? "nil")"
                    }
                    for relationship in object.entity.relationships {
                        if relationship.isToMany {
                            var names = try object.relatedObjects(forKey: relationship.name).map(name)
                            if !relationship.isOrdered { names.sort() }
                            line += " \(relationship.name)=[\(names.joined(separator: ","))]"
                        } else {
                            line += " \(relationship.name)=\(try name(object.relatedObject(forKey: relationship.name)))"
                        }
                    }
                    lines.append(line)
                }
            }
            return lines
        }
    }

    /// Deletes the person with the largest key, and reserves a tag key for an object never
    /// saved, through a new context of `stack`; returns both keys.
    public static func burnKeys(_ stack: PersistentStack) throws -> (person: Int64, tag: Int64) {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let people = try context.fetch(FetchRequest(entityName: "Person"))
            let last = people.max { $0.objectID.key < $1.objectID.key }!
            let personKey = last.objectID.key
            try context.delete(last)
            try context.save()
            let tag = try context.insert(entityName: "Tag")
            try context.obtainPermanentIDs(for: [tag])
            let tagKey = tag.objectID.key
            context.reset()
            return (personKey, tagKey)
        }
    }

    /// Saves a new person and a new tag through a new context of `stack`; returns their keys.
    public static func insertPersonAndTag(_ stack: PersistentStack, _ name: String) throws -> (person: Int64, tag: Int64) {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let person = try context.insert(entityName: "Person")
            try person.setValue(name, forKey: "name")
            let tag = try context.insert(entityName: "Tag")
            try tag.setValue(name, forKey: "label")
            try context.save()
            return (person.objectID.key, tag.objectID.key)
        }
    }

    /// An older version of ``model()``: tags only, without people.
    public static func olderModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Tag", attributes: [AttributeDescription("label", .string)], uniquenessConstraints: [["label"]])
        ])
    }
}
