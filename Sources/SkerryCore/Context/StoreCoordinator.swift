import Foundation

/// The model and the loaded stores of a stack, shared by all its contexts:
/// NSPersistentStoreCoordinator's role, minus everything SQL (which stays in the stores).
///
/// `@unchecked Sendable`: `stores` is only read or written while `lock` is held; the stores
/// themselves are `Sendable`.
final class StoreCoordinator: @unchecked Sendable {
    let model: ObjectModel
    /// Did-save events of every context of the stack.
    let didSave = DidSaveBroadcaster()
    /// The stack's events (store loads, migration steps, traced statements, resolved conflicts).
    let events = EventHub()
    private let lock = NSLock()
    private var stores: [any ObjectStore] = []

    /// For each entity (by identity), each relationship's inverse: its index in the destination,
    /// and the destination. Computed once, so that keeping inverses in sync looks nothing up by
    /// name per object.
    private let inverses: [ObjectIdentifier: [(index: Int, destination: EntityDescription)?]]

    init(model: ObjectModel) {
        self.model = model
        var inverses: [ObjectIdentifier: [(index: Int, destination: EntityDescription)?]] = [:]
        for entity in model.entities {
            inverses[ObjectIdentifier(entity)] = entity.relationships.map { relationship in
                guard let name = relationship.inverseName,
                      let destination = model.entity(named: relationship.destinationEntityName),
                      let inverseIndex = destination.relationshipIndex(named: name) else { return nil }
                return (inverseIndex, destination)
            }
        }
        self.inverses = inverses
    }

    /// The inverse of relationship `index` of `entity` (an entity of the model): its index in the
    /// destination, and the destination; nil without one. Complexity: O(1).
    func inverse(of entity: EntityDescription, _ index: Int) -> (index: Int, destination: EntityDescription)? {
        inverses[ObjectIdentifier(entity)]?[index] ?? nil
    }

    /// Adds a loaded store.
    func add(_ store: any ObjectStore) {
        lock.withLock { stores.append(store) }
    }

    /// The loaded stores, in load order.
    var loadedStores: [any ObjectStore] {
        lock.withLock { stores }
    }

    /// The store that holds `entity`: the first loaded store whose description includes it.
    func store(for entity: EntityDescription) throws(SkerryError) -> any ObjectStore {
        let found = lock.withLock { stores.first { $0.storeDescription.holds(entity, of: model) } }
        guard let found else {
            throw SkerryError(.noStore, "No loaded store holds entity '\(entity.name)'. Call loadPersistentStores() first.",
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
        try model.requireEntity(name)
    }
}
