import Foundation
import Testing

@testable import SkerryCore

// A real app's container-based stack with reset helpers, ported: `CoreDataStack` of esc-chatmail
// (github.com/Kevinmthau/esc-chatmail), a Swift 6 app's stack: a container configured through its
// first description, loads that record their outcome, `destroyAllData()` (remove each store from
// the coordinator, then delete its files), `destroyAndReloadSync()` (destroy, reset the view
// context, load again and wait on a semaphore), `resetStore()` (destroy, load, wait until loaded),
// background contexts with a merge policy, `performBackgroundTask` bridged to `async`, and a save
// that refreshes conflicting objects. Written again in Skerry's names; the app's own services
// (its logger, its load-error recovery handler, its backup manager) are left out or reduced to
// what the stack needs of them. What the port changed is listed in docs/names.md ("Porting a
// container with reset helpers").

enum ChatmailStackError: Error {
    case storeLoadFailed(any Error)
    case saveFailed(any Error)
    case persistentFailure(any Error)
}

/// Port: the app's backup manager deletes a store's files; this is the part the stack calls.
enum ChatmailStoreFiles {
    static func removeStore(at url: URL) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}

/// `@unchecked Sendable`, as in the app: its mutable state is touched on `isolationQueue` only.
final class ChatmailCoreDataStack: @unchecked Sendable {
    /// Port: the app's `static let shared` and `NSPersistentContainer(name:)` find the model in the
    /// bundle and the store in the default folder; the test passes both.
    private let model: ObjectModel
    private let directory: URL

    // Synchronize access to mutable state using serial queue
    private let isolationQueue = DispatchQueue(label: "com.esc.coreDataStack.isolation")
    private var _loadAttempts = 0

    private var _isStoreLoaded = false
    private var _storeLoadError: (any Error)?

    init(model: ObjectModel, directory: URL) {
        self.model = model
        self.directory = directory
    }

    var isStoreLoaded: Bool {
        isolationQueue.sync { _isStoreLoaded }
    }

    private var loadAttempts: Int {
        get { isolationQueue.sync { _loadAttempts } }
        set { isolationQueue.sync { _loadAttempts = newValue } }
    }

    private var storeLoadError: (any Error)? {
        get { isolationQueue.sync { _storeLoadError } }
        set { isolationQueue.sync { _storeLoadError = newValue } }
    }

    private func setStoreLoaded(_ loaded: Bool) {
        isolationQueue.sync { _isStoreLoaded = loaded }
    }

    lazy var persistentContainer: PersistentStack = {
        let container = PersistentStack(name: "ESCChatmail", managedObjectModel: model)
        container.persistentStoreDescriptions[0].url = directory.appendingPathComponent("ESCChatmail.sqlite")

        // Configure for automatic migration
        // Port: descriptions are values: changed through the array, not through `.first`.
        container.persistentStoreDescriptions[0].shouldMigrateStoreAutomatically = true
        container.persistentStoreDescriptions[0].shouldInferMappingModelAutomatically = true

        // Set up options for better error recovery
        container.persistentStoreDescriptions[0].setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        container.persistentStoreDescriptions[0].setOption(true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)

        loadPersistentStores(for: container)

        container.viewContext.automaticallyMergesChangesFromParent = true
        container.viewContext.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        return container
    }()

    private func loadPersistentStores(for container: PersistentStack) {
        container.loadPersistentStores { [weak self] storeDescription, error in
            guard let self = self else { return }

            if let error {
                self.storeLoadError = error
                // Port: the app hands the error to its recovery handler (retry, migration
                // recovery, store reset); counted here.
                self.loadAttempts += 1
            } else {
                self.setStoreLoaded(true)
                self.loadAttempts = 0
            }
        }
    }

    var viewContext: ObjectContext {
        persistentContainer.viewContext
    }

    func waitForStoreToLoad(timeout: TimeInterval = 10) async throws {
        let startTime = Date()

        while !isStoreLoaded {
            if Date().timeIntervalSince(startTime) > timeout {
                throw ChatmailStackError.storeLoadFailed(
                    storeLoadError ?? NSError(domain: "CoreData", code: -1, userInfo: [NSLocalizedDescriptionKey: "Store load timeout"]))
            }

            try await Task.sleep(nanoseconds: 100_000_000) // 0.1 seconds
        }
    }

    func newBackgroundContext() -> ObjectContext {
        let context = persistentContainer.newBackgroundContext()
        context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        return context
    }

    /// Port: `catch let error as NSError` with Core Data's codes becomes `catch let error as
    /// SkerryError` with its codes (`NSManagedObjectMergeError`: `.mergeConflict`, whose conflicts are `error.conflicts`,
    /// each naming its object by ID); the app's validation and transient-error branches depend on
    /// its own classifier and are left out.
    func save(context: ObjectContext, retryCount: Int = 3) throws {
        try context.performAndWait {
            guard context.hasChanges else { return }

            var lastError: (any Error)?

            for _ in 0..<retryCount {
                do {
                    try context.save()
                    return // Success
                } catch let error as SkerryError {
                    lastError = error

                    if error.code == .mergeConflict {
                        // Resolve merge conflicts
                        handleMergeConflicts(in: context, error: error)
                    } else {
                        // Non-recoverable error
                        throw ChatmailStackError.saveFailed(error)
                    }
                }
            }

            if let error = lastError {
                throw ChatmailStackError.saveFailed(error)
            }
        }
    }

    private func handleMergeConflicts(in context: ObjectContext, error: SkerryError) {
        // Refresh objects involved in merge conflict
        for conflict in error.conflicts {
            // Port: a conflict names its object by ID (Core Data: `sourceObject`); `refresh` throws.
            if let sourceObject = try? context.existingObject(with: conflict.objectID) {
                try? sourceObject.managedObjectContext?.refresh(sourceObject, mergeChanges: false)
            }
        }
    }

    func destroyAllData() throws {
        let coordinator = persistentContainer.persistentStoreCoordinator
        var errors: [any Error] = []

        for store in coordinator.persistentStores {
            do {
                let storeURL = store.url
                try coordinator.remove(store)

                if let storeURL = storeURL {
                    try ChatmailStoreFiles.removeStore(at: storeURL)
                }
            } catch {
                errors.append(error)
            }
        }

        // Reset state
        setStoreLoaded(false)
        loadAttempts = 0

        if !errors.isEmpty {
            throw ChatmailStackError.persistentFailure(errors.first!)
        }
    }

    /// Destroys all data and reloads the persistent stores synchronously.
    func destroyAndReloadSync() throws {
        try destroyAllData()

        // Reset the viewContext to clear any stale managed objects
        // Port: on the view context's queue (Skerry's view context has a private queue; Core Data's
        // is the main queue, and the app calls this off the main thread).
        let viewContext = persistentContainer.viewContext
        viewContext.performAndWait { viewContext.reset() }

        // Reload stores synchronously using a semaphore
        let semaphore = DispatchSemaphore(value: 0)
        var loadError: (any Error)?

        persistentContainer.loadPersistentStores { [weak self] storeDescription, error in
            if let error = error {
                loadError = error
            } else {
                self?.setStoreLoaded(true)
                self?.loadAttempts = 0
            }
            semaphore.signal()
        }

        // Wait for stores to load (with timeout)
        let result = semaphore.wait(timeout: .now() + 10.0)
        if result == .timedOut {
            throw ChatmailStackError.storeLoadFailed(
                NSError(domain: "CoreDataStack", code: -1, userInfo: [NSLocalizedDescriptionKey: "Timed out waiting for store to reload"]))
        }

        if let error = loadError {
            throw ChatmailStackError.persistentFailure(error)
        }

        // Reset viewContext again after stores are loaded to ensure clean state
        viewContext.performAndWait { viewContext.reset() }
    }

    /// Port: the result is `Sendable` (Swift 6), and the block is `@Sendable`.
    func performBackgroundTask<T: Sendable>(_ block: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
        try await waitForStoreToLoad()

        return try await withCheckedThrowingContinuation { continuation in
            persistentContainer.performBackgroundTask { context in
                context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
                do {
                    let result = try block(context)
                    continuation.resume(returning: result)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func resetStore() async throws {
        // Safely reset the store
        try destroyAllData()

        // Reinitialize
        loadPersistentStores(for: persistentContainer)

        // Wait for store to be ready
        try await waitForStoreToLoad()
    }
}

@Suite struct ContainerResetPortTests {
    static func saveBooks(_ titles: [String], _ stack: ChatmailCoreDataStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for title in titles { _ = try context.insertBook(title) }
        }
        try stack.save(context: context)
    }

    static func bookCount(_ stack: ChatmailCoreDataStack) async throws -> Int {
        try await stack.performBackgroundTask { context in try context.count(for: FetchRequest(entityName: "Book")) }
    }

    @Test func theResetHelpersLeaveAnEmptyLoadedStore() async throws {
        let directory = TemporaryDirectory()
        let stack = ChatmailCoreDataStack(model: Fixtures.model(), directory: directory.url)
        let url = try #require(stack.persistentContainer.persistentStoreCoordinator.persistentStores.first?.url)
        #expect(stack.isStoreLoaded)
        try Self.saveBooks(["Dune", "Emma"], stack)
        #expect(try await Self.bookCount(stack) == 2)
        // The view context merged the background save by itself.
        let viewContext = stack.viewContext
        #expect(try viewContext.performAndWait { try viewContext.count(for: FetchRequest(entityName: "Book")) } == 2)

        try stack.destroyAndReloadSync()
        #expect(stack.isStoreLoaded)
        #expect(try await Self.bookCount(stack) == 0)
        #expect(FileManager.default.fileExists(atPath: url.path))
        try Self.saveBooks(["Persuasion"], stack)
        #expect(try await Self.bookCount(stack) == 1)

        try await stack.resetStore()
        #expect(stack.isStoreLoaded)
        #expect(try await Self.bookCount(stack) == 0)
    }

    /// The save helper: two contexts change one book; the second save merges by the policy the
    /// helper's contexts have (object trumps) instead of failing.
    @Test func theSaveHelperSavesOverAnotherSave() async throws {
        let directory = TemporaryDirectory()
        let stack = ChatmailCoreDataStack(model: Fixtures.model(), directory: directory.url)
        try Self.saveBooks(["Dune"], stack)
        let first = stack.newBackgroundContext(), second = stack.newBackgroundContext()
        let request = FetchRequest(entityName: "Book")
        try first.performAndWait { try first.fetch(request)[0].setValue(1965, forKey: "year") }
        try second.performAndWait { try second.fetch(request)[0].setValue("Dune!", forKey: "title") }
        try stack.save(context: first)
        try stack.save(context: second)
        let stored = try await stack.performBackgroundTask { context in
            let book = try context.fetch(request)[0]
            return (try book.value(forKey: "title") as? String, try book.value(forKey: "year") as? Int32)
        }
        #expect(stored.0 == "Dune!" && stored.1 == 1965)
    }
}
