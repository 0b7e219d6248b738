extension ObjectContext {
    /// The resolved query of a request.
    private func prepare(_ request: FetchRequest) throws(SkerryError) -> StoreQuery {
        let entity = try coordinator.entity(named: request.entityName)
        guard request.fetchLimit >= 0, request.fetchOffset >= 0, request.fetchBatchSize >= 0 else {
            throw SkerryError(.invalidArgument, "fetchLimit, fetchOffset and fetchBatchSize must not be negative.", entityName: entity.name)
        }
        var sortKeys: [ResolvedSortKey] = []
        for sortKey in request.sortKeys { sortKeys.append(try sortKey.resolved(for: entity, in: coordinator.model)) }
        var query = StoreQuery(
            entity: entity, predicate: try request.predicate?.resolved(for: entity, in: coordinator.model),
            sortKeys: sortKeys, limit: request.fetchLimit, offset: request.fetchOffset)
        query.includesSubentities = request.includesSubentities
        return query
    }

    /// Fetches the objects matching `request`.
    ///
    /// Objects already registered are returned as they are (one object per row); those without
    /// pending changes take the values just read. With `includesPendingChanges` (the default),
    /// unsaved inserts and changes are matched in memory and deleted objects left out, so the
    /// result is what the same fetch would return after a save. A child context reads through its
    /// parent, so it also sees the parent's unsaved state.
    /// - Parameter request: what to fetch.
    /// - Returns: the objects, in the request's order.
    /// - Throws: ``SkerryError/Code/unknownEntity``, ``SkerryError/Code/unknownAttribute`` or
    ///   ``SkerryError/Code/wrongValueType`` for a bad request; SQLite errors.
    ///
    /// Complexity: one query; with pending changes of the entity, the sort and the limit are
    /// applied in memory to all matching rows.
    public func fetch(_ request: FetchRequest) throws(SkerryError) -> [EntityObject] {
        checkConfinement()
        defer { checkRegistryInvariants() }
        return try objects(matching: request, try prepare(request))
    }

    /// Calls `body` with what ``fetch(_:)`` returns, borrowed, without an array: for a layer
    /// that makes its own collection of the objects (the typed layer's wrappers), no array to
    /// fill, retaining each object, and to release afterwards. When a context that holds no
    /// object yet (as each perform of a container starts) fetches from its store, without batches
    /// or prefetching, `body` reads the context's own list of the objects it registered; any other
    /// fetch makes its array first.
    ///
    /// The objects are valid while `body` runs (the context holds them): `body` may retain them,
    /// but must not call into the context (which could register or forget objects meanwhile).
    package func withFetched<R>(_ request: FetchRequest, _ body: (UnsafeBufferPointer<EntityObject>) -> R) throws(SkerryError) -> R {
        checkConfinement()
        defer { checkRegistryInvariants() }
        let query = try prepare(request)
        guard parent == nil, registry.isEmpty, request.fetchBatchSize == 0, request.relationshipKeyPathsForPrefetching.isEmpty,
            !(request.includesPendingChanges && hasPendingChanges(of: query.entity))
        else {
            return try objects(matching: request, query).withUnsafeBufferPointer(body)
        }
        try readIntoEmptyContext(query, from: try coordinator.store(for: query.entity))
        return registry.objects.withObjects(body)
    }

    /// The objects matching `request`, whose query is `query` (see ``fetch(_:)``).
    private func objects(matching request: FetchRequest, _ query: StoreQuery) throws(SkerryError) -> [EntityObject] {
        var prefetched: [Int] = []
        for name in request.relationshipKeyPathsForPrefetching {
            prefetched.append(try query.entity.requireRelationshipIndex(name))
        }
        let objects: [EntityObject]
        if request.includesPendingChanges && hasPendingChanges(of: query.entity) {
            objects = try fetchIncludingPendingChanges(request, query)
        } else if request.fetchBatchSize > 0 {
            // Each batch prefetches its objects' relationships when it loads, as in Core Data.
            return faults(
                try sourceObjectIDs(request, query), batchSize: request.fetchBatchSize,
                prefetching: prefetched.isEmpty ? nil : (query.entity, prefetched))
        } else if parent == nil {
            objects = try fetchFromStore(query)
        } else {
            let rows = try sourceRows(request, query, unlimited: false)
            registry.reserveCapacity(rows.count)
            objects = rows.map(register)
        }
        for index in prefetched { try prefetch(index, of: objects, entity: query.entity) }
        return objects
    }

    /// Reads the rows of `query` from its store straight into objects, registering each as it is
    /// read: no row is built first.
    private func fetchFromStore(_ query: StoreQuery) throws(SkerryError) -> [EntityObject] {
        assert(parent == nil, "a child context reads through its parent") // no temporary IDs to note below
        let store = try coordinator.store(for: query.entity)
        var objects: [EntityObject] = []
        if registry.isEmpty {
            try readIntoEmptyContext(query, from: store)
            // The registration order is the rows' order: the identity map lists them (and only
            // them: the context held no object).
            return registry.objects.values
        } else {
            // The object made for the row being read (see `readIntoEmptyContext`).
            var reading: EntityObject?
            // A row of an object not registered here is read into a new object's own memory, as
            // in `readIntoEmptyContext`, and registered when whole; a row of a registered object is
            // read into a block of its own (the object takes it over, or drops it if it has pending
            // changes). A block handed to the store and not handed back yet is freed if reading fails.
            var unclaimed: (base: UnsafeMutableRawPointer, layout: ValueLayout, objectID: ObjectID)?
            do {
                try store.forEachRow(query) { rowCount in
                    objects.reserveCapacity(rowCount)
                    registry.reserveCapacity(rowCount)
                } _: { (objectID: consuming ObjectID) in
                    guard registry[copy objectID] != nil else { return makeReading(objectID, &reading) }
                    let layout = objectID.entity.valueLayout
                    let base = layout.allocate()
                    unclaimed = (base, layout, objectID)
                    return base
                } _: { version, storage, relationships in
                    guard reading != nil else {
                        guard let claimed = unclaimed.take(), claimed.base == storage else {
                            preconditionFailure("store contract broken: a row's values were not read into the storage made for them")
                        }
                        objects.append(register(claimed.objectID, version: version, storage: storage, relationships: relationships))
                        return
                    }
                    let object = finishReading(&reading, version, storage, relationships)
                    registry.register(object)
                    // (No parent here, so no parent's temporary IDs to note.)
                    objects.append(object)
                }
            } catch {
                if let unclaimed { unclaimed.layout.deallocate(unclaimed.base) }
                throw error
            }
        }
        counts.sourceRequests += 1
        counts.rowsRead += objects.count
        return objects
    }

    /// Reads the rows of `query` from `store` into new objects of this context, which holds no
    /// object yet (as each perform of a container starts): the rows name distinct objects, none
    /// registered, so none is looked up, and they are registered together, in the rows' order.
    /// Each row's values are read straight into the memory of its new object: one allocation per
    /// object. Counts one source request and its rows in the context's statistics.
    @inline(never)
    private func readIntoEmptyContext(_ query: StoreQuery, from store: any ObjectStore) throws(SkerryError) {
        assert(parent == nil && registry.isEmpty, "a bulk read into a context holding objects, or through a parent")
        // The object made for the row being read (unregistered, a fault until its row is whole),
        // into whose own memory the row's values go; if reading the row fails, it goes, with the
        // values read. (Passed `inout` to the helpers below, not captured by local functions:
        // a captured variable would have its accesses checked at run time.)
        var reading: EntityObject?
        try registry.registerNewInBulk { (register) throws(SkerryError) in
            try store.forEachRow(query) { rowCount in
                registry.reserveInBulk(rowCount)
            } _: { (objectID: consuming ObjectID) in
                makeReading(objectID, &reading)
            } _: { version, storage, relationships in
                register(finishReading(&reading, version, storage, relationships))
                // (No parent here, so no parent's temporary IDs to note.)
            }
        }
        counts.sourceRequests += 1
        counts.rowsRead += registry.count
    }

    /// A new object for `objectID` (which it takes), unregistered, a fault until its row is read
    /// into its storage (empty: the room in its own memory), which it returns; the object goes to
    /// `reading`.
    @inline(__always)
    private func makeReading(_ objectID: consuming ObjectID, _ reading: inout EntityObject?) -> UnsafeMutableRawPointer {
        let object = EntityObject.make(
            objectID.entity, objectID, context: self, version: 0, relationships: [], isFault: true, withRoomForValues: true)
        let base = object.emptyStorage()
        object.storage = base
        // The store contract: one `body` call (which takes the object) per storage made. Checked
        // in release builds too: a second storage for one row would leave an object half made.
        // (It also tells the compiler that nothing is released by the assignment below.)
        guard reading == nil else { preconditionFailure("store contract broken: storage made twice for one row") }
        reading = object
        return base
    }

    /// The object made by ``makeReading(_:_:)`` for the row just read (taken from `reading`),
    /// finished: loaded, with the row's version and relationships; not registered yet.
    @inline(__always)
    private func finishReading(
        _ reading: inout EntityObject?, _ version: Int64, _ storage: UnsafeMutableRawPointer,
        _ relationships: [RelationshipValue]
    ) -> EntityObject {
        // The store contract (`ObjectStore.forEachRow`): each row's values are read into the
        // storage just made for that row's ID. One compare per row, kept in release builds: a
        // store breaking it would hand one object another's memory.
        guard let object = reading.take(), object.storage == storage else {
            preconditionFailure("store contract broken: a row's values were not read into the storage made for them")
        }
        object.version = version
        // Made with no relationship: an entity without any (the usual case) keeps that array.
        if !relationships.isEmpty { object.relationshipValues = relationships }
        object.isFaultFlag = false
        counts.objectsMaterialized += 1
        return object
    }

    /// Loads relationship `index` of `objects`, and the related objects, with one query each.
    private func prefetch(_ index: Int, of objects: [EntityObject], entity: EntityDescription) throws(SkerryError) {
        guard parent == nil, let first = objects.first(where: { !$0.objectID.isTemporary }),
            let store = coordinator.store(with: first.objectID.store)
        else {
            for object in objects { _ = try relationshipValue(object, index) } // a child reads through its parent
            return
        }
        let unloaded = objects.filter {
            if case .notLoaded = $0.relationshipValues[index] { return !$0.objectID.isTemporary && !$0.isFaultFlag }
            return false
        }
        if !unloaded.isEmpty {
            let related = try store.fetchRelated(entity, relationship: index, sourceKeys: unloaded.map(\.objectID.key))
            let pointers = pendingPointers(for: entity, index) // once for all the objects
            for object in unloaded {
                setLoadedRelationship(object, index, related[object.objectID.key] ?? [], pointers: pointers)
            }
        }
        let wanted = Set(objects.flatMap { $0.relationshipValues[index].objectIDs }).filter {
            !$0.isTemporary && registry[$0].map(\.isFaultFlag) != false
        }
        for row in try sourceRows(for: Array(wanted)) { _ = register(row) }
    }

    private func fetchIncludingPendingChanges(_ request: FetchRequest, _ query: StoreQuery) throws(SkerryError) -> [EntityObject] {
        let entity = query.entity
        let rows = try sourceRows(request, query, unlimited: true)
        // Rows without pending changes matched in SQL; objects with changes, and unsaved ones, are
        // matched in memory, all together.
        var candidates: [EntityObject] = []
        var unchecked: [Bool] = []
        var seen = Set<ObjectIdentifier>()
        for row in rows {
            let object = register(row)
            seen.insert(ObjectIdentifier(object))
            if object.isDeletedFlag { continue }
            candidates.append(object)
            unchecked.append(object.committedValues == nil)
        }
        // The entity's own objects, and its sub-entities' when the request includes them.
        let matches = { (object: EntityObject) in
            object.entity === entity || (query.includesSubentities && object.entity.isKind(of: entity))
        }
        for object in registry.changed where matches(object) && !object.isDeletedFlag && !seen.contains(ObjectIdentifier(object)) {
            candidates.append(object)
            unchecked.append(false)
        }
        for object in registry.inserted where matches(object) {
            candidates.append(object)
            unchecked.append(false)
        }
        var keep = unchecked
        if let predicate = query.predicate {
            let toCheck = candidates.indices.filter { !unchecked[$0] }
            let answers = try predicate.evaluate(toCheck.map { ObjectSubject(object: candidates[$0], context: self) })
            for (index, answer) in zip(toCheck, answers) { keep[index] = answer }
        } else {
            keep = Array(repeating: true, count: candidates.count)
        }
        let sortKeys = query.sortKeys
        var sortable: [(object: EntityObject, values: [AttributeValue])] = []
        for (index, object) in candidates.enumerated() where keep[index] {
            sortable.append((object, try sortKeys.sortValues(ObjectSubject(object: object, context: self))))
        }
        sortable.sort { lhs, rhs in
            let order = sortKeys.compare(lhs.values, rhs.values)
            if order != 0 { return order < 0 }
            // Ties in store order: saved objects by key, then unsaved ones in insertion order.
            if lhs.object.objectID.isTemporary != rhs.object.objectID.isTemporary { return rhs.object.objectID.isTemporary }
            return lhs.object.objectID.key < rhs.object.objectID.key
        }
        let result = sortable.map(\.object)
        let start = min(query.offset, result.count)
        let end = query.limit > 0 ? start + min(query.limit, result.count - start) : result.count
        return Array(result[start..<end])
    }

    /// Fetches the IDs of the objects matching `request`; see ``fetch(_:)``. Without pending
    /// changes of the entity, no object is materialized.
    public func fetchObjectIDs(_ request: FetchRequest) throws(SkerryError) -> [ObjectID] {
        checkConfinement()
        let query = try prepare(request)
        if request.includesPendingChanges && hasPendingChanges(of: query.entity) {
            return try fetchIncludingPendingChanges(request, query).map(\.objectID)
        }
        return try sourceObjectIDs(request, query)
    }

    /// The number of objects ``fetch(_:)`` would return for `request` (limit and offset included).
    public func count(for request: FetchRequest) throws(SkerryError) -> Int {
        checkConfinement()
        let query = try prepare(request)
        if request.includesPendingChanges && hasPendingChanges(of: query.entity) {
            return try fetchIncludingPendingChanges(request, query).count
        }
        return try sourceCount(request, query)
    }

    /// Fetches the values of chosen attributes of the matching rows, as dictionaries, without
    /// registering objects. Reads the store only: pending changes are not included (as in Core
    /// Data), not even a parent context's.
    /// - Parameter request: what to fetch; `propertiesToFetch` names the attributes (nil: all).
    /// - Returns: one dictionary per row; an attribute with no value maps to `.null`.
    public func fetchDictionaries(_ request: FetchRequest) throws(SkerryError) -> [[String: AttributeValue]] {
        checkConfinement()
        let query = try prepare(request)
        let entity = query.entity
        var indexes: [Int] = []
        for name in request.propertiesToFetch ?? entity.attributes.map(\.name) {
            indexes.append(try entity.requireAttributeIndex(name))
        }
        return try coordinator.store(for: entity).fetchColumns(query, attributeIndexes: indexes).map { row in
            var dictionary: [String: AttributeValue] = [:]
            dictionary.reserveCapacity(indexes.count)
            for (position, index) in indexes.enumerated() { dictionary[entity.attributes[index].name] = row[position] }
            return dictionary
        }
    }

    // MARK: Look-up by ID

    /// The object registered for `objectID`, or nil. Never reads the store.
    public func registeredObject(for objectID: ObjectID) -> EntityObject? {
        checkConfinement()
        return registry[objectID]
    }

    /// The object for `objectID`: the registered one, or else a fault whose values load when first
    /// read. Never reads the store; if the row does not exist, reading the fault throws
    /// ``SkerryError/Code/objectNotFound``. In a context of the stores, a temporary ID that is not
    /// registered here (an object since saved, or inserted in another context) names no row: the
    /// object returned is not registered, and using it throws
    /// ``SkerryError/Code/objectNotInContext``. In a child context it may name an object its parent
    /// inserted, and gives a fault like any other ID.
    public func object(with objectID: ObjectID) -> EntityObject {
        checkConfinement()
        if let object = registry[objectID] { return object }
        let object = EntityObject.make(objectID.entity, objectID, context: self, values: [], version: 0, isFault: true)
        // In a context of the stores, an unregistered temporary ID names no row: the object stays
        // unregistered (invalid). In a child, it may name an insert of the parent.
        if !objectID.isTemporary || parent != nil {
            registry.register(object)
            checkRegistryInvariants()
        }
        return object
    }

    /// The object for `objectID`, loaded: the registered one, or else read from the store.
    /// - Throws: ``SkerryError/Code/objectNotFound`` when the row does not exist (or the ID is
    ///   temporary and not registered here).
    public func existingObject(with objectID: ObjectID) throws(SkerryError) -> EntityObject {
        checkConfinement()
        defer { checkRegistryInvariants() }
        if let object = registry[objectID] {
            if object.isFaultFlag { try fulfillFault(object) } else { counts.cacheHits += 1 }
            return object
        }
        guard parent != nil || !objectID.isTemporary, let row = try sourceRows(for: [objectID]).first else {
            throw SkerryError(
                .objectNotFound, "No object \(objectID) exists in the store.",
                entityName: objectID.entityName, objectID: objectID)
        }
        return register(row)
    }

    // MARK: Registration and faults

    /// The registered object for a row, created if needed. A fault, or an object without pending
    /// changes (also one whose changes were set back), takes the row's values.
    func register(_ row: RowSnapshot) -> EntityObject {
        guard registry[row.objectID] != nil else {
            // A new object, made loaded: its values go in its own memory (one allocation).
            let object = EntityObject.make(
                row.objectID.entity, row.objectID, context: self, values: row.values, version: row.version, isFault: false,
                relationships: row.relationships)
            return registerNew(object)
        }
        return register(
            row.objectID, version: row.version, storage: row.objectID.entity.valueLayout.allocate(holding: row.values),
            relationships: row.relationships)
    }

    /// ``register(_:)`` for a row read as its parts; takes over `storage` (laid out by the
    /// entity's `valueLayout`).
    func register(
        _ objectID: ObjectID, version: Int64, storage: UnsafeMutableRawPointer,
        relationships: [RelationshipValue]
    ) -> EntityObject {
        guard let object = registry[objectID] else {
            // A new object, made loaded, with room for its values: it moves them there.
            let object = EntityObject.make(
                objectID.entity, objectID, context: self, version: version, relationships: relationships, isFault: false,
                withRoomForValues: true)
            object.adoptStorage(storage)
            return registerNew(object)
        }
        if object.isFaultFlag { counts.objectsMaterialized += 1 }
        guard object.isFaultFlag || (!object.isUpdatedFlag && !object.isDeletedFlag) else {
            objectID.entity.valueLayout.deallocate(storage) // its pending changes stay
            return object
        }
        clearChange(object)
        object.adoptStorage(storage)
        if object.isFaultFlag {
            object.relationshipValues = relationships
        } else {
            // What the row carries (foreign keys) is refreshed; relationships loaded
            // separately stay loaded, as Core Data keeps relationship faults fired.
            for (index, value) in relationships.enumerated() where value != .notLoaded {
                object.relationshipValues[index] = value
            }
        }
        object.version = version
        object.isFaultFlag = false
        object.faultBatch = nil
        noteTemporaryIDs(of: object)
        return object
    }

    /// In a child context, notes an object whose relationships (read from the parent) name the
    /// parent's unsaved inserts, so that they follow when the parent saves them.
    @inline(__always)
    func noteTemporaryIDs(of object: EntityObject) {
        if parent != nil && object.relationshipValues.contains(where: \.holdsTemporaryIDs) {
            registry.noteHoldsTemporaryIDs(object)
        }
    }

    /// Registers `object`, new, loaded, for a row that has none registered here.
    private func registerNew(_ object: EntityObject) -> EntityObject {
        registry.register(object)
        noteTemporaryIDs(of: object)
        counts.objectsMaterialized += 1
        return object
    }

    private func faults(
        _ objectIDs: [ObjectID], batchSize: Int,
        prefetching: (entity: EntityDescription, relationships: [Int])?
    ) -> [EntityObject] {
        var result: [EntityObject] = []
        result.reserveCapacity(objectIDs.count)
        for chunkStart in stride(from: 0, to: objectIDs.count, by: batchSize) {
            let ids = Array(objectIDs[chunkStart..<min(chunkStart + batchSize, objectIDs.count)])
            let batch = FaultBatch(objectIDs: ids, prefetching: prefetching)
            for id in ids {
                let object = self.object(with: id)
                if object.isFaultFlag { object.faultBatch = batch }
                result.append(object)
            }
        }
        return result
    }

    /// Loads the values of a fault, and of the other faults of its batch. A fault whose row no
    /// longer exists fails, except during a delete or a relationship change, where it becomes a
    /// deleted object (see ``shouldDeleteInaccessibleFaults``).
    /// - Throws: ``SkerryError/Code/objectNotFound`` when its row no longer exists.
    func fulfillFault(_ object: EntityObject) throws(SkerryError) {
        let objectID = object.objectID
        let faultBatch = object.faultBatch
        let batch = faultBatch?.objectIDs.filter { registry[$0]?.isFaultFlag == true } ?? [objectID]
        for row in try sourceRows(for: batch) { _ = register(row) }
        guard !object.isFaultFlag else {
            try deleteInaccessibleFault(object)
            return
        }
        if let prefetching = faultBatch?.prefetching {
            let loaded = batch.compactMap { registry[$0] }.filter { !$0.isFaultFlag && $0.entity === prefetching.entity }
            for index in prefetching.relationships { try prefetch(index, of: loaded, entity: prefetching.entity) }
        }
    }
}
