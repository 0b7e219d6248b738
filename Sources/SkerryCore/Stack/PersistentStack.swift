import Foundation

/// A model, its stores and its contexts: NSPersistentContainer's role.
///
/// ```swift
/// let stack = PersistentStack(name: "Library", model: model)
/// try stack.loadPersistentStores()
/// try stack.viewContext.performAndWait { ... }
/// try await stack.performBackgroundTask { context in ... }
/// ```
///
/// By default the stack has one SQLite store, `<name>.sqlite` in ``defaultDirectoryURL()``;
/// set ``persistentStoreDescriptions`` before loading to choose others (an in-memory store, a
/// file elsewhere, several stores). To share a store between programs, subclass the stack and
/// override ``defaultDirectoryURL()``, as Core Data apps do to share a store with extensions.
///
/// `@unchecked Sendable`: the mutable state (`descriptions`, `loaded`, `lazyViewContext`) is only
/// touched while `lock` is held, and loading runs under `loadLock`; everything else is immutable
/// or `Sendable`.
open class PersistentStack: @unchecked Sendable {
    /// The stack's name; the default store file is named after it.
    public let name: String
    /// The model.
    public let model: ObjectModel
    let coordinator: StoreCoordinator
    private let lock = NSLock()
    /// Held across a whole load, so that two threads loading at once cannot open one store twice.
    /// Recursive: a completion handler may itself call `loadPersistentStores`.
    private let loadLock = NSRecursiveLock()
    private var descriptions: [StoreDescription]
    private var loaded: [StoreDescription] = []
    private var lazyViewContext: ObjectContext?
    /// The context named in the did-save events of other processes' saves (it never saves).
    private var lazyOthersContext: ObjectContext?

    /// Creates a stack. Nothing is opened until ``loadPersistentStores()``.
    /// - Parameters:
    ///   - name: the stack's name, used for the default store file `<name>.sqlite`.
    ///   - model: the model.
    public init(name: String, model: ObjectModel) {
        self.name = name
        self.model = model
        self.coordinator = StoreCoordinator(model: model)
        self.descriptions = []
        self.descriptions = [StoreDescription(url: type(of: self).defaultDirectoryURL().appendingPathComponent("\(name).sqlite"))]
        coordinator.savesOfOthersHandler.withLock { $0 = { [weak self] saves in self?.postSavesOfOthers(saves) } }
        coordinator.storeMigratedHandler.withLock { $0 = { [weak self] old, new in self?.storeMigrated(from: old, to: new) } }
    }

    /// Puts the description of the store a migration made in place of the store it replaced
    /// (`StoreCoordinator.migratePersistentStore(_:to:)`), in the descriptions to load and in the
    /// loaded ones.
    private func storeMigrated(from old: StoreDescription, to new: StoreDescription) {
        lock.withLock {
            for index in descriptions.indices where descriptions[index].resolvedForLoading == old { descriptions[index] = new }
            for index in loaded.indices where loaded[index].resolvedForLoading == old { loaded[index] = new }
        }
    }

    /// Creates a stack: Core Data's `NSPersistentContainer(name:managedObjectModel:)`; see
    /// ``init(name:model:)``.
    public convenience init(name: String, managedObjectModel model: ObjectModel) {
        self.init(name: name, model: model)
    }

    /// The coordinator of the stack's stores, for contexts made by hand with
    /// `ObjectContext(concurrencyType:)` and attached with `persistentStoreCoordinator`.
    public var persistentStoreCoordinator: StoreCoordinator { coordinator }

    /// The folder of the default store: the user's application-support folder
    /// (`$XDG_DATA_HOME`, or `~/.local/share` on Linux). Override it in a subclass to put the
    /// default store elsewhere.
    open class func defaultDirectoryURL() -> URL {
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
    }

    /// The stores to load. Change it before ``loadPersistentStores()``. After
    /// `StoreCoordinator.migratePersistentStore(_:to:)` moved one of the stack's stores, it
    /// lists the new store's description in place of the old one.
    public var persistentStoreDescriptions: [StoreDescription] {
        get { lock.withLock { descriptions } }
        set { lock.withLock { descriptions = newValue } }
    }

    /// Loads every store not loaded yet, creating or migrating its schema, and reports each
    /// store's result to `completionHandler` (nil error on success), in order.
    /// - Parameter completionHandler: called once per store, on the calling thread.
    public func loadPersistentStores(completionHandler: (StoreDescription, (any Error)?) -> Void) {
        loadLock.lock()
        defer { loadLock.unlock() }
        for description in persistentStoreDescriptions {
            if isLoaded(description) {
                completionHandler(description, nil)
                continue
            }
            do {
                if let store = try coordinator.addStore(with: description) {
                    store.deliverSavesOfOthers { [weak self] saves in self?.postSavesOfOthers(saves) }
                }
                lock.withLock { loaded.append(description) }
                completionHandler(description, nil)
            } catch {
                completionHandler(description, error)
            }
        }
    }

    /// Whether `description` was loaded and its store is still in the coordinator (not removed
    /// with `StoreCoordinator.remove(_:)` or `destroyPersistentStore`).
    private func isLoaded(_ description: StoreDescription) -> Bool {
        lock.withLock { loaded.contains(description) } && coordinator.persistentStores.contains(description.resolvedForLoading)
    }

    /// Loads every store not loaded yet; see ``loadPersistentStores(completionHandler:)``.
    /// - Throws: the first store's error, after every store was tried.
    public func loadPersistentStores() throws(SkerryError) {
        var firstError: SkerryError?
        loadPersistentStores { _, error in
            if let error, firstError == nil { firstError = SkerryError.converting(error) }
        }
        if let firstError { throw firstError }
    }

    /// What the stack's stores executed since they were loaded: statements, rows read and written.
    /// Cheap to read, from any thread.
    public var statistics: StoreStatistics {
        coordinator.loadedStores.reduce(StoreStatistics()) { $0 + $1.statistics }
    }

    /// Whether at least one store is loaded.
    public var hasLoadedStores: Bool {
        // A store migratePersistentStore replaced counts through the store that replaced it.
        lock.withLock { loaded }.contains {
            coordinator.persistentStores.contains(coordinator.currentDescription(of: $0.resolvedForLoading))
        }
    }

    /// The stack's long-lived context, for reading: created on first use. Like every context it
    /// has its own serial queue (it is not tied to a main thread or run loop); use it through
    /// `perform` / `performAndWait`.
    public var viewContext: ObjectContext {
        lock.withLock {
            if let context = lazyViewContext { return context }
            let context = ObjectContext(coordinator: coordinator, name: "viewContext")
            context.automaticallyMergesChangesFromParent = true
            lazyViewContext = context
            return context
        }
    }

    /// Posts a save another process made to a shared store (a PostgreSQL store with change
    /// propagation) as a did-save event, so that contexts merge it as they merge the stack's own;
    /// saves the store missed, as an event with ``DidSaveEvent/missedSavesOfOthers``.
    private func postSavesOfOthers(_ saves: SavesOfOthers) {
        let context = lock.withLock {
            if let context = lazyOthersContext { return context }
            let context = ObjectContext(coordinator: coordinator, name: "otherProcesses")
            lazyOthersContext = context
            return context
        }
        switch saves {
        case .saved(let changes):
            coordinator.didSave.post(DidSaveEvent(context: context, changes: changes, isFromOtherProcess: true))
        case .missed:
            coordinator.didSave.post(
                DidSaveEvent(context: context, changes: StoreChanges(), isFromOtherProcess: true, missedSavesOfOthers: true))
        }
    }

    /// A new context with its own queue, for background work, that merges the saves of the
    /// stack's other contexts by itself. The caller owns it.
    public func newBackgroundContext() -> ObjectContext {
        let context = ObjectContext(coordinator: coordinator, name: "background")
        context.automaticallyMergesChangesFromParent = true
        return context
    }

    /// Calls `handler` after every successful save of any context of the stack, on the saving
    /// context's queue. Keep the returned observation, and cancel it to stop.
    public func addDidSaveObserver(_ handler: @escaping @Sendable (DidSaveEvent) -> Void) -> DidSaveObservation {
        coordinator.didSave.add(context: nil, handler)
    }

    /// Calls `handler` with the stack's notable events: store loads (and failed loads), migration
    /// steps, merge conflicts a policy resolved, and the statements `statements` asks for (a SQL
    /// trace, or slow statements only). Register before ``loadPersistentStores()`` to see the loads.
    /// Keep the returned observation, and cancel it to stop.
    ///
    /// The logging and metrics integrations (`SkerryLogging`, `SkerryMetrics`) are observers.
    /// Without observers nothing is built or timed; with a statement observer each statement is
    /// timed (two clock reads).
    /// - Parameters:
    ///   - statements: which statements to receive as ``StackEvent/statement(_:)``. Default none.
    ///   - handler: called synchronously on the thread where the event happened; keep it short.
    public func addEventObserver(
        statements: StatementTracing = .none,
        _ handler: @escaping @Sendable (StackEvent) -> Void
    ) -> EventObservation {
        coordinator.events.add(statements: statements, handler)
    }

    /// The stack's event hub, for store kinds of other modules of the package (which emit the same
    /// events as the SQLite store).
    package var events: EventHub { coordinator.events }

    /// The did-save events of every context of the stack, as an asynchronous sequence.
    public var didSaveEvents: AsyncStream<DidSaveEvent> {
        AsyncStream { continuation in
            let observation = coordinator.didSave.add(context: nil) { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Runs `block` on a new background context, asynchronously.
    /// - Parameter block: the work, given the context.
    public func performBackgroundTask(_ block: @escaping @Sendable (ObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new background context and returns its result.
    /// - Parameter block: the work, given the context; returns a `Sendable` value.
    /// - Returns: what `block` returned.
    public func performBackgroundTask<T: Sendable>(_ block: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try block(context) }
    }
}
