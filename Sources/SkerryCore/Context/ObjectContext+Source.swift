/// Where a context reads rows: the one mechanism behind fetches, faults, look-ups and refreshes.
/// A root context reads its stores; a child context reads its parent context, so that it sees
/// the parent's unsaved state.
extension ObjectContext {
    /// The rows matching `query`: in the request's order, limited, unless `unlimited`.
    func sourceRows(_ request: FetchRequest, _ query: StoreQuery, unlimited: Bool) throws(SkerryError) -> [RowSnapshot] {
        let rows = try readRows(request, query, unlimited: unlimited)
        counts.sourceRequests += 1
        counts.rowsRead += rows.count
        return rows
    }

    private func readRows(_ request: FetchRequest, _ query: StoreQuery, unlimited: Bool) throws(SkerryError) -> [RowSnapshot] {
        var query = query
        if unlimited {
            query.limit = 0
            query.offset = 0
        }
        guard let parent else {
            return try coordinator.store(for: query.entity).fetchRows(query)
        }
        var parentRequest = Self.requestForParent(request)
        if unlimited {
            parentRequest.fetchLimit = 0
            parentRequest.fetchOffset = 0
        }
        return try Self.onParent(parent) {
            try parent.fetch(parentRequest).map(\.snapshot)
        }
    }

    /// The IDs of the rows matching `query`, in the request's order.
    func sourceObjectIDs(_ request: FetchRequest, _ query: StoreQuery) throws(SkerryError) -> [ObjectID] {
        guard let parent else {
            return try coordinator.store(for: query.entity).fetchObjectIDs(query)
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
    func sourceRows(for objectIDs: [ObjectID]) throws(SkerryError) -> [RowSnapshot] {
        guard !objectIDs.isEmpty else { return [] }
        let rows = try readRows(for: objectIDs)
        counts.sourceRequests += 1
        counts.rowsRead += rows.count
        return rows
    }

    private func readRows(for objectIDs: [ObjectID]) throws(SkerryError) -> [RowSnapshot] {
        guard let first = objectIDs.first else { return [] }
        guard let parent else {
            guard !first.isTemporary, let store = coordinator.store(with: first.store) else { return [] }
            let keys = objectIDs.filter { !$0.isTemporary && $0.store === first.store }.map(\.key)
            return try store.fetchRows(first.entity, primaryKeys: keys)
        }
        return try Self.onParent(parent) { () throws(SkerryError) in
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(objectIDs.count)
            for id in objectIDs {
                do throws(SkerryError) {
                    rows.append(try parent.existingObject(with: parent.resolvedID(id)).snapshot)
                } catch {
                    // A row that does not exist is left out, as a store leaves it out; any other
                    // failure is the read's.
                    guard error.code == .objectNotFound else { throw error }
                }
            }
            return rows
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
    var snapshot: RowSnapshot {
        RowSnapshot(objectID: objectID, version: version, values: values, relationships: relationshipValues)
    }
}
