/// The writes of one save, and how the merge policy changed them after conflicts.
///
/// A plan never touches the context's objects: only once the stores have committed does the
/// context apply it (``ObjectContext/save()``), so a save that fails leaves the context as it was.
struct SavePlan {
    enum InsertFate {
        /// Insert a new row with these values.
        case insert(values: [AttributeValue])
        /// Write `values` over an existing row that has the object's constrained values.
        case upsert(existing: RowSnapshot, values: [AttributeValue])
        /// Write nothing; the object becomes the existing row.
        case adopt(existing: RowSnapshot)
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
        inserts = inserted.map { Insert(object: $0, fate: .insert(values: $0.values)) }
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
    }

    /// The foreign keys of `object` for an insert, per `EntityRelationships.foreignKeyIndexes`.
    private static func foreignKeys(_ object: EntityObject, _ relationships: EntityRelationships) -> [ObjectID?] {
        relationships.foreignKeyIndexes.map {
            if case .toOne(let id) = object.relationshipValues[$0] { return id }
            return nil
        }
    }

    /// The relationship writes of `object`: every to-many relationship this side stores whose
    /// members changed (all non-empty ones, for a new object).
    private static func relationshipWrites(_ object: EntityObject, _ relationships: EntityRelationships,
                                           source: ObjectID) -> [RelationshipWrite] {
        object.relationshipValues.indices.compactMap { index in
            guard case .toMany(let members) = object.relationshipValues[index],
                  relationships.storage[index].isWrittenBySource else { return nil }
            if object.isInsertedFlag ? members.isEmpty : object.committedRelationships?[index] == object.relationshipValues[index] {
                return nil
            }
            return RelationshipWrite(source: source, relationship: index, members: members)
        }
    }

    /// The writes, one per store, in `storeOrder` (the coordinator's order, so that saves spanning
    /// stores always lock them in the same order).
    func parts(storeOrder: [any ObjectStore], model: ObjectModel) throws(SkerryError) -> [StorePart] {
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
            guard case .write = update.fate else { continue }
            let object = update.object
            let relationships = model.relationships(of: object.entity)
            let changes = update.values.indices.filter { update.values[$0] != update.base[$0] }.map { ($0, update.values[$0]) }
            let foreignKeyChanges: [(relationship: Int, target: ObjectID?)] = relationships.foreignKeyIndexes.compactMap { index in
                guard case .toOne(let id) = object.relationshipValues[index],
                      object.committedRelationships?[index] != object.relationshipValues[index] else { return nil }
                return (index, id)
            }
            guard update.touchesRow else { continue }
            let writes = Self.relationshipWrites(object, relationships, source: object.objectID)
            let slot = try part(object.objectID.store)
            parts[slot].write.updates.append(RowUpdate(objectID: object.objectID, expectedVersion: update.expectedVersion,
                                                       changes: changes, foreignKeyChanges: foreignKeyChanges))
            parts[slot].write.relationshipWrites += writes
        }
        // The layout and the part of the previous insert's entity and store: a bulk insert looks
        // each up once.
        var last: (entity: EntityDescription, store: StoreIdentity, relationships: EntityRelationships, slot: Int)?
        for (index, insert) in inserts.enumerated() {
            let objectID = insert.object.objectID
            if last?.entity !== objectID.entity || last?.store !== objectID.store {
                last = (objectID.entity, objectID.store, model.relationships(of: objectID.entity), try part(objectID.store))
            }
            let relationships = last!.relationships
            let slot = last!.slot
            switch insert.fate {
            case .insert(let values):
                parts[slot].write.inserts.append(RowInsert(objectID: objectID, values: values,
                                                           foreignKeys: Self.foreignKeys(insert.object, relationships)))
                parts[slot].insertOrigins.append(index)
                parts[slot].write.relationshipWrites += Self.relationshipWrites(insert.object, relationships, source: objectID)
            case .upsert(let existing, let values):
                let rowID = ObjectID(store: objectID.store, entity: objectID.entity, primaryKey: existing.primaryKey)
                parts[slot].write.aliases[objectID] = rowID
                let changes = values.indices.filter { values[$0] != existing.values[$0] }.map { ($0, values[$0]) }
                let foreignKeyChanges = zip(relationships.foreignKeyIndexes, Self.foreignKeys(insert.object, relationships))
                    .filter { $0.1 != nil }.map { (relationship: $0.0, target: $0.1) }
                parts[slot].write.relationshipWrites += Self.relationshipWrites(insert.object, relationships, source: rowID)
                guard !changes.isEmpty || !foreignKeyChanges.isEmpty else { continue }
                parts[slot].write.updates.append(RowUpdate(objectID: rowID, expectedVersion: existing.version,
                                                           changes: changes, foreignKeyChanges: foreignKeyChanges))
            case .adopt(let existing):
                parts[slot].write.aliases[objectID] = ObjectID(store: objectID.store, entity: objectID.entity,
                                                               primaryKey: existing.primaryKey)
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
