import Foundation
import Testing

@testable import SkerryCore

/// Transient attributes (in memory only) and derived attributes (computed at save), from the
/// hand-written Transients.xcdatamodel in Xcode's shape.
@Suite struct TransientAndDerivedTests {
    static let model = try! XcodeModel(contentsOf: FixtureFiles.url("Transients.xcdatamodel")).loadCurrentVersion().model

    @Test func transientAttributesAreLoadedAndNeverStored() throws {
        let manga = try #require(Self.model.entity(named: "Manga"))
        #expect(manga.attributes.map(\.name) == ["chapterCount", "searchTitle", "title", "touched", "isSelected", "scratch"])
        #expect(manga.storedAttributes.map(\.name) == ["chapterCount", "searchTitle", "title", "touched"])
        #expect(manga.attribute(named: "isSelected")?.isTransient == true)
        let directory = TemporaryDirectory()
        let url = directory.file("Manga.sqlite")
        let stack = try makeFileStack(directory, model: Self.model, name: "Manga")
        #expect(try rawSQL(url, "SELECT name FROM pragma_table_info('Manga') WHERE name IN ('isSelected', 'scratch')") == [])
        _ = url

        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let object = try context.insert(entityName: "Manga")
            try object.setValue("Blame!", forKey: "title")
            #expect(try object.value(forKey: "isSelected", as: Bool.self) == false) // its default
            try object.setValue(true, forKey: "isSelected")
            try object.setValue(Data([1, 2]), forKey: "scratch")
            try context.save()
            #expect(try object.value(forKey: "isSelected", as: Bool.self) == true) // kept in memory
            // A transient-only change saves without writing it.
            try object.setValue(Data([3]), forKey: "scratch")
            try context.save()
            #expect(try object.value(forKey: "scratch", as: Data?.self) == Data([3]))

            // Refresh drops it: the object reloads from the store, which does not keep it.
            try context.refresh(object, mergeChanges: false)
            #expect(try object.value(forKey: "isSelected", as: Bool.self) == false)
            #expect(try object.value(forKey: "scratch", as: Data?.self) == nil)
            try object.setValue(true, forKey: "isSelected")

            // Another context, or this one after a reset, starts from the default.
            let id = object.objectID
            context.reset()
            #expect(try context.existingObject(with: id).value(forKey: "isSelected", as: Bool.self) == false)

            // A store cannot fetch or sort by what it does not keep.
            let error = expectError(.unknownAttribute) {
                _ = try context.fetch(FetchRequest(entityName: "Manga", predicate: AttributeKey("isSelected") == true))
            }
            #expect(error?.message.contains("transient") == true)
            expectError(.unknownAttribute) { _ = try context.fetch(FetchRequest(entityName: "Manga", sortKeys: [SortKey("isSelected")])) }
        }
    }

    @Test func derivedAttributesAreComputedWhenTheObjectIsSaved() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory, model: Self.model, name: "Manga")
        let url = directory.file("Manga.sqlite")
        let context = stack.newBackgroundContext()
        let before = Date()
        try context.performAndWait {
            let manga = try context.insert(entityName: "Manga")
            try manga.setValue("Ōkami Café", forKey: "title")
            for title in ["One", "Two"] {
                let chapter = try context.insert(entityName: "Chapter")
                try chapter.setValue(title, forKey: "title")
                try chapter.setRelatedObject(manga, forKey: "manga")
            }
            #expect(try manga.value(forKey: "chapterCount", as: Int64?.self) == nil) // computed at save
            try context.save()
            #expect(try manga.value(forKey: "chapterCount", as: Int64.self) == 2)
            #expect(try manga.value(forKey: "searchTitle", as: String.self) == "okami cafe")
            let touched = try manga.value(forKey: "touched", as: Date.self)
            #expect(touched >= before.addingTimeInterval(-1))

            // Adding a chapter through the chapter's side recomputes the count on save.
            let three = try context.insert(entityName: "Chapter")
            try three.setValue("Three", forKey: "title")
            try three.setRelatedObject(manga, forKey: "manga")
            try context.save()
            #expect(try manga.value(forKey: "chapterCount", as: Int64.self) == 3)

            // Derived values are stored: a fetch can filter by them.
            let found = try context.fetch(FetchRequest(entityName: "Manga", predicate: AttributeKey("searchTitle") == "okami cafe"))
            #expect(found == [manga])
        }
        #expect(try rawSQL(url, "SELECT chapterCount, searchTitle FROM Manga") == [["3", "okami cafe"]])
    }

    @Test func derivationsParseAsXcodeWritesThem() {
        #expect(AttributeDerivation(expression: "chapters.@count") == .count(relationship: "chapters"))
        #expect(
            AttributeDerivation(expression: "items.@sum.price") == .aggregate(function: "sum", relationship: "items", attribute: "price"))
        #expect(AttributeDerivation(expression: "canonical:(name)") == .function(name: "canonical", keyPath: "name"))
        #expect(AttributeDerivation(expression: "now()") == .now)
        #expect(AttributeDerivation(expression: "author.name") == .keyPath("author.name"))
        #expect(AttributeDerivation(expression: "FUNCTION(self, 'x')") == nil)
    }
}

extension TransientAndDerivedTests {
    /// Xcode writes no attributeType for a transient attribute of type Undefined (any value):
    /// Skerry keeps such a value as Data.
    @Test func anUndefinedTransientAttributeHoldsData() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("Undefined.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="cache" optional="YES" transient="YES"/>
                <attribute name="text" attributeType="String"/>
            </entity>
        </model>
        """.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let note = try #require(try XcodeModel(contentsOf: folder).loadCurrentVersion().model.entity(named: "Note"))
        #expect(note.attribute(named: "cache") == AttributeDescription("cache", .binary, isOptional: true, isTransient: true))
    }
}

extension TransientAndDerivedTests {
    @Test func transientRelationshipsLiveInMemoryOnly() throws {
        let manga = try #require(Self.model.entity(named: "Manga"))
        #expect(manga.relationship(named: "reading")?.isTransient == true)
        let directory = TemporaryDirectory()
        let url = directory.file("Manga.sqlite")
        let stack = try makeFileStack(directory, model: Self.model, name: "Manga")
        // No column, no join table.
        #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%reading%' OR sql LIKE '%readingIn%'") == [["0"]])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let series = try context.insert(entityName: "Manga")
            try series.setValue("Blame!", forKey: "title")
            let chapter = try context.insert(entityName: "Chapter")
            try chapter.setValue("Log 1", forKey: "title")
            try chapter.setRelatedObject(series, forKey: "manga")
            try chapter.setRelatedObject(series, forKey: "readingIn")
            #expect(try series.relatedObjects(forKey: "reading") == [chapter]) // the inverse, in memory
            try context.save()
            #expect(try series.relatedObjects(forKey: "reading") == [chapter]) // kept by the context
            try context.refresh(series, mergeChanges: false)
            #expect(try series.relatedObjects(forKey: "reading") == []) // dropped by refresh
            #expect(try series.relatedObjects(forKey: "chapters") == [chapter]) // the stored one stays
            let id = chapter.objectID
            context.reset()
            #expect(try context.existingObject(with: id).relatedObject(forKey: "readingIn") == nil)
        }
    }
}

extension TransientAndDerivedTests {
    /// A version of `Scratch.xcdatamodel` whose `Entry` entity has the attributes `body`.
    static func scratchModel(_ directory: TemporaryDirectory, _ body: String) throws -> XcodeModel {
        let folder = directory.file("Scratch.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Entry" representedClassName="Entry" syncable="YES">
                \(body)
                <attribute name="text" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try XcodeModel(contentsOf: folder)
    }

    /// Xcode lets `now()` derive a Double attribute (SwiftGen's test model has one): it holds the
    /// time of the save as seconds since 2001, as Core Data's SQLite store keeps a date. Every
    /// save used to fail with `.wrongValueType` ("computed 2026-..., which is not a double").
    @Test func nowDerivesANumberAttributeAsSecondsSince2001() throws {
        let directory = TemporaryDirectory()
        let model = try Self.scratchModel(
            directory,
            """
            <attribute name="savedAt" attributeType="Double" derived="YES" derivationExpression="now()" usesScalarValueType="YES"/>
            """
        ).loadCurrentVersion().model
        let stack = try makeFileStack(directory, model: model, name: "Entries")
        let before = Date().timeIntervalSinceReferenceDate
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let entry = try context.insert(entityName: "Entry")
            try entry.setValue("one", forKey: "text")
            try context.save()
            let savedAt = try entry.value(forKey: "savedAt", as: Double.self)
            #expect(savedAt >= before - 1 && savedAt <= Date().timeIntervalSinceReferenceDate + 1)
        }
    }

    /// A type that cannot hold a time is refused when the model loads, naming the attribute,
    /// rather than failing every save.
    @Test func nowOnAnAttributeThatCannotHoldATimeIsAnInvalidModel() throws {
        let directory = TemporaryDirectory()
        let model = try Self.scratchModel(
            directory,
            """
            <attribute name="savedAt" optional="YES" attributeType="String" derived="YES" derivationExpression="now()"/>
            """)
        let error = expectError(.invalidModel) { _ = try model.loadCurrentVersion() }
        #expect(error?.message.contains("'Entry.savedAt' (now()) is a string attribute") == true, "\(error?.message ?? "-")")
        #expect(error?.entityName == "Entry")
        #expect(error?.key == "savedAt")
    }
}
