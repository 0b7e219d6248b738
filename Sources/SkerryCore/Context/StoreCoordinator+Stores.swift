extension StoreCoordinator {
    /// Creates a coordinator of `model` without stores; add them with
    /// ``addPersistentStore(with:)``. Core Data's `NSPersistentStoreCoordinator(managedObjectModel:)`,
    /// for code that builds its stack by hand; ``PersistentStack`` builds one for you
    /// (``PersistentStack/persistentStoreCoordinator``).
    /// - Parameter model: the model.
    public convenience init(managedObjectModel model: ObjectModel) {
        self.init(model: model)
    }

    /// The model.
    public var managedObjectModel: ObjectModel { model }

    /// The descriptions of the loaded stores, in load order.
    public var persistentStores: [StoreDescription] {
        loadedStores.map(\.storeDescription)
    }

    /// Opens the store `description` describes, creating or migrating its schema, and adds it:
    /// Core Data's `addPersistentStore`. A description already loaded is not opened twice.
    /// - Parameter description: the store.
    /// - Throws: ``SkerryError/Code/storeLoadFailed``, ``SkerryError/Code/modelMismatch``, or
    ///   ``SkerryError/Code/invalidArgument`` on a coordinator of a context not attached yet.
    public func addPersistentStore(with description: StoreDescription) throws(SkerryError) {
        _ = try addStore(with: description)
    }

    /// Adds the store `description` describes, as ``addPersistentStore(with:)`` does, and
    /// returns it; nil when the coordinator holds it already.
    package func addStore(with description: StoreDescription) throws(SkerryError) -> (any ObjectStore)? {
        guard !isUnattached else {
            throw SkerryError(.invalidArgument, "This coordinator stands for a context not attached yet; it holds no stores.")
        }
        let description = description.resolvedForLoading
        if persistentStores.contains(description) { return nil }
        do {
            try description.checkOptions()
            try description.checkConfiguration(of: model)
            let entities = model.entities.filter { description.holds($0, of: model) }
            let store = try description.makeStore(model: model, entities: entities, events: events)
            add(store)
            return store
        } catch {
            let failure = SkerryError.converting(error)
            events.emit(.storeLoadFailed(store: description, error: failure))
            throw failure
        }
    }
}
