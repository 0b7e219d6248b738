import Foundation

extension StoreCoordinator {
    /// Opens a store and adds it, as Core Data's
    /// `addPersistentStore(ofType:configurationName:at:options:)` does:
    ///
    /// ```swift
    /// try coordinator.addPersistentStore(
    ///     ofType: SQLiteStoreType, configurationName: nil, at: url,
    ///     options: [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true])
    /// ```
    ///
    /// As in Core Data, a store written with an earlier model is migrated only when the options ask
    /// for it (``MigratePersistentStoresAutomaticallyOption`` and
    /// ``InferMappingModelAutomaticallyOption``, both true); without them (`options: nil`) it fails
    /// to load with ``SkerryError/Code/modelMismatch`` and is left untouched. A new store is created
    /// either way. The options Skerry honours are those of ``StoreDescription/setOption(_:forKey:)``;
    /// an unknown option fails with ``SkerryError/Code/invalidArgument`` before anything is opened.
    /// A store already added is not opened twice. `/dev/null` as the URL of a SQLite store asks
    /// for an in-memory store, as in Core Data.
    ///
    /// - Parameters:
    ///   - storeType: ``SQLiteStoreType`` or ``InMemoryStoreType``.
    ///   - configuration: the model configuration whose entities the store holds; nil for all.
    ///   - storeURL: the database file (its folder is created if missing); for an in-memory
    ///     store, the URL ``persistentStores`` lists it with, nil for `/dev/null` (nothing is
    ///     written there).
    ///   - options: Core Data's option keys and values; nil for none.
    /// - Returns: the description of the store added (what ``persistentStores`` lists).
    /// - Throws: ``SkerryError/Code/invalidArgument`` for another store type, a SQLite store
    ///   without a URL, or an option Skerry does not honour; the errors of
    ///   ``addPersistentStore(with:)``.
    @discardableResult
    public func addPersistentStore(
        ofType storeType: String, configurationName configuration: String?, at storeURL: URL?, options: [AnyHashable: Any]? = nil
    ) throws(SkerryError) -> StoreDescription {
        let description = try StoreDescription(
            coreDataType: storeType, configurationName: configuration, at: storeURL, options: options, verb: "opens")
        _ = try addStore(with: description)
        return description.resolvedForLoading
    }

    /// The description of the loaded store at `url`, if any: Core Data's `persistentStore(for:)`.
    /// - Parameter url: a store file's URL.
    public func persistentStore(for url: URL) -> StoreDescription? {
        let path = url.standardizedFileURL.path
        return persistentStores.first { $0.url?.standardizedFileURL.path == path }
    }
}

extension StoreDescription {
    /// The description Core Data's arguments (a store type, a configuration, a URL and options)
    /// describe, as `addPersistentStore(ofType:configurationName:at:options:)` reads them:
    /// migration only when the options ask for it, `/dev/null` for a store in memory.
    /// - Parameter verb: what the caller does with it, for the message of an unknown type.
    init(
        coreDataType storeType: String, configurationName configuration: String?, at storeURL: URL?,
        options: [AnyHashable: Any]?, verb: String
    ) throws(SkerryError) {
        var description: StoreDescription
        switch storeType {
        case SQLiteStoreType:
            guard let storeURL else {
                throw SkerryError(
                    .invalidArgument, "A SQLite store needs a URL: pass the database file (or /dev/null for a store in memory).")
            }
            description = StoreDescription(url: storeURL)
        case InMemoryStoreType:
            description = .inMemory()
            description.url = storeURL
        default:
            throw SkerryError(
                .invalidArgument, "Store type '\(storeType)' is not one Skerry \(verb): use SQLiteStoreType or InMemoryStoreType.")
        }
        description.configuration = configuration
        // Core Data migrates only when asked to; a description's defaults (true) are the container's.
        description.shouldMigrateStoreAutomatically = false
        description.shouldInferMappingModelAutomatically = false
        for (key, value) in options ?? [:] {
            guard let key = key.base as? String else {
                throw SkerryError(.invalidArgument, "Store option keys are strings; \(key) is not.")
            }
            try description.applyOption(value, forKey: key)
        }
        self = description
    }
}
