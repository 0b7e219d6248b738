import Foundation
import Testing

@testable import SkerryCore

/// What the store's schema handling does with persistent history: migrations in place keep it,
/// migrations that rebuild the tables clear it (and expire older tokens), copies carry it, and
/// the tools that read a store file without a model are not confused by its tables.
@Suite struct PersistentHistoryStoreTests {
    /// Version 2: Book gains an optional attribute (a migration in place).
    static func version2() throws -> ObjectModel {
        try ObjectModel(entities: [
            Fixtures.bookEntity(extraAttributes: [AttributeDescription("subtitle", .string, isOptional: true)]),
            Fixtures.authorEntity(),
        ])
    }

    /// Version 3: Author is gone (a migration that rebuilds the tables).
    static func version3() throws -> ObjectModel {
        try ObjectModel(entities: [Fixtures.bookEntity(extraAttributes: [AttributeDescription("subtitle", .string, isOptional: true)])])
    }

    /// Saves one book per title, each in its own save; returns the history token after them.
    static func saveBooks(_ stack: PersistentStack, _ titles: [String]) throws -> PersistentHistoryToken? {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for title in titles {
                _ = try context.insertBook(title)
                try context.save()
            }
        }
        return stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aMigrationInPlaceKeepsTheHistoryAndItsTokens(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let (first, second): (PersistentHistoryToken?, PersistentHistoryToken?)
        do {
            let stack = try store.stack()
            first = try Self.saveBooks(stack, ["Dune"])
            second = try Self.saveBooks(stack, ["Emma"])
        }
        let stack = try store.stack(model: try Self.version2())
        let all = try stack.viewContext.history(.fetchHistory(after: .distantPast))
        #expect(all.count == 2)
        #expect(try stack.viewContext.history(.fetchHistory(after: first)).count == 1)
        _ = try Self.saveBooks(stack, ["Solaris"])
        let since = try stack.viewContext.history(.fetchHistory(after: second))
        #expect(since.count == 1)
        // The objects named by the history are the stack's own: they read as saved.
        let id = try #require(since.first?.changes?.first?.changedObjectID)
        #expect(
            try stack.viewContext.performAndWait { try stack.viewContext.existingObject(with: id).value(forKey: "title") as? String }
                == "Solaris")
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aMigrationThatRebuildsTheTablesClearsTheHistoryAndExpiresOlderTokens(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let token: PersistentHistoryToken?
        do {
            let stack = try store.stack()
            token = try Self.saveBooks(stack, ["Dune", "Emma"])
        }
        let stack = try store.stack(model: try Self.version3())
        try stack.viewContext.performAndWait { () throws in
            #expect(try stack.viewContext.count(for: FetchRequest(entityName: "Book")) == 2)
            // The history named rows of tables that are gone: cleared, and the token of before expired.
            #expect(try stack.viewContext.execute(.fetchHistory(after: .distantPast)).transactions.isEmpty)
            let error = expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: token)) }
            #expect(error?.message.contains("was deleted") == true)
        }
        let now = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try Self.saveBooks(stack, ["Solaris"])
        let since = try stack.viewContext.history(.fetchHistory(after: now))
        #expect(since.count == 1)
        #expect(since.first?.changes?.first?.changeType == .insert)
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aMigrationPlansStepClearsTheHistoryAndExpiresOlderTokens(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let token: PersistentHistoryToken?
        do {
            let stack = try store.stack()
            token = try Self.saveBooks(stack, ["Dune"])
        }
        // A custom step (it may change any row): the history of before no longer describes the rows.
        let plan = MigrationPlan(
            versions: [Fixtures.model(), try Self.version2()],
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { entity, old, new in
                        if entity == "Book", case .string(let title) = old["title"] { new["subtitle"] = .string(title + "!") }
                    })
            ])
        let stack = try store.stack(model: try Self.version2(), plan: plan)
        try stack.viewContext.performAndWait { () throws in
            let books = try stack.viewContext.fetch(FetchRequest(entityName: "Book"))
            #expect(try books.map { try $0.value(forKey: "subtitle") as? String } == ["Dune!"])
            #expect(try stack.viewContext.execute(.fetchHistory(after: .distantPast)).transactions.isEmpty)
            expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: token)) }
        }
        let now = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try Self.saveBooks(stack, ["Emma"])
        #expect(try stack.viewContext.history(.fetchHistory(after: now)).count == 1)
    }

    @Test func aReplacedStoreCarriesItsHistoryAndTokensOfTheOldStoreExpire() throws {
        let directory = TemporaryDirectory()
        let backup = directory.file("Backup/History.sqlite")
        let backupToken: PersistentHistoryToken?
        do {
            let stack = try makeHistoryStack(backup)
            _ = try Self.saveBooks(stack, ["Dune"])
            backupToken = try Self.saveBooks(stack, ["Emma"])
        }
        let url = directory.file("History.sqlite")
        let stack = try makeHistoryStack(url)
        let oldToken = try Self.saveBooks(stack, ["Persuasion"])
        let coordinator = stack.persistentStoreCoordinator
        try coordinator.replacePersistentStore(
            at: url, destinationOptions: nil, withPersistentStoreFrom: backup, sourceOptions: nil, ofType: SQLiteStoreType)
        try stack.loadPersistentStores()
        let history = try stack.viewContext.history(.fetchHistory(after: .distantPast))
        #expect(history.count == 2)
        #expect(try stack.viewContext.history(.fetchHistory(after: backupToken)).isEmpty)
        stack.viewContext.performAndWait {
            expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: oldToken)) }
        }
    }

    /// People whose `id` and `age` are kept after deletion, as Xcode's "Preserve After Deletion"
    /// writes it (CoreDataPlus's SampleModel marks its `id` so).
    static func peopleModel(_ directory: TemporaryDirectory) throws -> ObjectModel {
        let folder = directory.file("People.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22G120" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Person" syncable="YES">
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="age" optional="YES" attributeType="Integer 32" usesScalarValueType="YES" preserveAfterDeletion="YES"/>
                <attribute name="nickname" optional="YES" attributeType="String" preserveAfterDeletion="YES"/>
            </entity>
        </model>
        """.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try XcodeModel.loadModel(contentsOf: folder)
    }

    @Test(arguments: StoreKind.allCases)
    func aDeleteKeepsThePreservedValuesOfItsObjectAsItsTombstone(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let model = try Self.peopleModel(store.directory)
        let person = try #require(model.entity(named: "Person"))
        #expect(person.attributes.filter(\.preservesValueInHistoryOnDeletion).map(\.name) == ["id", "age", "nickname"])
        let stack = try store.stack(model: model)
        let annID = UUID(), bobID = UUID()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let ann = try context.insert(entityName: "Person")
            try ann.setValue(annID, forKey: "id")
            try ann.setValue("Ann", forKey: "name")
            try ann.setValue(Int32(41), forKey: "age")
            let bob = try context.insert(entityName: "Person")
            try bob.setValue(bobID, forKey: "id")
            try bob.setValue("Bob", forKey: "name")
            try context.save()
            try context.delete(ann)
            try context.save()
            try context.execute(BatchDeleteRequest(entityName: "Person"))
        }
        let transactions = try stack.viewContext.history(.fetchHistory(after: .distantPast))
        try #require(transactions.count == 3)
        #expect(transactions[0].changes?.allSatisfy { $0.tombstone == nil } == true) // inserts
        let ann = try #require(transactions[1].changes?.first?.tombstone)
        #expect(ann["id"] as? UUID == annID)
        #expect((ann["age"] as? NSNumber)?.intValue == 41)
        #expect(ann["name"] == nil) // not preserved
        #expect(ann.keys.sorted() == ["age", "id"]) // a nil value is left out
        let bob = try #require(transactions[2].changes?.first?.tombstone) // the batch delete's
        #expect(bob["id"] as? UUID == bobID)
        #expect(bob["age"] == nil)

        // Deleting the history deletes what it kept.
        try stack.viewContext.performAndWait { _ = try stack.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        if kind == .file { #expect(try rawSQL(store.url, "SELECT count(*) FROM \"_skerry_history_tombstones\"") == [["0"]]) }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func storeStatisticsCountTheHistoryRowsAsSkerrysOwnBookkeeping(_ kind: StoreKind) throws {
        func rowsWrittenBySavingTwoBooks(_ stack: PersistentStack) throws -> Int {
            let before = stack.statistics
            _ = try Self.saveBooks(stack, [])
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                _ = try context.insertBook("Dune")
                _ = try context.insertBook("Emma")
                try context.save()
            }
            return stack.statistics.since(before).rowsWritten
        }
        let plainStore = HistoryStore(kind), trackedStore = HistoryStore(kind)
        let plain = try rowsWrittenBySavingTwoBooks(try plainStore.stack(name: "Plain", tracking: false))
        let tracked = try rowsWrittenBySavingTwoBooks(try trackedStore.stack())
        #expect(tracked == plain + 3) // one transaction, two changes
    }

    @Test func storeSummaryAndAReadOnlyOpeningSeeTheStoreAsBefore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("History.sqlite")
        do {
            let stack = try makeHistoryStack(url)
            _ = try Self.saveBooks(stack, ["Dune", "Emma"])
        }
        let summary = try StoreSummary(contentsOf: url)
        #expect(summary.entities.map(\.name).sorted() == ["Author", "Book"])
        #expect(summary.entities.first { $0.name == "Book" }?.rowCount == 2)

        // Read-only with the option: the history reads; deleting it is a write, refused.
        let stack = PersistentStack(name: "ReadOnly", model: Fixtures.model())
        var description = StoreDescription(url: url)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        description.setOption(true as NSNumber, forKey: ReadOnlyPersistentStoreOption)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        #expect(try stack.viewContext.history(.fetchHistory(after: .distantPast)).count == 2)
        stack.viewContext.performAndWait {
            expectError(.storeIsReadOnly) { _ = try stack.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        }
        // A read-only store that never recorded history cannot start.
        let plain = directory.file("Plain.sqlite")
        _ = try makeFileStack(directory, name: "Plain")
        let refused = PersistentStack(name: "Refused", model: Fixtures.model())
        var plainDescription = StoreDescription(url: plain)
        plainDescription.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        plainDescription.isReadOnly = true
        refused.persistentStoreDescriptions = [plainDescription]
        expectError(.invalidArgument) { try refused.loadPersistentStores() }
    }
}
