/// Copies every object of a store into another, empty store of the same entities, in batches
/// (`StoreCoordinator.migratePersistentStore(_:to:)`).
///
/// Works through the store boundary only (``ObjectStore``), so that any store kind copies into
/// any other: the source is read with ``ObjectStore/fetchKeys(_:after:limit:)`` (the keys of
/// one entity, ``keyPage`` at a time), ``ObjectStore/fetchRows(_:primaryKeys:)`` and
/// ``ObjectStore/fetchRelated(_:relationship:sourceKeys:)``, ``batchSize`` objects at a time
/// (fewer when rows are large, see ``byteBudget``, or objects have many related objects, see
/// ``memberBudget``); the destination takes every batch in one
/// transaction (``ObjectStore/importWrites(_:keyFloors:)``). Each row keeps its key, so an object's new ID is
/// its old one's entity and key in the new store.
///
/// Two passes: first every row with its attribute values and no relationship, then every
/// object's relationships (as updates of the rows just written), so that a link may name an
/// object of any entity or batch, and the side of a relationship the destination keeps (a
/// foreign key, an order column of another table, a join table) is written whatever it is; the
/// other side of each pair is not read, unless it keeps something of its own (the order of the
/// ordered side of a join table that the other side owns).
struct StoreCopy {
    /// The most objects read and written per batch.
    static let batchSize = 1_000
    /// The objects of each entity's first batch in each pass, read to learn how large its rows are
    /// and how many related objects its objects have.
    static let firstBatchSize = 16

    let source: any ObjectStore
    let destination: any ObjectStore
    /// The entities both stores hold.
    let entities: [EntityDescription]
    /// About how many bytes of attribute values a batch of rows holds at most: after an entity's
    /// first batch, its batches hold as many rows as fit (at least one, at most ``batchSize``).
    var byteBudget = 32 << 20
    /// The most keys read at a time (``ObjectStore/fetchKeys(_:after:limit:)``): a few batches.
    var keyPage = 8 * StoreCopy.batchSize
    /// About how many related objects a batch of the second pass reads at most: after an
    /// entity's first batch, its batches hold as many objects as fit at the number of related
    /// objects the last batch's had each (at least one, at most ``batchSize``). The members of
    /// one object's to-many relationship are read whole.
    var memberBudget = 4 * 8 * StoreCopy.batchSize
    /// Told the number of rows of each batch of the first pass (for tests).
    var rowBatchObserver: ((Int) -> Void)?
    /// Told the number of objects of each batch of the second pass and of the related objects
    /// read for them (for tests).
    var linkBatchObserver: ((_ objects: Int, _ members: Int) -> Void)?
    /// Where each relationship of `entities` is kept, as every store lays it out: a side the
    /// destination never writes (the to-many side of a one-to-many without order, the side of a
    /// one-to-one without the column, a join table's other side when it is not ordered) is not
    /// read, so that a hub object's members are not read only to be dropped.
    private let layout: RelationshipLayout

    init(source: any ObjectStore, destination: any ObjectStore, entities: [EntityDescription]) {
        self.source = source
        self.destination = destination
        self.entities = entities
        layout = RelationshipLayout(entities: entities)
    }

    /// Copies every object. A save to the source during the copy (in this process) fails it with
    /// ``SkerryError/Code/mergeConflict``: the copy could hold part of it.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when the destination already holds objects;
    ///   ``SkerryError/Code/constraintViolation`` when a row breaks a uniqueness constraint of the
    ///   destination; ``SkerryError/Code/mergeConflict`` as above; the stores' errors. The
    ///   destination then holds what it held before.
    /// - Returns: how many objects were copied.
    @discardableResult
    func run() throws(SkerryError) -> Int {
        try checkDestinationIsEmpty()
        var batches = Batches(copy: self, sourceWrites: source.statistics.rowsWritten)
        do {
            // The source's key sequences go on in the destination, so that no key the source
            // handed out (to an object deleted since, or reserved) names another object there.
            try destination.importWrites(
                { () throws -> StoreWrite? in try batches.next() },
                keyFloors: { () throws -> [String: Int64] in try source.nextPrimaryKeys() })
        } catch let conflicts as StoreWriteConflicts {
            throw error(conflicts, batch: batches.lastInserts)
        } catch {
            throw SkerryError.converting(error)
        }
        return batches.copiedRows
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
    /// meanwhile), naming its entity and the source's objects that collide (the offending one
    /// first). `batch` holds the inserts of the write that met them.
    private func error(_ conflicts: StoreWriteConflicts, batch: [RowInsert]) -> SkerryError {
        if let (index, constraint, existing) = conflicts.uniquenessConflicts.first {
            // The objects in the source: the same entity and key.
            func inSource(_ objectID: ObjectID) -> ObjectID {
                ObjectID(store: source.identity, entity: objectID.entity, primaryKey: objectID.key)
            }
            var objectIDs: [ObjectID] = []
            if batch.indices.contains(index) { objectIDs.append(inSource(batch[index].objectID)) }
            switch existing {
            case .row(let row): objectIDs.append(inSource(row.objectID))
            case .insert(let other) where batch.indices.contains(other): objectIDs.append(inSource(batch[other].objectID))
            case .insert: break
            }
            let entity = objectIDs.first?.entityName
            let columns = constraint.joined(separator: ", ")
            return SkerryError(
                .constraintViolation,
                "Objects \(objectIDs.map(\.description).joined(separator: " and ")) of \(entity.map { "'\($0)'" } ?? "the store") "
                    + "break the uniqueness constraint (\(columns)) of the destination; nothing was copied.",
                entityName: entity, key: constraint.joined(separator: ","), objectIDs: objectIDs)
        }
        let objectIDs = conflicts.versionConflicts.map(\.objectID)
        return SkerryError(
            .mergeConflict, "Another writer changed the destination while the store was copied into it; nothing was copied.",
            objectIDs: objectIDs)
    }

    /// The batches of the copy, made one at a time as the destination asks for them.
    private struct Batches {
        let copy: StoreCopy
        /// The rows the source had written when the copy began.
        let sourceWrites: Int
        /// 0: rows; 1: relationships; 2: done.
        var pass = 0
        var entityIndex = 0
        /// The current entity's keys read last (a page: ``StoreCopy/keyPage`` keys at most), in
        /// order; nil until the entity's first page is read.
        var keys: [Int64]?
        /// Whether the current entity has keys past the page read last.
        var moreKeys = true
        var position = 0
        /// The rows of the current entity's next batch.
        var size = StoreCopy.firstBatchSize
        /// The inserts of the last write returned (to name the objects of a conflict it meets).
        var lastInserts: [RowInsert] = []
        /// How many rows the batches returned so far insert.
        var copiedRows = 0

        init(copy: StoreCopy, sourceWrites: Int) {
            self.copy = copy
            self.sourceWrites = sourceWrites
        }

        /// The next batch to write; nil when every object was copied.
        mutating func next() throws -> StoreWrite? {
            guard let write = try nextBatch() else {
                guard copy.source.statistics.rowsWritten == sourceWrites else {
                    throw SkerryError(
                        .mergeConflict,
                        "\(copy.source.storeDescription) was saved to while it was copied: nothing was copied. Migrate once saves have stopped."
                    )
                }
                return nil
            }
            lastInserts = write.inserts
            copiedRows += write.inserts.count
            return write
        }

        private mutating func nextBatch() throws -> StoreWrite? {
            while pass < 2 {
                guard entityIndex < copy.entities.count else {
                    pass += 1
                    entityIndex = 0
                    continue
                }
                let entity = copy.entities[entityIndex]
                if keys == nil {
                    keys = []
                    moreKeys = true
                    position = 0
                    size = StoreCopy.firstBatchSize
                }
                if position >= keys!.count {
                    // The next page of keys, after the last one read.
                    guard moreKeys else {
                        keys = nil
                        entityIndex += 1
                        continue
                    }
                    let page = try copy.source.fetchKeys(entity, after: keys!.last ?? .min, limit: copy.keyPage)
                    moreKeys = page.count == copy.keyPage
                    keys = page
                    position = 0
                    continue
                }
                let all = keys!
                let end = min(position + size, all.count)
                let batch = Array(all[position..<end])
                position = end
                let write: StoreWrite
                if pass == 0 {
                    let rows = try copy.rows(entity, batch)
                    write = rows.write
                    copy.rowBatchObserver?(write.inserts.count)
                    // As many rows as the budget holds, at the size of these.
                    let perRow = max(1, rows.bytes / max(1, write.inserts.count))
                    size = min(StoreCopy.batchSize, max(1, copy.byteBudget / perRow))
                } else {
                    let links = try copy.links(entity, batch)
                    write = links.write
                    copy.linkBatchObserver?(batch.count, links.members)
                    // As many objects as the budget holds, at the related objects these had each.
                    let perObject = max(1, links.members / max(1, batch.count))
                    size = min(StoreCopy.batchSize, max(1, copy.memberBudget / perObject))
                }
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

    /// The rows of `keys` (rows of `entity` itself), with their values and no relationship, and
    /// about how many bytes their values take.
    private func rows(_ entity: EntityDescription, _ keys: [Int64]) throws -> (write: StoreWrite, bytes: Int) {
        let empty: [RelationshipValue] = entity.relationships.map { $0.isToMany ? .toMany(ObjectIDList()) : .toOne(nil) }
        var write = StoreWrite()
        var bytes = 0
        let rows = try source.fetchRows(entity, primaryKeys: keys).sorted { $0.primaryKey < $1.primaryKey }
        write.inserts.reserveCapacity(rows.count)
        for row in rows where row.objectID.entity === entity {
            for value in row.values {
                switch value {
                case .string(let text): bytes += text.utf8.count
                case .data(let data): bytes += data.count
                default: bytes += 16
                }
            }
            write.inserts.append(RowInsert(objectID: moved(row.objectID), values: row.values, relationships: empty))
        }
        return (write, bytes)
    }

    /// The relationships of the objects of `keys` (rows of `entity` itself), each as an update
    /// of the row the first pass wrote (version 1); objects without any related object are left
    /// out. With how many related objects were read.
    private func links(_ entity: EntityDescription, _ keys: [Int64]) throws -> (write: StoreWrite, members: Int) {
        var changes: [Int64: [(index: Int, value: RelationshipValue)]] = [:]
        var members = 0
        for (index, relationship) in entity.relationships.enumerated()
        where layout.storage[entity.name]?[relationship.name]?.isWrittenBySource ?? true {
            let related = try source.fetchRelated(entity, relationship: index, sourceKeys: keys)
            for (key, ids) in related where !ids.isEmpty {
                members += ids.count
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
        return (write, members)
    }
}
