import Foundation
import Skerry
import SkerryCore
import Testing

// doc: typed-relations
struct Writer: ManagedObjectConvertible {
    var name = ""
    static let entityName = "Writer"
    static let attributes: Set<Attribute<Writer>> = [Attribute(\.name, "name")]
    struct Relations {
        let works = ToManyRelation<Work>("works", inverse: "writer", deleteRule: .cascade)
        let portrait = ToOneRelation<Picture>("portrait", inverse: "writer")
    }
    static let relations = Relations()
}
// doc: end

struct Work: ManagedObjectConvertible {
    var title = ""
    static let entityName = "Work"
    static let attributes: Set<Attribute<Work>> = [Attribute(\.title, "title")]
    struct Relations {
        let writer = ToOneRelation<Writer>("writer", inverse: "works")
    }
    static let relations = Relations()
}

struct Picture: ManagedObjectConvertible {
    var file = ""
    static let entityName = "Picture"
    static let attributes: Set<Attribute<Picture>> = [Attribute(\.file, "file")]
    struct Relations {
        let writer = ToOneRelation<Writer>("writer", inverse: "portrait")
    }
    static let relations = Relations()
}

struct Anthology: ManagedObjectConvertible {
    var name = ""
    static let entityName = "Anthology"
    static let attributes: Set<Attribute<Anthology>> = [Attribute(\.name, "name")]
    struct Relations {
        let works = ToManyOrderedRelation<Work>("works")
    }
    static let relations = Relations()
}

@Suite struct RelationTests {
    private func stack(_ folder: TemporaryDirectory) throws -> PersistentStack {
        let stack = PersistentStack(
            name: "Relations", model: try ObjectModel(types: [Writer.self, Work.self, Picture.self, Anthology.self]))
        stack.persistentStoreDescriptions = [StoreDescription(url: folder.url.appendingPathComponent("Relations.sqlite"))]
        try stack.loadPersistentStores()
        return stack
    }

    @Test func relationsAreDerivedFromTheDeclarations() throws {
        let writer = try Writer.entityDescription()
        #expect(writer.relationships.map(\.name) == ["works", "portrait"])
        #expect(writer.relationship(named: "works")?.deleteRule == .cascade)
        #expect(writer.relationship(named: "works")?.isToMany == true)
        #expect(try Anthology.entityDescription().relationship(named: "works")?.isOrdered == true)
    }

    @Test func relationsWorkFromBothSidesAndPersist() throws {
        let folder = TemporaryDirectory()
        do {
            let stack = try stack(folder)
            let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
            try container.perform { context in
                let herbert = try context.insert(Writer(name: "Herbert"))
                let dune = try context.insert(Work(title: "Dune"))
                dune.writer = herbert // Sworm's setter
                herbert.works.add(try context.insert(Work(title: "Dune Messiah")))
                try herbert.set(\.portrait, value: Picture(file: "herbert.jpg"), context: context)
                let anthology = try context.insert(Anthology(name: "Best of"))
                anthology.works.add(dune)
                try anthology.works.insert(try context.insert(Work(title: "Solaris")), at: 0)
            }
        }
        let stack = try stack(folder)
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        let result = try container.perform { context in
            let herbert = try #require(try context.fetchOne(Writer.all))
            let works = herbert.works.map { (try? $0.decode().title) ?? "?" }.sorted()
            let portrait = try herbert.portrait?.decode().file
            let anthology = try #require(try context.fetchOne(Anthology.all))
            let order = try anthology.works.objects().map { try $0.decode().title }
            let writerOfDune = try context.fetchOne(Work.all.where(\Work.title == "Dune"))?.writer?.decode().name
            return (works, portrait, order, writerOfDune)
        }
        #expect(result.0 == ["Dune", "Dune Messiah"])
        #expect(result.1 == "herbert.jpg")
        #expect(result.2 == ["Solaris", "Dune"])
        #expect(result.3 == "Herbert")
    }

    @Test func settingNilDeletesTheRelatedObjectAndCascadeFollows() throws {
        let folder = TemporaryDirectory()
        let stack = try stack(folder)
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            let writer = try context.insert(Writer(name: "Lem"))
            try writer.set(\.portrait, value: Picture(file: "lem.jpg"), context: context)
            writer.works.add(try context.insert(Work(title: "Solaris")))
        }
        let counts = try container.perform { context in
            let writer = try #require(try context.fetchOne(Writer.all))
            try writer.set(\.portrait, value: nil, context: context) // deletes the picture
            return try context.count(of: Picture.all)
        }
        #expect(counts == 0)
        let works = try container.perform { context in
            context.delete(try #require(try context.fetchOne(Writer.all))) // cascade
            return try context.count(of: Work.all)
        }
        #expect(works == 0)
    }

    @Test func withoutCleanupRelatedObjectsAreReachedWithoutReadingTheStore() throws {
        let folder = TemporaryDirectory()
        let stack = try stack(folder)
        let cached = stack.newBackgroundContext()
        cached.automaticallyMergesChangesFromParent = false
        let container = PersistentContainer(managedObjectContext: { cached }, cleanUpAfterExecution: false)
        try container.perform { context in
            let writer = try context.insert(Writer(name: "Austen"))
            writer.works.add(try context.insert(Work(title: "Emma")))
        }
        let first = try container.perform { context in
            try context.fetchOne(Writer.all)?.works.objects().map { try $0.decode().title }
        }
        // Every row disappears behind the context's back; the cached graph still answers.
        let wipe = stack.newBackgroundContext()
        _ = try wipe.performAndWait { try wipe.execute(BatchDeleteRequest(entityName: "Work")) }
        let again = try container.perform { context in
            try context.instance.registeredObjects.first { $0.entity.name == "Writer" }
                .map { try ManagedObjectContextProbe.titles(of: $0) }
        }
        #expect(first == ["Emma"])
        #expect(again == ["Emma"])
    }
}

/// Reads a writer's works through the engine object, as a relation reached again would.
enum ManagedObjectContextProbe {
    static func titles(of writer: EntityObject) throws -> [String] {
        try writer.relatedObjects(forKey: "works").map { try $0.value(forKey: "title", as: String.self) }
    }
}
