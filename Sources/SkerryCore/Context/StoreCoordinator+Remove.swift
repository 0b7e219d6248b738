import Foundation

extension StoreCoordinator {
    /// Takes a loaded store out of the coordinator and closes it: Core Data's `remove(_:)`.
    ///
    /// ```swift
    /// for store in coordinator.persistentStores { try coordinator.remove(store) }
    /// ```
    ///
    /// The store's connections are closed (a read or write in progress finishes first); its file
    /// stays as it is. Contexts of the coordinator keep their objects, but from then on a fetch
    /// of an entity no other store holds fails with ``SkerryError/Code/noStore``, a save of an
    /// object of the removed store fails with ``SkerryError/Code/noStore`` (nothing is written),
    /// and its objects' faults fail with ``SkerryError/Code/objectNotFound``. A store added again (even at the same
    /// URL) is a new store: objects read from the removed one do not belong to it. A
    /// ``PersistentStack`` loads a store removed this way again on its next
    /// ``PersistentStack/loadPersistentStores()``. An in-memory store's data is gone.
    /// - Parameter store: the store, as ``persistentStores`` lists it.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when the coordinator has not loaded `store`,
    ///   or when ``migratePersistentStore(_:to:)`` is moving it (remove the new store once the
    ///   migration returned).
    public func remove(_ store: StoreDescription) throws(SkerryError) {
        guard let removed = try takeStore(store) else {
            throw SkerryError(.invalidArgument, "\(store) is not loaded by this coordinator; persistentStores lists the stores it holds.")
        }
        removed.close()
    }
}
