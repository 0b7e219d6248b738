import Dispatch
import Foundation
import Testing

@testable import SkerryCore

// The Core Data code of the design documents in shared/seeds/, with type names changed (and
// `@Sendable` where Swift 6 asks it of Core Data code too), run against real stores. Seed 002
// (Skopelos) is ported by the read/write layer's tests (Tests/SkerryTests/ReadWriteTests.swift)
// and seed 004 (Sworm's PersistentContainer) by the Sworm-style suite.

/// The model the seeds' code works with: users with a unique name.
private func seedModel() throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(
            name: "User",
            attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("age", .integer64, isOptional: true),
            ], uniquenessConstraints: [["name"]])
    ])
}

private func userNames(_ context: ObjectContext) throws -> [String] {
    try context.fetch(FetchRequest(entityName: "User", sortKeys: [SortKey("name")]))
        .map { try $0.value(forKey: "name", as: String.self) }
}

// MARK: Seed 000, first stack: two contexts on one coordinator, merged on did-save

/// Seed 000's pre-iOS 10 `CoreDataStack`: a coordinator built by hand, a private-queue and a
/// main-queue context attached to it after creation, and did-save observers (Core Data's
/// notifications) that merge each context's saves into the other.
///
/// `@unchecked Sendable`: the lazy properties are first touched in `init`, on one thread; after
/// that the instance is only read.
private final class CoreDataStack: @unchecked Sendable {
    let directory: URL
    let managedObjectModel: ObjectModel
    var errorHandler: (Error) -> Void = { _ in }
    private var observations: [DidSaveObservation] = []

    init(directory: URL, model: ObjectModel) {
        self.directory = directory
        self.managedObjectModel = model
        // #1: Core Data's NotificationCenter observers of .NSManagedObjectContextDidSave.
        observations = [
            managedObjectContext.addDidSaveObserver { [unowned self] event in self.mainContextChanged(event) },
            backgroundManagedObjectContext.addDidSaveObserver { [unowned self] event in self.bgContextChanged(event) },
        ]
    }

    deinit {
        for observation in observations { observation.cancel() }
    }

    // #4
    lazy var persistentStoreCoordinator: StoreCoordinator = {
        let coordinator = StoreCoordinator(managedObjectModel: self.managedObjectModel)
        let url = self.directory.appendingPathComponent("DataModel.sqlite")
        do {
            try coordinator.addPersistentStore(with: StoreDescription(url: url))
        } catch {
            // Report any error we got.
            NSLog("CoreData error \(error)")
            self.errorHandler(error)
        }
        return coordinator
    }()

    // #5
    lazy var backgroundManagedObjectContext: ObjectContext = {
        let coordinator = self.persistentStoreCoordinator
        let privateManagedObjectContext = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        privateManagedObjectContext.persistentStoreCoordinator = coordinator
        return privateManagedObjectContext
    }()

    // #6
    lazy var managedObjectContext: ObjectContext = {
        let coordinator = self.persistentStoreCoordinator
        let mainManagedObjectContext = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
        mainManagedObjectContext.persistentStoreCoordinator = coordinator
        return mainManagedObjectContext
    }()

    // #7
    func mainContextChanged(_ notification: DidSaveEvent) {
        backgroundManagedObjectContext.perform { [unowned self] in
            self.backgroundManagedObjectContext.mergeChanges(fromContextDidSave: notification)
        }
    }

    func bgContextChanged(_ notification: DidSaveEvent) {
        managedObjectContext.perform { [unowned self] in
            self.managedObjectContext.mergeChanges(fromContextDidSave: notification)
        }
    }
}

// MARK: Seed 000, second stack: the container

/// Seed 000's `CoreDataStack` on `NSPersistentContainer` (here `PersistentStack`).
///
/// `@unchecked Sendable`: the lazy properties are first touched before the stack is shared.
private final class ContainerStack: @unchecked Sendable {
    let model: ObjectModel
    var errorHandler: (Error) -> Void = { _ in }
    init(model: ObjectModel) { self.model = model }

    // #1
    lazy var persistentContainer: PersistentStack = {
        let container = SharedDirectoryContainer(name: "DataModel", managedObjectModel: self.model)
        container.loadPersistentStores(completionHandler: { [weak self] (storeDescription, error) in
            if let error = error {
                NSLog("CoreData error \(error)")
                self?.errorHandler(error)
            }
        })
        return container
    }()

    // #2
    lazy var viewContext: ObjectContext = {
        return self.persistentContainer.viewContext
    }()

    // #3
    // Optional
    lazy var backgroundContext: ObjectContext = {
        return self.persistentContainer.newBackgroundContext()
    }()

    // #4
    func performForegroundTask(_ block: @escaping @Sendable (ObjectContext) -> Void) {
        self.viewContext.perform {
            block(self.viewContext)
        }
    }

    // #5
    func performBackgroundTask(_ block: @escaping @Sendable (ObjectContext) -> Void) {
        self.persistentContainer.performBackgroundTask(block)
    }
}

/// Seed 000's subclass that puts the store in a shared directory (an app group there).
private final class SharedDirectoryContainer: PersistentStack, @unchecked Sendable {
    // `@unchecked Sendable`: adds no state to PersistentStack, whose invariant holds.
    static let sharedDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("skerry-seed-group-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)

    override class func defaultDirectoryURL() -> URL {
        var url = super.defaultDirectoryURL()
        let newURL = sharedDirectory
        if (try? FileManager.default.createDirectory(at: newURL, withIntermediateDirectories: true)) != nil {
            url = newURL
        }
        return url
    }
}

// MARK: Seed 001: CoreDataManager

/// Seed 001's `CoreDataManager`: an in-memory container whose view context upserts by object
/// trump, a save that saves only when there are changes, and a batch delete that clears an entity.
private final class CoreDataManager: @unchecked Sendable {
    // `@unchecked Sendable`: the lazy properties are first touched before the manager is shared.
    let managedObjectModel: ObjectModel
    var errors: [String] = []
    init(model: ObjectModel) { self.managedObjectModel = model }

    public lazy var persistentContainer: PersistentStack = {
        /// 1. Create the container
        let container = PersistentStack(name: "DataKit", managedObjectModel: managedObjectModel)
        container.persistentStoreDescriptions = [.inMemory()] // In memory store
        /// 2. Load the stores
        container.loadPersistentStores(completionHandler: { (storeDescription, error) in
            if let error = error {
                fatalError("Unresolved error \(error)")
            }
        })
        container.viewContext.mergePolicy = .mergeByPropertyObjectTrump
        return container
    }()

    public lazy var managedContext: ObjectContext = {
        return self.persistentContainer.viewContext
    }()

    public func saveContext() {
        guard managedContext.hasChanges else { return }
        do {
            try managedContext.save()
        } catch let error { // Core Data's `as NSError`: a SkerryError here
            errors.append("Unresolved error \(error)")
        }
    }

    public func clearStorage(entityName: String) {
        let fetchRequest = FetchRequest(entityName: entityName)
        let batchDeleteRequest = BatchDeleteRequest(fetchRequest: fetchRequest)
        do {
            try managedContext.execute(batchDeleteRequest)
        } catch let error { // Core Data's `as NSError`: a SkerryError here
            errors.append("Cannot delete local storage for: \(entityName).\nReason: \(error.localizedDescription)")
        }
    }
}

// MARK: Seed 003: concurrency types, parent contexts, the nested stack

/// Seed 003's nested stack: a private-queue persisting context on the coordinator, a main-queue
/// context whose parent it is, and a save that saves both.
///
/// `@unchecked Sendable`: the contexts are set once in `init`, then only read.
private final class NestedStack: @unchecked Sendable {
    let persistingMoc: ObjectContext
    let mainMoc: ObjectContext
    let failures = Locked<[String]>([])

    init(psc: StoreCoordinator) {
        persistingMoc = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        persistingMoc.persistentStoreCoordinator = psc

        mainMoc = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
        mainMoc.parent = persistingMoc
    }

    func save() {
        guard mainMoc.hasChanges || persistingMoc.hasChanges else {
            return
        }

        mainMoc.performAndWait {
            do {
                try self.mainMoc.save()

                self.persistingMoc.perform {
                    do {
                        try self.persistingMoc.save()
                    } catch {
                        self.failures.append("!!! Error: save managed object in persisting context !!!\n\(error)\n")
                    }
                }
            } catch {
                failures.append("!!! Error: save managed object in main context !!!\n\(error)\n")
            }
        }
    }
}

@Suite struct SeedPortTests {
    /// Waits (on the main actor) until the blocks enqueued on `context`'s queue before now ran.
    @MainActor
    static func drain(_ context: ObjectContext) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            context.perform { continuation.resume() }
        }
    }

    @MainActor
    @Test func seed000TwoContextStackMergesEachSaveIntoTheOther() async throws {
        let directory = TemporaryDirectory()
        let stack = CoreDataStack(directory: directory.url, model: try seedModel())
        var loadErrors: [Error] = []
        stack.errorHandler = { loadErrors.append($0) }
        #expect(loadErrors.isEmpty)
        #expect(stack.persistentStoreCoordinator.persistentStores.count == 1)
        #expect(stack.managedObjectContext.concurrencyType == .mainQueueConcurrencyType)

        // The main thread uses the main-queue context directly, as in Core Data.
        let user = try stack.managedObjectContext.insert(entityName: "User")
        try user.setValue("Ada", forKey: "name")
        try stack.managedObjectContext.save()

        // The background context saves; its did-save is merged into the main context on the
        // main queue, where a block of the main-queue context runs.
        let background = stack.backgroundManagedObjectContext
        try background.performAndWait {
            #expect(try userNames(background) == ["Ada"])
            let user = try background.insert(entityName: "User")
            try user.setValue("Grace", forKey: "name")
            try background.save()
        }
        let ranOnMainThread = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            stack.managedObjectContext.perform { continuation.resume(returning: isOnMainThreadOrQueue()) }
        }
        #expect(ranOnMainThread)
        #expect(try userNames(stack.managedObjectContext) == ["Ada", "Grace"])
        #expect(stack.managedObjectContext.registeredObjects.count == 2)
    }

    @Test func seed000ContainerStackRunsForegroundAndBackgroundTasksInItsSharedDirectory() throws {
        let stack = ContainerStack(model: try seedModel())
        defer { try? FileManager.default.removeItem(at: SharedDirectoryContainer.sharedDirectory) }
        let loadErrors = Locked<[String]>([])
        stack.errorHandler = { loadErrors.append("\($0)") }
        let container = stack.persistentContainer
        #expect(loadErrors.value.isEmpty)
        #expect(
            container.persistentStoreDescriptions.first?.url
                == SharedDirectoryContainer.sharedDirectory.appendingPathComponent("DataModel.sqlite"))

        let done = DispatchSemaphore(value: 0)
        let failures = Locked<[String]>([])
        stack.performBackgroundTask { context in
            do {
                let user = try context.insert(entityName: "User")
                try user.setValue("Ada", forKey: "name")
                try context.save()
            } catch { failures.append("\(error)") }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        let names = Locked<[String]>([])
        stack.performForegroundTask { context in
            do { names.set(try userNames(context)) } catch { failures.append("\(error)") }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(names.value == ["Ada"] && failures.value.isEmpty)
        let background = stack.backgroundContext
        #expect(try background.performAndWait { try userNames(background) } == ["Ada"])
    }

    /// Seed 000's #2 and #3: the container's view context "is already configured to consume save
    /// notifications from other contexts", and "contexts created with this factory method
    /// [newBackgroundContext] are also set to consume NSManagedObjectContextDidSave broadcasts
    /// automatically" (Apple's newBackgroundContext() documentation says the same). The seed's
    /// stack writes no merge code for them, and Skerry's stack needs none: both contexts have
    /// `automaticallyMergesChangesFromParent` on, and each sees the other's saves in objects it
    /// already holds (docs/names.md, "What Core Data code changes").
    @Test func seed000ContainerContextsConsumeEachOthersSavesByThemselves() throws {
        let persistentContainer = PersistentStack(name: "DataModel", managedObjectModel: try seedModel())
        persistentContainer.persistentStoreDescriptions = [.inMemory()]
        try persistentContainer.loadPersistentStores()
        let viewContext = persistentContainer.viewContext
        let backgroundContext = persistentContainer.newBackgroundContext()
        #expect(viewContext.automaticallyMergesChangesFromParent)
        #expect(backgroundContext.automaticallyMergesChangesFromParent)

        let id = try backgroundContext.performAndWait {
            let user = try backgroundContext.insert(entityName: "User")
            try user.setValue("Ada", forKey: "name")
            try backgroundContext.save()
            return user.objectID
        }
        // Both hold the user, loaded, before the other saves a change to it.
        let seenByView = try viewContext.performAndWait { try viewContext.existingObject(with: id) }
        try backgroundContext.performAndWait {
            try backgroundContext.existingObject(with: id).setValue(Int64(36), forKey: "age")
            try backgroundContext.save() // enqueues the merge on the view context
        }
        #expect(try viewContext.performAndWait { try seenByView.value(forKey: "age", as: Int64?.self) } == 36)

        try viewContext.performAndWait {
            try seenByView.setValue("Ada Lovelace", forKey: "name")
            try viewContext.save() // and the other way
        }
        let name = try backgroundContext.performAndWait {
            try backgroundContext.registeredObject(for: id)?.value(forKey: "name", as: String.self)
        }
        #expect(name == "Ada Lovelace")

        // A context made by hand consumes nothing unless told, as in Core Data.
        let handMade = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        handMade.persistentStoreCoordinator = persistentContainer.persistentStoreCoordinator
        #expect(!handMade.automaticallyMergesChangesFromParent)
    }

    @Test func seed001ManagerUpsertsByObjectTrumpAndClearsAnEntity() throws {
        let manager = CoreDataManager(model: try seedModel())
        let context = manager.managedContext
        try context.performAndWait {
            manager.saveContext() // no changes: nothing to do
            let first = try context.insert(entityName: "User")
            try first.setValue("Ada", forKey: "name")
            try first.setValue(Int64(36), forKey: "age")
            manager.saveContext()
            // A second object with the same unique name: the save updates the row (an upsert),
            // writing every value of the new object, its nil age included.
            let second = try context.insert(entityName: "User")
            try second.setValue("Ada", forKey: "name")
            manager.saveContext()
            #expect(try context.count(for: FetchRequest(entityName: "User")) == 1)
            #expect(try second.value(forKey: "age", as: Int64?.self) == nil)
            manager.clearStorage(entityName: "User")
            #expect(try context.count(for: FetchRequest(entityName: "User")) == 0)
        }
        #expect(manager.errors.isEmpty, "\(manager.errors)")
    }

    @MainActor
    @Test func seed003NestedStackSavesBothContexts() async throws {
        let directory = TemporaryDirectory()
        let psc = StoreCoordinator(managedObjectModel: try seedModel())
        try psc.addPersistentStore(with: StoreDescription(url: directory.file("Nested.sqlite")))
        let stack = NestedStack(psc: psc)
        stack.save() // nothing to save

        let user = try stack.mainMoc.insert(entityName: "User") // from the main thread
        try user.setValue("Ada", forKey: "name")
        stack.save()
        stack.persistingMoc.performAndWait {} // the persisting save was enqueued
        #expect(stack.failures.value.isEmpty)
        #expect(!stack.mainMoc.hasChanges && !stack.persistingMoc.hasChanges)

        // A worker context on the same coordinator (seed 003's first stack) reads the saved row.
        let workerMoc1 = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        workerMoc1.persistentStoreCoordinator = stack.persistingMoc.persistentStoreCoordinator
        #expect(try workerMoc1.performAndWait { try userNames(workerMoc1) } == ["Ada"])
    }

    @MainActor
    @Test func seed003WorkerSavesMergeIntoTheMainContextOnTheMainQueue() async throws {
        let psc = StoreCoordinator(managedObjectModel: try seedModel())
        try psc.addPersistentStore(with: .inMemory())
        let mainMoc = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
        mainMoc.persistentStoreCoordinator = psc
        let workerMoc1 = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        workerMoc1.persistentStoreCoordinator = mainMoc.persistentStoreCoordinator
        #expect(try userNames(mainMoc).isEmpty) // registers nothing; reads the store

        // contextDidSave: merged at once on the main thread, else enqueued on the main queue.
        let observation = workerMoc1.addDidSaveObserver { notification in
            if Thread.isMainThread {
                mainMoc.mergeChanges(fromContextDidSave: notification)
            } else {
                DispatchQueue.main.async {
                    mainMoc.mergeChanges(fromContextDidSave: notification)
                }
            }
        }
        defer { observation.cancel() }
        let existing = try mainMoc.insert(entityName: "User")
        try existing.setValue("Ada", forKey: "name")
        try mainMoc.save()
        try workerMoc1.performAndWait {
            let ada = try workerMoc1.existingObject(with: existing.objectID)
            try ada.setValue(Int64(36), forKey: "age")
            try workerMoc1.save()
        }
        await Self.drain(mainMoc) // the merge was enqueued before
        #expect(try existing.value(forKey: "age", as: Int64?.self) == 36)
    }
}
