import Foundation
import Testing

@testable import SkerryCore

/// Entity inheritance as Core Data has it, from the hand-written Hierarchy.xcdatamodel in Xcode's
/// shape: an abstract Media with Book (and its sub-entity Ebook) and Film; relationships to the
/// abstract entity, inherited relationships with inverses, and to-many relationships that are
/// their own inverse.
@Suite struct InheritanceTests {
    static let model = try! XcodeModel(contentsOf: FixtureFiles.url("Hierarchy.xcdatamodel")).loadCurrentVersion().model

    static func stack(_ kind: StoreKind, _ directory: TemporaryDirectory) throws -> PersistentStack {
        switch kind {
        case .memory: return try makeMemoryStack(model: model)
        case .file: return try makeFileStack(directory, model: model, name: "Hierarchy")
        case .postgres: return try makeStack(.postgres, model: model).0
        }
    }

    static func insert(_ entity: String, _ title: String, year: Int16? = nil, in context: ObjectContext) throws -> EntityObject {
        let object = try context.insert(entityName: entity)
        try object.setValue(title, forKey: "title")
        if let year { try object.setValue(year, forKey: "year") }
        return object
    }

    static func titles(_ objects: [EntityObject]) throws -> [String] {
        try objects.map { try $0.value(forKey: "title", as: String.self) }
    }

    @Test func theModelKeepsAbstractEntitiesAndInheritedProperties() throws {
        let model = Self.model
        let media = try #require(model.entity(named: "Media"))
        let book = try #require(model.entity(named: "Book"))
        let ebook = try #require(model.entity(named: "Ebook"))
        #expect(media.isAbstract && !book.isAbstract)
        #expect(book.superentity === media && ebook.superentity === book)
        #expect(ebook.isKind(of: media) && !media.isKind(of: book))
        #expect(model.subentities(of: media).map(\.name) == ["Book", "Film"])
        #expect(model.entityAndSubentities(of: media).map(\.name) == ["Book", "Ebook", "Film", "Media"])
        #expect(ebook.attributes.map(\.name) == ["title", "year", "pages", "fileSize"])
        #expect(ebook.relationships.map(\.name) == ["owner", "related", "tags"])
        #expect(model.fetchRequestTemplate(named: "mediaSince")?.entityName == "Media")
        #expect(model.entity(named: "Person")?.fetchedProperty(named: "recentMedia") != nil)
        let context = try makeMemoryStack(model: model).newBackgroundContext()
        context.performAndWait {
            let error = expectError(.invalidArgument) { _ = try context.insert(entityName: "Media") }
            #expect(error?.message.contains("abstract") == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFetchOfAnEntityReturnsItsSubentitiesObjects(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(kind, directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try Self.insert("Book", "Dune", year: 1965, in: context)
            try dune.setValue(Int32(412), forKey: "pages")
            let manual = try Self.insert("Ebook", "Manual", year: 2021, in: context)
            try manual.setValue(Int64(5_000_000), forKey: "fileSize")
            _ = try Self.insert("Film", "Alien", year: 1979, in: context)
            try context.save()
            // Keys are unique in the hierarchy.
            #expect(Set([dune, manual].map(\.objectID.key)).count == 2)
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let all = try reader.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")]))
            #expect(try Self.titles(all) == ["Alien", "Dune", "Manual"])
            #expect(all.map(\.entity.name) == ["Film", "Book", "Ebook"])
            // Each object has its own entity's values.
            #expect(try all[2].value(forKey: "fileSize", as: Int64.self) == 5_000_000)
            #expect(try all[1].value(forKey: "pages", as: Int32.self) == 412)

            var books = FetchRequest(entityName: "Book", sortKeys: [SortKey("year", ascending: false)])
            #expect(try Self.titles(reader.fetch(books)) == ["Manual", "Dune"])
            books.includesSubentities = false
            #expect(try Self.titles(reader.fetch(books)) == ["Dune"])
            var abstract = FetchRequest(entityName: "Media")
            abstract.includesSubentities = false
            #expect(try reader.fetch(abstract).isEmpty)

            let recent = FetchRequest(entityName: "Media", predicate: AttributeKey("year") > Int16(1970), sortKeys: [SortKey("year")])
            #expect(try Self.titles(reader.fetch(recent)) == ["Alien", "Manual"])
            #expect(try reader.count(for: recent) == 2)
            #expect(try reader.fetchObjectIDs(recent).map(\.entityName) == ["Film", "Ebook"])
            var page = FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])
            page.fetchLimit = 1
            page.fetchOffset = 1
            #expect(try Self.titles(reader.fetch(page)) == ["Dune"])

            // Unsaved objects of sub-entities take part too.
            _ = try Self.insert("Film", "Brazil", year: 1985, in: reader)
            #expect(try Self.titles(reader.fetch(recent)) == ["Alien", "Brazil", "Manual"])
            #expect(try reader.count(for: FetchRequest(entityName: "Media")) == 4)

            // A template on the abstract entity.
            let since = try Self.model.fetchRequest(fromTemplate: "mediaSince", substitutionVariables: ["YEAR": 1979])
            #expect(try Set(Self.titles(reader.fetch(since))) == ["Alien", "Brazil", "Manual"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func relationshipsToAnAbstractEntityHoldAnySubentity(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(kind, directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let ann = try context.insert(entityName: "Person")
            try ann.setValue("Ann", forKey: "name")
            let dune = try Self.insert("Book", "Dune", year: 1965, in: context)
            let alien = try Self.insert("Film", "Alien", year: 1979, in: context)
            let manual = try Self.insert("Ebook", "Manual", year: 2021, in: context)
            // An ordered to-many relationship to the abstract entity; its inverse is inherited.
            try ann.setRelatedObjects([alien, manual, dune], forKey: "collection")
            #expect(try dune.relatedObject(forKey: "owner") === ann)
            try ann.setRelatedObject(manual, forKey: "favorite")
            let tag = try context.insert(entityName: "Tag")
            try tag.setValue("classic", forKey: "label")
            try tag.addRelatedObject(dune, forKey: "media")
            try alien.addRelatedObject(tag, forKey: "tags")
            #expect(try Set(Self.titles(tag.relatedObjects(forKey: "media"))) == ["Alien", "Dune"])
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let ann = try #require(try reader.fetch(FetchRequest(entityName: "Person")).first)
            let collection = try ann.relatedObjects(forKey: "collection")
            #expect(try Self.titles(collection) == ["Alien", "Manual", "Dune"])
            #expect(collection.map(\.entity.name) == ["Film", "Ebook", "Book"])
            #expect(try ann.relatedObject(forKey: "favorite")?.entity.name == "Ebook")
            let film = try #require(try reader.fetch(FetchRequest(entityName: "Film")).first)
            #expect(try film.relatedObject(forKey: "owner") === ann)
            let tag = try #require(try reader.fetch(FetchRequest(entityName: "Tag")).first)
            #expect(try Set(tag.relatedObjects(forKey: "media").map(\.entity.name)) == ["Book", "Film"])
            #expect(try film.relatedObjects(forKey: "tags") == [tag])

            // Predicates through relationships to the hierarchy.
            let owners = FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "ANY collection.title == 'Manual'"))
            #expect(try reader.count(for: owners) == 1)
            let owned = FetchRequest(
                entityName: "Media", predicate: try FetchPredicate(format: "owner.name == 'Ann'"), sortKeys: [SortKey("title")])
            #expect(try Self.titles(reader.fetch(owned)) == ["Alien", "Dune", "Manual"])
            let tagged = FetchRequest(entityName: "Tag", predicate: try FetchPredicate(format: "ANY media.year > 1970"))
            #expect(try reader.count(for: tagged) == 1)

            // A fetched property on the abstract entity.
            #expect(try Self.titles(ann.fetchedObjects(forKey: "recentMedia")) == ["Manual"])

            // Reordering and moving members across sub-entities.
            try ann.moveRelatedObject(from: 2, to: 0, forKey: "collection")
            try reader.save()
        }
        let third = stack.newBackgroundContext()
        try third.performAndWait {
            let ann = try #require(try third.fetch(FetchRequest(entityName: "Person")).first)
            #expect(try Self.titles(ann.relatedObjects(forKey: "collection")) == ["Dune", "Alien", "Manual"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aToManyRelationshipThatIsItsOwnInverseIsSymmetric(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(kind, directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let people = try ["Ann", "Bob", "Cy"].map { name in
                let person = try context.insert(entityName: "Person")
                try person.setValue(name, forKey: "name")
                return person
            }
            try people[0].addRelatedObject(people[1], forKey: "friends")
            try people[2].addRelatedObject(people[0], forKey: "friends")
            #expect(try people[1].relatedObjects(forKey: "friends") == [people[0]])
            // Across sub-entities of the hierarchy.
            let dune = try Self.insert("Book", "Dune", in: context)
            let alien = try Self.insert("Film", "Alien", in: context)
            try dune.addRelatedObject(alien, forKey: "related")
            #expect(try alien.relatedObjects(forKey: "related") == [dune])
            try context.save()
        }
        func friends(_ name: String, _ context: ObjectContext) throws -> Set<String> {
            let person = try #require(try context.fetch(FetchRequest(entityName: "Person", predicate: AttributeKey("name") == name)).first)
            return Set(try person.relatedObjects(forKey: "friends").map { try $0.value(forKey: "name", as: String.self) })
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            #expect(try friends("Ann", reader) == ["Bob", "Cy"])
            #expect(try friends("Bob", reader) == ["Ann"])
            #expect(try friends("Cy", reader) == ["Ann"])
            let alien = try #require(try reader.fetch(FetchRequest(entityName: "Film")).first)
            #expect(try Self.titles(alien.relatedObjects(forKey: "related")) == ["Dune"])
            let bob = try #require(try reader.fetch(FetchRequest(entityName: "Person", predicate: AttributeKey("name") == "Bob")).first)
            let ann = try #require(try reader.fetch(FetchRequest(entityName: "Person", predicate: AttributeKey("name") == "Ann")).first)
            try ann.removeRelatedObject(bob, forKey: "friends")
            try reader.save()
        }
        let third = stack.newBackgroundContext()
        try third.performAndWait {
            #expect(try friends("Ann", third) == ["Cy"])
            #expect(try friends("Bob", third) == [])
            // Deleting one side removes the links in both directions.
            let ann = try #require(try third.fetch(FetchRequest(entityName: "Person", predicate: AttributeKey("name") == "Ann")).first)
            try third.delete(ann)
            try third.save()
        }
        let fourth = stack.newBackgroundContext()
        let cyAfterwards = try fourth.performAndWait { try friends("Cy", fourth) }
        #expect(cyAfterwards == [])
        if kind == .file {
            #expect(try rawSQL(directory.file("Hierarchy.sqlite"), "SELECT count(*) FROM \"_Person_friends\"") == [["0"]])
        }
    }

    @Test func eachEntityHasItsTableAndABatchDeleteTakesSubentities() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(.file, directory)
        let url = directory.file("Hierarchy.sqlite")
        // Inherited foreign-key and order columns are in every sub-entity's table.
        for table in ["Book", "Ebook", "Film", "Media"] {
            let columns = try rawSQL(
                url, "SELECT name FROM pragma_table_info('\(table)') WHERE name IN ('owner', '_Person_collection_order')")
            #expect(Set(columns.map { $0[0] }) == ["owner", "_Person_collection_order"], "\(table)")
        }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try Self.insert("Book", "Dune", year: 1965, in: context)
            _ = try Self.insert("Ebook", "Manual", year: 2021, in: context)
            _ = try Self.insert("Film", "Alien", year: 1979, in: context)
            try context.save()
            let result = try context.execute(BatchDeleteRequest(entityName: "Media", predicate: AttributeKey("year") > Int16(1970)))
            #expect(result.count == 2)
            #expect(Set(result.deletedObjectIDs.map(\.entityName)) == ["Ebook", "Film"])
            #expect(try Self.titles(context.fetch(FetchRequest(entityName: "Media"))) == ["Dune"])
        }
    }

    /// A batch delete that leaves sub-entities out (a fetch request's `includesSubentities =
    /// false`, as Core Data's `NSBatchDeleteRequest(fetchRequest:)` takes it) deletes the
    /// entity's own objects only.
    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteWithoutSubentitiesKeepsTheirObjects(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(kind, directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try Self.insert("Book", "Dune", year: 1965, in: context)
            _ = try Self.insert("Book", "Emma", year: 1815, in: context)
            _ = try Self.insert("Ebook", "Manual", year: 2021, in: context)
            _ = try Self.insert("Ebook", "Guide", year: 1990, in: context)
            try context.save()
            var fetch = FetchRequest(entityName: "Book", predicate: AttributeKey("year") > Int16(1900))
            fetch.includesSubentities = false
            var request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = .resultTypeObjectIDs // Core Data's default is a status only
            let result = try context.execute(request)
            #expect(result.deletedObjectIDs.map(\.entityName) == ["Book"])
            var count = BatchDeleteRequest(entityName: "Book")
            count.includesSubentities = false
            count.resultType = .count
            #expect(try context.execute(count).count == 1)
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let left = try Self.titles(reader.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])))
            #expect(left == ["Guide", "Manual"])
            // The default includes sub-entities.
            let deleted = try reader.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("year") > Int16(2000)))
            #expect(deleted.deletedObjectIDs.map(\.entityName) == ["Ebook"])
            #expect(try Self.titles(reader.fetch(FetchRequest(entityName: "Media"))) == ["Guide"])
        }
    }

    /// A batch delete by object IDs of a sub-entity's objects deletes those rows only; IDs of a
    /// parent and a sub-entity together are refused (Core Data: one entity's IDs).
    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteByObjectIDsOfASubEntity(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(kind, directory)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let dune = try Self.insert("Book", "Dune", in: context)
            let manual = try Self.insert("Ebook", "Manual", in: context)
            _ = try Self.insert("Ebook", "Guide", in: context)
            try context.save()
            expectError(.invalidArgument) { try context.execute(BatchDeleteRequest(objectIDs: [dune.objectID, manual.objectID])) }
            var request = BatchDeleteRequest(objectIDs: [manual.objectID])
            request.resultType = .resultTypeObjectIDs
            let result = try context.execute(request)
            #expect(result.deletedObjectIDs == [manual.objectID])
        }
        let reader = stack.newBackgroundContext()
        let left = try reader.performAndWait {
            try Self.titles(reader.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])))
        }
        #expect(left == ["Dune", "Guide"])
    }
}
