/// Copies every object of a store into another, empty store of the same entities, in batches
/// (`StoreCoordinator.migratePersistentStore(_:to:)`).
///
/// Works through the store boundary only (``ObjectStore``), so that any store kind copies into
/// any other: the source is read with ``ObjectStore/fetchObjectIDs(_:)`` (the keys of one entity
/// at a time), ``ObjectStore/fetchRows(_:primaryKeys:)`` and
/// ``ObjectStore/fetchRelated(_:relationship:sourceKeys:)``, ``batchSize`` objects at a time; the
/// destination takes every batch in one transaction (``ObjectStore/importWrites(_:)``). Each row
/// keeps its key, so an object's new ID is its old one's entity and key in the new store.
///
/// Two passes: first every row with its attribute values and no relationship, then every
/// object's relationships (as updates of the rows just written), so that a link may name an
/// object of any entity or batch, and the side of a relationship the destination keeps (a
/// foreign key, an order column of another table, a join table) is written whatever it is.
struct StoreCopy {
    /// Objects read and written per batch.
    static let batchSize = 1_000

    let source: any ObjectStore
    let destination: any ObjectStore
    /// The entities both stores hold.
    let entities: [EntityDescription]

    /// Copies every object.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when the destination already holds objects;
    ///   ``SkerryError/Code/constraintViolation`` when a row breaks a uniqueness constraint of the
    ///   destination; the stores' errors. The destination then holds what it held before.
    func run() throws(SkerryError) {
        try checkDestinationIsEmpty()
        var batches = Batches(copy: self)
        do {
            try destination.importWrites { () throws -> StoreWrite? in try batches.next() }
        } catch let conflicts as StoreWriteConflicts {
            throw Self.error(conflicts)
        } catch {
            throw SkerryError.converting(error)
        }
    }

    private func checkDestinationIsEmpty() throws(SkerryError) {
        for entity in entities {
            var query = StoreQuery(entity: entity, predicate: nil, sortKeys: [])
            query.includesSubentities = false
            let count = try destination.count(query)
            guard count == 0 else {
                throw SkerryError(
                    .invalidArgument,
                    "\(destination.storeDescription) already holds \(count) object(s) of '\(entity.name)': "
                        + "a store migrates into an empty store only (destroy the destination first).",
                    entityName: entity.name)
            }
        }
    }

    /// The error of a copy whose write met conflicts: a row that breaks a uniqueness constraint
    /// of the destination (or, as the destination was checked empty, one another writer saved
    /// meanwhile).
    private static func error(_ conflicts: StoreWriteConflicts) -> SkerryError {
        if let (_, constraint, _) = conflicts.uniquenessConflicts.first {
            return SkerryError(
                .constraintViolation,
                "The store's objects break the uniqueness constraint (\(constraint.joined(separator: ", "))) of the destination; nothing was copied.",
                key: constraint.joined(separator: ","))
        }
        let objectIDs = conflicts.versionConflicts.map(\.objectID)
        return SkerryError(
            .mergeConflict, "Another writer changed the destination while the store was copied into it; nothing was copied.",
            objectIDs: objectIDs)
    }

    /// The batches of the copy, made one at a time as the destination asks for them.
    private struct Batches {
        let copy: StoreCopy
        /// 0: rows; 1: relationships; 2: done.
        var pass = 0
        var entityIndex = 0
        /// The keys of the current entity's own rows, in order; nil until read.
        var keys: [Int64]?
        var position = 0

        init(copy: StoreCopy) { self.copy = copy }

        /// The next batch to write; nil when every object was copied.
        mutating func next() throws -> StoreWrite? {
            while pass < 2 {
                guard entityIndex < copy.entities.count else {
                    pass += 1
                    entityIndex = 0
                    continue
                }
                let entity = copy.entities[entityIndex]
                if keys == nil {
                    var query = StoreQuery(entity: entity, predicate: nil, sortKeys: [])
                    query.includesSubentities = false
                    keys = try copy.source.fetchObjectIDs(query).map(\.key).sorted()
                    position = 0
                }
                let all = keys!
                guard position < all.count else {
                    keys = nil
                    entityIndex += 1
                    continue
                }
                let end = min(position + StoreCopy.batchSize, all.count)
                let batch = Array(all[position..<end])
                position = end
                let write = pass == 0 ? try copy.rows(entity, batch) : try copy.links(entity, batch)
                if write.inserts.isEmpty && write.updates.isEmpty { continue }
                return write
            }
            return nil
        }
    }

    /// The ID in the destination of the source's `objectID`: the same entity and key.
    private func moved(_ objectID: ObjectID) -> ObjectID {
        ObjectID(store: destination.identity, entity: objectID.entity, primaryKey: objectID.key)
    }

    /// The rows of `keys` (rows of `entity` itself), with their values and no relationship.
    private func rows(_ entity: EntityDescription, _ keys: [Int64]) throws -> StoreWrite {
        let empty: [RelationshipValue] = entity.relationships.map { $0.isToMany ? .toMany(ObjectIDList()) : .toOne(nil) }
        var write = StoreWrite()
        let rows = try source.fetchRows(entity, primaryKeys: keys).sorted { $0.primaryKey < $1.primaryKey }
        write.inserts.reserveCapacity(rows.count)
        for row in rows where row.objectID.entity === entity {
            write.inserts.append(RowInsert(objectID: moved(row.objectID), values: row.values, relationships: empty))
        }
        return write
    }

    /// The relationships of the objects of `keys` (rows of `entity` itself), each as an update
    /// of the row the first pass wrote (version 1); objects without any related object are left out.
    private func links(_ entity: EntityDescription, _ keys: [Int64]) throws -> StoreWrite {
        var changes: [Int64: [(index: Int, value: RelationshipValue)]] = [:]
        for (index, relationship) in entity.relationships.enumerated() {
            let related = try source.fetchRelated(entity, relationship: index, sourceKeys: keys)
            for (key, ids) in related where !ids.isEmpty {
                let moved = ids.map(moved)
                changes[key, default: []].append((index, relationship.isToMany ? .toMany(ObjectIDList(moved)) : .toOne(moved.first)))
            }
        }
        var write = StoreWrite()
        for key in keys {
            guard let relationshipChanges = changes[key] else { continue }
            write.updates.append(
                RowUpdate(
                    objectID: ObjectID(store: destination.identity, entity: entity, primaryKey: key), expectedVersion: 1,
                    changes: [], relationshipChanges: relationshipChanges))
        }
        return write
    }
}
