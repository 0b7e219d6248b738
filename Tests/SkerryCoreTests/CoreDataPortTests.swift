import Foundation
import Testing

@testable import SkerryCore

// Core Data code written the way public projects write it (hand-built coordinators with option
// dictionaries, `/dev/null` stores, description flags, `perform(schedule:)` wrappers), ported with
// the names page's renames only, against real stores. What each test was modelled on is in the
// compat notes; no code of those projects is copied.

/// The model the ports work with: books with an optional year.
private func portModel(extraAttributes: [AttributeDescription] = []) throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("title", .string),
                AttributeDescription("year", .integer64, isOptional: true),
            ] + extraAttributes)
    ])
}

/// The next version of ``portModel()``: one more optional attribute (a lightweight migration).
private func portModelV2() throws -> ObjectModel {
    try portModel(extraAttributes: [AttributeDescription("subtitle", .string, isOptional: true)])
}

private func titles(_ context: ObjectContext) throws -> [String] {
    try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
        .map { try $0.value(forKey: "title", as: String.self) }
}

/// A three-layer stack as pre-container Core Data code builds it: a coordinator with the usual
/// option dictionary, a private-queue persisting context, a main-queue context whose parent it is,
/// and private-queue workers whose parent is the main-queue context.
///
/// `@unchecked Sendable`: every property is set in `init` and only read after.
private final class ThreeLayerStack: @unchecked Sendable {
    static var stockSQLiteStoreOptions: [AnyHashable: Any] {
        [
            MigratePersistentStoresAutomaticallyOption: true,
            InferMappingModelAutomaticallyOption: true,
            SQLitePragmasOption: ["journal_mode": "DELETE"],
        ]
    }

    let coordinator: StoreCoordinator
    let privateQueueContext: ObjectContext
    let mainQueueContext: ObjectContext

    init(model: ObjectModel, storeFileURL: URL) throws {
        coordinator = StoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: SQLiteStoreType, configurationName: nil, at: storeFileURL, options: Self.stockSQLiteStoreOptions)
        privateQueueContext = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        privateQueueContext.mergePolicy = .mergeByPropertyStoreTrump
        privateQueueContext.persistentStoreCoordinator = coordinator
        mainQueueContext = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
        mainQueueContext.mergePolicy = .mergeByPropertyStoreTrump
        mainQueueContext.parent = privateQueueContext
    }

    func newChildContext() -> ObjectContext {
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.parent = mainQueueContext
        return context
    }

    /// Saves `context`, then each parent in turn, each on its own queue.
    func saveContextAndPersistToStore(_ context: ObjectContext) throws {
        try context.performAndWait {
            guard context.hasChanges else { return }
            try context.save()
        }
        if let parent = context.parent { try saveContextAndPersistToStore(parent) }
    }
}

@Suite(.serialized) struct CoreDataPortTests {
    // MARK: addPersistentStore(ofType:configurationName:at:options:)

    @MainActor
    @Test func aHandBuiltStackWithStockOptionsSavesThroughEveryLayer() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let stack = try ThreeLayerStack(model: try portModel(), storeFileURL: url)
        #expect(stack.coordinator.persistentStore(for: url)?.type == SQLiteStoreType)
        #expect(stack.coordinator.persistentStores.first?.journalMode == .delete)

        let worker = stack.newChildContext()
        try worker.performAndWait {
            let book = try worker.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
        }
        try stack.saveContextAndPersistToStore(worker)

        // The pragma reached the file (WAL would persist in it), and the row is on disk.
        #expect(try rawSQL(url, "PRAGMA journal_mode") == [["delete"]])
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        let reader = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        let other = StoreCoordinator(managedObjectModel: try portModel())
        try other.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url)
        reader.persistentStoreCoordinator = other
        #expect(try reader.performAndWait { try titles(reader) } == ["Dune"])
    }

    @Test func withoutMigrationOptionsAnOlderStoreIsRefusedAndLeftAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        do {
            let coordinator = StoreCoordinator(managedObjectModel: try portModel())
            try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
            let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                try context.insert(entityName: "Book").setValue("Emma", forKey: "title")
                try context.save()
            }
        }
        let before = try rawSQL(url, "SELECT sql FROM sqlite_master ORDER BY name")

        // As in Core Data: no options (or migrating without inferring) means no migration.
        for options: [AnyHashable: Any]? in [nil, [MigratePersistentStoresAutomaticallyOption: true]] {
            let coordinator = StoreCoordinator(managedObjectModel: try portModelV2())
            expectError(.modelMismatch) {
                try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: options)
            }
            #expect(coordinator.persistentStores.isEmpty)
        }
        #expect(try rawSQL(url, "SELECT sql FROM sqlite_master ORDER BY name") == before)

        // Asking for it migrates, and keeps the row.
        let coordinator = StoreCoordinator(managedObjectModel: try portModelV2())
        try coordinator.addPersistentStore(
            ofType: SQLiteStoreType, configurationName: nil, at: url,
            options: [MigratePersistentStoresAutomaticallyOption: true as NSNumber, InferMappingModelAutomaticallyOption: true as NSNumber])
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        #expect(try context.performAndWait { try titles(context) } == ["Emma"])
    }

    @Test func readOnlyAndTimeoutOptionsReachTheStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        try StoreCoordinator(managedObjectModel: try portModel())
            .addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url)

        let coordinator = StoreCoordinator(managedObjectModel: try portModel())
        let added = try coordinator.addPersistentStore(
            ofType: SQLiteStoreType, configurationName: nil, at: url,
            options: [ReadOnlyPersistentStoreOption: true, PersistentStoreTimeoutOption: 2])
        #expect(added.isReadOnly && added.timeout == 2)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            try context.insert(entityName: "Book").setValue("Emma", forKey: "title")
            expectError(.storeIsReadOnly) { try context.save() }
        }
    }

    @Test func inMemoryStoresByTypeAndByDevNullAreSeparateAndWriteNoFile() throws {
        let byType = StoreCoordinator(managedObjectModel: try portModel())
        try byType.addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: nil, options: nil)
        #expect(byType.persistentStores.first?.type == InMemoryStoreType)

        // The container way: the first description's URL set to /dev/null.
        func devNullStack() throws -> PersistentStack {
            let stack = PersistentStack(name: "Books", managedObjectModel: try portModel())
            stack.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
            try stack.loadPersistentStores()
            return stack
        }
        let first = try devNullStack()
        let second = try devNullStack()
        #expect(first.persistentStoreCoordinator.persistentStores.first?.type == InMemoryStoreType)
        let writer = first.newBackgroundContext()
        try writer.performAndWait {
            try writer.insert(entityName: "Book").setValue("Dune", forKey: "title")
            try writer.save()
        }
        #expect(try writer.performAndWait { try titles(writer) } == ["Dune"])
        let reader = second.newBackgroundContext()
        #expect(try reader.performAndWait { try titles(reader) }.isEmpty)
    }

    @Test func optionsSkerryCannotHonourFailBeforeAnythingIsOpened() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: try portModel())
        let ubiquitous = expectError(.invalidArgument) {
            try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url, options: ["NSPersistentStoreUbiquitousContentNameKey": "Books"])
        }
        #expect(ubiquitous?.message.contains("NSPersistentStoreUbiquitousContentNameKey") == true)
        let pragma = expectError(.invalidArgument) {
            try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url, options: [SQLitePragmasOption: ["cache_size": 1000]])
        }
        #expect(pragma?.message.contains("cache_size") == true)
        expectError(.invalidArgument) {
            try coordinator.addPersistentStore(ofType: "Binary", configurationName: nil, at: url, options: nil)
        }
        expectError(.invalidArgument) {
            try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url, options: [ReadOnlyPersistentStoreOption: "maybe"])
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(coordinator.persistentStores.isEmpty)
    }

    // MARK: StoreDescription with Core Data's names

    @Test func descriptionFlagsAndOptionsAsContainerCodeSetsThem() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        do {
            let stack = PersistentStack(name: "Books", managedObjectModel: try portModel())
            stack.persistentStoreDescriptions[0].url = url
            try stack.loadPersistentStores()
        }

        func load(_ configure: (inout StoreDescription) -> Void) throws -> PersistentStack {
            let stack = PersistentStack(name: "Books", managedObjectModel: try portModelV2())
            var description = StoreDescription(url: url)
            configure(&description)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            return stack
        }
        expectError(.modelMismatch) { _ = try load { $0.shouldMigrateStoreAutomatically = false } }
        expectError(.modelMismatch) { _ = try load { $0.shouldInferMappingModelAutomatically = false } }
        let ubiquitous = expectError(.invalidArgument) {
            _ = try load { $0.setOption("Books" as NSString, forKey: "NSPersistentStoreUbiquitousContentNameKey") }
        }
        #expect(ubiquitous?.message.contains("NSPersistentStoreUbiquitousContentNameKey") == true)
        expectError(.invalidArgument) { _ = try load { $0.setValue("2000" as NSString, forPragmaNamed: "cache_size") } }
        expectError(.invalidArgument) { _ = try load { $0.type = "Binary" } }

        let stack = try load {
            $0.shouldMigrateStoreAutomatically = true
            $0.shouldInferMappingModelAutomatically = true
            $0.setOption(true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
            $0.setOption(true as NSNumber, forKey: PersistentStoreFileProtectionKey)
            $0.setValue("FULL" as NSString, forPragmaNamed: "synchronous")
            $0.timeout = 3
        }
        let loaded = try #require(stack.persistentStoreCoordinator.persistentStores.first)
        #expect(loaded.synchronous == .full && loaded.busyTimeout == 3 && loaded.shouldMigrateAutomatically)

        // NSPersistentStoreDescription() with the in-memory type: the usual test set-up.
        var memory = StoreDescription()
        memory.type = InMemoryStoreType
        let memoryStack = PersistentStack(name: "Books", managedObjectModel: try portModel())
        memoryStack.persistentStoreDescriptions = [memory]
        try memoryStack.loadPersistentStores()
        #expect(memoryStack.persistentStoreCoordinator.persistentStores.first?.kind == .inMemory)
    }

    // MARK: perform(schedule:_:)

    /// A wrapper as async Core Data code writes it: any work, on an enqueued block.
    private func perform<T: Sendable>(
        on context: ObjectContext, _ block: @escaping @Sendable (ObjectContext) throws -> T
    ) async throws -> T {
        try await context.perform(schedule: .enqueued) { try block(context) }
    }

    @Test func enqueuedBlocksRunAfterTheBlocksBeforeThemAndRethrow() async throws {
        let stack = PersistentStack(name: "Books", managedObjectModel: try portModel())
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        let order = Locked<[String]>([])
        context.enqueue { order.append("perform") }
        let count = try await perform(on: context) { context in
            order.append("enqueued")
            _ = try context.insert(entityName: "Book")
            return try context.count(for: FetchRequest(entityName: "Book"))
        }
        #expect(count == 1)
        #expect(order.value == ["perform", "enqueued"])

        // A block that does not throw needs no `try`, as in Core Data.
        let answer = await context.perform(schedule: .enqueued) { 42 }
        #expect(answer == 42)
        let error = await #expect(throws: SkerryError.self) {
            try await context.perform(schedule: .immediate) { try context.count(for: FetchRequest(entityName: "Nope")) }
        }
        #expect(error?.code == .unknownEntity)
    }

    @MainActor
    @Test func immediateBlocksOfAMainQueueContextRunAtOnceOnTheMainActor() async throws {
        let coordinator = StoreCoordinator(managedObjectModel: try portModel())
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: nil)
        let context = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let order = Locked<[String]>([])

        context.enqueue { order.append("perform") }
        let inserted = try await context.perform(schedule: .immediate) {
            order.append("immediate")
            return try context.insert(entityName: "Book").objectID.isTemporary
        }
        // It ran before the block enqueued earlier: the main actor never let go.
        #expect(inserted)
        #expect(order.value == ["immediate"])
        await context.perform(schedule: .enqueued) { order.append("enqueued") }
        #expect(order.value == ["immediate", "perform", "enqueued"])
        #expect(context.hasChanges)
    }
}
