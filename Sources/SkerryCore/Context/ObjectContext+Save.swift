extension ObjectContext {
    /// Writes the pending inserts, updates and deletes to the stores, in one transaction per
    /// store, writing only changed columns. Does nothing when there are no changes.
    ///
    /// On success, inserted objects get permanent IDs and every object's committed values are the
    /// saved ones. On failure nothing is written and nothing in the context changes: the objects
    /// keep their temporary IDs and pending changes, so the caller can fix them and save again.
    /// - Returns: the IDs (permanent) of the inserted, updated and deleted objects.
    /// - Throws: ``SkerryError/Code/missingRequiredValue`` listing every required attribute without a
    ///   value; ``SkerryError/Code/constraintViolation`` naming the object and the constrained
    ///   attributes; ``SkerryError/Code/mergeConflict`` listing every object whose row changed in
    ///   the store since this context read it; SQLite errors.
    @discardableResult
    public func save() throws(SkerryError) -> StoreChanges {
        assertOnQueue()
        guard hasChanges else { return StoreChanges() }
        let inserted = insertedList
        let updated = changedObjects.filter { $0.isUpdated && !$0.isDeletedFlag }.sorted { $0.objectID.key < $1.objectID.key }
        let deleted = deletedSet.sorted { $0.objectID.key < $1.objectID.key }
        try validateRequiredValues(inserted + updated)

        // One write per store.
        var writes: [(store: any ObjectStore, changes: StoreWrite, inserted: [EntityObject])] = []
        func slot(_ identity: StoreIdentity) throws(SkerryError) -> Int {
            if let index = writes.firstIndex(where: { $0.store.identity === identity }) { return index }
            guard let store = coordinator.store(with: identity) else {
                throw SkerryError(.noStore, "The store of an object being saved is not loaded in this stack.")
            }
            writes.append((store, StoreWrite(), []))
            return writes.count - 1
        }
        for object in inserted {
            let index = try slot(object.objectID.store)
            writes[index].changes.inserts.append((object.objectID, object.values))
            writes[index].inserted.append(object)
        }
        for object in updated {
            guard let committed = object.committedValues else { continue }
            let changes = object.values.indices.filter { committed[$0] != object.values[$0] }.map { ($0, object.values[$0]) }
            writes[try slot(object.objectID.store)].changes.updates.append(
                RowUpdate(objectID: object.objectID, expectedVersion: object.version, changes: changes))
        }
        for object in deleted {
            assert(!object.objectID.isTemporary, "a deleted object with a temporary ID is never registered")
            // A fault's version is unknown (never read): its delete is not version-checked.
            writes[try slot(object.objectID.store)].changes.deletes.append(
                (object.objectID, object.isFaultFlag ? nil : object.version))
        }
        // Writers are locked in the coordinator's store order, so that two saves spanning the
        // same stores can never wait for each other.
        let storeOrder = coordinator.loadedStores.map { ObjectIdentifier($0.identity) }
        writes.sort {
            (storeOrder.firstIndex(of: ObjectIdentifier($0.store.identity)) ?? .max)
                < (storeOrder.firstIndex(of: ObjectIdentifier($1.store.identity)) ?? .max)
        }

        let insertedKeys: [[Int64]]
        do {
            insertedKeys = try Self.write(writes.map { ($0.store, $0.changes) }, from: 0)
        } catch {
            throw SkerryError.converting(error)
        }

        // Committed: bring the context in line with the store.
        var changes = StoreChanges()
        changes.inserted.reserveCapacity(inserted.count)
        changes.updated.reserveCapacity(updated.count)
        changes.deleted.reserveCapacity(deleted.count)
        registry.reserveCapacity(registry.count + inserted.count)
        for (write, keys) in zip(writes, insertedKeys) {
            for (object, key) in zip(write.inserted, keys) {
                registry.removeValue(forKey: object.objectID)
                object.objectID = ObjectID(store: write.store.identity, entity: object.entity, primaryKey: key)
                object.isInsertedFlag = false
                object.version = 1
                registry[object.objectID] = object
                changes.inserted.insert(object.objectID)
            }
        }
        for object in updated {
            object.version += 1
            changes.updated.insert(object.objectID)
        }
        for object in changedObjects { object.committedValues = nil }
        changedObjects.removeAll()
        for object in deleted {
            changes.deleted.insert(object.objectID)
            unregister(object)
        }
        insertedList.removeAll()
        coordinator.didSave.post(DidSaveEvent(context: self, changes: changes))
        return changes
    }

    /// Runs the writes from `index` on, each store's transaction enclosing the next store's, so
    /// that all commit only when every store's statements succeeded. (The commits themselves run
    /// innermost first; a COMMIT that fails after an inner store committed — a disk failure —
    /// leaves that inner store's part written.)
    private static func write(_ writes: [(any ObjectStore, StoreWrite)], from index: Int) throws -> [[Int64]] {
        guard index < writes.count else { return [] }
        let (keys, rest) = try writes[index].0.write(writes[index].1) { try write(writes, from: index + 1) }
        return [keys] + rest
    }

    private func validateRequiredValues(_ objects: [EntityObject]) throws(SkerryError) {
        var missing: [(EntityObject, String)] = []
        for object in objects {
            for (index, attribute) in object.entity.attributes.enumerated()
            where !attribute.isOptional && object.values[index].isNull {
                missing.append((object, attribute.name))
            }
        }
        guard let first = missing.first else { return }
        let list = missing.map { "\($0.0.objectID).\($0.1)" }.joined(separator: ", ")
        throw SkerryError(.missingRequiredValue, "Required attributes have no value: \(list). Nothing was saved.",
                          entityName: first.0.entity.name, key: first.1, objectID: first.0.objectID,
                          objectIDs: missing.dropFirst().map(\.0.objectID))
    }

    /// Discards every pending change: inserted objects are removed (and invalidated), changed
    /// objects get their committed values back, deleted objects are no longer deleted.
    public func rollback() {
        assertOnQueue()
        for object in insertedList { unregister(object) }
        insertedList.removeAll()
        for object in changedObjects {
            if let committed = object.committedValues { object.values = committed }
            object.committedValues = nil
        }
        changedObjects.removeAll()
        for object in deletedSet { object.isDeletedFlag = false }
        deletedSet.removeAll()
    }

    /// Forgets every registered object and every pending change. References to the objects held
    /// elsewhere become invalid (reading them throws ``SkerryError/Code/objectNotInContext``), and
    /// the context holds no strong reference to any of them any more.
    public func reset() {
        assertOnQueue()
        let objects = registry.values
        registry = [:]
        insertedList = []
        changedObjects = []
        deletedSet = []
        for object in objects { object.invalidate() }
    }

    /// Brings one object up to date with the store.
    /// - Parameters:
    ///   - object: a saved object of this context.
    ///   - mergeChanges: false: pending changes are dropped and the object becomes a fault (its
    ///     values load again when next read; no I/O now). true: the store's values are read now and
    ///     the object's pending changes are applied on top of them.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` for an object of another context;
    ///   ``SkerryError/Code/objectNotFound`` when merging and the row is gone.
    public func refresh(_ object: EntityObject, mergeChanges: Bool) throws(SkerryError) {
        assertOnQueue()
        guard object.context === self else {
            throw SkerryError(.objectNotInContext, "\(object.objectID) is not registered in this context.",
                              entityName: object.entity.name, objectID: object.objectID)
        }
        guard !object.isInsertedFlag else { return }
        guard mergeChanges else {
            changedObjects.remove(object)
            object.committedValues = nil
            object.values = []
            object.isFaultFlag = true
            object.faultBatch = nil
            return
        }
        guard let store = coordinator.store(with: object.objectID.store),
              let row = try store.fetchRows(object.entity, primaryKeys: [object.objectID.key]).first else {
            throw SkerryError(.objectNotFound, "The row of \(object.objectID) no longer exists in the store.",
                              entityName: object.entity.name, objectID: object.objectID)
        }
        if let committed = object.committedValues, !object.isFaultFlag {
            var merged = row.values
            for index in merged.indices where committed[index] != object.values[index] {
                merged[index] = object.values[index]
            }
            object.values = merged
            object.committedValues = row.values
        } else {
            object.values = row.values
        }
        object.version = row.version
        object.isFaultFlag = false
        object.faultBatch = nil
    }

    /// Applies changes made elsewhere (another context's save, a batch delete) to this context.
    ///
    /// Deleted objects are removed from the context and invalidated. Updated objects without
    /// pending changes become faults, so their next read loads the new values; those with pending
    /// changes are refreshed now with their changes kept on top. Inserted objects need nothing:
    /// fetches find them. The context's own unsaved changes stay in place.
    /// - Parameter changes: the IDs of the changed objects.
    public func mergeChanges(_ changes: StoreChanges) {
        assertOnQueue()
        for objectID in changes.deleted {
            guard let object = registry[objectID] else { continue }
            unregister(object)
        }
        for objectID in changes.updated {
            guard let object = registry[objectID], !object.isFaultFlag else { continue }
            if object.isUpdated {
                if (try? refresh(object, mergeChanges: true)) == nil { unregister(object) }
            } else {
                try? refresh(object, mergeChanges: false)
            }
        }
    }

    /// Runs a batch delete in the store, without loading objects. This context is not changed:
    /// merge `result.changes` into it (and into other live contexts) to drop the deleted objects.
    /// - Parameter request: which objects.
    /// - Returns: the deleted objects' IDs.
    public func execute(_ request: BatchDeleteRequest) throws(SkerryError) -> BatchDeleteResult {
        assertOnQueue()
        let entity = try coordinator.entity(named: request.entityName)
        let store = try coordinator.store(for: entity)
        let keys = try store.batchDelete(entity, predicate: try request.predicate?.resolved(for: entity))
        return BatchDeleteResult(deletedObjectIDs: keys.map { ObjectID(store: store.identity, entity: entity, primaryKey: $0) })
    }
}
