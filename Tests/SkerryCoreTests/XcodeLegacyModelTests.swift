import Foundation
import Testing

@testable import SkerryCore

/// Model versions last saved by Xcode 3, whose folder holds an `elements` file (a keyed archive
/// of Xcode's model classes) instead of `contents`: Xcode still compiles them, and real apps
/// still carry them as their first versions (Simplenote for macOS, RestKit's and MagicalRecord's
/// models). `Legacy.xcdatamodeld` holds one (`Legacy`, written by a script in Xcode 3's shape:
/// an abstract Person, Author inheriting from it, Book; an ordered to-many relationship, defaults,
/// a transformable, a transient, a renaming identifier, a configuration) and its next version in
/// today's XML (`Legacy 2`). They used to be refused: "models saved by Xcode 3 and earlier are
/// not supported".
@Suite struct XcodeLegacyModelTests {
    static let package = FixtureFiles.url("Legacy.xcdatamodeld")

    /// The first version as Xcode 4 and later would write it.
    static let sameModelAsXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Objective-C" userDefinedModelVersionIdentifier="">
            <entity name="Author" representedClassName="Author" parentEntity="Person" syncable="YES">
                <attribute name="rating" attributeType="Integer 16" defaultValueString="3" usesScalarValueType="YES"/>
                <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            </entity>
            <entity name="Book" syncable="YES">
                <attribute name="cover" optional="YES" attributeType="Transformable" valueTransformerName="CoverTransformer"/>
                <attribute name="inPrint" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
                <attribute name="pages" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="price" optional="YES" attributeType="Decimal"/>
                <attribute name="title" attributeType="String" defaultValueString="Untitled" elementID="name"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            </entity>
            <entity name="Person" representedClassName="Person" isAbstract="YES" syncable="YES">
                <attribute name="born" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="name" attributeType="String"/>
                <attribute name="nickname" optional="YES" transient="YES" attributeType="String"/>
            </entity>
            <configuration name="Library">
                <memberEntity name="Author"/>
                <memberEntity name="Book"/>
            </configuration>
        </model>
        """

    @Test func anXcode3VersionLoadsAsItsXMLFormWould() throws {
        let xcode = try XcodeModel(contentsOf: Self.package)
        #expect(xcode.versionNames == ["Legacy", "Legacy 2"])
        let legacy = try xcode.load(version: "Legacy")
        let directory = TemporaryDirectory()
        let folder = directory.file("Legacy.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.sameModelAsXML.utf8).write(to: folder.appendingPathComponent("contents"))
        let xml = try XcodeModel(contentsOf: folder).loadCurrentVersion()

        #expect(legacy.model.versionHash == xml.model.versionHash)
        #expect(legacy.model.entities.map(\.name) == xml.model.entities.map(\.name))
        for entity in xml.model.entities {
            let read = try #require(legacy.model.entity(named: entity.name))
            #expect(read.attributes == entity.attributes, "\(entity.name)")
            #expect(read.relationships == entity.relationships, "\(entity.name)")
            #expect(read.superentity?.name == entity.superentity?.name)
            #expect(read.isAbstract == entity.isAbstract)
        }
        #expect(legacy.renamingIdentifiers == xml.renamingIdentifiers)
        #expect(legacy.configurations == ["Library": ["Author", "Book"]])
        #expect(legacy.abstractEntityNames == ["Person"])
        // What the archive says, spelled out.
        let author = try #require(legacy.model.entity(named: "Author"))
        #expect(author.superentity?.name == "Person")
        #expect(author.attribute(named: "name")?.isOptional == false) // inherited from Person
        #expect(author.attribute(named: "rating")?.defaultValue == .int(3))
        let books = try #require(author.relationship(named: "books"))
        #expect(books.isToMany && books.isOrdered && books.deleteRule == .cascade && books.inverseName == "author")
        let book = try #require(legacy.model.entity(named: "Book"))
        #expect(book.relationship(named: "author")?.isToMany == false)
        #expect(book.attribute(named: "inPrint")?.defaultValue == .bool(true))
        #expect(book.attribute(named: "cover")?.valueTransformerName == "CoverTransformer")
        #expect(book.attribute(named: "title")?.renamingIdentifier == "name")
        #expect(legacy.model.entity(named: "Person")?.attribute(named: "nickname")?.isTransient == true)
    }

    /// A store written with the Xcode 3 version opens with the next version (XML), every row and
    /// the books' order carried.
    @Test func aStoreOfTheXcode3VersionMigratesToTheNextOne() throws {
        let versions = try XcodeModel(contentsOf: Self.package).loadAllVersions()
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        do {
            let stack = PersistentStack(name: "Library", model: versions[0].model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let author = try context.insert(entityName: "Author")
                try author.setValue("Le Guin", forKey: "name")
                var books: [EntityObject] = []
                for title in ["The Dispossessed", "Lavinia", "Tehanu"] {
                    let book = try context.insert(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                    books.append(book)
                }
                try author.setRelatedObjects(books, forKey: "books")
                try context.save()
            }
        }
        let stack = PersistentStack(name: "Library", model: versions[1].model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try #require(try context.fetch(FetchRequest(entityName: "Author")).first)
            #expect(try author.value(forKey: "name", as: String.self) == "Le Guin")
            #expect(try author.value(forKey: "rating", as: Int16.self) == 3)
            #expect(try author.value(forKey: "country", as: String?.self) == nil)
            let titles = try author.relatedObjects(forKey: "books").map { try $0.value(forKey: "title", as: String.self) }
            #expect(titles == ["The Dispossessed", "Lavinia", "Tehanu"])
            #expect(try context.count(for: FetchRequest(entityName: "Person")) == 1)
        }
    }

    /// What the reader does not read is an error naming the file and the element; damaged
    /// archives are errors, never crashes.
    @Test func whatCannotBeReadIsATypedError() throws {
        let original = try Data(contentsOf: Self.package.appendingPathComponent("Legacy.xcdatamodel/elements"))
        let directory = TemporaryDirectory()
        func load(_ data: Data) -> SkerryError? {
            let folder = directory.file("Changed\(UUID().uuidString).xcdatamodel")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try? data.write(to: folder.appendingPathComponent("elements"))
            return expectError(.invalidModel) { _ = try XcodeModel(contentsOf: folder).loadCurrentVersion() }
        }
        // A property of another kind (Xcode 3's fetched properties are archived predicates).
        let fetched = load(original.replacing(Data("XDPMAttribute".utf8), with: Data("XDPMFetchProp".utf8)))
        #expect(fetched?.message.contains("/elements: the file is not a model saved by Xcode 3 that Skerry can read") == true)
        #expect(fetched?.message.contains("a XDPMFetchProp (a fetched property?)") == true, "\(fetched?.message ?? "-")")
        // Another archive's root object.
        let other = load(original.replacing(Data("XDPMModel".utf8), with: Data("XDPMOther".utf8)))
        #expect(other?.message.contains("holds no Xcode 3 data model (XDPMOther at its root)") == true, "\(other?.message ?? "-")")
        // Bytes changed at random: an error or some model, never a crash.
        var generator = SplitMix64(seed: 3)
        let bytes = [UInt8](original)
        for _ in 0..<300 {
            var damaged = bytes
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                damaged[Int(generator.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            let folder = directory.file("Damaged.xcdatamodel")
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(damaged).write(to: folder.appendingPathComponent("elements"))
            do {
                _ = try XcodeModel(contentsOf: folder).loadCurrentVersion()
            } catch {
                #expect(error.code == .invalidModel)
            }
        }
    }
}
