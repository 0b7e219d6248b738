extension ObjectContext {
    /// Writes the pending inserts, updates and deletes to the stores, in one transaction per
    /// store, writing only changed columns. Does nothing when there are no changes.
    ///
    /// On success, inserted objects get permanent IDs and every object's committed values are the
    /// saved ones; a ``DidSaveEvent`` goes to the observers. On failure nothing is written and
    /// nothing in the context changes: the objects keep their temporary IDs and pending changes,
    /// so the caller can fix them and save again.
    ///
    /// Conflicts with the store are resolved by ``mergePolicy``; under `.error` (the default)
    /// they fail the save.
    /// - Returns: the IDs (permanent) of the inserted, updated and deleted objects.
    /// - Throws: ``SkerryError/Code/missingRequiredValue`` listing every required attribute without a
    ///   value; ``SkerryError/Code/constraintViolation`` naming the object and the constrained
    ///   attributes; ``SkerryError/Code/mergeConflict`` listing every object whose row changed in
    ///   the store since this context read it (both with ``SkerryError/conflicts``); SQLite errors.
    @discardableResult
    public func save() throws(SkerryError) -> StoreChanges {
        checkConfinement()
        try refuseIfErrorRecorded("The save")
        guard hasChanges else { return StoreChanges() }
        defer { checkRegistryInvariants() }
        let inserted = registry.inserted
        let updated = registry.changed.filter { $0.isUpdatedFlag && !$0.isDeletedFlag }.sorted { $0.objectID.key < $1.objectID.key }
        let deleted = registry.deleted.sorted { $0.objectID.key < $1.objectID.key }
        try computeDerivedAttributes(inserted + updated)
        try validateRequiredValues(inserted + updated)
        if coordinator.model.hasRelationships {
            try validateRelationships(saving: inserted + updated, deleting: deleted)
        }
        if let parent {
            return try save(into: parent, inserted: inserted, updated: updated, deleted: deleted)
        }

        let policy = mergePolicy
        var plan = SavePlan(inserted: inserted, updated: updated, deleted: deleted)
        let stores = coordinator.loadedStores
        var attempt = 1
        // The resolutions of this save, told to the observers once the save's transactions ended
        // (an observer does not run while a store's write lock is held).
        var resolutions: [ConflictResolutionEvent] = []
        func tellResolutions() {
            for resolution in resolutions { coordinator.events.emit(.conflictsResolved(resolution)) }
            resolutions = []
        }
        defer { tellResolutions() }
        /// Applies the policy to the conflicts `found` in `part`, for the next attempt; throws
        /// when the policy leaves some unresolved or the attempts ran out.
        func resolve(_ found: StoreWriteConflicts, in part: SavePlan.StorePart) throws(SkerryError) {
            let unresolved = plan.resolve(found, in: part, policy: policy)
            if !unresolved.isEmpty { throw Self.conflictError(unresolved) }
            resolutions.append(
                ConflictResolutionEvent(
                    contextName: name, policy: policy, changedObjects: found.versionConflicts.map(\.objectID),
                    uniquenessConflicts: found.uniquenessConflicts.count))
            if attempt == Self.maximumSaveAttempts {
                throw SkerryError(
                    .mergeConflict,
                    "The rows being saved kept changing in the store; the save gave up after \(attempt) attempts. Nothing was saved.")
            }
            attempt += 1
        }
        while true {
            var parts = try plan.parts(storeOrder: stores, movedStore: coordinator.latestIdentity(after:))
            // A save into one store, under a policy that resolves conflicts, resolves them inside
            // the store's transaction, where the rows cannot change again before the next attempt
            // writes them: without it, savers of the same rows could each roll back and lose the
            // rows to another saver every time, and give up. A save into several stores resolves
            // them out here, since another store's part, already written, may have to change
            // with them.
            let resolving: StoreWriteResolver? =
                policy == .error || parts.count != 1
                ? nil
                : { found throws(SkerryError) in
                    try resolve(found, in: parts[0])
                    parts = try plan.parts(storeOrder: stores, movedStore: self.coordinator.latestIdentity(after:))
                    // No part: the policy dropped every change (the store writes nothing).
                    return parts.first?.write ?? StoreWrite()
                }
            do {
                let keys = try withHistoryAuthor(of: parts.lazy.map(\.store)) { () throws -> [[Int64]] in
                    try Self.write(parts, resolving: resolving)
                }
                tellResolutions()
                return apply(plan, parts: parts, insertedKeys: keys)
            } catch let found as StoreWriteConflicts {
                guard let part = parts.first(where: { $0.store.identity === found.store }) else {
                    throw SkerryError(.mergeConflict, "A save conflict could not be traced to its store. Nothing was saved.")
                }
                try resolve(found, in: part)
            } catch {
                throw SkerryError.converting(error)
            }
        }
    }

    /// How often a save resolves conflicts and tries again before giving up.
    static let maximumSaveAttempts = 8

    /// The error of a save whose conflicts the policy left unresolved.
    private static func conflictError(_ conflicts: [SaveConflict]) -> SkerryError {
        let first = conflicts[0]
        var error: SkerryError
        if case .uniqueness(let constraint) = first.kind, conflicts.allSatisfy({ if case .uniqueness = $0.kind { true } else { false } }) {
            error = SkerryError(
                .constraintViolation,
                "Saving \(first.objectID) would violate the uniqueness constraint (\(constraint.joined(separator: ", "))) of '\(first.objectID.entityName)': "
                    + conflicts.map(\.description).joined(separator: "; ") + ". Nothing was saved.",
                entityName: first.objectID.entityName, key: constraint.joined(separator: ","),
                objectID: first.objectID, objectIDs: conflicts.dropFirst().map(\.objectID))
        } else {
            error = SkerryError(
                .mergeConflict,
                "The save found \(conflicts.count) conflict(s) with the store: "
                    + conflicts.map(\.description).joined(separator: "; ")
                    + ". Nothing was saved; refresh the objects, or set a merge policy, and save again.",
                entityName: first.objectID.entityName, objectID: first.objectID,
                objectIDs: conflicts.dropFirst().map(\.objectID))
        }
        error.conflicts = conflicts
        return error
    }

    /// Runs the writes of every store, each store's transaction enclosing the next store's, so
    /// that all commit only when every store's statements succeeded. (The commits themselves run
    /// innermost first; a COMMIT that fails after an inner store committed — a disk failure —
    /// leaves that inner store's part written.)
    ///
    /// The stores' last steps (``StoreWriteFinish``: a PostgreSQL store's history, under its
    /// history lock) run innermost, once every store's statements ran and found no conflict, in
    /// the stores' identifiers' order: a store's lock is not held while another store's
    /// statements wait for rows, and two stacks that loaded the stores in different orders take
    /// the locks in one order, so they cannot wait for each other in a cycle.
    ///
    /// `resolving`, given only for a save into one store, resolves that store's conflicts inside
    /// its transaction (``ObjectStore/write(_:resolving:then:)``).
    private static func write(_ parts: [SavePlan.StorePart], resolving: StoreWriteResolver?) throws -> [[Int64]] {
        var finishes: [StoreWriteFinish] = []
        func write(from index: Int) throws -> [[Int64]] {
            guard index < parts.count else {
                for finish in finishes.sorted(by: { $0.order < $1.order }) { try finish.run() }
                return []
            }
            let (keys, rest) = try parts[index].store.write(parts[index].write, resolving: resolving) { finish in
                if let finish { finishes.append(finish) }
                return try write(from: index + 1)
            }
            return [keys] + rest
        }
        return try write(from: 0)
    }

    /// Brings the context in line with a committed plan, and tells the observers.
    private func apply(_ plan: SavePlan, parts: [SavePlan.StorePart], insertedKeys: [[Int64]]) -> StoreChanges {
        var changes = StoreChanges()
        changes.inserted.reserveCapacity(plan.inserts.count)
        changes.updated.reserveCapacity(plan.updates.count)
        changes.deleted.reserveCapacity(plan.deletes.count)
        var permanentIDs: [(temporary: ObjectID, permanent: ObjectID)] = []
        permanentIDs.reserveCapacity(plan.inserts.count)
        // The objects that can hold temporary IDs of this save's inserts: the inserts, and the
        // objects changed to point at them (a store never gives a temporary ID).
        let mayHoldTemporaryIDs = coordinator.model.hasRelationships ? plan.inserts.map(\.object) + registry.changed : []
        var keyOfInsert = [Int64](repeating: 0, count: plan.inserts.count)
        // The store of each insert moved from a store a migration replaced (most saves: none).
        var movedInserts: [Int: StoreIdentity] = [:]
        for (part, keys) in zip(parts, insertedKeys) {
            for (origin, key) in zip(part.insertOrigins, keys) { keyOfInsert[origin] = key }
            if part.takesMovedInserts {
                for origin in part.insertOrigins where plan.inserts[origin].object.objectID.store !== part.store.identity {
                    movedInserts[origin] = part.store.identity
                }
            }
        }
        for delete in plan.deletes {
            changes.deleted.insert(delete.object.objectID)
            registry.unregister(delete.object)
        }
        for update in plan.updates {
            let object = update.object
            switch update.fate {
            case .write:
                object.values = update.values
                // The version the store now has: bumped by the write, or the one a resolved
                // conflict read.
                object.version = update.expectedVersion + (update.touchesRow ? 1 : 0)
                if update.touchesRow { changes.updated.insert(object.objectID) }
            case .takeStore(let stored):
                object.values = stored.values
                object.version = stored.version
            case .dropDeleted:
                registry.unregister(object)
                continue
            }
        }
        // Every change is now saved (or was set back to the committed state, and saved nothing).
        clearAllChanges()
        // The plan holds every pending insert (it was made from them): they all stop being
        // inserts at once, rather than one by one as each is re-keyed or unregistered below.
        if registry.insertedCount == plan.inserts.count { registry.endInserts() }
        // The inserts written as new rows get their rows' IDs all at once (the identity map
        // indexes them again in one pass); the space of the previous one's permanent ID is looked
        // up once per run of one entity.
        var permanentSpace: ObjectIDSpace?
        registry.rekeyInBulk(expectedCount: plan.inserts.count) { rekey in
            for (index, insert) in plan.inserts.enumerated() {
                guard case .insert(let values) = insert.fate else { continue }
                let object = insert.object
                // nil: the object's own values (derived ones were computed into it) were saved.
                if let values { object.values = values }
                object.version = 1
                let temporaryID = object.objectID
                let store = movedInserts.isEmpty ? temporaryID.store : movedInserts[index] ?? temporaryID.store
                if permanentSpace?.entity !== object.entity || permanentSpace?.store !== store {
                    permanentSpace = store.space(for: object.entity, temporary: false)
                }
                let permanentID = ObjectID(space: permanentSpace!, key: keyOfInsert[index])
                if permanentID != temporaryID { permanentIDs.append((temporaryID, permanentID)) }
                rekey(object, permanentID)
                changes.inserted.insert(permanentID)
            }
        }
        // The others, one by one: they take existing rows' IDs, or leave.
        for insert in plan.inserts {
            let object = insert.object
            let temporaryID = object.objectID
            defer { if object.objectID != temporaryID { permanentIDs.append((temporaryID, object.objectID)) } }
            switch insert.fate {
            case .insert:
                continue
            case .upsert(let existing, let values):
                object.values = values
                object.version = existing.version + (insert.writesRow ? 1 : 0)
                registry.rekey(object, to: existing.objectID)
                if insert.writesRow { changes.updated.insert(object.objectID) }
            case .adopt(let existing):
                object.values = existing.values
                object.version = existing.version
                registry.rekey(object, to: existing.objectID)
            case .mergedInto:
                registry.unregister(object)
            }
        }
        if !permanentIDs.isEmpty && (coordinator.model.hasRelationships || hasChildren) {
            let mapping = Dictionary(permanentIDs, uniquingKeysWith: { _, new in new })
            remapTemporaryIDs(mapping, in: mayHoldTemporaryIDs)
            // Kept only where children may still hold temporary IDs.
            if hasChildren { registry.rememberPermanentIDs(permanentIDs) }
        }
        coordinator.didSave.post(DidSaveEvent(context: self, changes: changes, permanentIDs: permanentIDs))
        return changes
    }

    // MARK: Saving into a parent context

    /// A child's save: moves the changes into the parent, which holds them as its own pending
    /// changes until it saves. Nothing in either context changes when the parent refuses them.
    private func save(
        into parent: ObjectContext, inserted: [EntityObject], updated: [EntityObject],
        deleted: [EntityObject]
    ) throws(SkerryError) -> StoreChanges {
        func changedRelationships(_ object: EntityObject) -> [Int: RelationshipValue] {
            var changed: [Int: RelationshipValue] = [:]
            for (index, value) in object.relationshipValues.enumerated() {
                if case .notLoaded = value { continue }
                if object.isInsertedFlag || object.committedRelationships?[index] != value { changed[index] = value }
            }
            return changed
        }
        let inserts = inserted.map { ChildChange(objectID: $0.objectID, values: $0.values, relationships: changedRelationships($0)) }
        let updates = updated.map { ChildChange(objectID: $0.objectID, values: $0.values, relationships: changedRelationships($0)) }
        let deletes = deleted.map(\.objectID)
        try Self.onParent(parent) { try parent.absorbChildChanges(inserts: inserts, updates: updates, deletes: deletes) }

        let changes = StoreChanges(inserted: Set(inserts.map(\.objectID)), updated: Set(updates.map(\.objectID)), deleted: Set(deletes))
        for object in deleted { registry.unregister(object) }
        clearAllChanges()
        registry.endInserts() // the parent holds the inserts now
        // Saved objects now, neither inserts nor changed: those whose relationships name
        // temporary IDs are noted, so that they follow when the parent saves those inserts.
        for object in inserted { noteTemporaryIDs(of: object) }
        for object in updated { noteTemporaryIDs(of: object) }
        coordinator.didSave.post(DidSaveEvent(context: self, changes: changes))
        return changes
    }

    /// One object's changes, as a child saves them into its parent.
    struct ChildChange: Sendable {
        let objectID: ObjectID
        let values: [AttributeValue]
        /// The relationships the child changed (all loaded ones, for an insert), by index.
        let relationships: [Int: RelationshipValue]
    }

    /// Takes a child's saved changes as this context's own pending changes. Every object concerned
    /// is found first, so that a change that cannot be applied changes nothing. Inverses need no
    /// upkeep here: the child kept them in sync, and saves both sides.
    func absorbChildChanges(inserts: [ChildChange], updates: [ChildChange], deletes: [ObjectID]) throws(SkerryError) {
        defer { checkRegistryInvariants() }
        var updatedObjects: [(EntityObject, ChildChange)] = []
        for change in updates {
            updatedObjects.append((try existingObject(with: resolvedID(change.objectID)), change))
        }
        var deletedObjects: [EntityObject] = []
        for objectID in deletes {
            deletedObjects.append(try existingObject(with: resolvedID(objectID)))
        }
        for change in inserts {
            if let object = registry[resolvedID(change.objectID)] {
                updatedObjects.append((object, change)) // pushed before, by a child save
                continue
            }
            let entity = change.objectID.entity
            let object = EntityObject.make(
                entity, change.objectID, context: self, values: change.values, version: 0, isFault: false,
                relationships: entity.relationships.map { $0.isToMany ? .toMany([]) : .toOne(nil) })
            for (index, value) in change.relationships { object.relationshipValues[index] = value.mapped(registry.permanentIDs) }
            registry.registerInserted(object)
        }
        for (object, change) in updatedObjects {
            willChange(object)
            object.values = change.values
            for (index, value) in change.relationships { object.relationshipValues[index] = value.mapped(registry.permanentIDs) }
        }
        for object in deletedObjects where !object.isDeletedFlag {
            registry.markDeleted(object) // the child applied the delete rules
            if object.isInsertedFlag { registry.unregister(object) }
        }
    }

    private func validateRequiredValues(_ objects: [EntityObject]) throws(SkerryError) {
        var missing: [(EntityObject, String)] = []
        for object in objects where !object.entity.valueLayout.hasEveryRequiredValue(object.storage!) {
            for (index, attribute) in object.entity.attributes.enumerated()
            where !attribute.isOptional && !object.entity.valueLayout.hasValue(object.storage!, index) {
                missing.append((object, attribute.name))
            }
        }
        guard let first = missing.first else { return }
        let list = missing.map { "\($0.0.objectID).\($0.1)" }.joined(separator: ", ")
        throw SkerryError(
            .missingRequiredValue, "Required attributes have no value: \(list). Nothing was saved.",
            entityName: first.0.entity.name, key: first.1, objectID: first.0.objectID,
            objectIDs: missing.dropFirst().map(\.0.objectID))
    }

    /// Discards every pending change: inserted objects are removed (and invalidated), changed
    /// objects get their committed values back, deleted objects are no longer deleted.
    public func rollback() {
        checkConfinement()
        defer { checkRegistryInvariants() }
        clearRecordedError()
        for object in registry.inserted { registry.unregister(object) }
        for object in registry.changed {
            if let committed = object.committedValues { object.values = committed }
            if let committed = object.committedRelationships { object.relationshipValues = committed }
        }
        clearAllChanges()
        registry.unmarkAllDeleted()
    }

    /// Forgets every registered object and every pending change. References to the objects held
    /// elsewhere become invalid (reading them throws ``SkerryError/Code/objectNotInContext``), and
    /// the context holds no strong reference to any of them any more.
    public func reset() {
        checkConfinement()
        clearRecordedError()
        registry.unregisterAll()
        checkRegistryInvariants()
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
        checkConfinement()
        guard object.context === self else {
            throw SkerryError(
                .objectNotInContext, "\(object.objectID) is not registered in this context.",
                entityName: object.entity.name, objectID: object.objectID)
        }
        guard !object.isInsertedFlag else { return }
        defer { checkRegistryInvariants() }
        guard mergeChanges else {
            turnIntoFault(object)
            return
        }
        guard let row = try sourceRows(for: [object.objectID]).first else {
            throw SkerryError(
                .objectNotFound, "The row of \(object.objectID) no longer exists in the store.",
                entityName: object.entity.name, objectID: object.objectID)
        }
        merge(row, into: object)
    }

    /// Drops `object`'s pending changes and values: its next read loads them again.
    private func turnIntoFault(_ object: EntityObject) {
        clearChange(object)
        object.relationshipValues = Array(repeating: .notLoaded, count: object.entity.relationships.count)
        object.releaseStorage()
        object.isFaultFlag = true
        object.faultBatch = nil
    }

    /// Brings `object` up to date with `row`, its row as the source has it now, keeping its pending
    /// changes on top.
    private func merge(_ row: RowSnapshot, into object: EntityObject) {
        if let committed = object.committedValues, !object.isFaultFlag {
            var merged = row.values
            for index in merged.indices where committed[index] != object.value(at: index) {
                merged[index] = object.value(at: index)
            }
            object.values = merged
            object.committedValues = row.values
            // Relationships changed here stay; the others take the row's value (or load again).
            let committedRelationships = object.committedRelationships ?? object.relationshipValues
            var relationships = row.relationships
            for index in relationships.indices where committedRelationships[index] != object.relationshipValues[index] {
                relationships[index] = object.relationshipValues[index]
            }
            object.relationshipValues = relationships
            object.committedRelationships = row.relationships
        } else {
            object.values = row.values
            object.relationshipValues = row.relationships
        }
        object.version = row.version
        object.isFaultFlag = false
        object.faultBatch = nil
        noteTemporaryIDs(of: object)
    }

    /// Applies changes made elsewhere (another context's save, a batch delete) to this context.
    ///
    /// Deleted objects are removed from the context and invalidated, as Core Data deletes them.
    /// Updated objects without pending changes become faults, so their next read loads the new
    /// values; those with pending changes are refreshed now with their changes kept on top (their
    /// rows read together, one query per entity). Inserted objects need nothing: fetches find them.
    /// The context's own unsaved changes stay in place: an object with pending changes whose row
    /// is gone keeps them (its save reports the conflict), and a refresh that fails records its
    /// error on the context (``recordedError``), so that the next save refuses rather than losing
    /// or overwriting anything silently.
    /// - Parameter changes: the IDs of the changed objects.
    public func mergeChanges(_ changes: StoreChanges) {
        checkConfinement()
        defer { checkRegistryInvariants() }
        for objectID in changes.deleted {
            guard let object = registry[objectID] else { continue }
            registry.unregister(object)
        }
        var withPendingChanges: [ObjectIdentifier: [EntityObject]] = [:]
        for objectID in changes.updated {
            guard let object = registry[objectID], !object.isFaultFlag, !object.isInsertedFlag else { continue }
            if object.isUpdatedFlag {
                withPendingChanges[ObjectIdentifier(object.entity), default: []].append(object)
            } else {
                turnIntoFault(object)
            }
        }
        for objects in withPendingChanges.values {
            do throws(SkerryError) {
                let rows = try sourceRows(for: objects.map(\.objectID))
                let byID = Dictionary(rows.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
                for object in objects {
                    if let row = byID[object.objectID] { merge(row, into: object) }
                }
            } catch {
                recordError(error)
            }
        }
    }

    /// Runs a batch delete in the store, without loading objects. This context is not changed:
    /// merge `result.changes` into it (and into other live contexts) to drop the deleted objects.
    /// - Parameter request: which objects.
    /// - Returns: what the request's ``BatchDeleteRequest/resultType`` asks for: the deleted
    ///   objects' IDs, or only their number.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a request made from object IDs that are
    ///   temporary, of several entities or of a store this context does not use.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws(SkerryError) -> BatchDeleteResult {
        checkConfinement()
        if let objectIDs = request.objectIDs, objectIDs.isEmpty {
            return BatchDeleteResult(deletedObjectIDs: [], count: 0, resultType: request.resultType)
        }
        let entity = try coordinator.entity(named: request.entityName)
        let store = try coordinator.store(for: entity)
        if let objectIDs = request.objectIDs { try checkBatchDeleteIDs(objectIDs, of: entity, in: store) }
        let predicate = try request.predicate?.resolved(for: entity, in: coordinator.model)
        if request.resultType != .objectIDs {
            let count = try withHistoryAuthor(of: CollectionOfOne(store)) { () throws(SkerryError) in
                try store.batchDeleteCount(entity, predicate: predicate, includesSubentities: request.includesSubentities)
            }
            return BatchDeleteResult(deletedObjectIDs: [], count: count, resultType: request.resultType)
        }
        let objectIDs = try withHistoryAuthor(of: CollectionOfOne(store)) { () throws(SkerryError) in
            try store.batchDelete(entity, predicate: predicate, includesSubentities: request.includesSubentities)
        }
        return BatchDeleteResult(deletedObjectIDs: objectIDs, count: objectIDs.count)
    }
}

extension ObjectContext {
    /// Checks the IDs of a ``BatchDeleteRequest/init(objectIDs:)`` request: permanent IDs of
    /// `entity`'s objects in `store`. (The request compares primary keys only: an ID of another
    /// entity or store would name another row.)
    fileprivate func checkBatchDeleteIDs(_ objectIDs: [ObjectID], of entity: EntityDescription, in store: any ObjectStore)
        throws(SkerryError)
    {
        if let other = objectIDs.first(where: { $0.entityName != entity.name }) {
            throw SkerryError(
                .invalidArgument,
                "A batch delete by object IDs takes the IDs of one entity's objects; \(other) is not a '\(entity.name)' as the first ID is.",
                entityName: entity.name, objectID: other)
        }
        if let temporary = objectIDs.first(where: \.isTemporary) {
            throw SkerryError(
                .invalidArgument,
                "A batch delete by object IDs takes permanent IDs; \(temporary) is the temporary ID of an object not saved yet (delete it with delete(_:), or save it first).",
                entityName: entity.name, objectID: temporary)
        }
        if let foreign = objectIDs.first(where: { $0.store !== store.identity }) {
            throw SkerryError(
                .invalidArgument,
                "A batch delete by object IDs takes IDs of the store that holds '\(entity.name)'; \(foreign) names an object of another store.",
                entityName: entity.name, objectID: foreign)
        }
    }
}
