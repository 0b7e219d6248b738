import Foundation
import Testing

@testable import SkerryCore

/// Element kinds of modern Xcode model files beyond entities, attributes and relationships:
/// fetch indexes on relationships, composite attributes, fetched properties, fetch request
/// templates and configurations. Fixtures are hand-written in the shape Xcode writes.
@Suite struct XcodeModelElementsTests {
    static let fixtures = FixtureFiles.folder

    private func load(_ name: String) throws -> XcodeModelVersion {
        try XcodeModel(contentsOf: Self.fixtures.appendingPathComponent(name, isDirectory: true)).loadCurrentVersion()
    }

    /// The column lists of the indexes of `table`, as SQLite has them, sorted.
    private func indexColumns(_ url: URL, _ table: String) throws -> [String] {
        let names = try rawSQL(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '\(table)' AND sql IS NOT NULL")
        return try names.map { row in
            try rawSQL(url, "PRAGMA index_info('\(row[0])')").map { $0[2] }.joined(separator: ",")
        }.sorted()
    }

    // MARK: Indexes

    @Test func fetchIndexesOnToOneRelationshipsIndexTheForeignKey() throws {
        let model = try load("Indexes.xcdatamodel").model
        #expect(
            model.entity(named: "Book")?.indexes == [
                IndexDescription(["author"]), IndexDescription(["author", "year"]), IndexDescription(["author", "year"]),
            ])
        let directory = TemporaryDirectory()
        let url = directory.file("Indexes.sqlite")
        let stack = PersistentStack(name: "Indexes", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        // The foreign key is indexed once (its own index and the fetch index on it are one), the
        // two compound indexes over the same columns in another order are one.
        #expect(try indexColumns(url, "Book") == ["author", "author,year"])
        // indexed="YES" and two fetch indexes over `name` in both orders: one index.
        #expect(try indexColumns(url, "Author") == ["name", "profile"])
        // Profile.author is kept in Author's table (the other side of a one-to-one pair): its
        // index is Author's foreign-key index; the compound index keeps the column Profile has.
        #expect(try indexColumns(url, "Profile") == ["bio"])

        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Le Guin", forKey: "name")
            let book = try context.insert(entityName: "Book")
            try book.setValue("The Dispossessed", forKey: "title")
            try book.setRelatedObject(author, forKey: "author")
            try context.save()
            let request = FetchRequest(entityName: "Book", predicate: AttributeKey("author.name") == "Le Guin")
            #expect(try context.fetch(request).count == 1)
        }
    }

    @Test func indexesChangedByAMigrationAreMadeAndDropped() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Migrated.sqlite")
        func entities(_ indexes: [IndexDescription]) -> [EntityDescription] {
            [
                EntityDescription(
                    name: "Author", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)]),
                EntityDescription(
                    name: "Book", attributes: [AttributeDescription("title", .string), AttributeDescription("year", .integer32)],
                    relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")],
                    indexes: indexes),
            ]
        }
        for (indexes, expected) in [
            ([IndexDescription(["title"])], ["author", "title"]),
            (
                [IndexDescription(["author", "year"]), IndexDescription(["year", "author"]), IndexDescription(["author"])],
                ["author", "author,year", "year,author"]
            ),
            ([], ["author"]),
        ] {
            let stack = PersistentStack(name: "Migrated", model: try ObjectModel(entities: entities(indexes)))
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            #expect(try indexColumns(url, "Book") == expected)
        }
    }

    @Test func anIndexOnAToManyRelationshipIsLeftOut() throws {
        // Shipping models have them (Core Data accepts and ignores them): nothing to index.
        let entity = EntityDescription(
            name: "Forecast", attributes: [AttributeDescription("date", .date)],
            relationships: [RelationshipDescription("values", destination: "Forecast", toMany: true)],
            indexes: [IndexDescription(["values"]), IndexDescription(["values", "date"])])
        let directory = TemporaryDirectory()
        let url = directory.file("Forecast.sqlite")
        let stack = PersistentStack(name: "Forecast", model: try ObjectModel(entities: [entity]))
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        #expect(try indexColumns(url, "Forecast") == ["date"])
        let unknown = EntityDescription(
            name: "Forecast", attributes: [AttributeDescription("date", .date)],
            indexes: [IndexDescription(["nothing"])])
        let error = expectError(.invalidModel) { _ = try ObjectModel(entities: [unknown]) }
        #expect(error?.message.contains("'nothing', which is neither one of its attributes nor one of its relationships") == true)
    }
}

extension XcodeModelElementsTests {
    /// A hostile model file nested 100,000 elements deep is a typed error, not a stack overflow.
    @Test func deeplyNestedElementsAreATypedError() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("Deep.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let depth = 100_000
        var text = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel">"#
        text += String(repeating: "<entity name=\"A\">", count: depth) + String(repeating: "</entity>", count: depth) + "</model>"
        try text.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let error = expectError(.invalidModel) { _ = try XcodeModel(contentsOf: folder).loadCurrentVersion() }
        #expect(error?.message.contains("nested") == true, "\(error?.message ?? "")")
    }
}

extension XcodeModelElementsTests {
    /// Composite attributes are stored as their elements, named "composite.element", which
    /// objects, predicates and sort keys use like any attribute.
    @Test func compositeAttributesAreStoredAsTheirElements() throws {
        let model = try load("Composite.xcdatamodel").model
        let place = try #require(model.entity(named: "Place"))
        #expect(
            place.attributes == [
                AttributeDescription("area.height", .double, defaultValue: 0.0),
                AttributeDescription("area.unit", .string, defaultValue: "m"),
                AttributeDescription("area.width", .double, defaultValue: 0.0),
                AttributeDescription("location.latitude", .double, isOptional: true, defaultValue: 0.0),
                AttributeDescription("location.longitude", .double, isOptional: true, defaultValue: 0.0),
                AttributeDescription("location.note", .string, isOptional: true),
                AttributeDescription("name", .string),
            ])
        let directory = TemporaryDirectory()
        let url = directory.file("Places.sqlite")
        for pass in 0..<2 {
            let stack = PersistentStack(name: "Places", model: model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                if pass == 0 {
                    for (name, latitude, width) in [("Harbour", 59.9, 12.0), ("Lighthouse", 60.1, 3.5)] {
                        let object = try context.insert(entityName: "Place")
                        try object.setValue(name, forKey: "name")
                        try object.setValue(latitude, forKey: "location.latitude")
                        try object.setValue(width, forKey: "area.width")
                    }
                    try context.save()
                    return
                }
                var request = FetchRequest(entityName: "Place", predicate: AttributeKey("location.latitude") > 60.0)
                #expect(try context.fetch(request).map { try $0.value(forKey: "name", as: String.self) } == ["Lighthouse"])
                request = FetchRequest(entityName: "Place", sortKeys: [SortKey("area.width")])
                let places = try context.fetch(request)
                #expect(try places.map { try $0.value(forKey: "name", as: String.self) } == ["Lighthouse", "Harbour"])
                #expect(try places.map { try $0.value(forKey: "area.unit", as: String.self) } == ["m", "m"])
            }
        }
        #expect(try rawSQL(url, "SELECT \"area.width\" FROM Place ORDER BY 1") == [["3.5"], ["12.0"]])
    }
}

extension XcodeModelElementsTests {
    @Test func fetchRequestTemplatesAndFetchedPropertiesAreRead() throws {
        let model = try load("Templates.xcdatamodel").model
        #expect(model.fetchRequestTemplate(named: "allChapters") == FetchRequestTemplate(name: "allChapters", entityName: "Chapter"))
        #expect(
            model.fetchRequestTemplate(named: "chaptersOfManga")
                == FetchRequestTemplate(
                    name: "chaptersOfManga", entityName: "Chapter", predicateFormat: "mangaId == $MANGA_ID", fetchLimit: 10))
        #expect(model.fetchRequestTemplate(named: "nothing") == nil)
        #expect(
            model.entity(named: "Manga")?.fetchedProperties == [
                FetchedPropertyDescription(
                    "unreadChapters",
                    fetchRequest: FetchRequestTemplate(
                        name: "fetchedPropertyFetchRequest", entityName: "Chapter",
                        predicateFormat: "mangaId == $FETCH_SOURCE.id AND read == NO"))
            ])
        #expect(model.entity(named: "Manga")?.attributes.map(\.name) == ["id", "title"]) // not stored
    }

    /// Configurations place entities in stores, as Core Data's store descriptions do.
    @Test func configurationsPlaceEntitiesInStores() throws {
        let model = try load("Templates.xcdatamodel").model
        #expect(model.configurations == ["Cloud": ["Chapter", "Manga"], "Local": ["Draft"]])
        let directory = TemporaryDirectory()
        let cloudURL = directory.file("Cloud.sqlite"), localURL = directory.file("Local.sqlite")
        let stack = PersistentStack(name: "Templates", model: model)
        var cloud = StoreDescription(url: cloudURL), local = StoreDescription(url: localURL)
        cloud.configuration = "Cloud"
        local.configuration = "Local"
        stack.persistentStoreDescriptions = [local, cloud]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let draft = try context.insert(entityName: "Draft")
            try draft.setValue("idea", forKey: "text")
            let manga = try context.insert(entityName: "Manga")
            try manga.setValue("m1", forKey: "id")
            try manga.setValue("Blame!", forKey: "title")
            try context.save()
        }
        let tables = { (url: URL) in
            try rawSQL(url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name").map {
                $0[0]
            }
        }
        #expect(try tables(cloudURL) == ["Chapter", "Manga"])
        #expect(try tables(localURL) == ["Draft"])
        #expect(try rawSQL(localURL, "SELECT text FROM Draft") == [["idea"]])

        var unknown = StoreDescription.inMemory()
        unknown.configuration = "Elsewhere"
        let other = PersistentStack(name: "Templates", model: model)
        other.persistentStoreDescriptions = [unknown]
        let error = expectError(.invalidArgument) { try other.loadPersistentStores() }
        #expect(error?.message.contains("'Cloud', 'Local'") == true)
    }
}

extension XcodeModelElementsTests {
    /// Templates fetch by name with substitution variables; fetched properties fetch per object.
    @Test func templatesAndFetchedPropertiesFetch() throws {
        let model = try load("Templates.xcdatamodel").model
        let stack = try makeMemoryStack(model: model)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for (id, title) in [("m1", "Blame!"), ("m2", "Biomega")] {
                let manga = try context.insert(entityName: "Manga")
                try manga.setValue(id, forKey: "id")
                try manga.setValue(title, forKey: "title")
            }
            for (mangaId, title, read) in [("m1", "Log 1", true), ("m1", "Log 2", false), ("m1", "Log 3", false), ("m2", "Ch. 1", false)] {
                let chapter = try context.insert(entityName: "Chapter")
                try chapter.setValue(mangaId, forKey: "mangaId")
                try chapter.setValue(title, forKey: "title")
                try chapter.setValue(read, forKey: "read")
            }
            try context.save()

            var request = try model.fetchRequest(fromTemplate: "chaptersOfManga", substitutionVariables: ["MANGA_ID": "m1"])
            #expect(request.fetchLimit == 10)
            request.sortKeys = [SortKey("title")]
            #expect(try context.fetch(request).map { try $0.value(forKey: "title", as: String.self) } == ["Log 1", "Log 2", "Log 3"])
            #expect(try context.count(for: try model.fetchRequest(fromTemplate: "allChapters")) == 4)
            expectError(.invalidArgument) { _ = try model.fetchRequest(fromTemplate: "missing") }
            expectError(.invalidPredicateFormat) { _ = try model.fetchRequest(fromTemplate: "chaptersOfManga") } // no $MANGA_ID

            let blame = try #require(try context.fetch(FetchRequest(entityName: "Manga", predicate: AttributeKey("id") == "m1")).first)
            #expect(
                Set(try blame.fetchedObjects(forKey: "unreadChapters").map { try $0.value(forKey: "title", as: String.self) }) == [
                    "Log 2", "Log 3",
                ])
            expectError(.unknownAttribute) { _ = try blame.fetchedObjects(forKey: "title") }
        }
    }
}
