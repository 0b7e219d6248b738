import Dispatch
import Foundation
import Synchronization

/// A scratch pad of objects: NSManagedObjectContext's role.
///
/// A context registers at most one ``EntityObject`` per row, tracks inserts, changes and deletes,
/// and writes them to the stores in one transaction per ``save()``. Every context has its own
/// serial queue; its objects and its methods are used only inside ``perform(_:)->()`` or
/// ``performAndWait(_:)``:
///
/// ```swift
/// let context = stack.newBackgroundContext()
/// try context.performAndWait {
///     let book = try context.insert(entityName: "Book")
///     try book.setValue("Dune", forKey: "title")
///     try context.save()
/// }
/// ```
///
/// The context itself is `Sendable` (any thread may call `perform`); its objects are not.
/// Touching a context or its objects from outside its queue stops the program with a message that
/// names the context and the call, in release builds too (see `ObjectContext.checkConfinement(_:)`).
public final class ObjectContext: @unchecked Sendable {
    // `@unchecked Sendable`: all mutable state below is touched only by the thread that owns the
    // context at that moment: the one running a perform/performAndWait block (which sets
    // `ownerThread` for the duration of the block), or for a main-queue context the main thread.
    // Every entry point and object mutator checks that (`checkConfinement`), in every build, and
    // stops the process before touching the state otherwise. `ownerThread` is atomic.
    // The identity map and change lists are `@exclusivity(unchecked)` for the same reason as
    // `EntityObject`'s state: one thread at a time, and never an `inout` access held across a call
    // that reaches the same property (mutate them in single statements).

    /// A name for debugging, shown in messages.
    public let name: String?
    /// The context this one reads from and saves into, for a child context; nil for a context of
    /// the stores. Set it before first use to make a context created with
    /// ``init(concurrencyType:name:)`` a child (Core Data's `context.parent = persisting`); setting
    /// it after the context was used stops the program, as Core Data does.
    public var parent: ObjectContext? {
        get { parentStorage }
        set { attach(coordinator: newValue?.coordinator ?? coordinator, parent: newValue, "parent") }
    }
    /// The parent; written only before first use (see ``attach(coordinator:parent:_:)``), and
    /// read only after, so that no read races the write.
    @exclusivity(unchecked) private var parentStorage: ObjectContext?
    /// The stack's coordinator; written only before first use, as `parentStorage`.
    @exclusivity(unchecked) var coordinator: StoreCoordinator
    /// Whether the context ran a block or was used from the main thread: from then on its parent
    /// and coordinator are fixed.
    let hasBeenUsed = Atomic<Bool>(false)
    private let queue: DispatchQueue
    /// The thread running a block of this context, or 0.
    @usableFromInline let ownerThread = Atomic<UInt>(0)
    /// Which threads may use the context.
    let confinement: ContextConfinement

    /// The registered objects and pending changes: the one owner of object identity.
    let registry = ObjectRegistry()
    /// The first error met by an operation that could not throw it, until the next save attempt
    /// refuses, a rollback or a reset; see ``recordedError``.
    @exclusivity(unchecked) private var recordedErrorStorage: (any Error)?
    /// How many units of work (the typed layer's container performs) run on this context now,
    /// nested ones included: a nested one joins the outermost, which alone saves or fails.
    /// Touched only by the thread that owns the context.
    @exclusivity(unchecked) package var unitOfWorkDepth = 0
    /// The space of the last insert's temporary ID (see `temporarySpace(for:)`), and the
    /// coordinator's `removals` when it was looked up: a store removed since may have held it.
    @exclusivity(unchecked) private var lastTemporarySpace: (space: ObjectIDSpace, removals: Int)?
    /// What the context read and what its cache answered.
    @exclusivity(unchecked) var counts = ContextStatistics()
    /// The policy that resolves save conflicts; see ``mergePolicy``.
    private let mergePolicyStorage = Mutex<MergePolicy>(.error)
    /// See ``shouldDeleteInaccessibleFaults`` (ObjectContext+InaccessibleFaults.swift).
    let deletesInaccessibleFaults = Atomic<Bool>(true)
    /// Whether a delete or a relationship change is running, during which a fault whose row is
    /// gone becomes a deleted object (ObjectContext+InaccessibleFaults.swift). Queue-confined.
    @exclusivity(unchecked) var isChangingTheGraph = false
    /// See ``transactionAuthor`` (ObjectContext+History.swift).
    let transactionAuthorStorage = Mutex<String?>(nil)
    /// The observation that merges other contexts' saves, while `automaticallyMergesChangesFromParent` is on.
    let automaticMerge = Mutex<DidSaveObservation?>(nil)

    /// Whether a child context was ever made from this one.
    fileprivate let childCount = Atomic<Int>(0)
    var hasChildren: Bool { childCount.load(ordering: .relaxed) > 0 }
    /// The child contexts, held weakly (a parent never keeps a child alive): set when a child's
    /// parent is set; see `liveChildren` (ObjectContext+Children.swift).
    let childList = Mutex<[WeakContext]>([])
    /// For a child: the observation of the parent's saves that swaps temporary IDs for permanent ones.
    private let parentSaves = Mutex<DidSaveObservation?>(nil)

    init(
        coordinator: StoreCoordinator, name: String?, parent: ObjectContext? = nil,
        confinement: ContextConfinement = .privateQueue
    ) {
        self.coordinator = coordinator
        self.name = name
        self.confinement = confinement
        // A main-queue context's blocks run on the main queue, so that they never run while the
        // main thread uses the context directly.
        self.queue = confinement == .mainQueue ? .main : DispatchQueue(label: "skerry.context" + (name.map { ".\($0)" } ?? ""))
        setParent(parent)
    }

    /// Makes `parent` this context's parent: observes its saves, which swap temporary IDs for
    /// permanent ones. Only in `init` or before first use.
    func setParent(_ parent: ObjectContext?) {
        parentSaves.withLock {
            $0?.cancel()
            $0 = nil
        }
        parentStorage?.removeChild(self)
        parentStorage = parent
        guard let parent else { return }
        parent.childCount.add(1, ordering: .relaxed)
        parent.addChild(self)
        let observation = coordinator.didSave.add(context: parent) { [weak self] event in
            guard let self, !event.permanentIDs.isEmpty else { return }
            self.perform { self.adoptPermanentIDs(event.permanentIDs) }
        }
        parentSaves.withLock { $0 = observation }
    }

    /// A new context whose parent is this one: its fetches see this context's unsaved state, and
    /// its ``save()`` moves its changes into this context (which a save of this context then
    /// writes). It has its own queue; it does not merge other saves by itself unless
    /// ``automaticallyMergesChangesFromParent`` is set.
    /// - Parameter name: a name for debugging.
    public func newChildContext(name: String? = nil) -> ObjectContext {
        ObjectContext(coordinator: coordinator, name: name ?? "child of \(self.name ?? "context")", parent: self)
    }

    /// `objectID`, or the permanent ID it got when this context (or its parent) saved it.
    func resolvedID(_ objectID: ObjectID) -> ObjectID {
        registry.resolved(objectID)
    }

    deinit {
        automaticMerge.withLock { $0?.cancel() }
        parentSaves.withLock { $0?.cancel() }
        // Objects still registered must not reach this context any more (see EntityObject.owner).
        registry.unregisterAll()
    }

    /// How ``save()`` resolves conflicts with the store. `.error` by default. May be set at any
    /// time, from any thread; a save uses the policy in force when it starts.
    public var mergePolicy: MergePolicy {
        get { mergePolicyStorage.withLock { $0 } }
        set { mergePolicyStorage.withLock { $0 = newValue } }
    }

    /// What the context read from its store or parent, and how many look-ups its registered
    /// objects answered without a read.
    public var statistics: ContextStatistics {
        checkConfinement()
        return counts
    }

    /// The model of the context's stack.
    public var model: ObjectModel { coordinator.model }

    // MARK: Queue

    /// Runs `block` on the context's queue, asynchronously; returns at once.
    /// - Parameter block: the work; it may use the context and its objects.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async { self.runOwned(block) }
    }

    /// Runs `block` on the context's queue later and returns at once: `perform(_:)` under a name
    /// that async code can call too. (In async code, `perform { }` names the awaited form below,
    /// and Swift asks for `await`; `enqueue` cannot be taken for it.)
    /// - Parameter block: the work; it may use the context and its objects.
    public func enqueue(_ block: @escaping @Sendable () -> Void) {
        queue.async { self.runOwned(block) }
    }

    /// Runs `block` on the context's queue and returns its result.
    /// - Parameter block: the work; it may use the context and its objects, and returns a
    ///   `Sendable` result (object IDs or plain values, never objects).
    /// - Returns: what `block` returned.
    /// - Throws: what `block` threw (a block that does not throw needs no `try`, as in Core Data).
    public func perform<T: Sendable, E: Error>(_ block: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(E) -> T in try self.runOwned(block) })
            }
        }
        return try result.get()
    }

    /// Runs `block` on the context's queue and waits for it.
    ///
    /// Reentrant: called from inside a block of the same context (also through a block of another
    /// context nested in it), it runs `block` at once. It never needs a main run loop, so it cannot
    /// deadlock a command-line tool, a test or a server for lack of one.
    /// - Parameter block: the work.
    /// - Returns: what `block` returned.
    @discardableResult
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if ownerThread.load(ordering: .acquiring) == currentThreadToken() {
            return try block()
        }
        // A main-queue context on the main thread: the main thread owns it already (waiting for
        // the main queue there would never return).
        if confinement == .mainQueue && isOnMainThreadOrQueue() {
            return try runOwned(block)
        }
        // From the main queue (not the main thread, on Linux after `dispatchMain()`), the block runs
        // on this thread while the main queue waits: main-queue contexts stay usable in it.
        let mainQueueHolder = !Thread.isMainThread && isOnMainThreadOrQueue() ? currentThreadToken() : nil
        return try queue.sync { try holdingMainQueue(mainQueueHolder) { try runOwned(block) } }
    }

    private func runOwned<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        if !hasBeenUsed.load(ordering: .relaxed) { hasBeenUsed.store(true, ordering: .releasing) }
        let previous = ownerThread.exchange(currentThreadToken(), ordering: .acquiringAndReleasing)
        defer { ownerThread.store(previous, ordering: .releasing) }
        return try block()
    }

    // MARK: Objects

    /// Inserts a new object of the entity named `entityName`, with the entity's default values
    /// and a temporary ID.
    /// - Parameter entityName: an entity of the model.
    /// - Returns: the new object, registered in this context.
    /// - Throws: ``SkerryError/Code/unknownEntity``; ``SkerryError/Code/noStore`` when no loaded
    ///   store holds the entity.
    public func insert(entityName: String) throws(SkerryError) -> EntityObject {
        checkConfinement()
        return try insert(coordinator.entity(named: entityName))
    }

    /// Inserts a new object of `entity`; see ``insert(entityName:)``.
    public func insert(_ entity: EntityDescription) throws(SkerryError) -> EntityObject {
        checkConfinement()
        let objectID = ObjectID.temporary(in: try temporarySpace(for: entity))
        let object = EntityObject.make(
            entity, objectID, context: self, version: 0,
            relationships: entity.relationships.map { $0.isToMany ? .toMany([]) : .toOne(nil) }, isFault: false,
            withRoomForValues: true)
        object.storage = entity.valueLayout.initializeDefaults(object.inlineStorage)
        registry.registerInserted(object)
        checkRegistryInvariants()
        return object
    }

    /// The space of temporary IDs of `entity`, checked to be an entity of the model held by a
    /// loaded store. The last one is kept: a bulk insert looks it up once.
    private func temporarySpace(for entity: EntityDescription) throws(SkerryError) -> ObjectIDSpace {
        let removals = coordinator.removals.load(ordering: .acquiring)
        if let last = lastTemporarySpace, last.space.entity === entity, last.removals == removals { return last.space }
        guard coordinator.model.entity(named: entity.name) === entity else {
            throw SkerryError(.unknownEntity, "Entity '\(entity.name)' is not an entity of this context's model.", entityName: entity.name)
        }
        guard !entity.isAbstract else {
            throw SkerryError(
                .invalidArgument,
                "Entity '\(entity.name)' is abstract: it has no objects of its own; insert an object of one of its sub-entities.",
                entityName: entity.name)
        }
        let space = try coordinator.store(for: entity).identity.space(for: entity, temporary: true)
        lastTemporarySpace = (space, removals)
        return space
    }

    /// Marks `object` for deletion at the next save, applying its relationships' delete rules
    /// (nullify: related objects forget it; cascade: they are deleted too). Deleting an object
    /// inserted and not saved yet simply removes it.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` when `object` is not registered here.
    public func delete(_ object: EntityObject) throws(SkerryError) {
        checkConfinement()
        guard object.context === self, registry[object.objectID] === object else {
            throw SkerryError(
                .objectNotInContext, "\(object.objectID) is not registered in this context.",
                entityName: object.entity.name, objectID: object.objectID)
        }
        defer { checkRegistryInvariants() }
        try changingTheGraph { () throws(SkerryError) in try deleteMarking(object) }
    }

    /// Marks `object` (registered here) deleted and applies its delete rules, and those of the
    /// objects they cascade to. A worklist rather than recursion, so that a cascade along a chain
    /// of any length (a linked list of 100,000 objects) cannot exhaust the stack.
    func deleteMarking(_ object: EntityObject) throws(SkerryError) {
        guard !object.isDeletedFlag else { return }
        // Marked when found, so that a cascade that comes back to an object stops there.
        registry.markDeleted(object)
        var deleted = [object]
        var next = 0
        while next < deleted.count {
            let current = deleted[next]
            next += 1
            if !current.entity.relationships.isEmpty { try applyDeleteRules(current, cascadingTo: &deleted) }
        }
        for current in deleted where current.isInsertedFlag { registry.unregister(current) }
    }

    /// Called before a value of `object` changes: captures its committed values the first time.
    func willChange(_ object: EntityObject) {
        if !object.isInsertedFlag && object.committedValues == nil {
            object.committedValues = object.values
            object.committedRelationships = object.relationshipValues
            registry.markChanged(object)
        }
    }

    /// Drops the committed state of `object`: it has no pending change any more.
    func clearChange(_ object: EntityObject) {
        guard object.committedValues != nil else { return }
        object.committedValues = nil
        object.committedRelationships = nil
        registry.unmarkChanged(object)
    }

    /// Drops the committed state of every changed object.
    func clearAllChanges() {
        for object in registry.changed {
            object.committedValues = nil
            object.committedRelationships = nil
        }
        registry.unmarkAllChanged()
    }

    // MARK: Recorded errors

    /// The first error that an operation unable to throw met in this context, or nil.
    ///
    /// Some calls cannot throw by their signature (Sworm's relation `add` and `remove`, a to-one
    /// relation setter, iterating a relation's members), and a perform nested in another perform
    /// on the same context cannot fail the outer one by itself; an error they meet is recorded
    /// here with ``recordError(_:)`` instead of being lost. While an error is recorded, ``save()``
    /// refuses (with the recorded error's code, and the error as ``SkerryError/underlyingError``)
    /// and saves nothing, and `PersistentContainer.perform` fails with it. ``rollback()`` and
    /// ``reset()`` forget it, with the changes it concerned.
    public var recordedError: (any Error)? {
        checkConfinement()
        return recordedErrorStorage
    }

    /// Records `error`, met by an operation that cannot throw, so that the next ``save()`` refuses
    /// and the enclosing perform fails with it. Only the first error is kept until it is cleared.
    /// - Parameter error: what went wrong.
    public func recordError(_ error: any Error) {
        checkConfinement()
        if recordedErrorStorage == nil { recordedErrorStorage = error }
    }

    /// Returns the recorded error, if any, and forgets it (the caller now owns reporting it).
    public func takeRecordedError() -> (any Error)? {
        checkConfinement()
        defer { recordedErrorStorage = nil }
        return recordedErrorStorage
    }

    /// Forgets the recorded error, for ``rollback()`` and ``reset()``.
    func clearRecordedError() {
        recordedErrorStorage = nil
    }

    /// Throws the recorded error, if any, as the reason `operation` refuses to run.
    func refuseIfErrorRecorded(_ operation: String) throws(SkerryError) {
        guard let recordedErrorStorage else { return }
        let recorded = SkerryError.converting(recordedErrorStorage)
        var error = SkerryError(
            recorded.code,
            "\(operation) refused: an earlier operation in this context failed and could not throw. \(recorded.message) Nothing was saved; roll back or reset the context.",
            entityName: recorded.entityName, key: recorded.key, objectIDs: recorded.objectIDs, sqlite: recorded.sqlite)
        error.conflicts = recorded.conflicts
        error.underlyingError = recordedErrorStorage
        throw error
    }

    // MARK: State

    /// Whether the context has unsaved inserts, updates or deletes. May be read from any thread, as
    /// Core Data code does (`mainMoc.hasChanges || persistingMoc.hasChanges`): outside the
    /// context's queue it is read on the queue, waiting for the block running there.
    public var hasChanges: Bool {
        guard isOwnedByCurrentThread else { return performAndWait { self.hasChanges } }
        return registry.insertedCount > 0 || !registry.deleted.isEmpty || registry.changed.contains { $0.isUpdatedFlag }
    }

    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<EntityObject> {
        checkConfinement()
        return Set(registry.inserted)
    }

    /// Saved objects whose values were changed and not saved yet.
    public var updatedObjects: Set<EntityObject> {
        checkConfinement()
        return registry.changed.filter { $0.isUpdatedFlag }
    }

    /// Objects marked for deletion at the next save.
    public var deletedObjects: Set<EntityObject> {
        checkConfinement()
        return registry.deleted
    }

    /// Every object registered in the context. The context holds them strongly until
    /// ``reset()``, so that reading them again costs no I/O.
    public var registeredObjects: Set<EntityObject> {
        checkConfinement()
        return Set(registry.objects.values)
    }

    /// Whether any object of the entity named `entityName` is registered in the context.
    /// Complexity: O(registered objects), without allocating.
    public func hasRegisteredObjects(ofEntity entityName: String) -> Bool {
        checkConfinement()
        return registry.objects.contains { $0.entity.name == entityName }
    }

    /// Whether objects of `entity` have pending changes in this context.
    func hasPendingChanges(of entity: EntityDescription) -> Bool {
        registry.inserted.contains { $0.entity.isKind(of: entity) }
            || registry.deleted.contains { $0.entity.isKind(of: entity) }
            || registry.changed.contains { $0.entity.isKind(of: entity) }
    }
}
