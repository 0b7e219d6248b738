import Dispatch
import Foundation
import Synchronization

/// A scratch pad of objects: NSManagedObjectContext's role.
///
/// A context registers at most one ``EntityObject`` per row, tracks inserts, changes and deletes,
/// and writes them to the stores in one transaction per ``save()``. Every context has its own
/// serial queue; its objects and its methods are used only inside ``perform(_:)`` or
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
/// The context itself is `Sendable` (any thread may call `perform`); its objects are not. In debug
/// builds, touching a context or its objects from outside its queue stops the program with a
/// message that says so.
public final class ObjectContext: @unchecked Sendable {
    // `@unchecked Sendable`: all mutable state below is touched only by code running on `queue`
    // (perform/performAndWait set `ownerThread` for the duration of each block, and every method
    // that reads or writes the state checks it in debug builds). `ownerThread` is atomic.
    // The identity map and change lists are `@exclusivity(unchecked)` for the same reason as
    // `EntityObject`'s state: one thread at a time, and never an `inout` access held across a call
    // that reaches the same property (mutate them in single statements).

    /// A name for debugging, shown in messages.
    public let name: String?
    /// The context this one reads from and saves into, for a child context; nil for a context of
    /// the stores.
    public let parent: ObjectContext?
    let coordinator: StoreCoordinator
    private let queue: DispatchQueue
    /// The thread running a block of this context, or 0.
    private let ownerThread = Atomic<UInt>(0)

    /// Registered objects by ID: the identity map.
    @exclusivity(unchecked) var registry: [ObjectID: EntityObject] = [:]
    /// Inserted objects, in insertion order (saved in that order, so keys follow it).
    @exclusivity(unchecked) var insertedList: [EntityObject] = []
    /// Saved objects with a change captured (their `committedValues` is set).
    @exclusivity(unchecked) var changedObjects: Set<EntityObject> = []
    /// Objects marked for deletion.
    @exclusivity(unchecked) var deletedSet: Set<EntityObject> = []
    /// What the context read and what its cache answered.
    @exclusivity(unchecked) var counts = ContextStatistics()
    /// The policy that resolves save conflicts; see ``mergePolicy``.
    private let mergePolicyStorage = Mutex<MergePolicy>(.error)
    /// The observation that merges other contexts' saves, while `automaticallyMergesChangesFromParent` is on.
    let automaticMerge = Mutex<DidSaveObservation?>(nil)

    /// The temporary IDs of objects this context saved, with the permanent IDs they got, so that
    /// a child still holding a temporary ID finds the object. Kept only once the context has had
    /// a child (so that it does not grow in contexts that never need it); emptied by `reset()`.
    var permanentIDsOfSavedObjects: [ObjectID: ObjectID] = [:]
    /// Whether a child context was ever made from this one.
    private let childCount = Atomic<Int>(0)
    var hasChildren: Bool { childCount.load(ordering: .relaxed) > 0 }
    /// For a child: the observation of the parent's saves that swaps temporary IDs for permanent ones.
    private let parentSaves = Mutex<DidSaveObservation?>(nil)

    init(coordinator: StoreCoordinator, name: String?, parent: ObjectContext? = nil) {
        self.coordinator = coordinator
        self.name = name
        self.parent = parent
        self.queue = DispatchQueue(label: "skerry.context" + (name.map { ".\($0)" } ?? ""))
        if let parent {
            let observation = coordinator.didSave.add(context: parent) { [weak self] event in
                guard let self, !event.permanentIDs.isEmpty else { return }
                self.perform { self.adoptPermanentIDs(event.permanentIDs) }
            }
            parentSaves.withLock { $0 = observation }
        }
    }

    /// A new context whose parent is this one: its fetches see this context's unsaved state, and
    /// its ``save()`` moves its changes into this context (which a save of this context then
    /// writes). It has its own queue; it does not merge other saves by itself unless
    /// ``automaticallyMergesChangesFromParent`` is set.
    /// - Parameter name: a name for debugging.
    public func newChildContext(name: String? = nil) -> ObjectContext {
        childCount.add(1, ordering: .relaxed)
        return ObjectContext(coordinator: coordinator, name: name ?? "child of \(self.name ?? "context")", parent: self)
    }

    /// `objectID`, or the permanent ID it got when this context saved it.
    func resolvedID(_ objectID: ObjectID) -> ObjectID {
        objectID.isTemporary ? (permanentIDsOfSavedObjects[objectID] ?? objectID) : objectID
    }

    deinit {
        automaticMerge.withLock { $0?.cancel() }
        parentSaves.withLock { $0?.cancel() }
        // Objects still registered must not reach this context any more (see EntityObject.owner).
        for object in registry.values { object.invalidate() }
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
        assertOnQueue()
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

    /// Runs `block` on the context's queue and returns its result.
    /// - Parameter block: the work; it may use the context and its objects, and returns a
    ///   `Sendable` result (object IDs or plain values, never objects).
    /// - Returns: what `block` returned.
    public func perform<T: Sendable>(_ block: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.runOwned(block) })
            }
        }
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
        return try queue.sync { try runOwned(block) }
    }

    private func runOwned<T>(_ block: () throws -> T) rethrows -> T {
        let previous = ownerThread.exchange(currentThreadToken(), ordering: .acquiringAndReleasing)
        defer { ownerThread.store(previous, ordering: .releasing) }
        return try block()
    }

    /// In debug builds, stops with a clear message when called from outside the context's queue.
    @inline(__always)
    func assertOnQueue(_ function: StaticString = #function) {
        #if DEBUG
        if ownerThread.load(ordering: .relaxed) != currentThreadToken() {
            preconditionFailure("Skerry: \(function) was called on ObjectContext '\(name ?? "unnamed")' (or one of its objects) outside its perform/performAndWait block. A context and its objects may only be used on the context's queue; pass object IDs between contexts.")
        }
        #endif
    }

    // MARK: Objects

    /// Inserts a new object of the entity named `entityName`, with the entity's default values
    /// and a temporary ID.
    /// - Parameter entityName: an entity of the model.
    /// - Returns: the new object, registered in this context.
    /// - Throws: ``SkerryError/Code/unknownEntity``; ``SkerryError/Code/noStore`` when no loaded
    ///   store holds the entity.
    public func insert(entityName: String) throws(SkerryError) -> EntityObject {
        assertOnQueue()
        return try insert(coordinator.entity(named: entityName))
    }

    /// Inserts a new object of `entity`; see ``insert(entityName:)``.
    public func insert(_ entity: EntityDescription) throws(SkerryError) -> EntityObject {
        assertOnQueue()
        guard coordinator.model.entity(named: entity.name) === entity else {
            throw SkerryError(.unknownEntity, "Entity '\(entity.name)' is not an entity of this context's model.", entityName: entity.name)
        }
        let store = try coordinator.store(for: entity)
        let objectID = ObjectID.temporary(store: store.identity, entity: entity)
        let object = EntityObject(entity: entity, objectID: objectID, context: self, values: entity.defaultValues,
                                  version: 0, isFault: false, relationships: entity.relationships.map { $0.isToMany ? .toMany([]) : .toOne(nil) })
        object.isInsertedFlag = true
        registry[objectID] = object
        insertedList.append(object)
        return object
    }

    /// Marks `object` for deletion at the next save, applying its relationships' delete rules
    /// (nullify: related objects forget it; cascade: they are deleted too). Deleting an object
    /// inserted and not saved yet simply removes it.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` when `object` is not registered here.
    public func delete(_ object: EntityObject) throws(SkerryError) {
        assertOnQueue()
        guard object.context === self, registry[object.objectID] === object else {
            throw SkerryError(.objectNotInContext, "\(object.objectID) is not registered in this context.",
                              entityName: object.entity.name, objectID: object.objectID)
        }
        guard !object.isDeletedFlag else { return }
        // Marked first, so that a cascade that comes back to this object stops here.
        object.isDeletedFlag = true
        if !object.entity.relationships.isEmpty { try applyDeleteRules(object) }
        if object.isInsertedFlag {
            insertedList.removeAll { $0 === object }
            unregister(object)
        } else {
            deletedSet.insert(object)
        }
    }

    /// Called before a value of `object` changes: captures its committed values the first time.
    func willChange(_ object: EntityObject) {
        if !object.isInsertedFlag && object.committedValues == nil {
            object.committedValues = object.values
            object.committedRelationships = object.relationshipValues
            changedObjects.insert(object)
        }
    }

    /// Removes `object` from the context and invalidates it.
    func unregister(_ object: EntityObject) {
        registry.removeValue(forKey: object.objectID)
        changedObjects.remove(object)
        deletedSet.remove(object)
        object.invalidate()
    }

    // MARK: State

    /// Whether the context has unsaved inserts, updates or deletes.
    public var hasChanges: Bool {
        assertOnQueue()
        return !insertedList.isEmpty || !deletedSet.isEmpty || changedObjects.contains { $0.isUpdated }
    }

    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<EntityObject> {
        assertOnQueue()
        return Set(insertedList)
    }

    /// Saved objects whose values were changed and not saved yet.
    public var updatedObjects: Set<EntityObject> {
        assertOnQueue()
        return changedObjects.filter { $0.isUpdated }
    }

    /// Objects marked for deletion at the next save.
    public var deletedObjects: Set<EntityObject> {
        assertOnQueue()
        return deletedSet
    }

    /// Every object registered in the context. The context holds them strongly until
    /// ``reset()``, so that reading them again costs no I/O.
    public var registeredObjects: Set<EntityObject> {
        assertOnQueue()
        return Set(registry.values)
    }

    /// Whether any object of the entity named `entityName` is registered in the context.
    /// Complexity: O(registered objects), without allocating.
    public func hasRegisteredObjects(ofEntity entityName: String) -> Bool {
        assertOnQueue()
        return registry.values.contains { $0.entity.name == entityName }
    }

    /// Whether objects of `entity` have pending changes in this context.
    func hasPendingChanges(of entity: EntityDescription) -> Bool {
        insertedList.contains { $0.entity === entity }
            || deletedSet.contains { $0.entity === entity }
            || changedObjects.contains { $0.entity === entity }
    }
}
