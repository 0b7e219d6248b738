import Foundation
import Testing

@testable import SkerryCore

/// Xcode mapping models (`.xcmappingmodel`) driving a plan step, on the hand-written Ledger
/// fixtures: an entity renamed without a renaming identifier (Entry -> Transaction), attributes
/// taking `$source.` key paths and a constant, relationships taking the destination objects of
/// the source's.
@Suite struct MappingModelTests {
    static let fixtures = FixtureFiles.folder

    static func versions() throws -> [XcodeModelVersion] {
        try XcodeModel(contentsOf: fixtures.appendingPathComponent("Ledger.xcdatamodeld")).loadAllVersions()
    }

    @Test func aMappingModelIsRead() throws {
        let mapping = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel"))
        #expect(mapping.sourceVersionName == "Ledger")
        #expect(mapping.destinationVersionName == "Ledger 2")
        #expect(mapping.entityMappings.map(\.name) == ["EntryToTransaction", "AccountToAccount"])
        let entry = try #require(mapping.entityMappings.first)
        #expect(
            entry.attributeMappings == [
                .init(name: "amount", valueExpression: .keyPath("amountCents")),
                .init(name: "note", valueExpression: .keyPath("memo")),
                .init(name: "status", valueExpression: .constant(.string("imported"))),
            ])
        #expect(entry.relationshipMappings == [.init(name: "account", valueExpression: nil)])
        #expect(
            mapping.entityMappings[1].relationshipMappings == [
                .init(name: "transactions", valueExpression: .destinationInstances(sourceKeyPath: "entries"))
            ])
    }

    @Test func aMappingModelDrivesItsPlanStep() throws {
        let versions = try Self.versions()
        let directory = TemporaryDirectory()
        let url = directory.file("Ledger.sqlite")
        do {
            let stack = PersistentStack(name: "Ledger", model: versions[0].model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let account = try context.insert(entityName: "Account")
                try account.setValue("Checking", forKey: "name")
                for (cents, memo) in [(1250, "coffee"), (-4000, nil)] as [(Int64, String?)] {
                    let entry = try context.insert(entityName: "Entry")
                    try entry.setValue(cents, forKey: "amountCents")
                    try entry.setValue(memo, forKey: "memo")
                    try entry.setRelatedObject(account, forKey: "account")
                }
                try context.save()
            }
        }
        // Without the mapping model, Entry -> Transaction is a removed entity and a new one:
        // the rename is what the mapping model says.
        let mapping = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel"))
        let plan = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping])
        let stack = PersistentStack(name: "Ledger", model: versions[1].model)
        var description = StoreDescription(url: url)
        description.migrationPlan = plan
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let transactions = try context.fetch(FetchRequest(entityName: "Transaction", sortKeys: [SortKey("amount")]))
            #expect(try transactions.map { try $0.value(forKey: "amount", as: Int64.self) } == [-4000, 1250])
            #expect(try transactions.map { try $0.value(forKey: "note", as: String?.self) } == [nil, "coffee"])
            #expect(try transactions.map { try $0.value(forKey: "status", as: String.self) } == ["imported", "imported"])
            let account = try #require(try context.fetch(FetchRequest(entityName: "Account")).first)
            #expect(Set(try account.relatedObjects(forKey: "transactions")) == Set(transactions))
            #expect(try transactions.allSatisfy { try $0.relatedObject(forKey: "account") == account })
        }
        #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE name = 'Entry'") == [["0"]])
    }

    @Test func aCustomMigrationPolicyIsAnErrorThatNamesIt() throws {
        let mapping = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("BadPolicy.xcmappingmodel"))
        #expect(mapping.entityMappings.first?.migrationPolicyClassName == "EntryToTransactionPolicy")
        #expect(
            mapping.entityMappings.first?.attributeMappings.first?.valueExpression
                == .unsupported("FUNCTION($entityPolicy, \"centsToEuros:\")"))
        let error = expectError(.modelMismatch) { _ = try MigrationPlan(xcodeVersions: try Self.versions(), mappingModels: [mapping]) }
        #expect(error?.message.contains("'EntryToTransactionPolicy'") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("MigrationStep") == true)
        #expect(error?.key == "EntryToTransaction")
    }

    /// As the error says: a MigrationStep for the same versions does the policy's work, and the
    /// rest of the mapping model still drives the step (the entity rename, `$source.memo`, the
    /// constant, the relationship).
    @Test func aCustomStepDoesThePolicysWork() throws {
        let versions = try Self.versions()
        let directory = TemporaryDirectory()
        let url = directory.file("Ledger.sqlite")
        do {
            let stack = PersistentStack(name: "Ledger", model: versions[0].model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let account = try context.insert(entityName: "Account")
                try account.setValue("Checking", forKey: "name")
                let entry = try context.insert(entityName: "Entry")
                try entry.setValue(Int64(1250), forKey: "amountCents")
                try entry.setValue("coffee", forKey: "memo")
                try entry.setRelatedObject(account, forKey: "account")
                try context.save()
            }
        }
        let mapping = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("BadPolicy.xcmappingmodel"))
        let centsToEuros = MigrationStep(
            from: 0,
            transformRow: { entity, old, new in // what EntryToTransactionPolicy's centsToEuros: did
                if entity == "Transaction", case .int(let cents) = old["amountCents"] { new["amount"] = .int(cents / 100) }
            })
        let plan = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping], steps: [centsToEuros])
        let stack = PersistentStack(name: "Ledger", model: versions[1].model)
        var description = StoreDescription(url: url)
        description.migrationPlan = plan
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let transaction = try #require(try context.fetch(FetchRequest(entityName: "Transaction")).first)
            #expect(try transaction.value(forKey: "amount", as: Int64.self) == 12)
            #expect(try transaction.value(forKey: "note", as: String?.self) == "coffee")
            #expect(try transaction.value(forKey: "status", as: String.self) == "imported")
            #expect(try transaction.relatedObject(forKey: "account")?.value(forKey: "name", as: String.self) == "Checking")
        }
    }

    /// The Ledger mapping with a source filter predicate on EntryToTransaction, in a folder of
    /// `directory`.
    static func filteredMapping(_ filter: String, in directory: TemporaryDirectory) throws -> XcodeMappingModel {
        let text = try String(
            contentsOf: Self.fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let policy = "<attribute name=\"migrationpolicyclassname\" type=\"string\"></attribute>"
        var filtered = text // on the first entity mapping (EntryToTransaction) only
        let first = try #require(text.range(of: policy))
        filtered.replaceSubrange(
            first, with: policy + "<attribute name=\"sourcefilterpredicatestring\" type=\"string\">\(filter)</attribute>")
        let url = directory.file("Filtered.xcmappingmodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(filtered.utf8).write(to: url.appendingPathComponent("xcmapping.xml"))
        return try XcodeMappingModel(contentsOf: url)
    }

    /// A Ledger store with entries of these memos.
    static func ledgerStore(memos: [String?], in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Ledger.sqlite")
        let stack = PersistentStack(name: "Ledger", model: try Self.versions()[0].model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for (cents, memo) in memos.enumerated() {
                let entry = try context.insert(entityName: "Entry")
                try entry.setValue(Int64(cents), forKey: "amountCents")
                try entry.setValue(memo, forKey: "memo")
            }
            try context.save()
        }
        return url
    }

    static func openMigrated(_ url: URL, _ mapping: XcodeMappingModel) throws -> PersistentStack {
        let versions = try Self.versions()
        let stack = PersistentStack(name: "Ledger", model: versions[1].model)
        var description = StoreDescription(url: url)
        description.migrationPlan = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping])
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }

    /// A source filter predicate keeps the source objects that match it (UnCloudNotes'
    /// NoteToAttachment keeps the notes whose `image != nil`) and leaves the others out, as Core
    /// Data does; `$source.memo` is the source object's `memo`. More in MappingModelFilterTests.
    @Test func aSourceFilterPredicateKeepsTheRowsThatMatchIt() throws {
        let directory = TemporaryDirectory()
        let mapping = try Self.filteredMapping("memo != nil", in: directory)
        #expect(mapping.entityMappings.map(\.sourceFilterPredicate) == ["memo != nil", nil])
        let plain = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel"))
        #expect(plain.entityMappings.allSatisfy { $0.sourceFilterPredicate == nil })
        for (filter, kept) in [("memo != nil", ["coffee"]), ("$source.memo == nil", [nil])] as [(String, [String?])] {
            let folder = TemporaryDirectory()
            let url = try Self.ledgerStore(memos: ["coffee", nil], in: folder)
            let stack = try Self.openMigrated(url, try Self.filteredMapping(filter, in: folder))
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let notes = try context.fetch(FetchRequest(entityName: "Transaction"))
                #expect(try notes.map { try $0.value(forKey: "note", as: String?.self) } == kept, "\(filter)")
            }
        }
    }

    /// A step that computes values (here a constant nil) checks the required attributes of each
    /// row it makes, as the migration does for a step without code.
    @Test func aMappingModelThatLeavesARequiredAttributeEmptyIsAnError() throws {
        let versions = try Self.versions()
        let directory = TemporaryDirectory()
        let url = directory.file("Ledger.sqlite")
        do {
            let stack = PersistentStack(name: "Ledger", model: versions[0].model)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                try context.insert(entityName: "Account").setValue("Checking", forKey: "name")
                try context.save()
            }
        }
        let mapping = XcodeMappingModel(
            url: directory.file("Code.xcmappingmodel"), sourceVersionName: "Ledger", destinationVersionName: "Ledger 2",
            entityMappings: [
                .init(
                    name: "AccountToAccount", sourceEntityName: "Account", destinationEntityName: "Account",
                    migrationPolicyClassName: nil, attributeMappings: [.init(name: "name", valueExpression: .constant(.null))],
                    relationshipMappings: [])
            ])
        let error = expectError(.modelMismatch) { _ = try Self.openMigrated(url, mapping) }
        #expect(
            error?.message.contains("'Account.name' is required and has no default value, and the mapping model leaves it empty") == true)
        #expect(try rawSQL(url, "SELECT \"name\" FROM \"Account\"") == [["Checking"]])
    }

    @Test func aMappingModelBetweenOtherVersionsIsAnError() throws {
        let versions = try Self.versions()
        let mapping = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel"))
        let error = expectError(.modelMismatch) {
            _ = try MigrationPlan(xcodeVersions: Array(versions.reversed()), mappingModels: [mapping])
        }
        #expect(error?.message.contains("not two consecutive versions") == true)
        expectError(.invalidModel) { _ = try XcodeMappingModel(contentsOf: Self.fixtures.appendingPathComponent("Nothing.xcmappingmodel")) }
        // A damaged expression is an unsupported expression, never a crash.
        #expect(ArchivedExpression.read(Data("bplist00garbage".utf8)) == .unsupported("an expression that cannot be read"))
        #expect(ArchivedExpression.read(Data(repeating: 0xFF, count: 64)) == .unsupported("an expression that cannot be read"))
    }

    /// Damaged value expressions (bytes changed at random in a real one) are read as unsupported
    /// or as some expression, never a crash.
    @Test func damagedArchivesNeverCrashTheReader() throws {
        let mapping = Self.fixtures.appendingPathComponent("LedgerToLedger2.xcmappingmodel/xcmapping.xml")
        let text = try String(contentsOf: mapping, encoding: .utf8)
        let start = try #require(text.range(of: "type=\"binary\">")).upperBound
        let end = try #require(text[start...].range(of: "</attribute>")).lowerBound
        let original = [UInt8](try #require(Data(base64Encoded: String(text[start..<end]), options: .ignoreUnknownCharacters)))
        #expect(ArchivedExpression.read(Data(original)) == .keyPath("amountCents"))
        var generator = SplitMix64(seed: 9)
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            _ = ArchivedExpression.read(Data(bytes))
        }
    }
}

/// A small deterministic random number generator for generated tests.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
