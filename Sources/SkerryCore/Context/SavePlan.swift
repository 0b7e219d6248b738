/// The writes of one save, and how the merge policy changed them after conflicts.
///
/// A plan never touches the context's objects: only once the stores have committed does the
/// context apply it (``ObjectContext/save()``), so a save that fails leaves the context as it was.
struct SavePlan {
    enum InsertFate {
        /// Insert a new row with these values; nil for the object's own, which the store reads
        /// in place (``RowValues``).
        case insert(values: [AttributeValue]?)
        /// Write `values` over an existing row that has the object's constrained values.
        /// (`indirect`, as `adopt`: rare, and a row inline would make every insert of a bulk
        /// save three times larger.)
        indirect case upsert(existing: RowSnapshot, values: [AttributeValue])
        /// Write nothing; the object becomes the existing row.
        indirect case adopt(existing: RowSnapshot)
        /// Write nothing; the object collided with another insert of this save, which absorbed it.
        case mergedInto(index: Int)
    }
    enum UpdateFate {
        /// Write the changed columns.
        case write
        /// Write nothing; the object takes the store's values (rollback policy).
        case takeStore(RowSnapshot)
        /// Write nothing; the row is gone, and the object leaves the context.
        case dropDeleted
    }
    struct Insert {
        let object: EntityObject
        var fate: InsertFate
    }
    struct Update {
        let object: EntityObject
        var expectedVersion: Int64
        /// The values to save.
        var values: [AttributeValue]
        /// The values the store holds, for choosing the changed columns.
        var base: [AttributeValue]
        var fate: UpdateFate = .write
    }
    struct Delete {
        let object: EntityObject
        var expectedVersion: Int64?
    }

    var inserts: [Insert]
    var updates: [Update]
    var deletes: [Delete]

    init(inserted: [EntityObject], updated: [EntityObject], deleted: [EntityObject]) {
        inserts = inserted.map { Insert(object: $0, fate: .insert(values: nil)) }
        updates = updated.map {
            Update(object: $0, expectedVersion: $0.version, values: $0.values, base: $0.committedValues ?? $0.values)
        }
        // A fault's version is unknown (never read): its delete is not version-checked.
        deletes = deleted.map { Delete(object: $0, expectedVersion: $0.isFaultFlag ? nil : $0.version) }
    }

    // MARK: Building the writes

    /// One store's part of the plan: its write, and where each of its inserts comes from.
    struct StorePart {
        let store: any ObjectStore
        var write = StoreWrite()
        /// For each of `write.inserts`, the index in `SavePlan.inserts`.
        var insertOrigins: [Int] = []
        /// Whether inserts whose temporary IDs name a store a migration replaced were moved here
        /// (their permanent IDs name this store, not the one of their temporary IDs).
        var takesMovedInserts = false
    }

    /// The relationships of `object` that changed since it was read (every loaded one that differs
    /// from its committed value), with their new values.
    private static func changedRelationships(_ object: EntityObject) -> [(index: Int, value: RelationshipValue)] {
        guard let committed = object.committedRelationships else { return [] }
        var changes: [(index: Int, value: RelationshipValue)] = []
        for (index, value) in object.relationshipValues.enumerated() where value != .notLoaded && committed[index] != value {
            changes.append((index, value))
        }
        return changes
    }

    /// The relationships of a new object that hold something, for an upsert into an existing row.
    private static func setRelationships(_ object: EntityObject) -> [(index: Int, value: RelationshipValue)] {
        object.relationshipValues.enumerated().compactMap { index, value in
            value.objectIDs.isEmpty ? nil : (index, value)
        }
    }

    /// The writes, one per store, in `storeOrder` (the coordinator's order, so that saves spanning
    /// stores always lock them in the same order). An insert whose temporary ID names a store
    /// that `StoreCoordinator.migratePersistentStore(_:to:)` replaced goes to the store that
    /// replaced it (`movedStore`), as in Core Data, where an inserted object has no store until
    /// it is saved: a temporary ID carries no key, so nothing of the old store is assumed.
    func parts(
        storeOrder: [any ObjectStore], movedStore: (StoreIdentity) -> StoreIdentity? = { _ in nil }
    ) throws(SkerryError) -> [StorePart] {
        var parts: [StorePart] = []
        func part(_ identity: StoreIdentity) throws(SkerryError) -> Int {
            if let index = parts.firstIndex(where: { $0.store.identity === identity }) { return index }
            guard let store = storeOrder.first(where: { $0.identity === identity }) else {
                throw SkerryError(.noStore, "The store of an object being saved is not loaded in this stack.")
            }
            parts.append(StorePart(store: store))
            return parts.count - 1
        }
        for delete in deletes {
            parts[try part(delete.object.objectID.store)].write.deletes.append((delete.object.objectID, delete.expectedVersion))
        }
        for update in updates {
            guard update.touchesRow else { continue }
            let object = update.object
            let changes = update.values.indices.filter { update.values[$0] != update.base[$0] }.map { ($0, update.values[$0]) }
            parts[try part(object.objectID.store)].write.updates.append(
                RowUpdate(
                    objectID: object.objectID, expectedVersion: update.expectedVersion,
                    changes: changes, relationshipChanges: Self.changedRelationships(object)))
        }
        // The part of the previous insert's store: a bulk insert looks it up once.
        var last: (store: StoreIdentity, slot: Int)?
        for (index, insert) in inserts.enumerated() {
            let objectID = insert.object.objectID
            if last?.store !== objectID.store {
                var home = objectID.store
                if objectID.isTemporary, !storeOrder.contains(where: { $0.identity === home }), let moved = movedStore(home) {
                    home = moved
                }
                last = (objectID.store, try part(home))
                if home !== objectID.store { parts[last!.slot].takesMovedInserts = true }
                // Room for the rest of the inserts at the first one of a store (a bulk insert's
                // lists grow once, not a dozen times).
                if parts[last!.slot].insertOrigins.isEmpty {
                    parts[last!.slot].write.inserts.reserveCapacity(inserts.count - index)
                    parts[last!.slot].insertOrigins.reserveCapacity(inserts.count - index)
                }
            }
            let slot = last!.slot
            switch insert.fate {
            case .insert(let values):
                parts[slot].write.inserts.append(
                    RowInsert(
                        objectID: objectID, values: values.map(RowValues.init) ?? RowValues(insert.object),
                        relationships: insert.object.relationshipValues))
                parts[slot].insertOrigins.append(index)
            case .upsert(let existing, _):
                parts[slot].write.aliases[objectID] = existing.objectID
                guard insert.writesRow else { continue }
                parts[slot].write.updates.append(
                    RowUpdate(
                        objectID: existing.objectID, expectedVersion: existing.version,
                        changes: insert.upsertChanges,
                        relationshipChanges: Self.setRelationships(insert.object)))
            case .adopt(let existing):
                parts[slot].write.aliases[objectID] = existing.objectID
            case .mergedInto(let other):
                parts[slot].write.aliases[objectID] = inserts[other].object.objectID
            }
        }
        let order = storeOrder.map { ObjectIdentifier($0.identity) }
        return parts.sorted {
            (order.firstIndex(of: ObjectIdentifier($0.store.identity)) ?? .max)
                < (order.firstIndex(of: ObjectIdentifier($1.store.identity)) ?? .max)
        }
    }
}

extension SavePlan.Insert {
    /// For an upsert, the attributes whose values differ from the existing row's.
    var upsertChanges: [(index: Int, value: AttributeValue)] {
        guard case .upsert(let existing, let values) = fate else { return [] }
        return values.indices.filter { values[$0] != existing.values[$0] }.map { ($0, values[$0]) }
    }

    /// Whether an upsert writes the existing row (an attribute differs, or the new object relates
    /// it to something), bumping its version. The save and the context agree on it through here.
    var writesRow: Bool {
        guard case .upsert = fate else { return false }
        return !upsertChanges.isEmpty || object.relationshipValues.contains { !$0.objectIDs.isEmpty }
    }
}

extension SavePlan.Update {
    /// Whether the save writes this object's row: when an attribute differs from the store, or any
    /// relationship changed. Even with no column to change (only a relationship stored elsewhere
    /// changed), the row is touched under the version check: its version stays right, other
    /// contexts hear of the change, and a row deleted meanwhile is a conflict rather than the
    /// target of a dangling reference.
    var touchesRow: Bool {
        guard case .write = fate else { return false }
        return values != base || object.committedRelationships != object.relationshipValues
    }
}
