import Foundation
import Testing

@testable import SkerryCore

/// Source filter predicates of a mapping model's entity mappings (Xcode's "Filter Predicate"),
/// and several entity mappings of one source entity, as Core Data runs them: an entity mapping
/// makes objects of the source objects its filter keeps only; the links of the objects left out
/// go with them. On SQLite files and PostgreSQL.
@Suite struct MappingModelFilterTests {
    static let fixtures = FixtureFiles.folder

    /// The Ledger mapping with these filter predicates on EntryToTransaction and
    /// AccountToAccount (nil: none), in a folder of `directory`.
    static func ledgerMapping(entries: String?, accounts: String?, in directory: TemporaryDirectory) throws -> XcodeMappingModel {
        var text = try String(
            contentsOf: fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let policy = "<attribute name=\"migrationpolicyclassname\" type=\"string\"></attribute>"
        // The first entity mapping in the file is EntryToTransaction, the second AccountToAccount.
        let ranges = text.ranges(of: policy)
        try #require(ranges.count == 2)
        for (range, filter) in zip(ranges, [entries, accounts]).reversed() {
            guard let filter else { continue }
            text.replaceSubrange(
                range, with: policy + "<attribute name=\"sourcefilterpredicatestring\" type=\"string\">\(filter)</attribute>")
        }
        let url = directory.file("Filtered.xcmappingmodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url.appendingPathComponent("xcmapping.xml"))
        return try XcodeMappingModel(contentsOf: url)
    }

    static func description(_ kind: StoreKind, _ directory: TemporaryDirectory, _ name: String) throws -> StoreDescription {
        kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("\(name).sqlite"))
    }

    /// Opens `description` with the last of `versions`, migrating through `mappings`.
    static func migrated(_ description: StoreDescription, _ versions: [XcodeModelVersion], _ mappings: [XcodeMappingModel]) throws
        -> PersistentStack
    {
        let stack = PersistentStack(name: "Migrated", model: versions[versions.count - 1].model)
        var migrating = description
        migrating.migrationPlan = try MigrationPlan(xcodeVersions: versions, mappingModels: mappings)
        stack.persistentStoreDescriptions = [migrating]
        try stack.loadPersistentStores()
        return stack
    }

    /// A filter through a to-one relationship (`account.name`) and one through a to-many
    /// relationship (`ANY entries.amountCents`): the entries and accounts they do not match are
    /// left out, and the links to and from them go too; the kept rows keep their other links.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aFilterLeavesOutTheObjectsItDoesNotMatchWithTheirLinks(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let versions = try XcodeModel(contentsOf: Self.fixtures.appendingPathComponent("Ledger.xcdatamodeld")).loadAllVersions()
        let description = try Self.description(kind, directory, "Ledger")
        do {
            let stack = PersistentStack(name: "Ledger", model: versions[0].model)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let book: [(String?, [(Int64, String)])] = [
                    ("Checking", [(-4000, "rent"), (1250, "coffee")]), ("Savings", [(0, "transfer")]), ("Cash", [(300, "tea")]),
                    (nil, [(500, "loose")]),
                ]
                for (name, entries) in book {
                    let account = try name.map { name in
                        let account = try context.insert(entityName: "Account")
                        try account.setValue(name, forKey: "name")
                        return account
                    }
                    for (cents, memo) in entries {
                        let entry = try context.insert(entityName: "Entry")
                        try entry.setValue(cents, forKey: "amountCents")
                        try entry.setValue(memo, forKey: "memo")
                        try entry.setRelatedObject(account, forKey: "account")
                    }
                }
                try context.save()
            }
        }
        let mapping = try Self.ledgerMapping(
            entries: "amountCents > 0 AND account.name BEGINSWITH 'C'", accounts: "ANY entries.amountCents > 1000", in: directory)
        let stack = try Self.migrated(description, versions, [mapping])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let transactions = try context.fetch(FetchRequest(entityName: "Transaction", sortKeys: [SortKey("amount")]))
            #expect(try transactions.map { try $0.value(forKey: "note", as: String?.self) } == ["tea", "coffee"])
            #expect(try transactions.map { try $0.value(forKey: "status", as: String.self) } == ["imported", "imported"])
            let accounts = try context.fetch(FetchRequest(entityName: "Account"))
            #expect(try accounts.map { try $0.value(forKey: "name", as: String.self) } == ["Checking"])
            // "tea" was Cash's, which the accounts' filter left out; "rent" (left out) was Checking's.
            #expect(
                try transactions.map { try $0.relatedObject(forKey: "account")?.value(forKey: "name", as: String.self) } == [
                    nil, "Checking",
                ])
            #expect(try accounts[0].relatedObjects(forKey: "transactions") == [transactions[1]])
        }
    }

    /// A filter Skerry cannot evaluate on the old rows (a format it does not read, a name the
    /// source entity lacks) is refused when the plan is made, naming the entity mapping and
    /// the predicate; one it can, with a custom step for the same versions, is not left to it.
    @Test func aFilterThatCannotBeEvaluatedIsRefusedWhenThePlanIsMade() throws {
        let directory = TemporaryDirectory()
        let versions = try XcodeModel(contentsOf: Self.fixtures.appendingPathComponent("Ledger.xcdatamodeld")).loadAllVersions()
        for filter in ["amountCents >>> 0", "balance == 3"] {
            let mapping = try Self.ledgerMapping(entries: filter, accounts: nil, in: directory)
            #expect(mapping.entityMappings.map(\.sourceFilterPredicate) == [filter, nil])
            let refusal = expectError(.modelMismatch) { _ = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping]) }
            #expect(refusal?.message.contains("filter predicate '\(filter)', which Skerry cannot evaluate on the old rows") == true)
            #expect(refusal?.key == "EntryToTransaction")
        }
        // With a custom step, whose keepsRow decides instead.
        let mapping = try Self.ledgerMapping(entries: "balance == 3", accounts: nil, in: directory)
        let plan = try MigrationPlan(
            xcodeVersions: versions, mappingModels: [mapping], steps: [MigrationStep(from: 0, keepsRow: { _, _ in true })])
        #expect(plan.steps[0]?.keepsRow != nil)
    }

    /// Two entity mappings of one source entity (UnCloudNotes' NoteToNote and NoteToAttachment):
    /// every jot stays a jot with its key, and the jots with a photo also make a picture (a new
    /// object) linked to the jot they were made from. With a filter on JotToJot too, a picture
    /// made from a jot left out has no jot.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func severalMappingsOfOneSourceEntityMakeObjectsOfEach(kind: StoreKind) throws {
        let versions = try XcodeModel(contentsOf: Self.fixtures.appendingPathComponent("Jotter.xcdatamodeld")).loadAllVersions()
        let mappingURL = Self.fixtures.appendingPathComponent("JotterToJotter2.xcmappingmodel")
        let mapping = try XcodeMappingModel(contentsOf: mappingURL)
        #expect(mapping.entityMappings.map(\.name) == ["JotToPicture", "JotToJot"])
        #expect(
            mapping.entityMappings[0].relationshipMappings == [
                .init(name: "jot", valueExpression: .destinationInstances(sourceKeyPath: ""), sourceMappingName: "JotToJot")
            ])
        let directory = TemporaryDirectory()
        let drafts = try String(contentsOf: mappingURL.appendingPathComponent("xcmapping.xml"), encoding: .utf8).replacingOccurrences(
            of:
                "<attribute name=\"sourcename\" type=\"string\">Jot</attribute>\n        <attribute name=\"mappingtypename\" type=\"string\">Undefined</attribute>\n        <attribute name=\"mappingnumber\" type=\"int16\">2</attribute>",
            with:
                "<attribute name=\"sourcefilterpredicatestring\" type=\"string\">text != 'draft'</attribute><attribute name=\"sourcename\" type=\"string\">Jot</attribute>"
        )
        let draftsURL = directory.file("Drafts.xcmappingmodel")
        try FileManager.default.createDirectory(at: draftsURL, withIntermediateDirectories: true)
        try Data(drafts.utf8).write(to: draftsURL.appendingPathComponent("xcmapping.xml"))
        let withoutDrafts = try XcodeMappingModel(contentsOf: draftsURL)
        #expect(withoutDrafts.entityMappings.map(\.sourceFilterPredicate) == ["photo != nil", "text != 'draft'"])

        let taken = Date(timeIntervalSinceReferenceDate: 700_000_000)
        for (mapping, jotTexts) in [(mapping, ["a", "b", "draft"]), (withoutDrafts, ["a", "b"])] {
            let description = try Self.description(kind, directory, "Jotter-\(jotTexts.count)")
            do {
                let stack = PersistentStack(name: "Jotter", model: versions[0].model)
                stack.persistentStoreDescriptions = [description]
                try stack.loadPersistentStores()
                let context = stack.newBackgroundContext()
                try context.performAndWait {
                    for (text, photo) in [("a", Data([1, 2])), ("b", nil), ("draft", Data([3]))] as [(String, Data?)] {
                        let jot = try context.insert(entityName: "Jot")
                        try jot.setValue(text, forKey: "text")
                        try jot.setValue(photo, forKey: "photo")
                        try jot.setValue(photo == nil ? nil : taken, forKey: "taken")
                    }
                    try context.save()
                }
            }
            let stack = try Self.migrated(description, versions, [mapping])
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let jots = try context.fetch(FetchRequest(entityName: "Jot", sortKeys: [SortKey("text")]))
                #expect(try jots.map { try $0.value(forKey: "text", as: String.self) } == jotTexts)
                let pictures = try context.fetch(FetchRequest(entityName: "Picture", sortKeys: [SortKey("photo")]))
                #expect(try pictures.map { try $0.value(forKey: "photo", as: Data.self) } == [Data([1, 2]), Data([3])])
                #expect(try pictures.map { try $0.value(forKey: "taken", as: Date?.self) } == [taken, taken])
                let owners = try pictures.map { try $0.relatedObject(forKey: "jot")?.value(forKey: "text", as: String.self) }
                #expect(owners == (jotTexts.count == 3 ? ["a", "draft"] : ["a", nil]))
                #expect(try jots.map { try $0.relatedObjects(forKey: "pictures").count } == (jotTexts.count == 3 ? [1, 0, 1] : [1, 0]))
                // New objects are saved like any other.
                let picture = try context.insert(entityName: "Picture")
                try picture.setValue(Data([9]), forKey: "photo")
                try picture.setRelatedObject(jots[1], forKey: "jot")
                try context.save()
            }
        }
    }

    /// A link to the objects another mapping makes of the same source object is refused when no
    /// mapping that keeps the rows makes them; the inverse of the links such objects get is not.
    @Test func linksToObjectsMadeByAnotherMappingThatCannotBeSetAreRefused() throws {
        let versions = try XcodeModel(contentsOf: Self.fixtures.appendingPathComponent("Jotter.xcdatamodeld")).loadAllVersions()
        let directory = TemporaryDirectory()
        let mapping = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("JotterToJotter2.xcmappingmodel"))
        func plan(_ entityMappings: [XcodeMappingModel.EntityMapping]) throws {
            let changed = XcodeMappingModel(
                url: directory.file("Code.xcmappingmodel"), sourceVersionName: "Jotter", destinationVersionName: "Jotter 2",
                entityMappings: entityMappings)
            _ = try MigrationPlan(xcodeVersions: versions, mappingModels: [changed])
        }
        let pictures = mapping.entityMappings[0], jots = mapping.entityMappings[1]
        // Without JotToJot, no mapping makes the jot of the same source object.
        let alone = expectError(.modelMismatch) { try plan([pictures]) }
        #expect(alone?.message.contains("sets the relationship 'jot' to the objects another entity mapping makes of $source") == true)
        // Jot.pictures set to the pictures of the same source object: the inverse of what they get.
        let linked = XcodeMappingModel.EntityMapping(
            name: jots.name, sourceEntityName: "Jot", destinationEntityName: "Jot", migrationPolicyClassName: nil,
            attributeMappings: jots.attributeMappings,
            relationshipMappings: [.init(name: "pictures", valueExpression: .destinationInstances(sourceKeyPath: ""))])
        try plan([pictures, linked])
        try plan([pictures, jots])
    }

    /// Core Data's UnCloudNotes, version 1 to 3 through its NoteToAttachment mapping: notes of
    /// version 1 have no image, so the filter `image != nil` leaves every note out of
    /// Attachment, and every note stays a note.
    @Test func aStoreWhoseRowsTheFilterLeavesOutMigratesWithNoneMade() throws {
        let versions = try XcodeModel(contentsOf: Self.fixtures.appendingPathComponent("Jotter.xcdatamodeld")).loadAllVersions()
        let directory = TemporaryDirectory()
        let description = StoreDescription(url: directory.file("Jotter.sqlite"))
        do {
            let stack = PersistentStack(name: "Jotter", model: versions[0].model)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for text in ["a", "b"] { try context.insert(entityName: "Jot").setValue(text, forKey: "text") }
                try context.save()
            }
        }
        let stack = try Self.migrated(
            description, versions,
            [try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("JotterToJotter2.xcmappingmodel"))])
        let context = stack.newBackgroundContext()
        let counts = try context.performAndWait {
            (try context.count(for: FetchRequest(entityName: "Jot")), try context.count(for: FetchRequest(entityName: "Picture")))
        }
        #expect(counts == (2, 0))
    }
}
