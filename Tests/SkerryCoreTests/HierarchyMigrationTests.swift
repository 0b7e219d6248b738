import Foundation
import Testing

@testable import SkerryCore

/// Migrations that rebuild the tables of a model with entity inheritance (Hierarchy.xcdatamodel:
/// an abstract Media with Book, its sub-entity Ebook, and Film; Person and Tag point at Media).
/// Inherited relationships keep their links in each sub-entity's table (foreign keys and order
/// columns) and in shared join tables; every row and link must arrive, through renames and
/// changes of the hierarchy itself.
@Suite struct HierarchyMigrationTests {
    static let fixture = try! String(contentsOf: FixtureFiles.url("Hierarchy.xcdatamodel/contents"), encoding: .utf8)

    /// The fixture's model with `replacements` made in its XML, loaded from a folder of its own.
    static func model(_ directory: TemporaryDirectory, _ name: String, _ replacements: [(String, String)]) throws -> ObjectModel {
        var text = fixture
        for (old, new) in replacements {
            #expect(text.contains(old), "\(old)")
            text = text.replacingOccurrences(of: old, with: new)
        }
        return try model(directory, name, xml: text)
    }

    static func model(_ directory: TemporaryDirectory, _ name: String, xml: String) throws -> ObjectModel {
        let folder = directory.file("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try xml.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try XcodeModel(contentsOf: folder).loadCurrentVersion().model
    }

    /// Where the tests keep their store: a file, or a schema of the PostgreSQL test server (whose
    /// migration makes the same changes in place, in one transaction).
    static func place(_ kind: StoreKind) -> HierarchyConstraintTests.Place {
        HierarchyConstraintTests.Place(kind: kind, name: "Hierarchy")
    }

    /// Three people, two books, two ebooks, two films, two tags; ordered collections that mix
    /// sub-entities, favorites, friends, related media and tags.
    static func populate(_ place: HierarchyConstraintTests.Place) throws {
        let stack = try place.open(InheritanceTests.model)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var objects: [String: EntityObject] = [:]
            for (entity, label, key) in [
                ("Person", "Ann", "name"), ("Person", "Bob", "name"), ("Person", "Cy", "name"), ("Tag", "classic", "label"),
                ("Tag", "scifi", "label"), ("Book", "Dune", "title"), ("Book", "Emma", "title"), ("Ebook", "Manual", "title"),
                ("Ebook", "Guide", "title"), ("Film", "Alien", "title"), ("Film", "Brazil", "title"),
            ] {
                let object = try context.insert(entityName: entity)
                try object.setValue(label, forKey: key)
                objects[label] = object
            }
            for (n, label) in ["Dune", "Emma", "Manual", "Guide"].enumerated() {
                try objects[label]!.setValue(Int32(100 + n), forKey: "pages")
                try objects[label]!.setValue(Int16(1960 + n), forKey: "year")
            }
            try objects["Ann"]!.setRelatedObjects(["Alien", "Manual", "Dune"].map { objects[$0]! }, forKey: "collection")
            try objects["Bob"]!.setRelatedObjects(["Guide", "Brazil", "Emma"].map { objects[$0]! }, forKey: "collection")
            try objects["Ann"]!.setRelatedObject(objects["Manual"], forKey: "favorite")
            try objects["Bob"]!.setRelatedObject(objects["Alien"], forKey: "favorite")
            try objects["Cy"]!.setRelatedObject(objects["Dune"], forKey: "favorite")
            try objects["Ann"]!.addRelatedObject(objects["Bob"]!, forKey: "friends")
            try objects["Cy"]!.addRelatedObject(objects["Ann"]!, forKey: "friends")
            try objects["Dune"]!.addRelatedObject(objects["Alien"]!, forKey: "related")
            try objects["Manual"]!.addRelatedObject(objects["Guide"]!, forKey: "related")
            try objects["Emma"]!.addRelatedObject(objects["Dune"]!, forKey: "related")
            try objects["classic"]!.setRelatedObjects(["Dune", "Alien", "Emma"].map { objects[$0]! }, forKey: "media")
            try objects["scifi"]!.setRelatedObjects(["Alien", "Manual", "Brazil"].map { objects[$0]! }, forKey: "media")
            try context.save()
        }
    }

    /// Every object by its label (a person's name, a medium's title, a tag's label): its entity
    /// and `pages` where it has them, and each relationship's members by label (in order where
    /// the relationship is ordered).
    static func contents(_ stack: PersistentStack) throws -> [String: Set<String>] {
        let model = stack.model
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            func label(_ object: EntityObject) throws -> String {
                let entity = object.entity
                let key = ["name", "title", "label"].first { entity.attribute(named: $0) != nil }!
                return try object.value(forKey: key, as: String.self)
            }
            var result: [String: Set<String>] = [:]
            for entity in model.entities where !entity.isAbstract {
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = false
                for object in try context.fetch(request) {
                    var items: Set<String> = ["entity=\(entity.name)"]
                    if entity.attribute(named: "pages") != nil {
                        items.insert("pages=\(try object.value(forKey: "pages", as: Int32.self))")
                    }
                    for relationship in entity.relationships {
                        var members =
                            relationship.isToMany
                            ? try object.relatedObjects(forKey: relationship.name).map(label)
                            : try object.relatedObject(forKey: relationship.name).map { [try label($0)] } ?? []
                        if !relationship.isOrdered { members.sort() }
                        items.insert("\(relationship.name)=\(members.joined(separator: ","))")
                    }
                    result[try label(object)] = items
                }
            }
            return result
        }
    }

    /// `contents` with relationship names and entity names replaced.
    static func renamed(_ contents: [String: Set<String>], _ names: [String: String]) -> [String: Set<String>] {
        contents.mapValues { items in
            Set(
                items.map { item in
                    let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    let value = parts[0] == "entity" ? (names[parts[1]] ?? parts[1]) : parts[1]
                    return "\(names[parts[0]] ?? parts[0])=\(value)"
                })
        }
    }

    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aRebuildingMigrationCarriesTheLinksOfEverySubentity(kind: StoreKind) throws {
        let place = Self.place(kind), directory = place.directory
        try Self.populate(place)
        let before = try Self.contents(place.open(InheritanceTests.model))
        #expect(before["Ann"]?.contains("collection=Alien,Manual,Dune") == true)
        // Media.year widens: every table of the hierarchy is rebuilt.
        let next = try Self.model(
            directory, "Next",
            [(#"name="year" optional="YES" attributeType="Integer 16""#, #"name="year" optional="YES" attributeType="Integer 32""#)])
        let stack = try place.open(next)
        #expect(try Self.contents(stack) == before)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let manual = try #require(
                try context.fetch(FetchRequest(entityName: "Media", predicate: AttributeKey("title") == "Manual")).first)
            #expect(try manual.value(forKey: "year", as: Int32.self) == 1962)
        }
    }

    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func renamedInheritedRelationshipsAndSubentitiesKeepTheirLinks(kind: StoreKind) throws {
        let place = Self.place(kind), directory = place.directory
        try Self.populate(place)
        let before = try Self.contents(place.open(InheritanceTests.model))
        let next = try Self.model(
            directory, "Next",
            [
                (
                    #"<relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="collection""#,
                    #"<relationship name="holder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="items" elementID="owner""#
                ),
                (
                    #"<relationship name="collection" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Media" inverseName="owner""#,
                    #"<relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Media" inverseName="holder" elementID="collection""#
                ),
                (
                    #"<relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="media""#,
                    #"<relationship name="labels" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="media" elementID="tags""#
                ),
                (#"inverseName="tags" inverseEntity="Media""#, #"inverseName="labels" inverseEntity="Media""#),
                (
                    #"<entity name="Book" representedClassName="Book""#,
                    #"<entity name="Novel" elementID="Book" representedClassName="Book""#
                ),
                (#"parentEntity="Book""#, #"parentEntity="Novel""#),
                (#"predicateString="owner == $FETCH_SOURCE"#, #"predicateString="holder == $FETCH_SOURCE"#),
            ])
        #expect(next.entity(named: "Ebook")?.superentity?.name == "Novel")
        let after = try Self.contents(place.open(next))
        #expect(after == Self.renamed(before, ["owner": "holder", "collection": "items", "tags": "labels", "Book": "Novel"]))
    }

    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func anEntityMovedUpItsHierarchyKeepsItsRowsAndLinks(kind: StoreKind) throws {
        let place = Self.place(kind), directory = place.directory
        try Self.populate(place)
        let before = try Self.contents(place.open(InheritanceTests.model))
        // Ebook leaves Book for Media, keeping its pages as its own attribute.
        let next = try Self.model(
            directory, "Next",
            [
                (
                    #"parentEntity="Book" syncable="YES" codeGenerationType="class">"#,
                    #"parentEntity="Media" syncable="YES" codeGenerationType="class"><attribute name="pages" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>"#
                )
            ])
        let stack = try place.open(next)
        #expect(try Self.contents(stack) == before)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(try InheritanceTests.titles(books) == ["Dune", "Emma"])
        }
    }

    /// The source hierarchy flattened: Media goes, Book and Film declare their own properties,
    /// and Person and Tag get one relationship per entity. Links move to the relationship that
    /// took over the old one by renaming identifier, or arrive through the inverse that kept its
    /// name; the links the new model cannot hold (a film as favorite book) are left out.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aFlattenedHierarchyKeepsTheLinksItsEntitiesCanHold(kind: StoreKind) throws {
        let place = Self.place(kind), directory = place.directory
        try Self.populate(place)
        let next = try Self.model(
            directory, "Flat",
            xml: """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                    <entity name="Book" syncable="YES">
                        <attribute name="title" attributeType="String"/>
                        <attribute name="year" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                        <attribute name="pages" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="books" inverseEntity="Person"/>
                        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="books" inverseEntity="Tag"/>
                    </entity>
                    <entity name="Ebook" parentEntity="Book" syncable="YES">
                        <attribute name="fileSize" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    </entity>
                    <entity name="Film" syncable="YES">
                        <attribute name="title" attributeType="String"/>
                        <attribute name="year" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="films" inverseEntity="Person"/>
                        <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="films" inverseEntity="Tag"/>
                    </entity>
                    <entity name="Person" syncable="YES">
                        <attribute name="name" attributeType="String"/>
                        <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Book" inverseName="owner" inverseEntity="Book" elementID="collection"/>
                        <relationship name="films" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Film" inverseName="owner" inverseEntity="Film"/>
                        <relationship name="favorite" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book"/>
                        <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="friends" inverseEntity="Person"/>
                    </entity>
                    <entity name="Tag" syncable="YES">
                        <attribute name="label" attributeType="String"/>
                        <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="tags" inverseEntity="Book" elementID="media"/>
                        <relationship name="films" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Film" inverseName="tags" inverseEntity="Film"/>
                    </entity>
                </model>
                """)
        let after = try Self.contents(place.open(next))
        func book(_ entity: String, pages: Int, owner: String, tags: String) -> Set<String> {
            ["entity=\(entity)", "pages=\(pages)", "owner=\(owner)", "tags=\(tags)"]
        }
        let expected: [String: Set<String>] = [
            "Ann": ["entity=Person", "books=Manual,Dune", "films=Alien", "favorite=Manual", "friends=Bob,Cy"],
            "Bob": ["entity=Person", "books=Guide,Emma", "films=Brazil", "favorite=", "friends=Ann"],
            "Cy": ["entity=Person", "books=", "films=", "favorite=Dune", "friends=Ann"],
            "classic": ["entity=Tag", "books=Dune,Emma", "films=Alien"],
            "scifi": ["entity=Tag", "books=Manual", "films=Alien,Brazil"],
            "Dune": book("Book", pages: 100, owner: "Ann", tags: "classic"),
            "Emma": book("Book", pages: 101, owner: "Bob", tags: "classic"),
            "Manual": book("Ebook", pages: 102, owner: "Ann", tags: "scifi"),
            "Guide": book("Ebook", pages: 103, owner: "Bob", tags: ""),
            "Alien": ["entity=Film", "owner=Ann", "tags=classic,scifi"],
            "Brazil": ["entity=Film", "owner=Bob", "tags=scifi"],
        ]
        #expect(after == expected)
    }

    /// Person and Tag become sub-entities of a new Thing: two hierarchies whose keys were counted
    /// apart merge into one (Core Data's lightweight migration refuses this). The rows of the
    /// entity that comes later get new keys where they clash, every link follows them, and keys
    /// are unique in the new hierarchy afterwards.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func mergedHierarchiesRenumberClashingKeysAndKeepEveryLink(kind: StoreKind) throws {
        let place = Self.place(kind), directory = place.directory
        try Self.populate(place)
        // How many keys a person and a tag share: read from the file's tables, or on PostgreSQL
        // from the keys of the objects the store hands out (each its row's key).
        func sharedKeys(_ model: ObjectModel) throws -> Int {
            if kind == .file {
                let rows = try rawSQL(
                    directory.file("Hierarchy.sqlite"),
                    #"SELECT count(*) FROM (SELECT "_pk" FROM "Person" INTERSECT SELECT "_pk" FROM "Tag")"#)
                return Int(rows[0][0]) ?? -1
            }
            let context = try place.open(model).newBackgroundContext()
            return try context.performAndWait {
                let keys = try ["Person", "Tag"].map { entity in
                    var request = FetchRequest(entityName: entity)
                    request.includesSubentities = false
                    return Set(try context.fetch(request).map(\.objectID.key))
                }
                return keys[0].intersection(keys[1]).count
            }
        }
        #expect(try sharedKeys(InheritanceTests.model) == 2)
        let before = try Self.contents(place.open(InheritanceTests.model))
        let next = try Self.model(
            directory, "Merged",
            [
                (
                    #"<entity name="Person" representedClassName="Person" syncable="YES""#,
                    #"<entity name="Thing" isAbstract="YES" syncable="YES"><attribute name="note" optional="YES" attributeType="String"/></entity><entity name="Person" parentEntity="Thing" representedClassName="Person" syncable="YES""#
                ),
                (#"<entity name="Tag" representedClassName="Tag""#, #"<entity name="Tag" parentEntity="Thing" representedClassName="Tag""#),
                (
                    #"<relationship name="owner""#,
                    #"<relationship name="about" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Thing"/><relationship name="owner""#
                ),
            ])
        let stack = try place.open(next)
        var expected = before
        for (label, items) in before where !(items.contains("entity=Person") || items.contains("entity=Tag")) {
            expected[label] = items.union(["about="])
        }
        #expect(try Self.contents(stack) == expected)
        #expect(try sharedKeys(next) == 0)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            #expect(try context.count(for: FetchRequest(entityName: "Thing")) == 5)
            let classic = try #require(
                try context.fetch(FetchRequest(entityName: "Tag", predicate: AttributeKey("label") == "classic")).first)
            let bob = try #require(try context.fetch(FetchRequest(entityName: "Person", predicate: AttributeKey("name") == "Bob")).first)
            let media = try context.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")]))
            try media[0].setRelatedObject(classic, forKey: "about")
            try media[1].setRelatedObject(bob, forKey: "about")
            let fresh = try context.insert(entityName: "Tag")
            try fresh.setValue("new", forKey: "label")
            try context.save()
        }
        #expect(try sharedKeys(next) == 0)
        let reader = try place.open(next).newBackgroundContext()
        try reader.performAndWait {
            let media = try reader.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")]))
            #expect(try media[0].relatedObject(forKey: "about")?.entity.name == "Tag")
            #expect(try media[1].relatedObject(forKey: "about")?.value(forKey: "name", as: String.self) == "Bob")
        }
    }

    /// The generic harness over the fixture: every entity populated, every relationship linked
    /// (to objects of every sub-entity), migrated with a rebuild, compared row by row and link by
    /// link.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aPopulatedHierarchyArrivesWhole(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let next = try Self.model(
            directory, "Next",
            [(#"<attribute name="label" attributeType="String"/>"#, #"<attribute name="label" optional="YES" attributeType="String"/>"#)]
                + [(#"name="pages" attributeType="Integer 32""#, #"name="pages" attributeType="Integer 64""#)])
        let harness = CorpusHarness(bundle: directory.url, root: directory.url)
        let description =
            kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("Harness.sqlite"))
        let before = try harness.populate(InheritanceTests.model, description: description)
        let after = try harness.read(next, description: description)
        #expect(CorpusHarness.difference(before, after, from: InheritanceTests.model, to: next, sameVersion: false) == nil)
        for (key, person) in before.objects["Person"] ?? [:] {
            #expect(after.objects["Person"]?[key]?.relationships["collection"] == person.relationships["collection"])
        }
    }
}
