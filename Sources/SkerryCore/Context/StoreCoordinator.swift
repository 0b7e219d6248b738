import Foundation
import Synchronization

/// The model and the loaded stores of a stack, shared by all its contexts:
/// NSPersistentStoreCoordinator's role, minus everything SQL (which stays in the stores).
/// ``PersistentStack`` makes one (``PersistentStack/persistentStoreCoordinator``); code that
/// builds its stack by hand, as Core Data code did before containers, makes its own with
/// ``init(managedObjectModel:)`` and attaches contexts to it.
///
/// `@unchecked Sendable`: `stores` and `migrating` are only read or written while `lock` is
/// held; the stores themselves are `Sendable`.
public final class StoreCoordinator: @unchecked Sendable {
    let model: ObjectModel
    /// Whether this is the stand-in of a context not attached yet (no model, no stores).
    let isUnattached: Bool
    /// Did-save events of every context of the stack.
    let didSave = DidSaveBroadcaster()
    /// The stack's events (store loads, migration steps, traced statements, resolved conflicts).
    let events = EventHub()
    private let lock = NSLock()
    private var stores: [any ObjectStore] = []
    /// The loaded stores ``migratePersistentStore(_:to:)`` is copying: they cannot be taken out
    /// (``remove(_:)``) or migrated again until it returns, so that its swap always finds them.
    private var migrating: Set<ObjectIdentifier> = []
    /// How many stores were taken out of the coordinator so far: what a context looked up before
    /// it changed may name a store that is gone (a context's cached temporary-ID space).
    let removals = Atomic<Int>(0)

    /// The stores ``migratePersistentStore(_:to:)`` replaced, each with the store that replaced it
    /// (``objectID(migratedFrom:)``) and that store's description (``beginMigration(of:)``).
    let migrations = Mutex<[(old: StoreIdentity, new: StoreIdentity, newDescription: StoreDescription)]>([])
    /// The descriptions of the stores ``migratePersistentStore(_:to:)`` replaced, each with the
    /// description of the store that replaced it (``PersistentStack/hasLoadedStores``).
    let migratedDescriptions = Mutex<[(old: StoreDescription, new: StoreDescription)]>([])
    /// Where a store added outside ``PersistentStack/loadPersistentStores()`` (a migration's new
    /// store) hands the saves of other processes: the stack's, set when a stack made the coordinator.
    let savesOfOthersHandler = Mutex<(@Sendable (SavesOfOthers) -> Void)?>(nil)
    /// Told the description of each store ``migratePersistentStore(_:to:)`` replaced and of the
    /// store that replaced it, after the swap: the stack's, so that its
    /// ``PersistentStack/persistentStoreDescriptions`` list the new store.
    let storeMigratedHandler = Mutex<(@Sendable (_ old: StoreDescription, _ new: StoreDescription) -> Void)?>(nil)

    /// For each entity (by identity), each relationship's inverse: its index in the destination,
    /// and the destination. Computed once, so that keeping inverses in sync looks nothing up by
    /// name per object.
    private let inverses: [ObjectIdentifier: [(index: Int, destination: EntityDescription)?]]

    init(model: ObjectModel) {
        self.model = model
        self.isUnattached = false
        var inverses: [ObjectIdentifier: [(index: Int, destination: EntityDescription)?]] = [:]
        for entity in model.entities {
            inverses[ObjectIdentifier(entity)] = entity.relationships.map { relationship in
                guard let name = relationship.inverseName,
                    let destination = model.entity(named: relationship.destinationEntityName),
                    let inverseIndex = destination.relationshipIndex(named: name)
                else { return nil }
                return (inverseIndex, destination)
            }
        }
        self.inverses = inverses
        Self.register(self)
    }

    /// The stand-in coordinator of a context created without a parent or coordinator.
    init(unattached: ()) {
        self.model = Self.emptyModel
        self.isUnattached = true
        self.inverses = [:]
    }

    private static let emptyModel: ObjectModel = {
        do { return try ObjectModel(entities: []) } catch { fatalError("A model without entities is valid: \(error)") }
    }()

    /// The error of work asked of a context that is not attached yet.
    private var unattachedError: SkerryError {
        SkerryError(
            .noStore,
            "This context is not attached to any stores yet: set its parent or persistentStoreCoordinator (right after creating it) first.")
    }

    /// The inverse of relationship `index` of `entity` (an entity of the model): its index in the
    /// destination, and the destination; nil without one. Complexity: O(1).
    func inverse(of entity: EntityDescription, _ index: Int) -> (index: Int, destination: EntityDescription)? {
        inverses[ObjectIdentifier(entity)]?[index] ?? nil
    }

    deinit {
        // The stack is gone: its stores' identities may drop their interned ID spaces.
        for store in stores { store.identity.forgetSpaces() }
    }

    /// Adds a loaded store.
    func add(_ store: any ObjectStore) {
        lock.withLock { stores.append(store) }
    }

    /// Takes the loaded store `description` describes (as ``persistentStores`` lists it) out of
    /// the coordinator and returns it; nil when none is loaded.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when the store is migrating.
    func takeStore(_ description: StoreDescription) throws(SkerryError) -> (any ObjectStore)? {
        let description = description.resolvedForLoading
        let taken: Result<(any ObjectStore)?, SkerryError> = lock.withLock {
            guard let index = stores.firstIndex(where: { $0.storeDescription == description }) else { return .success(nil) }
            guard !migrating.contains(ObjectIdentifier(stores[index])) else {
                return .failure(
                    SkerryError(
                        .invalidArgument,
                        "\(description) is migrating (migratePersistentStore): remove the store it moves into once that returned."))
            }
            removals.add(1, ordering: .releasing)
            return .success(stores.remove(at: index))
        }
        return try taken.get()
    }

    /// Marks the loaded store `store` as migrating (see `migrating`).
    /// - Throws: ``SkerryError/Code/invalidArgument``, changing nothing, when `store` is migrating
    ///   already (another thread's ``migratePersistentStore(_:to:)``), or is no longer loaded: a
    ///   call on another thread, or another stack's coordinator, took it out or replaced it after
    ///   the caller found it.
    func beginMigration(of store: any ObjectStore) throws(SkerryError) {
        enum Outcome { case begun, migrating, gone }
        let outcome: Outcome = lock.withLock {
            guard stores.contains(where: { $0 === store }) else { return .gone }
            return migrating.insert(ObjectIdentifier(store)).inserted ? .begun : .migrating
        }
        let description = store.storeDescription
        switch outcome {
        case .begun:
            return
        case .migrating:
            throw SkerryError(
                .invalidArgument,
                "\(description) is migrating already (migratePersistentStore on another thread): a store migrates once at a time.")
        case .gone:
            // The migration that replaced this very store (each loaded store has its own identity),
            // not one that replaced an earlier store with the same description: a store moved
            // away and back again, then taken out, was not replaced by where it went first.
            if let new = migrations.withLock({ $0.last { $0.old === store.identity }?.newDescription }) {
                throw SkerryError(
                    .invalidArgument,
                    "\(description) is no longer loaded: a migratePersistentStore on another thread replaced it with \(new) after this call found it."
                )
            }
            throw SkerryError(
                .invalidArgument,
                "\(description) is no longer loaded: another call took it out of this coordinator after this one found it (remove(_:), destroyPersistentStore or replacePersistentStore, on another thread or through another stack's coordinator, or a migratePersistentStore that replaced it)."
            )
        }
    }

    /// Ends what ``beginMigration(of:)`` began.
    func endMigration(of store: any ObjectStore) {
        _ = lock.withLock { migrating.remove(ObjectIdentifier(store)) }
    }

    /// Puts `new` in the place of the loaded store `old` (same position in load order), at once:
    /// no request finds neither. Returns false, changing nothing, when `old` is not loaded.
    func replaceStore(_ old: any ObjectStore, with new: any ObjectStore) -> Bool {
        lock.withLock {
            guard let index = stores.firstIndex(where: { $0 === old }) else { return false }
            removals.add(1, ordering: .releasing)
            stores[index] = new
            return true
        }
    }

    /// The loaded stores, in load order.
    var loadedStores: [any ObjectStore] {
        lock.withLock { stores }
    }

    /// The store that holds `entity`: the first loaded store whose description includes it.
    func store(for entity: EntityDescription) throws(SkerryError) -> any ObjectStore {
        if isUnattached { throw unattachedError }
        let found = lock.withLock { stores.first { $0.storeDescription.holds(entity, of: model) } }
        guard let found else {
            throw SkerryError(
                .noStore, "No loaded store holds entity '\(entity.name)'. Call loadPersistentStores() first.",
                entityName: entity.name)
        }
        return found
    }

    /// The loaded store with this identity, if any.
    func store(with identity: StoreIdentity) -> (any ObjectStore)? {
        lock.withLock { stores.first { $0.identity === identity } }
    }

    /// The entity named `name` in the model, checked to be the model's own description.
    func entity(named name: String) throws(SkerryError) -> EntityDescription {
        if isUnattached { throw unattachedError }
        return try model.requireEntity(name)
    }
}
