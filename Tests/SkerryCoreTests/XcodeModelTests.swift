import Foundation
import Testing

@testable import SkerryCore

/// Loading Xcode data models (`.xcdatamodeld` packages and `.xcdatamodel` versions) from the
/// hand-written fixtures in Fixtures/, which have the shape Xcode writes.
@Suite struct XcodeModelTests {

    // MARK: Helpers

    /// The fixtures folder (SkerryTestSupport's resources).
    static let fixtures = FixtureFiles.folder

    /// The transformer name the AllTypes fixture uses; registered as binary by `allTypes()`.
    static let colorTransformer = "SkerryTestsColorTransformer"

    /// The URL of the fixture `name`.
    private func fixture(_ name: String) -> URL {
        Self.fixtures.appendingPathComponent(name, isDirectory: true)
    }

    /// The current version of the fixture `name`.
    private func load(_ name: String) throws -> XcodeModelVersion {
        try XcodeModel(contentsOf: fixture(name)).loadCurrentVersion()
    }

    /// The AllTypes fixture, with its value transformer registered.
    private func allTypes() throws -> XcodeModelVersion {
        XcodeModel.registerTransformer(named: Self.colorTransformer, as: .binary)
        return try load("AllTypes.xcdatamodel")
    }

    /// A model version folder holding `body` inside Xcode's `<model>` element, in a temporary
    /// folder (keep the folder alive while using the URL).
    private func temporaryModel(_ body: String, name: String = "Scratch") -> (TemporaryDirectory, URL) {
        let directory = TemporaryDirectory()
        let folder = directory.file("\(name).xcdatamodel")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22G120" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            \(body)
            </model>
            """
        try! text.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return (directory, folder)
    }

    /// Expects loading the current version at `url` to fail with an invalid-model error whose
    /// message contains every fragment; returns the error.
    @discardableResult
    private func expectInvalid(
        _ url: URL, _ fragments: [String], entity: String? = nil, key: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> SkerryError? {
        let error = expectError(.invalidModel, sourceLocation: sourceLocation) {
            _ = try XcodeModel(contentsOf: url).loadCurrentVersion()
        }
        for fragment in fragments {
            #expect(
                error?.message.contains(fragment) == true, "'\(fragment)' not in: \(error?.message ?? "-")",
                sourceLocation: sourceLocation)
        }
        if let entity { #expect(error?.entityName == entity, sourceLocation: sourceLocation) }
        if let key { #expect(error?.key == key, sourceLocation: sourceLocation) }
        return error
    }

    /// Expects the model `body` to be rejected with a message containing every fragment.
    @discardableResult
    private func expectInvalidBody(
        _ body: String, _ fragments: [String], entity: String? = nil, key: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> SkerryError? {
        let (directory, url) = temporaryModel(body)
        defer { withExtendedLifetime(directory) {} }
        return expectInvalid(
            url, [url.appendingPathComponent("contents").path] + fragments, entity: entity, key: key,
            sourceLocation: sourceLocation)
    }

    /// Library 4 written in code, as the fixture describes it (Xcode sorts properties by name).
    private func libraryCodeModel() throws -> ObjectModel {
        try ObjectModel(
            entities: [
                EntityDescription(
                    name: "Author", attributes: [AttributeDescription("name", .string)],
                    relationships: [
                        RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)
                    ]),
                EntityDescription(
                    name: "Book",
                    attributes: [
                        AttributeDescription("isbn", .string, isOptional: true),
                        AttributeDescription("price", .double, defaultValue: 0.0),
                        AttributeDescription("title", .string),
                        AttributeDescription("year", .string),
                    ],
                    relationships: [
                        RelationshipDescription("author", destination: "Author", inverse: "books")
                    ], uniquenessConstraints: [["isbn"]]),
                EntityDescription(name: "Publisher", attributes: [AttributeDescription("name", .string)]),
            ], versionHashModifier: "Book.price=euros") // the fixture's versionHashModifier on Book.price
    }

    // MARK: Packages and versions

    @Test func packageListsItsVersionsAndCurrentVersion() throws {
        let xcodeModel = try XcodeModel(contentsOf: fixture("Library.xcdatamodeld"))
        #expect(xcodeModel.versionNames == ["Library 1", "Library 2", "Library 3", "Library 4"])
        #expect(xcodeModel.currentVersionName == "Library 4")
        #expect(xcodeModel.url.lastPathComponent == "Library.xcdatamodeld")
        let current = try xcodeModel.loadCurrentVersion()
        #expect(current.name == "Library 4")
        #expect(current.url.lastPathComponent == "Library 4.xcdatamodel")
        #expect(current.versionIdentifier == "4")
        #expect(current.model.entities.map(\.name) == ["Author", "Book", "Publisher"])
        #expect(current.abstractEntityNames.isEmpty)
        #expect(current.configurations.isEmpty)
        #expect(current.renamingIdentifiers.isEmpty)
        #expect(current.versionHashModifiers == ["Book.price": "euros"])
    }

    @Test func everyVersionLoadsByNameWithOrWithoutExtension() throws {
        let xcodeModel = try XcodeModel(contentsOf: fixture("Library.xcdatamodeld"))
        let versions = try xcodeModel.loadAllVersions()
        #expect(versions.map(\.name) == xcodeModel.versionNames)
        #expect(versions.map(\.versionIdentifier) == ["1", "2", "3", "4"])
        let second = try xcodeModel.load(version: "Library 2.xcdatamodel")
        #expect(second.name == "Library 2")
        #expect(second.model.versionHash == versions[1].model.versionHash)
        let error = expectError(.invalidModel) { _ = try xcodeModel.load(version: "Library 5") }
        #expect(error?.message.contains("Library.xcdatamodeld") == true)
        #expect(error?.message.contains("'Library 5'") == true)
        #expect(error?.message.contains("'Library 1', 'Library 2', 'Library 3', 'Library 4'") == true)
    }

    @Test func libraryVersionOneIsParsedPrecisely() throws {
        let version = try XcodeModel(contentsOf: fixture("Library.xcdatamodeld")).load(version: "Library 1")
        let model = version.model
        #expect(model.entities.map(\.name) == ["Author", "Book"])
        let book = try #require(model.entity(named: "Book"))
        #expect(
            book.attributes == [
                AttributeDescription("isbn", .string, isOptional: true),
                AttributeDescription("price", .double, defaultValue: 0.0),
                AttributeDescription("title", .string),
                AttributeDescription("year", .integer16, defaultValue: Int16(0)),
            ])
        #expect(book.relationships == [RelationshipDescription("author", destination: "Author", inverse: "books")])
        #expect(book.uniquenessConstraints == [["isbn"]])
        #expect(book.indexes.isEmpty)
        let author = try #require(model.entity(named: "Author"))
        #expect(author.attributes == [AttributeDescription("name", .string)])
        #expect(author.relationships == [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)])
        #expect(version.versionHashModifiers.isEmpty)
    }

    @Test func libraryVersionsChangeWhatTheMigrationTestNeeds() throws {
        let versions = try XcodeModel(contentsOf: fixture("Library.xcdatamodeld")).loadAllVersions()
        let types = versions.map { $0.model.entity(named: "Book")?.attribute(named: "year")?.type }
        #expect(types == [.integer16, .string, .string, .string])
        // Version 3 only changes what price means: same schema, a version hash modifier, which
        // enters the model's hash so that a migration plan tells the two versions apart.
        #expect(StoredSchema(entities: versions[1].model.entities) == StoredSchema(entities: versions[2].model.entities))
        #expect(versions[1].model.versionHash != versions[2].model.versionHash)
        #expect(versions[1].versionHashModifiers.isEmpty)
        #expect(versions[2].versionHashModifiers == ["Book.price": "euros"])
        #expect(
            versions[2].model.entity(named: "Book")?.attribute(named: "price") == AttributeDescription("price", .double, defaultValue: 0.0))
        // Version 4 adds Publisher.
        #expect(versions[2].model.entity(named: "Publisher") == nil)
        #expect(versions[3].model.entity(named: "Publisher")?.attributes == [AttributeDescription("name", .string)])
        #expect(Set(versions.map(\.model.versionHash)).count == 4)
    }

    @Test func fileModelAndEqualCodeModelHaveTheSameVersionHash() throws {
        let fileModel = try load("Library.xcdatamodeld").model
        let codeModel = try libraryCodeModel()
        #expect(fileModel.versionHash == codeModel.versionHash)
        for entity in codeModel.entities {
            let loaded = try #require(fileModel.entity(named: entity.name))
            #expect(loaded.attributes == entity.attributes)
            #expect(loaded.relationships == entity.relationships)
            #expect(loaded.uniquenessConstraints == entity.uniquenessConstraints)
            #expect(loaded.indexes == entity.indexes)
        }
        // A difference the store cares about changes the hash.
        let optionalTitle = try ObjectModel(
            entities: codeModel.entities.map { entity in
                entity.name != "Book"
                    ? entity
                    : EntityDescription(
                        name: "Book",
                        attributes: entity.attributes.map {
                            $0.name == "title" ? AttributeDescription("title", .string, isOptional: true) : $0
                        },
                        relationships: entity.relationships, uniquenessConstraints: entity.uniquenessConstraints)
            })
        #expect(optionalTitle.versionHash != fileModel.versionHash)
    }

    @Test func loadModelReturnsTheCurrentVersionsModel() throws {
        let model = try XcodeModel.loadModel(contentsOf: fixture("Library.xcdatamodeld"))
        #expect(model.versionHash == (try libraryCodeModel()).versionHash)
    }

    @Test func singleVersionFolderIsItsOwnCurrentVersion() throws {
        let xcodeModel = try XcodeModel(contentsOf: fixture("Relationships.xcdatamodel"))
        #expect(xcodeModel.versionNames == ["Relationships"])
        #expect(xcodeModel.currentVersionName == "Relationships")
        #expect(try xcodeModel.load(version: "Relationships").model.entities.count == 4)
    }

    @Test func foldersWithoutExtensionAreRecognisedByWhatTheyHold() throws {
        let directory = TemporaryDirectory()
        let package = directory.file("Models")
        try FileManager.default.copyItem(at: fixture("Library.xcdatamodeld"), to: package)
        let xcodeModel = try XcodeModel(contentsOf: package)
        #expect(xcodeModel.versionNames.count == 4)
        #expect(xcodeModel.currentVersionName == "Library 4")
        let version = try XcodeModel(contentsOf: package.appendingPathComponent("Library 1.xcdatamodel"))
        #expect(version.versionNames == ["Library 1"])
        let plain = directory.file("Plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: package.appendingPathComponent("Library 2.xcdatamodel/contents"),
            to: plain.appendingPathComponent("contents"))
        let single = try XcodeModel(contentsOf: plain)
        #expect(single.versionNames == ["Plain"])
        #expect(try single.loadCurrentVersion().model.entity(named: "Book")?.attribute(named: "year")?.type == .string)
    }

    @Test func versionNamesAreInNaturalOrder() throws {
        let directory = TemporaryDirectory()
        let package = directory.file("Shop.xcdatamodeld")
        let source = fixture("Unversioned.xcdatamodeld/Shop.xcdatamodel")
        for name in ["Shop 10", "Shop 2", "Shop", "Shop 1", "Shop 02", "Shop 1b"] {
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: package.appendingPathComponent("\(name).xcdatamodel"))
        }
        try FileManager.default.copyItem(
            at: fixture("BadWrongCurrentVersion.xcdatamodeld/.xccurrentversion"),
            to: package.appendingPathComponent(".xccurrentversion"))
        let xcodeModel = try XcodeModel(contentsOf: package)
        #expect(xcodeModel.versionNames == ["Shop", "Shop 1", "Shop 1b", "Shop 2", "Shop 02", "Shop 10"])
        #expect(xcodeModel.currentVersionName == "Shop 2")
    }

    // MARK: Elements

    @Test func everyAttributeTypeAndDefaultIsParsed() throws {
        let version = try allTypes()
        #expect(version.versionIdentifier == "all-types")
        let sample = try #require(version.model.entity(named: "Sample"))
        let expected: [AttributeDescription] = [
            AttributeDescription("binaryValue", .binary, isOptional: true),
            AttributeDescription("boolValue", .boolean, defaultValue: true),
            AttributeDescription("colorValue", .binary, isOptional: true, valueTransformerName: Self.colorTransformer),
            AttributeDescription("dateValue", .date, defaultValue: Date(timeIntervalSinceReferenceDate: 694_224_000)),
            AttributeDescription("decimalValue", .decimal, defaultValue: Decimal(string: "12.5")!),
            AttributeDescription("doubleValue", .double, defaultValue: 2.5),
            AttributeDescription("falseValue", .boolean, isOptional: true, defaultValue: false),
            AttributeDescription("floatValue", .float, defaultValue: Float(1.25)),
            AttributeDescription("int16Value", .integer16, defaultValue: Int16(-7)),
            AttributeDescription("int32Value", .integer32, defaultValue: Int32(100_000)),
            AttributeDescription("int64Value", .integer64, defaultValue: Int64(9_000_000_000)),
            AttributeDescription("noDefault", .string, isOptional: true),
            AttributeDescription("stringValue", .string, defaultValue: "Untitled"),
            AttributeDescription("urlValue", .url, isOptional: true, defaultValue: URL(string: "https://example.com/books?page=1")!),
            AttributeDescription(
                "uuidValue", .uuid, isOptional: true, defaultValue: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        ]
        #expect(sample.attributes.count == expected.count)
        for (loaded, wanted) in zip(sample.attributes, expected) {
            #expect(loaded == wanted)
        }
        #expect(sample.attribute(named: "dateValue")?.defaultValue == .date(ISO8601DateFormatter().date(from: "2023-01-01T00:00:00Z")!))
        #expect(sample.relationships.isEmpty) // the fetched property is ignored
        #expect(version.model.entities.map(\.name) == ["Sample"])
        #expect(version.configurations == ["Cloud": ["Sample"]])
    }

    @Test(arguments: [
        ("Boolean", "YES", AttributeValue.bool(true)), ("Boolean", "NO", .bool(false)),
        ("Integer 16", "-32768", .int(-32768)), ("Integer 32", "2147483647", .int(2_147_483_647)),
        ("Integer 64", "-9223372036854775808", .int(.min)), ("Double", "1e3", .double(1000)),
        ("Double", "-0.5", .double(-0.5)), ("Float", "0.1", .double(Double(Float(0.1)))),
        ("Decimal", "-3.14159", .decimal(Decimal(string: "-3.14159")!)), ("Decimal", "0", .decimal(0)),
        ("String", "", .string("")), ("String", "a &amp; b", .string("a & b")),
        ("URI", "file:///tmp/x", .url(URL(string: "file:///tmp/x")!)),
    ])
    func defaultValuesAreParsedPerType(type: String, text: String, value: AttributeValue) throws {
        let (directory, url) = temporaryModel(
            """
            <entity name="Thing" representedClassName="Thing" syncable="YES">
                <attribute name="value" attributeType="\(type)" defaultValueString="\(text)"/>
            </entity>
            """)
        defer { withExtendedLifetime(directory) {} }
        let thing = try XcodeModel(contentsOf: url).loadCurrentVersion().model.entity(named: "Thing")
        #expect(thing?.attributes.first?.defaultValue == value)
    }

    /// Defaults as shipping models have them (an attribute whose type changed keeps its old
    /// default; hand edits leave spaces), read as Core Data's model compiler reads them.
    @Test(arguments: [
        ("Integer 16", "0.0", AttributeValue.int(0)), ("Integer 64", "0.0", .int(0)), ("Integer 32", "NO", .int(0)),
        ("Integer 32", "YES", .int(0)), ("Integer 32", " 12 ", .int(12)), ("Integer 64", "+42abc", .int(42)),
        ("Integer 16", "1.9", .int(1)), ("Integer 16", "100000", .int(32767)), ("Integer 32", "-3000000000", .int(-2_147_483_648)),
        ("Integer 64", "99999999999999999999", .int(.max)),
        ("Boolean", "0.0", .bool(false)), ("Boolean", "100", .bool(true)), ("Boolean", "1", .bool(true)),
        ("Boolean", "0", .bool(false)), ("Boolean", "true", .bool(true)), ("Boolean", "false", .bool(false)),
        ("Boolean", " YES", .bool(true)), ("Boolean", "y", .bool(true)), ("Boolean", "-001", .bool(true)),
        ("Boolean", "000", .bool(false)), ("Boolean", "", .bool(false)), ("Boolean", "maybe", .bool(false)),
        ("Double", "0", .double(0)), ("Double", " 1.5kg", .double(1.5)), ("Double", "abc", .double(0)),
        ("Double", ".5", .double(0.5)), ("Double", "2e", .double(2)), ("Float", "-1", .double(-1)),
        ("Decimal", " 30 ", .decimal(30)), ("Decimal", "abc", .null),
        ("UUID", "empy", .null), ("URI", "", .null), ("String", " padded ", .string(" padded ")),
    ])
    func defaultValuesAreReadLenientlyAsCoreDataDoes(type: String, text: String, value: AttributeValue) throws {
        let (directory, url) = temporaryModel(
            """
            <entity name="Thing" representedClassName="Thing" syncable="YES">
                <attribute name="value" optional="YES" attributeType="\(type)" defaultValueString="\(text)"/>
            </entity>
            """)
        defer { withExtendedLifetime(directory) {} }
        let thing = try XcodeModel(contentsOf: url).loadCurrentVersion().model.entity(named: "Thing")
        #expect(thing?.attributes.first?.defaultValue == value)
    }

    @Test func dateDefaultMayBeWrittenAsDefaultValueString() throws {
        let (directory, url) = temporaryModel(
            """
            <entity name="Thing" representedClassName="Thing" syncable="YES">
                <attribute name="when" attributeType="Date" defaultValueString="-86400.5" usesScalarValueType="NO"/>
            </entity>
            """)
        defer { withExtendedLifetime(directory) {} }
        let thing = try XcodeModel(contentsOf: url).loadCurrentVersion().model.entity(named: "Thing")
        #expect(thing?.attributes.first?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: -86400.5)))
    }

    @Test func relationshipsKeepEveryOption() throws {
        let model = try load("Relationships.xcdatamodel").model
        #expect(model.entities.map(\.name) == ["Book", "Library", "Shelf", "Tag"])
        #expect(
            model.entity(named: "Book")?.relationships == [
                RelationshipDescription("sequel", destination: "Book"),
                RelationshipDescription("shelf", destination: "Shelf", inverse: "books", deleteRule: .noAction),
                RelationshipDescription("tags", destination: "Tag", inverse: "books", toMany: true),
            ])
        #expect(
            model.entity(named: "Library")?.relationships == [
                RelationshipDescription(
                    "shelves", destination: "Shelf", inverse: "library", toMany: true, ordered: true,
                    isOptional: false, deleteRule: .cascade, minCount: 1, maxCount: 10)
            ])
        #expect(
            model.entity(named: "Shelf")?.relationships == [
                RelationshipDescription("books", destination: "Book", inverse: "shelf", toMany: true, deleteRule: .deny),
                RelationshipDescription("library", destination: "Library", inverse: "shelves", isOptional: false),
            ])
        #expect(
            model.entity(named: "Tag")?.relationships == [
                RelationshipDescription("books", destination: "Book", inverse: "tags", toMany: true, ordered: true, maxCount: 50)
            ])
        #expect(Set(model.entities.flatMap(\.relationships).map(\.deleteRule)) == [.nullify, .cascade, .deny, .noAction])
    }

    @Test func relationshipsFixtureEqualsItsCodeModel() throws {
        let fileModel = try load("Relationships.xcdatamodel").model
        let codeModel = try ObjectModel(entities: [
            EntityDescription(
                name: "Book", attributes: [AttributeDescription("title", .string)],
                relationships: [
                    RelationshipDescription("sequel", destination: "Book"),
                    RelationshipDescription("shelf", destination: "Shelf", inverse: "books", deleteRule: .noAction),
                    RelationshipDescription("tags", destination: "Tag", inverse: "books", toMany: true),
                ]),
            EntityDescription(
                name: "Library", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription(
                        "shelves", destination: "Shelf", inverse: "library", toMany: true, ordered: true,
                        isOptional: false, deleteRule: .cascade, minCount: 1, maxCount: 10)
                ]),
            EntityDescription(
                name: "Shelf", attributes: [AttributeDescription("label", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "shelf", toMany: true, deleteRule: .deny),
                    RelationshipDescription("library", destination: "Library", inverse: "shelves", isOptional: false),
                ]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("books", destination: "Book", inverse: "tags", toMany: true, ordered: true, maxCount: 50)
                ]),
        ])
        #expect(fileModel.versionHash == codeModel.versionHash)
    }

    @Test func uniquenessConstraintsAndIndexesKeepTheirOrder() throws {
        let model = try load("Constraints.xcdatamodel").model
        let edition = try #require(model.entity(named: "Edition"))
        #expect(edition.uniquenessConstraints == [["isbn"], ["title", "language", "number"]])
        #expect(edition.indexes == [IndexDescription(["year"]), IndexDescription(["title", "year"])])
        #expect(edition.attribute(named: "language") == AttributeDescription("language", .string, defaultValue: "en"))
        #expect(edition.attribute(named: "year") == AttributeDescription("year", .integer16, isOptional: true))
        // Xcode's older forms: compound indexes, then single indexed attributes.
        let reprint = try #require(model.entity(named: "Reprint"))
        #expect(reprint.indexes == [IndexDescription(["year", "run"]), IndexDescription(["printer"])])
        #expect(reprint.uniquenessConstraints.isEmpty)
    }

    @Test func renamingIdentifiersAndHashModifiersAreReturned() throws {
        let version = try load("Renaming.xcdatamodel")
        #expect(
            version.renamingIdentifiers == [
                "Volume": "Book", "Volume.heading": "title", "Volume.writer": "author",
                "Writer": "Author", "Writer.volumes": "books",
            ])
        #expect(version.versionHashModifiers == ["Volume.pages": "counted-with-covers", "Writer": "2"])
        #expect(version.model.entity(named: "Volume")?.attributes.map(\.name) == ["heading", "pages"])
        #expect(version.model.entity(named: "Volume")?.relationship(named: "writer")?.inverseName == "volumes")
    }

    @Test func subEntitiesInheritAndAbstractEntitiesAreKept() throws {
        let version = try load("Inheritance.xcdatamodel")
        let model = version.model
        #expect(model.entities.map(\.name) == ["Document", "Item", "Spreadsheet", "Tag"])
        #expect(version.abstractEntityNames == ["Item"])
        #expect(model.entity(named: "Item")?.isAbstract == true)
        #expect(model.entity(named: "Spreadsheet")?.superentity === model.entity(named: "Document"))
        let inherited = [
            AttributeDescription("created", .date, isOptional: true),
            AttributeDescription("name", .string, renamingIdentifier: "title"),
        ]
        let document = try #require(model.entity(named: "Document"))
        #expect(document.attributes == inherited + [AttributeDescription("body", .string, isOptional: true)])
        #expect(document.relationships == [RelationshipDescription("tags", destination: "Tag", toMany: true)])
        #expect(document.uniquenessConstraints == [["name"]])
        #expect(document.indexes == [IndexDescription(["created"])])
        let spreadsheet = try #require(model.entity(named: "Spreadsheet"))
        #expect(
            spreadsheet.attributes == inherited + [
                AttributeDescription("body", .string, isOptional: true),
                AttributeDescription("rows", .integer32, defaultValue: Int32(0)),
            ])
        #expect(spreadsheet.relationships == document.relationships)
        #expect(spreadsheet.uniquenessConstraints == [["name"]])
        #expect(spreadsheet.indexes == [IndexDescription(["created"])])
        #expect(version.renamingIdentifiers == ["Document.name": "title", "Item.name": "title", "Spreadsheet.name": "title"])
        #expect(version.configurations == ["Local": ["Document", "Item", "Tag"]])
    }

    @Test func registeredTransformerGivesTheStorageType() throws {
        let name = "SkerryTestsTransformer-\(UUID().uuidString)"
        let (directory, url) = temporaryModel(
            """
            <entity name="Thing" representedClassName="Thing" syncable="YES">
                <attribute name="payload" optional="YES" attributeType="Transformable" valueTransformerName="\(name)" customClassName="[String]"/>
            </entity>
            """)
        defer { withExtendedLifetime(directory) {} }
        let xcodeModel = try XcodeModel(contentsOf: url)
        func payload() throws -> AttributeDescription? {
            try xcodeModel.loadCurrentVersion().model.entity(named: "Thing")?.attributes.first
        }
        #expect(try payload() == AttributeDescription("payload", .binary, isOptional: true, valueTransformerName: name))
        XcodeModel.registerTransformer(named: name, as: .string)
        #expect(XcodeModel.registeredTransformer(named: name) == .string)
        #expect(try payload() == AttributeDescription("payload", .string, isOptional: true, valueTransformerName: name))
        XcodeModel.unregisterTransformer(named: name)
        #expect(XcodeModel.registeredTransformer(named: name) == nil)
        #expect(try payload()?.type == .binary)
    }

    /// Transformable attributes as apps write them: Core Data's default transformer (no name),
    /// NSSecureUnarchiveFromData, or a subclass of it: all stored as binary data; none fails.
    @Test func transformableAttributesAreBinaryUnlessRegistered() throws {
        let book = try #require(try load("Transformables.xcdatamodel").model.entity(named: "Book"))
        #expect(book.attributes.map(\.type) == [.binary, .binary, .binary, .binary, .string])
        #expect(
            book.attributes.map(\.valueTransformerName) == [
                "ColorsTransformer", "SkerryTestsUnregisteredTransformer", nil,
                "NSSecureUnarchiveFromData", nil,
            ])
        let stack = try makeMemoryStack(model: try load("Transformables.xcdatamodel").model)
        let context = stack.newBackgroundContext()
        let archived = Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]) // what the app's transformer produced
        try context.performAndWait {
            let object = try context.insert(entityName: "Book")
            try object.setValue("Dune", forKey: "title")
            try object.setValue(archived, forKey: "tags")
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest(entityName: "Book"))
            #expect(try fetched.first?.value(forKey: "tags", as: Data.self) == archived)
        }
    }

    // MARK: Bad files

    struct BadFixture: Sendable, CustomTestStringConvertible {
        let folder: String
        let fragments: [String]
        let entity: String?
        let key: String?
        var testDescription: String { folder }
    }

    static let badFixtures: [BadFixture] = [
        BadFixture(
            folder: "BadMalformed.xcdatamodel", fragments: ["not well-formed XML", "line 5", "entity 'Book'"], entity: nil, key: nil),
        BadFixture(
            folder: "BadUnknownType.xcdatamodel", fragments: ["line 4", "entity 'Book', attribute 'pages'", "'Integer 8' is unknown"],
            entity: "Book", key: "pages"),
        BadFixture(
            folder: "BadMissingDestination.xcdatamodel",
            fragments: ["line 5", "entity 'Book', relationship 'author'", "'Writer' is not defined"], entity: "Book", key: "author"),
        BadFixture(
            folder: "BadMissingInverse.xcdatamodel",
            fragments: ["line 9", "entity 'Book', relationship 'author'", "inverse relationship 'works' is not defined", "'Author'"],
            entity: "Book", key: "author"),
        BadFixture(
            folder: "BadDuplicateAttribute.xcdatamodel", fragments: ["line 5", "entity 'Book', attribute 'title'", "declared twice"],
            entity: "Book", key: "title"),
    ]

    @Test(arguments: badFixtures)
    func badFixtureIsRejectedWithWhereAndWhat(_ bad: BadFixture) {
        let url = fixture(bad.folder)
        expectInvalid(url, [url.appendingPathComponent("contents").path] + bad.fragments, entity: bad.entity, key: bad.key)
    }

    @Test func missingContentsFileIsAnError() throws {
        // An `elements` file that is no archive of Xcode 3's (see XcodeLegacyModelTests).
        expectInvalid(
            fixture("BadOldFormat.xcdatamodel"),
            ["BadOldFormat.xcdatamodel/elements", "not a model saved by Xcode 3 that Skerry can read", "not a binary property list"])
        let directory = TemporaryDirectory()
        let empty = directory.file("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        expectInvalid(empty, [empty.appendingPathComponent("contents").path, "no 'contents' file"])
        let emptyFile = directory.file("EmptyFile.xcdatamodel")
        try FileManager.default.createDirectory(at: emptyFile, withIntermediateDirectories: true)
        try Data().write(to: emptyFile.appendingPathComponent("contents"))
        expectInvalid(emptyFile, [emptyFile.appendingPathComponent("contents").path, "not well-formed XML"])
    }

    /// Expects opening `url` to fail with an invalid-model error whose message contains every
    /// fragment.
    private func expectInvalidFolder(_ url: URL, _ fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let error = expectError(.invalidModel, sourceLocation: sourceLocation) { _ = try XcodeModel(contentsOf: url) }
        for fragment in fragments {
            #expect(
                error?.message.contains(fragment) == true, "'\(fragment)' not in: \(error?.message ?? "-")",
                sourceLocation: sourceLocation)
        }
    }

    @Test func packageOfOneVersionNeedsNoCurrentVersionFile() throws {
        // Xcode writes no .xccurrentversion until a model gets its second version.
        let unversioned = fixture("Unversioned.xcdatamodeld")
        #expect(!FileManager.default.fileExists(atPath: unversioned.appendingPathComponent(".xccurrentversion").path))
        let model = try XcodeModel(contentsOf: unversioned)
        #expect(model.currentVersionName == "Shop")
        let product = try #require(try model.loadCurrentVersion().model.entity(named: "Product"))
        // An attribute whose type changed in Xcode keeps its old "0.0" default; Core Data reads it.
        #expect(product.attribute(named: "stock")?.defaultValue == .int(0))
        #expect(product.attribute(named: "onSale")?.defaultValue == .bool(false))
        // An empty file, or one that names no version, is the same as none.
        let directory = TemporaryDirectory()
        for (name, text) in [
            ("Empty", ""), ("Blank", "\n  \n"),
            (
                "NoName",
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string></string></dict></plist>
                """
            ),
        ] {
            let package = directory.file("\(name).xcdatamodeld")
            try FileManager.default.copyItem(at: unversioned, to: package)
            try text.write(to: package.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
            #expect(try XcodeModel(contentsOf: package).currentVersionName == "Shop", "\(name)")
        }
    }

    /// A package of several versions that names no current version opens, and each version loads
    /// by name (CoreStore's evolution demo and Habitica's old model are such packages, with a
    /// `.xccurrentversion` of `<dict/>`; they used to be refused whole); the current version is
    /// an error naming the versions.
    @Test func severalVersionsWithoutCurrentVersionLoadByNameOnly() throws {
        let directory = TemporaryDirectory()
        let package = directory.file("Shop.xcdatamodeld")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        for name in ["Shop", "Shop 2"] {
            try FileManager.default.copyItem(
                at: fixture("Unversioned.xcdatamodeld/Shop.xcdatamodel"),
                to: package.appendingPathComponent("\(name).xcdatamodel"))
        }
        func expectNoCurrentVersion(_ fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
            let model = try XcodeModel(contentsOf: package)
            #expect(model.currentVersionName == "", sourceLocation: sourceLocation)
            #expect(try model.load(version: "Shop 2").model.entity(named: "Product") != nil, sourceLocation: sourceLocation)
            let error = expectError(.invalidModel, sourceLocation: sourceLocation) { _ = try model.loadCurrentVersion() }
            expectError(.invalidModel, sourceLocation: sourceLocation) { _ = try XcodeModel.loadModel(contentsOf: package) }
            for fragment in fragments {
                #expect(
                    error?.message.contains(fragment) == true, "'\(fragment)' not in: \(error?.message ?? "-")",
                    sourceLocation: sourceLocation)
            }
        }
        try expectNoCurrentVersion([
            package.appendingPathComponent(".xccurrentversion").path, "the file is missing",
            "no current version", "2 versions", "'Shop', 'Shop 2'",
        ])
        try "".write(to: package.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        try expectNoCurrentVersion(["the file is empty", "'Shop', 'Shop 2'"])
        try "not a plist".write(to: package.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        try expectNoCurrentVersion(["not a property list", "'Shop', 'Shop 2'"])
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict/></plist>
        """.write(to: package.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        try expectNoCurrentVersion(["'_XCCurrentVersionName'", "'Shop', 'Shop 2'"])
    }

    @Test func currentVersionNotInThePackageIsAnError() throws {
        let wrong = fixture("BadWrongCurrentVersion.xcdatamodeld")
        expectInvalidFolder(
            wrong,
            [
                wrong.appendingPathComponent(".xccurrentversion").path,
                "'Shop 2.xcdatamodel' is not in the package", "'Shop'",
            ])
    }

    @Test func foldersThatAreNotModelsAreErrors() throws {
        let directory = TemporaryDirectory()
        let nowhere = directory.file("Nowhere.xcdatamodeld")
        expectInvalidFolder(nowhere, [nowhere.path, "no such model folder"])
        let file = directory.file("File.xcdatamodel")
        try Data("x".utf8).write(to: file)
        expectInvalidFolder(file, [file.path, "not a file"])
        let emptyPackage = directory.file("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: emptyPackage, withIntermediateDirectories: true)
        expectInvalidFolder(emptyPackage, [emptyPackage.path, "holds no .xcdatamodel version"])
        let other = directory.file("Other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        expectInvalidFolder(other, [other.path, "is not an Xcode model"])
    }

    @Test func otherXMLIsNotAModel() {
        let (directory, url) = temporaryModel("")
        defer { withExtendedLifetime(directory) {} }
        try! #"<?xml version="1.0"?><plist version="1.0"><dict/></plist>"#
            .write(to: url.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        expectInvalid(url, ["<plist>", "not an Xcode data model"])
    }

    static let entityBook = #"<entity name="Book" representedClassName="Book" syncable="YES">"#
    static let entityAuthor = #"<entity name="Author" representedClassName="Author" syncable="YES">"#

    @Test func inverseThatDoesNotPointBackIsAnError() {
        expectInvalidBody(
            """
            \(Self.entityAuthor)
                <attribute name="name" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="editor" inverseEntity="Book"/>
                <relationship name="edited" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="editor" inverseEntity="Book"/>
            </entity>
            \(Self.entityBook)
                <relationship name="editor" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="edited" inverseEntity="Author"/>
            </entity>
            """, ["line 5", "entity 'Author', relationship 'books'", "does not point back"], entity: "Author", key: "books")
    }

    @Test func inverseEntityOtherThanTheDestinationIsAnError() {
        expectInvalidBody(
            """
            \(Self.entityAuthor)
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Shelf"/>
            </entity>
            \(Self.entityBook)
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            </entity>
            """, ["entity 'Author', relationship 'books'", "inverse entity 'Shelf'"], entity: "Author", key: "books")
    }

    @Test func duplicateEntitiesAndPropertiesAreErrors() {
        expectInvalidBody(
            """
            \(Self.entityBook)
                <attribute name="title" attributeType="String"/>
            </entity>
            <entity name="BOOK" representedClassName="BOOK" syncable="YES">
                <attribute name="title" attributeType="String"/>
            </entity>
            """, ["line 6", "entity 'BOOK'", "entity name is used twice (first on line 3)"], entity: "BOOK")
        expectInvalidBody(
            """
            \(Self.entityBook)
                <attribute name="title" attributeType="String"/>
                <relationship name="Title" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book"/>
            </entity>
            """, ["line 5", "entity 'Book', relationship 'Title'", "declared twice"], entity: "Book", key: "Title")
        expectInvalidBody(
            """
            <entity name="Item" representedClassName="Item" isAbstract="YES" syncable="YES">
                <attribute name="name" attributeType="String"/>
            </entity>
            <entity name="Note" representedClassName="Note" parentEntity="Item" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
            """, ["line 7", "entity 'Note', attribute 'name'", "declared in both 'Item' and 'Note'"], entity: "Note", key: "name")
    }

    @Test func inheritanceProblemsAreErrors() {
        expectInvalidBody(
            """
            <entity name="Note" representedClassName="Note" parentEntity="Item" syncable="YES">
                <attribute name="text" attributeType="String"/>
            </entity>
            """, ["line 3", "entity 'Note', parent entity 'Item'", "not defined"], entity: "Note", key: "Item")
        expectInvalidBody(
            """
            <entity name="A" representedClassName="A" parentEntity="B" syncable="YES"/>
            <entity name="B" representedClassName="B" parentEntity="A" syncable="YES"/>
            """, ["entity 'B', parent entity 'A'", "cycle: A -> B -> A"], entity: "B")
        expectInvalidBody(
            """
            <entity name="A" representedClassName="A" parentEntity="A" syncable="YES"/>
            """, ["entity 'A', parent entity 'A'", "cycle: A -> A."], entity: "A")
    }

    @Test func constraintsAndCompoundIndexesThatListNoPropertyAreErrors() {
        expectInvalidBody(
            """
            \(Self.entityBook)
                <attribute name="title" attributeType="String"/>
                <uniquenessConstraints>
                    <uniquenessConstraint/>
                </uniquenessConstraints>
            </entity>
            """, ["line 6", "entity 'Book'", "a uniqueness constraint lists no property"], entity: "Book")
        expectInvalidBody(
            """
            \(Self.entityBook)
                <attribute name="title" attributeType="String"/>
                <compoundIndexes>
                    <compoundIndex/>
                </compoundIndexes>
            </entity>
            """, ["line 6", "entity 'Book'", "a compound index lists no property"], entity: "Book")
    }

    @Test func unsupportedAttributesAndBadOptionsAreErrors() {
        func attribute(_ text: String) -> String {
            "\(Self.entityBook)\n    \(text)\n</entity>"
        }
        expectInvalidBody(
            attribute(#"<attribute name="draft" optional="YES" attributeType="Undefined"/>"#),
            ["line 4", "attribute 'draft'", "attributes of type 'Undefined' are not supported"], entity: "Book", key: "draft")
        expectInvalidBody(
            attribute(
                #"<attribute name="count" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="FUNCTION(self, 'pages')"/>"#
            ),
            ["attribute 'count'", "the derivation 'FUNCTION(self, 'pages')' is not one Skerry computes"], key: "count")
        expectInvalidBody(
            attribute(
                #"<attribute name="count" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="pages.@count"/>"#),
            ["'Book.count'", "needs 'pages' to be a to-many relationship of 'Book'"], key: "count")
        expectInvalidBody(
            attribute(#"<attribute name="size" optional="YES" attributeType="Composite" composite="Size"/>"#),
            ["attribute 'size'", "the composite 'Size' it names is not defined"], key: "size")
        expectInvalidBody(attribute(#"<attribute name="title"/>"#), ["attribute 'title'", "no attributeType"], key: "title")
        expectInvalidBody(
            attribute(#"<attribute attributeType="String"/>"#), ["entity 'Book'", "an attribute has no name"], entity: "Book")
        expectInvalidBody(
            attribute(#"<relationship name="r" optional="YES" maxCount="1" deletionRule="Delete" destinationEntity="Book"/>"#),
            ["relationship 'r'", "deletion rule 'Delete' is unknown"], key: "r")
        expectInvalidBody(
            attribute(
                #"<relationship name="r" optional="YES" toMany="YES" minCount="-1" deletionRule="Nullify" destinationEntity="Book"/>"#),
            ["relationship 'r'", "minCount '-1' is not a count"], key: "r")
        expectInvalidBody(
            attribute(#"<relationship name="r" optional="YES" maxCount="1" deletionRule="Nullify"/>"#),
            ["relationship 'r'", "no destination entity"], key: "r")
    }

    /// Text that is no value of the type never fails a load: Core Data's compiler reads the
    /// number it starts with, or none.
    @Test(arguments: [
        ("Integer 16", "40000", AttributeValue.int(32767)), ("Integer 32", "2147483648", .int(2_147_483_647)),
        ("Integer 64", "1.5", .int(1)), ("Double", "nan", .double(0)), ("Double", "two", .double(0)),
        ("Decimal", "12,5", .decimal(12)), ("Decimal", "1.2.3", .decimal(Decimal(string: "1.2")!)),
        ("Date", "2023-01-01", .date(Date(timeIntervalSinceReferenceDate: 2023))), ("Date", "soon", .null),
        ("UUID", "not-a-uuid", .null), ("URI", "", .null), ("Binary", "AAAA", .null),
    ])
    func defaultTextThatIsNoValueLoads(type: String, text: String, value: AttributeValue) throws {
        let key = type == "Date" ? "defaultDateTimeInterval" : "defaultValueString"
        let (directory, url) = temporaryModel(
            """
            \(Self.entityBook)
                <attribute name="value" optional="YES" attributeType="\(type)" \(key)="\(text)"/>
            </entity>
            """)
        defer { withExtendedLifetime(directory) {} }
        let book = try XcodeModel(contentsOf: url).loadCurrentVersion().model.entity(named: "Book")
        #expect(book?.attribute(named: "value")?.defaultValue == value)
    }

    @Test func rTreeIndexesAreOrdinaryAndExpressionIndexesLeftOut() throws {
        let (directory, url) = temporaryModel(
            """
            \(Self.entityBook)
                <attribute name="place" attributeType="String"/>
                <fetchIndex name="byPlace">
                    <fetchIndexElement property="place" type="RTree" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="byLength">
                    <fetchIndexElement expression="length:(place)" expressionType="Integer 64" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            """)
        defer { withExtendedLifetime(directory) {} }
        let book = try XcodeModel(contentsOf: url).loadCurrentVersion().model.entity(named: "Book")
        #expect(book?.indexes == [IndexDescription(["place"])])
    }

    @Test func problemsFoundByModelValidationNameTheFile() {
        expectInvalidBody(
            """
            \(Self.entityBook)
                <attribute name="title" attributeType="String"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="isbn"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            """, ["line 3", "'isbn'", "not one of its stored attributes"], entity: "Book", key: "isbn")
        expectInvalidBody(
            """
            <entity name="Book-Entity" representedClassName="Book" syncable="YES"/>
            """, ["'Book-Entity' is not a valid entity name"], entity: "Book-Entity")
        expectInvalidBody(
            """
            <entity name="Book" representedClassName="Book" syncable="YES"/>
            <configuration name="Cloud">
                <memberEntity name="Missing"/>
            </configuration>
            """, ["configuration 'Cloud'", "'Missing'"])
    }

    // MARK: Stores

    @Test func modelFromAFileLoadsAStoreThatSavesAndFetches() throws {
        let model = try XcodeModel.loadModel(contentsOf: fixture("Library.xcdatamodeld"))
        let stack = PersistentStack(name: "XcodeLibrary", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Ursula K. Le Guin", forKey: "name")
            let book = try context.insert(entityName: "Book")
            try book.setValue("The Dispossessed", forKey: "title")
            try book.setValue("1974", forKey: "year")
            try book.setValue("978-0060512750", forKey: "isbn")
            try book.setRelatedObject(author, forKey: "author")
            let publisher = try context.insert(entityName: "Publisher")
            try publisher.setValue("Harper & Row", forKey: "name")
            _ = try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let books = try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(books.count == 1)
            let book = try #require(books.first)
            #expect(try book.value(forKey: "title", as: String.self) == "The Dispossessed")
            #expect(try book.value(forKey: "year", as: String.self) == "1974")
            #expect(try book.value(forKey: "price", as: Double.self) == 0) // the file's default
            let author = try #require(try book.relatedObject(forKey: "author"))
            #expect(try author.value(forKey: "name", as: String.self) == "Ursula K. Le Guin")
            #expect(try author.relatedObjects(forKey: "books").count == 1)
            #expect(try reader.fetch(FetchRequest(entityName: "Publisher")).count == 1)
            // The file's uniqueness constraint is enforced.
            let copy = try reader.insert(entityName: "Book")
            try copy.setValue("Copy", forKey: "title")
            try copy.setValue("1974", forKey: "year")
            try copy.setValue("978-0060512750", forKey: "isbn")
            let error = expectError(.constraintViolation) { _ = try reader.save() }
            #expect(error != nil)
        }
    }

    @Test func everyTypeFixtureStoresItsDefaults() throws {
        let model = try allTypes().model
        let stack = try makeMemoryStack(model: model)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try context.insert(entityName: "Sample")
            _ = try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let sample = try #require(try reader.fetch(FetchRequest(entityName: "Sample")).first)
            #expect(try sample.value(forKey: "boolValue", as: Bool.self) == true)
            #expect(try sample.value(forKey: "int64Value", as: Int64.self) == 9_000_000_000)
            #expect(try sample.value(forKey: "decimalValue", as: Decimal.self) == Decimal(string: "12.5"))
            #expect(try sample.value(forKey: "dateValue", as: Date.self) == Date(timeIntervalSinceReferenceDate: 694_224_000))
            #expect(try sample.value(forKey: "uuidValue", as: UUID?.self) == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            #expect(try sample.value(forKey: "noDefault", as: String?.self) == nil)
        }
    }
}
