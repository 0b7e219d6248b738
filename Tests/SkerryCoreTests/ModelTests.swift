import Foundation
import Testing

@testable import SkerryCore

/// Model validation and the model's version hash.
@Suite struct ModelTests {

    // MARK: Helpers

    /// Expects `entities` to be rejected as an invalid model and returns the error.
    @discardableResult
    private func expectInvalid(_ entities: [EntityDescription], sourceLocation: SourceLocation = #_sourceLocation) -> SkerryError? {
        let error = #expect(throws: SkerryError.self, sourceLocation: sourceLocation) {
            try ObjectModel(entities: entities)
        }
        #expect(error?.code == .invalidModel, sourceLocation: sourceLocation)
        return error
    }

    private func entity(
        _ name: String = "Thing", _ attributes: [AttributeDescription] = [AttributeDescription("name", .string)],
        relationships: [RelationshipDescription] = [], unique: [[String]] = [],
        indexes: [IndexDescription] = []
    ) -> EntityDescription {
        EntityDescription(
            name: name, attributes: attributes, relationships: relationships,
            uniquenessConstraints: unique, indexes: indexes)
    }

    /// Author <->> Book, a valid pair of inverse relationships.
    private func library(
        bookToAuthor: RelationshipDescription = RelationshipDescription("author", destination: "Author", inverse: "books"),
        authorToBooks: RelationshipDescription = RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)
    ) -> [EntityDescription] {
        [
            entity("Book", [AttributeDescription("title", .string)], relationships: [bookToAuthor]),
            entity("Author", [AttributeDescription("name", .string)], relationships: [authorToBooks]),
        ]
    }

    // MARK: Valid models

    @Test func validModelIsAccepted() throws {
        let model = try ObjectModel(
            entities: library() + [
                entity(
                    "order",
                    [
                        AttributeDescription("select", .string), AttributeDescription("a_1", .integer16, defaultValue: Int16(-32768)),
                        AttributeDescription("B2", .integer32, defaultValue: Int32.max),
                    ],
                    unique: [["select", "a_1"]], indexes: [IndexDescription(["B2"]), IndexDescription(["a_1", "select"])])
            ])
        #expect(model.entities.map(\.name) == ["Book", "Author", "order"])
        #expect(model.entity(named: "Book")?.relationship(named: "author")?.destinationEntityName == "Author")
        #expect(model.entity(named: "order")?.attribute(named: "B2")?.defaultValue == .int(Int64(Int32.max)))
        #expect(model.entity(named: "Nope") == nil)
    }

    @Test func fixtureModelIsValid() throws {
        let model = try ObjectModel(entities: [Fixtures.bookEntity(), Fixtures.authorEntity()])
        #expect(model.entity(named: "Book")?.attributes.count == 13)
    }

    @Test(arguments: ["a", "Z", "abc_DEF_123", "x1", "A_", "sqlite", "sqlitex", "Sqlite2"])
    func validNamesAreAccepted(name: String) throws {
        _ = try ObjectModel(entities: [entity(name, [AttributeDescription(name, .string)])])
    }

    // MARK: Invalid names

    static let invalidNames = [
        "", "1abc", "9", "_abc", "_", "sqlite_x", "SQLITE_master", "Sqlite_Thing",
        "has space", " lead", "trail ", "a-b", "a.b", "ü", "naïve", "a\"b", "tab\t", "emoji😀",
    ]

    @Test(arguments: invalidNames)
    func invalidEntityNameIsRejected(name: String) {
        let error = expectInvalid([entity(name)])
        #expect(error?.entityName == name)
    }

    /// An attribute may also be an element of a composite attribute, "composite.element"; the
    /// parts must be names, and the entity's names stay unique.
    @Test(arguments: invalidNames.filter { $0 != "a.b" } + ["a.", ".a", "a..b", "a.1", "a.sqlite_x"])
    func invalidAttributeNameIsRejected(name: String) {
        let error = expectInvalid([entity("Thing", [AttributeDescription(name, .string)])])
        #expect(error?.entityName == "Thing")
        #expect(error?.key == name)
    }

    @Test(arguments: invalidNames)
    func invalidRelationshipNameIsRejected(name: String) {
        expectInvalid([entity("Thing", relationships: [RelationshipDescription(name, destination: "Thing")])])
    }

    // MARK: Duplicates

    @Test(arguments: [("Book", "Book"), ("Book", "book"), ("BOOK", "book"), ("aB", "Ab")])
    func duplicateEntityNamesAreRejected(first: String, second: String) {
        let error = expectInvalid([entity(first), entity(second)])
        #expect(error?.message.contains("used twice") == true)
    }

    @Test func duplicateEntityNameAmongOthersIsRejected() {
        expectInvalid([entity("A"), entity("B"), entity("C"), entity("b")])
    }

    @Test(arguments: [("title", "title"), ("title", "Title"), ("TITLE", "title")])
    func duplicateAttributeNamesAreRejected(first: String, second: String) {
        let error = expectInvalid([entity("Thing", [AttributeDescription(first, .string), AttributeDescription(second, .integer64)])])
        #expect(error?.entityName == "Thing")
        #expect(error?.key == second)
    }

    @Test func attributeAndRelationshipWithTheSameNameAreRejected() {
        expectInvalid([
            entity(
                "Thing", [AttributeDescription("other", .string)],
                relationships: [RelationshipDescription("Other", destination: "Thing")])
        ])
    }

    @Test func duplicateRelationshipNamesAreRejected() {
        expectInvalid([
            entity(
                "Thing",
                relationships: [
                    RelationshipDescription("next", destination: "Thing"),
                    RelationshipDescription("next", destination: "Thing"),
                ])
        ])
    }

    @Test func sameAttributeNameInDifferentEntitiesIsFine() throws {
        _ = try ObjectModel(entities: [entity("A"), entity("B")])
    }

    // MARK: Default values

    static let misfittingDefaults: [(AttributeType, AttributeValue)] = [
        (.string, .int(1)), (.string, .data(Data())), (.integer32, .string("1")), (.integer64, .double(1)),
        (.boolean, .int(1)), (.double, .int(1)), (.float, .decimal(1)), (.decimal, .double(1.5)),
        (.date, .double(0)), (.binary, .string("")), (.uuid, .string(UUID().uuidString)),
        (.url, .string("https://example.com")), (.integer16, .bool(true)),
    ]

    @Test(arguments: misfittingDefaults)
    func defaultValueOfTheWrongTypeIsRejected(type: AttributeType, value: AttributeValue) {
        let error = expectInvalid([entity("Thing", [AttributeDescription("field", type, defaultValue: value)])])
        #expect(error?.key == "field")
        #expect(error?.message.contains("Thing.field") == true)
    }

    @Test(arguments: [
        (AttributeType.integer16, Int64(Int16.max) + 1), (.integer16, Int64(Int16.min) - 1),
        (.integer16, 40_000), (.integer16, Int64.min),
        (.integer32, Int64(Int32.max) + 1), (.integer32, Int64(Int32.min) - 1),
    ])
    func integerDefaultOutOfRangeIsRejected(type: AttributeType, value: Int64) {
        let error = expectInvalid([entity("Thing", [AttributeDescription("count", type, defaultValue: value)])])
        #expect(error?.key == "count")
    }

    @Test(arguments: [
        (AttributeType.integer16, Int64(Int16.max)), (.integer16, Int64(Int16.min)),
        (.integer32, Int64(Int32.max)), (.integer32, Int64(Int32.min)),
        (.integer64, Int64.max), (.integer64, Int64.min),
    ])
    func integerDefaultAtTheLimitIsAccepted(type: AttributeType, value: Int64) throws {
        let model = try ObjectModel(entities: [entity("Thing", [AttributeDescription("count", type, defaultValue: value)])])
        #expect(model.entity(named: "Thing")?.attribute(named: "count")?.defaultValue == .int(value))
    }

    @Test func fittingDefaultsOfEveryTypeAreAccepted() throws {
        let attributes = [
            AttributeDescription("b", .boolean, defaultValue: true),
            AttributeDescription("f", .float, defaultValue: Float(1.5)),
            AttributeDescription("d", .double, defaultValue: 2.5),
            AttributeDescription("m", .decimal, defaultValue: Decimal(string: "1.25")!),
            AttributeDescription("t", .date, defaultValue: Date(timeIntervalSince1970: 0)),
            AttributeDescription("s", .string, defaultValue: ""),
            AttributeDescription("x", .binary, defaultValue: Data()),
            AttributeDescription("u", .uuid, defaultValue: UUID()),
            AttributeDescription("l", .url, defaultValue: URL(string: "https://example.com")!),
            AttributeDescription("o", .string, isOptional: true),
        ]
        _ = try ObjectModel(entities: [entity("Thing", attributes)])
    }

    // MARK: Relationships

    @Test func relationshipsWithInversesAreAccepted() throws {
        _ = try ObjectModel(entities: library())
        // A to-one relationship to its own entity without an inverse.
        _ = try ObjectModel(entities: [entity("Node", relationships: [RelationshipDescription("parent", destination: "Node")])])
    }

    @Test func relationshipToAMissingEntityIsRejected() {
        let error = expectInvalid([entity("Book", relationships: [RelationshipDescription("author", destination: "Author")])])
        #expect(error?.entityName == "Book")
        #expect(error?.key == "author")
        #expect(error?.message.contains("Author") == true)
    }

    @Test func relationshipDestinationIsCaseSensitive() {
        expectInvalid(library(bookToAuthor: RelationshipDescription("author", destination: "author", inverse: "books")))
    }

    @Test func missingInverseIsRejected() {
        let error = expectInvalid(library(bookToAuthor: RelationshipDescription("author", destination: "Author", inverse: "works")))
        #expect(error?.entityName == "Book")
        #expect(error?.key == "author")
    }

    @Test func inverseThatIsAnAttributeIsRejected() {
        expectInvalid(library(bookToAuthor: RelationshipDescription("author", destination: "Author", inverse: "name")))
    }

    @Test func inverseNotPointingBackIsRejected() {
        // Book.author names Author.books as its inverse, but Author.books names Book.coauthor.
        let entities = [
            entity(
                "Book",
                relationships: [
                    RelationshipDescription("author", destination: "Author", inverse: "books"),
                    RelationshipDescription("coauthor", destination: "Author", inverse: "books"),
                ]),
            entity("Author", relationships: [RelationshipDescription("books", destination: "Book", inverse: "coauthor", toMany: true)]),
        ]
        let error = expectInvalid(entities)
        #expect(error?.key == "author")
        #expect(error?.message.contains("does not point back") == true)
    }

    @Test func inverseWithNoInverseOfItsOwnIsRejected() {
        expectInvalid(library(authorToBooks: RelationshipDescription("books", destination: "Book", toMany: true)))
    }

    @Test func inversePointingToAnotherEntityIsRejected() {
        let entities = [
            entity("Book", relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
            entity("Author", relationships: [RelationshipDescription("books", destination: "Shelf", inverse: "author", toMany: true)]),
            entity("Shelf", relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")]),
        ]
        expectInvalid(entities)
    }

    @Test func orderedToOneIsRejected() {
        let error = expectInvalid([entity("Node", relationships: [RelationshipDescription("parent", destination: "Node", ordered: true)])])
        #expect(error?.key == "parent")
        #expect(error?.message.contains("ordered") == true)
    }

    @Test func orderedToManyIsAccepted() throws {
        _ = try ObjectModel(entities: [
            entity("Node", relationships: [RelationshipDescription("children", destination: "Node", toMany: true, ordered: true)])
        ])
    }

    @Test(arguments: [(-1, 0), (0, -1), (5, 2)])
    func invalidCountRangeIsRejected(minCount: Int, maxCount: Int) {
        expectInvalid([
            entity(
                "Node",
                relationships: [
                    RelationshipDescription(
                        "children", destination: "Node", toMany: true,
                        minCount: minCount, maxCount: maxCount)
                ])
        ])
    }

    // MARK: Constraints and indexes

    @Test func uniquenessConstraintOnUnknownAttributeIsRejected() {
        let error = expectInvalid([entity("Thing", unique: [["name"], ["serial"]])])
        #expect(error?.key == "serial")
    }

    @Test func uniquenessConstraintOnARelationshipIsRejected() {
        expectInvalid([entity("Node", relationships: [RelationshipDescription("parent", destination: "Node")], unique: [["parent"]])])
    }

    @Test func indexOnUnknownAttributeIsRejected() {
        let error = expectInvalid([entity("Thing", indexes: [IndexDescription(["name", "missing"])])])
        #expect(error?.key == "missing")
    }

    @Test func attributeNamesInConstraintsAreCaseSensitive() {
        expectInvalid([entity("Thing", unique: [["Name"]])])
    }

    @Test func emptyConstraintOrIndexIsRejected() {
        expectInvalid([entity("Thing", unique: [[]])])
        expectInvalid([entity("Thing", indexes: [IndexDescription([])])])
    }

    // MARK: Version hash

    private func isLowercaseHex16(_ hash: String) -> Bool {
        hash.count == 16 && hash.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    @Test func versionHashIsStableAndSixteenHexDigits() throws {
        let first = Fixtures.model().versionHash
        let second = Fixtures.model().versionHash
        #expect(first == second)
        #expect(isLowercaseHex16(first), "\(first)")
        #expect(isLowercaseHex16(try ObjectModel(entities: []).versionHash))
        #expect(isLowercaseHex16(try ObjectModel(entities: [entity("A")]).versionHash))
    }

    @Test func versionHashMatchesTheFNV1aOfItsCanonicalText() {
        // The hash is documented as stable across processes and platforms: pin the algorithm.
        #expect(ObjectModel.fnv1a64Hex("") == "cbf29ce484222325")
        #expect(ObjectModel.fnv1a64Hex("a") == "af63dc4c8601ec8c")
        #expect(ObjectModel.fnv1a64Hex("foobar") == "85944171f73967e8")
    }

    @Test func versionHashDoesNotDependOnEntityOrder() throws {
        let forward = try ObjectModel(entities: [Fixtures.bookEntity(), Fixtures.authorEntity()])
        let backward = try ObjectModel(entities: [Fixtures.authorEntity(), Fixtures.bookEntity()])
        #expect(forward.versionHash == backward.versionHash)
        let related = try ObjectModel(entities: library())
        let relatedBackward = try ObjectModel(entities: library().reversed())
        #expect(related.versionHash == relatedBackward.versionHash)
    }

    /// Each variant changes one thing the store depends on; every one must give a hash of its own.
    @Test func versionHashChangesWithEveryStoredAspect() throws {
        func model(
            _ attributes: [AttributeDescription], name: String = "Thing", unique: [[String]] = [],
            indexes: [IndexDescription] = [], relationships: [RelationshipDescription] = []
        ) throws -> String {
            try ObjectModel(entities: [entity(name, attributes, relationships: relationships, unique: unique, indexes: indexes)])
                .versionHash
        }
        let a = AttributeDescription("a", .string)
        let b = AttributeDescription("b", .integer32, isOptional: true)
        let base = try model([a, b])
        let variants: [(String, String)] = [
            ("attribute type", try model([a, AttributeDescription("b", .integer64, isOptional: true)])),
            ("optionality", try model([a, AttributeDescription("b", .integer32)])),
            ("required to optional", try model([AttributeDescription("a", .string, isOptional: true), b])),
            ("attribute name", try model([a, AttributeDescription("c", .integer32, isOptional: true)])),
            ("attribute name case", try model([a, AttributeDescription("B", .integer32, isOptional: true)])),
            ("entity name", try model([a, b], name: "Other")),
            ("added attribute", try model([a, b, AttributeDescription("c", .string, isOptional: true)])),
            ("removed attribute", try model([a])),
            ("uniqueness constraint", try model([a, b], unique: [["a"]])),
            ("index", try model([a, b], indexes: [IndexDescription(["b"])])),
            ("relationship", try model([a, b], relationships: [RelationshipDescription("next", destination: "Thing")])),
        ]
        var seen: [String: String] = ["base": base]
        for (what, hash) in variants {
            #expect(hash != base, "changing the \(what) must change the hash")
            if let clash = seen.first(where: { $0.value == hash }) {
                Issue.record("\(what) and \(clash.key) have the same hash \(hash)")
            }
            seen[what] = hash
        }
        #expect(try model([a, b]) == base)
    }

    @Test func versionHashChangesWithRelationshipDetails() throws {
        func hash(_ r: RelationshipDescription) throws -> String {
            try ObjectModel(entities: [entity("Node", relationships: [r])]).versionHash
        }
        let base = try hash(RelationshipDescription("children", destination: "Node", toMany: true))
        #expect(try hash(RelationshipDescription("children", destination: "Node", toMany: true, ordered: true)) != base)
        #expect(try hash(RelationshipDescription("children", destination: "Node", toMany: true, isOptional: false)) != base)
        #expect(try hash(RelationshipDescription("children", destination: "Node", toMany: true, deleteRule: .cascade)) != base)
        #expect(try hash(RelationshipDescription("children", destination: "Node", toMany: true, maxCount: 3)) != base)
        #expect(try hash(RelationshipDescription("children", destination: "Node")) != base)
    }

    @Test func versionHashDistinguishesWhereAnAttributeLives() throws {
        // Moving an attribute from one entity to another keeps the same names but not the same store.
        let one = try ObjectModel(entities: [
            entity("A", [AttributeDescription("x", .string), AttributeDescription("y", .string)]),
            entity("B", [AttributeDescription("z", .string)]),
        ])
        let two = try ObjectModel(entities: [
            entity("A", [AttributeDescription("x", .string)]),
            entity("B", [AttributeDescription("y", .string), AttributeDescription("z", .string)]),
        ])
        #expect(one.versionHash != two.versionHash)
    }
}
