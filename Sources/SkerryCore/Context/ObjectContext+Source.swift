/// An object's row as a context reads it: from a store, or from the parent context's object.
struct ObjectSnapshot: Sendable {
    let objectID: ObjectID
    /// The store row's version (optimistic locking); for rows read from a parent context, the
    /// version of the parent's object.
    let version: Int64
    let values: [AttributeValue]
    /// The relationships as far as the row says (foreign keys; the rest not loaded).
    let relationships: [RelationshipValue]
}

/// Where a context reads rows: the one mechanism behind fetches, faults, look-ups and refreshes.
/// A root context reads its stores; a child context reads its parent context, so that it sees
/// the parent's unsaved state.
extension ObjectContext {
    /// The rows matching `query`: in the request's order, limited, unless `unlimited`.
    func sourceRows(_ request: FetchRequest, _ query: StoreQuery, unlimited: Bool) throws(SkerryError) -> [ObjectSnapshot] {
        let rows = try readRows(request, query, unlimited: unlimited)
        counts.sourceRequests += 1
        counts.rowsRead += rows.count
        return rows
    }

    private func readRows(_ request: FetchRequest, _ query: StoreQuery, unlimited: Bool) throws(SkerryError) -> [ObjectSnapshot] {
        var query = query
        if unlimited { query.limit = 0; query.offset = 0 }
        guard let parent else {
            let store = try coordinator.store(for: query.entity)
            return snapshots(try store.fetchRows(query), store: store, entity: query.entity)
        }
        var parentRequest = Self.requestForParent(request)
        if unlimited { parentRequest.fetchLimit = 0; parentRequest.fetchOffset = 0 }
        return try Self.onParent(parent) {
            try parent.fetch(parentRequest).map(\.snapshot)
        }
    }

    /// The IDs of the rows matching `query`, in the request's order.
    func sourceObjectIDs(_ request: FetchRequest, _ query: StoreQuery) throws(SkerryError) -> [ObjectID] {
        guard let parent else {
            let store = try coordinator.store(for: query.entity)
            return try store.fetchPrimaryKeys(query).map { ObjectID(store: store.identity, entity: query.entity, primaryKey: $0) }
        }
        let parentRequest = Self.requestForParent(request)
        return try Self.onParent(parent) { try parent.fetchObjectIDs(parentRequest) }
    }

    /// How many rows match `query`.
    func sourceCount(_ request: FetchRequest, _ query: StoreQuery) throws(SkerryError) -> Int {
        guard let parent else { return try coordinator.store(for: query.entity).count(query) }
        let parentRequest = Self.requestForParent(request)
        return try Self.onParent(parent) { try parent.count(for: parentRequest) }
    }

    /// The rows of these objects that exist (all of one entity), in no particular order.
    func sourceRows(for objectIDs: [ObjectID]) throws(SkerryError) -> [ObjectSnapshot] {
        guard !objectIDs.isEmpty else { return [] }
        let rows = try readRows(for: objectIDs)
        counts.sourceRequests += 1
        counts.rowsRead += rows.count
        return rows
    }

    private func readRows(for objectIDs: [ObjectID]) throws(SkerryError) -> [ObjectSnapshot] {
        guard let first = objectIDs.first else { return [] }
        guard let parent else {
            guard !first.isTemporary, let store = coordinator.store(with: first.store) else { return [] }
            let keys = objectIDs.filter { !$0.isTemporary && $0.store === first.store }.map(\.key)
            return snapshots(try store.fetchRows(first.entity, primaryKeys: keys), store: store, entity: first.entity)
        }
        return try Self.onParent(parent) {
            objectIDs.compactMap { id in (try? parent.existingObject(with: parent.resolvedID(id)))?.snapshot }
        }
    }

    /// Store rows as snapshots: foreign keys become to-one relationships, the other relationships
    /// are not loaded. The entity's relationship layout is looked up once for all the rows.
    func snapshots(_ rows: [RowSnapshot], store: any ObjectStore, entity: EntityDescription) -> [ObjectSnapshot] {
        let identity = store.identity
        guard !entity.relationships.isEmpty else {
            return rows.map {
                ObjectSnapshot(objectID: ObjectID(store: identity, entity: entity, primaryKey: $0.primaryKey),
                               version: $0.version, values: $0.values, relationships: [])
            }
        }
        let foreignKeys = coordinator.model.relationships(of: entity).foreignKeyIndexes.map { index in
            (index, coordinator.model.entity(named: entity.relationships[index].destinationEntityName) ?? entity)
        }
        return rows.map { row in
            var relationships = Array(repeating: RelationshipValue.notLoaded, count: entity.relationships.count)
            for (position, (index, destination)) in foreignKeys.enumerated() where position < row.foreignKeys.count {
                relationships[index] = .toOne(row.foreignKeys[position].map {
                    ObjectID(store: identity, entity: destination, primaryKey: $0)
                })
            }
            return ObjectSnapshot(objectID: ObjectID(store: identity, entity: entity, primaryKey: row.primaryKey),
                                  version: row.version, values: row.values, relationships: relationships)
        }
    }

    /// The request a child asks its parent: the parent's own pending changes always take part.
    private static func requestForParent(_ request: FetchRequest) -> FetchRequest {
        var parentRequest = request
        parentRequest.includesPendingChanges = true
        parentRequest.fetchBatchSize = 0
        return parentRequest
    }

    /// Runs `body` on the parent's queue, with its errors as ``SkerryError``s.
    static func onParent<T>(_ parent: ObjectContext, _ body: () throws -> T) throws(SkerryError) -> T {
        do {
            return try parent.performAndWait(body)
        } catch {
            throw SkerryError.converting(error)
        }
    }
}

extension EntityObject {
    /// The object's current state, as a child context reads it.
    var snapshot: ObjectSnapshot {
        ObjectSnapshot(objectID: objectID, version: version, values: values, relationships: relationshipValues)
    }
}
