import Foundation

extension StoreCoordinator {
    /// Moves the objects of a loaded store into a new store, of any kind, and uses the new store
    /// in its place: Core Data's `migratePersistentStore(_:to:options:type:)`, with a description
    /// for the destination, so that a SQLite file moves into PostgreSQL (`SkerryPostgres`'s
    /// `StoreDescription.postgres(_:)`) as well as into another file or into memory.
    ///
    /// ```swift
    /// let moved = try coordinator.migratePersistentStore(store, to: .postgres(options))
    /// ```
    ///
    /// The destination must be new, or a store of this model's version that holds no object:
    /// one written with another version (which opening would migrate) or holding objects is
    /// refused before anything opens it, and left untouched. It is opened as
    /// ``addPersistentStore(with:)`` opens a store (created where none is). Every object of `store` is copied into it,
    /// 1,000 objects at a time, fewer when rows are large (about 32 MB of values per batch) or,
    /// for their relationships, when objects have many related objects (about 32,000 per batch; a
    /// page of 8,000 keys and one batch of rows are held in memory, never the whole store; the
    /// members of one object's to-many relationship the destination stores on that side (a join
    /// table's owner, an ordered to-many) come whole, the other sides are not read), with every attribute value
    /// and every relationship (to-one, to-many, ordered, many-to-many); the destination's
    /// uniqueness constraints are checked on the way. The whole copy is one transaction of the
    /// destination. Then the new store takes the old one's place among ``persistentStores``, and
    /// the old store is closed (its file, or its schema, stays as it is; an in-memory store's data
    /// is gone), as in Core Data, where the old store is no longer a useful reference.
    ///
    /// Object IDs change, as in Core Data: each object keeps its entity and its key, in the new
    /// store, whose key sequences go on from the old store's, so that a key the old store handed
    /// out (to an object deleted since, or reserved by ``ObjectContext/obtainPermanentIDs(for:)``)
    /// never names another object; ``objectID(migratedFrom:)`` gives an old ID's new one (Core Data hands the new IDs
    /// in the `NSUUIDChangedPersistentStoresKey` entry of its stores-changed notification), and in
    /// this process the URIs and string forms of the old IDs resolve to the new ones
    /// (``PersistentStack/objectID(forURIRepresentation:)``); after a restart, map them by entity
    /// and key. The
    /// objects contexts hold from the old store are objects of a removed store, as after
    /// ``remove(_:)``: fetch them again (or ``ObjectContext/reset()`` the contexts). Versions for
    /// optimistic locking start again in the new store (every object is new there). Objects
    /// inserted and not saved yet have no store until they are saved, as in Core Data: a
    /// context's next save writes them into the new store (unless they were given permanent IDs
    /// of the old store by ``ObjectContext/obtainPermanentIDs(for:)``, or point at objects of
    /// the old store whose other side the save changes: those fail as objects of a removed store
    /// do). Persistent
    /// history is not carried, as in Core Data: the new store's history starts empty (a
    /// history-tracking destination records the saves made after the migration), and tokens of
    /// the old store do not apply to it; process what the old history holds first.
    ///
    /// Stop saving to `store` while it migrates: the copy reads it in batches. A save to it from
    /// this process during the copy fails the migration with ``SkerryError/Code/mergeConflict``
    /// (nothing changes; migrate again once saves have stopped); saves of other processes are not
    /// detected, so stop them first. While it migrates, `store` cannot be taken out
    /// (``remove(_:)`` fails with ``SkerryError/Code/invalidArgument``) or migrated again, so
    /// that a copy the destination committed always takes its place. A ``PersistentStack`` whose store migrates lists the new
    /// store's description (the one this returns) in
    /// ``PersistentStack/persistentStoreDescriptions`` in place of the old one, so that its next
    /// ``PersistentStack/loadPersistentStores()`` loads nothing again, and counts it in
    /// ``PersistentStack/hasLoadedStores``.
    ///
    /// Events (``PersistentStack/addEventObserver(statements:_:)``): the destination reports its load (`.storeLoaded`)
    /// when it opens, before the copy, also when the copy then fails and it is closed again; once
    /// the new store took the old one's place, `.storeMigrated` (``StackEvent/storeMigrated(_:)``)
    /// reports both stores, their identifiers, how many objects moved and how long it took, for
    /// logs and metrics (it is not Core Data's stores-changed notification: the call returning is
    /// the signal to reset or refetch in other contexts).
    ///
    /// On failure nothing changes for the coordinator: `store` stays loaded and untouched, and the
    /// destination holds what it held: the copy's transaction is rolled back, and a SQLite file or
    /// a PostgreSQL schema the migration created is removed again (an existing schema keeps the
    /// empty tables the load made in it).
    /// - Parameters:
    ///   - store: a store this coordinator has loaded, as ``persistentStores`` lists it.
    ///   - destination: the new store. Without a configuration or entity names of its own, it
    ///     holds the entities `store` held; with them, it must hold every one of those.
    /// - Returns: the description of the new store (what ``persistentStores`` lists).
    /// - Throws: ``SkerryError/Code/invalidArgument`` when `store` is not loaded (or no longer
    ///   is: another thread or stack took it out or replaced it as the call began) or is migrating
    ///   already (another thread's call), the destination is the same store, is loaded already, does not hold every entity of `store`, holds
    ///   objects, or holds a store written with another model version;
    ///   ``SkerryError/Code/storeIsReadOnly`` when the destination is read-only; ``SkerryError/Code/constraintViolation`` when the objects
    ///   break a uniqueness constraint of the destination; the destination's load errors
    ///   (``SkerryError/Code/storeLoadFailed``, a connection error); the stores' read and write
    ///   errors.
    @discardableResult
    public func migratePersistentStore(_ store: StoreDescription, to destination: StoreDescription) throws(SkerryError)
        -> StoreDescription
    {
        guard !isUnattached else {
            throw SkerryError(.invalidArgument, "This coordinator stands for a context not attached yet; it holds no stores.")
        }
        let described = store.resolvedForLoading
        guard let source = loadedStores.first(where: { $0.storeDescription == described }) else {
            throw SkerryError(.invalidArgument, "\(store) is not loaded by this coordinator; persistentStores lists the stores it holds.")
        }
        // Neither taken out nor migrated again while it is copied: the swap below finds it, so a
        // copy the destination committed always replaces it.
        try beginMigration(of: source)
        defer { endMigration(of: source) }
        var target = destination.resolvedForLoading
        if target.configuration == nil && target.entityNames == nil {
            target.configuration = source.storeDescription.configuration
            target.entityNames = source.storeDescription.entityNames
        }
        try checkMigration(from: source.storeDescription, to: target)
        let entities = model.entities.filter { source.storeDescription.holds($0, of: model) }
        // What was there before, so that a failure removes what the migration made.
        let nothingThere: Bool
        if let factory = target.storeFactory {
            nothingThere = try !factory.placeExists()
        } else {
            nothingThere = target.kind == .sqlite && target.url.map { !FileManager.default.fileExists(atPath: $0.path) } ?? false
        }
        func undo(_ opened: (any ObjectStore)?) {
            opened?.close()
            guard nothingThere else { return }
            if let factory = target.storeFactory {
                // The schema the load made goes again; failing that, it stays (empty), and the
                // error to report is the migration's.
                try? factory.destroyStore()
            } else {
                Self.removeSQLiteFiles(of: target)
            }
        }
        let targetEntities = model.entities.filter { target.holds($0, of: model) }
        try checkDestinationIsNew(target, entities: targetEntities)
        let started = ContinuousClock.now
        let opened: any ObjectStore
        do {
            opened = try target.makeStore(model: model, entities: targetEntities, events: events)
        } catch {
            undo(nil)
            events.emit(.storeLoadFailed(store: target, error: error))
            throw error
        }
        let objectCount: Int
        do {
            objectCount = try StoreCopy(source: source, destination: opened, entities: entities).run()
        } catch {
            undo(opened)
            throw error
        }
        guard replaceStore(source, with: opened) else {
            // Not reached: a migrating store is never taken out (beginMigration).
            undo(opened)
            throw SkerryError(.invalidArgument, "\(store) was removed from the coordinator while it migrated.")
        }
        source.close()
        migrations.withLock { $0.append((source.identity, opened.identity, opened.storeDescription)) }
        migratedDescriptions.withLock { $0.append((source.storeDescription, opened.storeDescription)) }
        if let handler = savesOfOthersHandler.withLock({ $0 }) { opened.deliverSavesOfOthers(to: handler) }
        storeMigratedHandler.withLock { $0 }?(source.storeDescription, opened.storeDescription)
        events.emit(
            .storeMigrated(
                StoreMigrationEvent(
                    source: source.storeDescription, destination: opened.storeDescription,
                    sourceIdentifier: source.identity.identifier, destinationIdentifier: opened.identity.identifier,
                    objectCount: objectCount, duration: .now - started)))
        return opened.storeDescription
    }

    /// Moves a loaded store to a new location, changing its type if asked: Core Data's
    /// `migratePersistentStore(_:to:options:withType:)`; see ``migratePersistentStore(_:to:)``.
    ///
    /// ```swift
    /// let moved = try coordinator.migratePersistentStore(store, to: newURL, options: nil, withType: SQLiteStoreType)
    /// ```
    /// - Parameters:
    ///   - store: a store this coordinator has loaded, as ``persistentStores`` lists it.
    ///   - url: the new store's database file (`/dev/null` for a store in memory); for an
    ///     in-memory store, the URL ``persistentStores`` lists it with.
    ///   - options: Core Data's option keys and values for the new store, as
    ///     ``addPersistentStore(ofType:configurationName:at:options:)`` takes them; nil for none.
    ///   - storeType: ``SQLiteStoreType`` or ``InMemoryStoreType``.
    /// - Returns: the description of the new store (what ``persistentStores`` lists).
    /// - Throws: ``SkerryError/Code/invalidArgument`` for another store type or an option Skerry
    ///   does not honour; the errors of ``migratePersistentStore(_:to:)``.
    @discardableResult
    public func migratePersistentStore(
        _ store: StoreDescription, to url: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws(SkerryError) -> StoreDescription {
        let destination = try StoreDescription(
            coreDataType: storeType, configurationName: store.configuration, at: url, options: options, verb: "migrates to")
        return try migratePersistentStore(store, to: destination)
    }

    /// Moves a loaded store to a new location, changing its type if asked: Core Data's
    /// `migratePersistentStore(_:to:options:type:)` (iOS 15, macOS 12), the same as
    /// ``migratePersistentStore(_:to:options:withType:)``.
    ///
    /// ```swift
    /// let moved = try coordinator.migratePersistentStore(store, to: newURL, type: .sqlite)
    /// ```
    /// - Parameters:
    ///   - store: a store this coordinator has loaded, as ``persistentStores`` lists it.
    ///   - url: the new store's database file (`/dev/null` for a store in memory).
    ///   - options: Core Data's option keys and values for the new store; nil for none.
    ///   - storeType: ``StoreDescription/StoreType/sqlite`` or ``StoreDescription/StoreType/inMemory``.
    /// - Returns: the description of the new store (what ``persistentStores`` lists).
    /// - Throws: the errors of ``migratePersistentStore(_:to:options:withType:)``.
    @discardableResult
    public func migratePersistentStore(
        _ store: StoreDescription, to url: URL, options: [AnyHashable: Any]? = nil, type storeType: StoreDescription.StoreType
    ) throws(SkerryError) -> StoreDescription {
        try migratePersistentStore(store, to: url, options: options, withType: storeType.rawValue)
    }

    /// The ID of the object that ``migratePersistentStore(_:to:)`` made of the object `objectID`
    /// names in the store it replaced: the same entity and key in the new store (after several
    /// migrations, in the latest). Nil when `objectID` is temporary or its store was not replaced
    /// by a migration of this coordinator.
    ///
    /// ```swift
    /// let newID = coordinator.objectID(migratedFrom: oldID)
    /// ```
    /// - Parameter objectID: an ID of an object of a store this coordinator migrated.
    /// - Returns: the object's ID in the store that holds it now, or nil.
    public func objectID(migratedFrom objectID: ObjectID) -> ObjectID? {
        guard !objectID.isTemporary, let store = latestIdentity(after: objectID.store) else { return nil }
        return ObjectID(store: store, entity: objectID.entity, primaryKey: objectID.key)
    }

    /// The identity of the store that holds now the objects of the store `identity` names, after
    /// one or more migrations; nil when no migration of this coordinator replaced it.
    func latestIdentity(after identity: StoreIdentity) -> StoreIdentity? {
        let chain = migrations.withLock { $0 }
        var store = identity
        var moved = false
        while let next = chain.first(where: { $0.old === store })?.new {
            store = next
            moved = true
        }
        return moved ? store : nil
    }

    /// The description of the store that holds now the objects of the store `description`
    /// describes: itself, or after migrations of this coordinator, the latest store that
    /// replaced it.
    func currentDescription(of description: StoreDescription) -> StoreDescription {
        let chain = migratedDescriptions.withLock { $0 }
        var current = description
        var steps = 0
        // A description can come back (a store moved away and back again): the chain is walked
        // at most once per migration.
        while steps < chain.count, let next = chain.last(where: { $0.old == current })?.new {
            current = next
            steps += 1
        }
        return current
    }

    /// The identity of the store that holds now the objects of the store whose persistent
    /// identifier is `identifier`, when a migration of this coordinator replaced that store: so
    /// that the URIs and string forms of the old IDs resolve (in this process).
    func migratedIdentity(ofStoreIdentifiedBy identifier: String) -> StoreIdentity? {
        let old = migrations.withLock { chain in chain.first { $0.old.identifier.lowercased() == identifier.lowercased() }?.old }
        return old.flatMap(latestIdentity(after:))
    }

    /// Fails for a migration from `source` to `destination` that cannot be made.
    private func checkMigration(from source: StoreDescription, to destination: StoreDescription) throws(SkerryError) {
        if destination == source
            || (destination.kind == .sqlite && source.kind == .sqlite
                && destination.url?.standardizedFileURL.path == source.url?.standardizedFileURL.path)
        {
            throw SkerryError(.invalidArgument, "\(source) cannot migrate into itself: give another location.")
        }
        let loaded = persistentStores
        if loaded.contains(destination)
            || (destination.storeFactory.map { factory in loaded.contains { factory.describesSameStore(as: $0) } } ?? false)
        {
            throw SkerryError(.invalidArgument, "\(destination) is loaded already: a store migrates into a store not loaded.")
        }
        if destination.isReadOnly {
            throw SkerryError(.storeIsReadOnly, "\(destination) is read-only: a store cannot migrate into it.")
        }
        try destination.checkOptions()
        try destination.checkConfiguration(of: model)
        let lost = model.entities.filter { source.holds($0, of: model) && !destination.holds($0, of: model) }
        if let first = lost.first {
            throw SkerryError(
                .invalidArgument,
                "\(destination) does not hold '\(first.name)', which \(source) holds: its objects would be lost.", entityName: first.name)
        }
    }

    /// Removes the files of the SQLite store `description` describes, for a migration that
    /// created them and failed.
    private static func removeSQLiteFiles(of description: StoreDescription) {
        guard let path = description.url?.standardizedFileURL.path else { return }
        for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
            // A file that cannot be removed stays a stray file; the error to report is the migration's.
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
