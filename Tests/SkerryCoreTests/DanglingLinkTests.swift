import Foundation
import Testing

@testable import SkerryCore

/// Deleting the destination of a relationship with no stored inverse (a transient one, or none
/// declared) clears the links to it in the same save, as a batch delete does: no delete rule
/// reaches them (the inverse reads as empty, or there is none), and a store must not keep a link
/// to a row it deleted. Core Data leaves such a reference dangling; Skerry does not.
@Suite struct DanglingLinkTests {
    /// The object of `entityName` whose `key` is `value`, in `context`.
    static func object(_ context: ObjectContext, _ entityName: String, _ key: String, _ value: String) throws -> EntityObject {
        try #require(try context.fetch(FetchRequest(entityName: entityName, predicate: AttributeKey(key) == value)).first)
    }

    static func names(_ objects: [EntityObject]) throws -> [String] {
        try objects.map { try $0.value(forKey: "name", as: String.self) }
    }

    @Test(arguments: StoreKind.allCases)
    func deletingTheDestinationOfAStoredSideClearsItsLinks(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try TransientInverseTests.model())
        _ = directory
        let writer = stack.newBackgroundContext()
        try writer.performAndWait { try TransientInverseTests.populate(writer) }
        // A context that never saw the links: the transient sides read as empty, so no delete
        // rule reaches Company.employees, Company.ranking, Employee.badge or Employee.desk.
        let deleter = stack.newBackgroundContext()
        try deleter.performAndWait {
            let ada = try Self.object(deleter, "Employee", "name", "Ada")
            #expect(try ada.relatedObject(forKey: "company") == nil)
            try deleter.delete(ada)
            try deleter.delete(try Self.object(deleter, "Badge", "code", "B-1"))
            try deleter.delete(try #require(try deleter.fetch(FetchRequest(entityName: "Desk")).first))
            try deleter.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let company = try Self.object(reader, "Company", "name", "Acme")
            #expect(try Self.names(company.relatedObjects(forKey: "employees")) == ["Bob"])
            #expect(try Self.names(company.relatedObjects(forKey: "ranking")) == ["Cy", "Bob"])
            let employees = try reader.fetch(FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")]))
            #expect(try Self.names(employees) == ["Bob", "Cy"])
            #expect(try employees.map { try $0.relatedObject(forKey: "badge") } == [nil, nil])
            #expect(try employees.map { try $0.relatedObject(forKey: "desk") } == [nil, nil])
        }
    }

    /// The links are cleared before the save's updates are written: an object that the same save
    /// links to another destination keeps its new link (and its version still matches).
    @Test(arguments: StoreKind.allCases)
    func anObjectRelinkedInTheSameSaveKeepsItsNewLink(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try TransientInverseTests.model())
        _ = directory
        let writer = stack.newBackgroundContext()
        try writer.performAndWait { try TransientInverseTests.populate(writer) }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let bob = try Self.object(context, "Employee", "name", "Bob")
            let replacement = try context.insert(entityName: "Badge")
            try replacement.setValue("B-2", forKey: "code")
            try bob.setRelatedObject(replacement, forKey: "badge")
            try context.delete(try Self.object(context, "Badge", "code", "B-1"))
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let employees = try reader.fetch(FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")]))
            #expect(
                try employees.map { try $0.relatedObject(forKey: "badge")?.value(forKey: "code", as: String.self) } == [nil, "B-2", nil])
        }
    }

    /// Relationships declared with no inverse: a to-one (a foreign key), and a to-many (a join
    /// table), to an entity with a sub-entity.
    static func oneWayModel() throws -> ObjectModel {
        let tag = EntityDescription(name: "Tag", attributes: [AttributeDescription("name", .string)])
        return try ObjectModel(entities: [
            tag,
            EntityDescription(name: "Topic", attributes: [], superentity: tag),
            EntityDescription(
                name: "Post", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("pinned", destination: "Tag"),
                    RelationshipDescription("tags", destination: "Tag", toMany: true, ordered: true),
                ]),
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func deletingTheDestinationOfARelationshipWithNoInverseClearsItsLinks(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try Self.oneWayModel())
        _ = directory
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            var tags: [EntityObject] = []
            for (entity, name) in [("Tag", "red"), ("Topic", "swift"), ("Tag", "blue")] {
                let tag = try writer.insert(entityName: entity)
                try tag.setValue(name, forKey: "name")
                tags.append(tag)
            }
            for name in ["first", "second"] {
                let post = try writer.insert(entityName: "Post")
                try post.setValue(name, forKey: "name")
                try post.setRelatedObject(tags[1], forKey: "pinned")
                try post.setRelatedObjects(tags, forKey: "tags")
            }
            try writer.save()
        }
        let deleter = stack.newBackgroundContext()
        try deleter.performAndWait {
            try deleter.delete(try Self.object(deleter, "Tag", "name", "swift"))
            try deleter.delete(try Self.object(deleter, "Tag", "name", "red"))
            try deleter.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let posts = try reader.fetch(FetchRequest(entityName: "Post", sortKeys: [SortKey("name")]))
            #expect(posts.count == 2)
            for post in posts {
                #expect(try post.relatedObject(forKey: "pinned") == nil)
                #expect(try Self.names(post.relatedObjects(forKey: "tags")) == ["blue"])
            }
        }
    }

    /// A store that an earlier Skerry wrote for a model with transient inverses (it kept neither
    /// side: no join table, no column) opens read-only; those relationships read as empty.
    @Test func aReadOnlyStoreWrittenWhenNeitherSideWasStoredReadsTheirLinksAsEmpty() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Company.sqlite")
        do {
            let stack = try makeFileStack(directory, model: try TransientInverseTests.model(), name: "Company")
            let context = stack.newBackgroundContext()
            try context.performAndWait { try TransientInverseTests.populate(context) }
        }
        for index in try rawSQL(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Employee' AND sql IS NOT NULL") {
            try rawSQL(url, "DROP INDEX \"\(index[0])\"")
        }
        try rawSQL(url, "DROP TABLE \"_Company_employees\"")
        try rawSQL(url, "DROP TABLE \"_Company_ranking\"")
        try rawSQL(url, "ALTER TABLE \"Employee\" DROP COLUMN \"badge\"")
        try rawSQL(url, "ALTER TABLE \"Employee\" DROP COLUMN \"desk\"")

        let stack = PersistentStack(name: "Company", model: try TransientInverseTests.model())
        var description = StoreDescription(url: url)
        description.isReadOnly = true
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let company = try Self.object(context, "Company", "name", "Acme")
            #expect(try company.relatedObjects(forKey: "employees").isEmpty)
            #expect(try company.relatedObjects(forKey: "ranking").isEmpty)
            let employees = try context.fetch(FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")]))
            #expect(try Self.names(employees) == ["Ada", "Bob", "Cy"])
            #expect(try employees.map { try $0.relatedObject(forKey: "badge") } == [nil, nil, nil])
            #expect(try employees.map { try $0.relatedObject(forKey: "desk") } == [nil, nil, nil])
            #expect(try context.count(for: FetchRequest(entityName: "Employee", predicate: AttributeKey("badge.code") == "B-1")) == 0)
            #expect(try context.count(for: FetchRequest(entityName: "Desk")) == 1)
            // Still read-only: nothing is written, and the storage is not added.
            try company.setValue("Other", forKey: "name")
            _ = expectError(.storeIsReadOnly) { try context.save() }
        }
        #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE name = '_Company_employees'") == [["0"]])
    }
}
