extension SavePlan {
    /// Applies `policy` to the conflicts a store found in `part`'s write, changing the plan so
    /// that the next attempt succeeds. Returns the conflicts the policy leaves unresolved: all of
    /// them under `.error`, and under the trump and overwrite policies an update of a row that was
    /// deleted from the store (an object cannot bring a deleted row back).
    ///
    /// Complexity: O(conflicts + objects of the plan): objects are found through indexes built
    /// once, not searched for per conflict.
    mutating func resolve(_ found: StoreWriteConflicts, in part: StorePart, policy: MergePolicy) -> [SaveConflict] {
        var unresolved: [SaveConflict] = []
        let updateAt = Dictionary(updates.indices.map { (updates[$0].object.objectID, $0) }, uniquingKeysWith: { first, _ in first })
        let deleteAt = Dictionary(deletes.indices.map { (deletes[$0].object.objectID, $0) }, uniquingKeysWith: { first, _ in first })
        // The first insert that writes over, or becomes, each existing row.
        var rowOwner: [ObjectID: Int] = [:]
        for index in inserts.indices {
            if let row = inserts[index].existingRow { rowOwner[row] = min(rowOwner[row] ?? index, index) }
        }
        for (objectID, stored) in found.versionConflicts {
            if let index = updateAt[objectID] {
                let conflict = Self.conflict(stored == nil ? .deletedInStore : .changedInStore, updates[index].object, stored: stored)
                if !resolveUpdate(at: index, stored: stored, policy: policy) { unresolved.append(conflict) }
            } else if let index = deleteAt[objectID] {
                if policy == .error {
                    unresolved.append(Self.conflict(.changedInStore, deletes[index].object, stored: stored))
                } else {
                    deletes[index].expectedVersion = nil // the delete wins
                }
            } else if let index = rowOwner[objectID], inserts[index].upsertTarget == objectID {
                // The row an upsert writes over changed (or vanished) since it was read: redo it.
                let object = inserts[index].object
                guard let stored else {
                    inserts[index].fate = .insert(values: nil)
                    rowOwner[objectID] = nil // one insert per row: the others were folded into it
                    continue
                }
                switch policy {
                case .mergeByPropertyObjectTrump, .overwrite:
                    inserts[index].fate = .upsert(existing: stored, values: object.values)
                case .error, .mergeByPropertyStoreTrump, .rollback:
                    inserts[index].fate = .adopt(existing: stored)
                }
            }
        }
        for (insertIndex, constraint, existing) in found.uniquenessConflicts {
            let index = part.insertOrigins[insertIndex]
            let object = inserts[index].object
            guard case .insert(let chosen) = inserts[index].fate else { continue }
            let values = chosen ?? object.values
            switch existing {
            case .row(let stored):
                let rowID = stored.objectID
                if policy == .error {
                    unresolved.append(Self.conflict(.uniqueness(constraint: constraint), object, stored: stored, other: rowID))
                    continue
                }
                // Another insert of this save already became that row: fold into it, so that one
                // insert per row writes it.
                if let other = rowOwner[rowID], other != index {
                    fold(index, into: other, policy: policy)
                    continue
                }
                rowOwner[rowID] = index
                switch policy {
                case .mergeByPropertyObjectTrump, .overwrite:
                    inserts[index].fate = .upsert(existing: stored, values: values)
                default:
                    inserts[index].fate = .adopt(existing: stored)
                }
            case .insert(let otherInsertIndex):
                let other = part.insertOrigins[otherInsertIndex]
                if policy == .error {
                    let otherValues = inserts[other].object.values
                    unresolved.append(
                        Self.conflict(
                            .uniqueness(constraint: constraint), object,
                            stored: RowSnapshot(
                                objectID: inserts[other].object.objectID, version: 0,
                                values: otherValues, relationships: []),
                            other: inserts[other].object.objectID))
                    continue
                }
                fold(index, into: other, policy: policy)
            }
        }
        return unresolved
    }

    /// Folds the insert at `index` into the insert at `other`, which keeps the row: under object
    /// trump and overwrite the other takes every value of this one.
    private mutating func fold(_ index: Int, into other: Int, policy: MergePolicy) {
        let object = inserts[index].object
        func merged(_ base: [AttributeValue]) -> [AttributeValue] {
            switch policy {
            case .mergeByPropertyObjectTrump, .overwrite: return object.values
            case .error, .mergeByPropertyStoreTrump, .rollback: return base
            }
        }
        switch inserts[other].fate {
        case .insert(let values):
            inserts[other].fate = .insert(values: merged(values ?? inserts[other].object.values))
        case .upsert(let existing, let values): inserts[other].fate = .upsert(existing: existing, values: merged(values))
        case .adopt, .mergedInto: break
        }
        inserts[index].fate = .mergedInto(index: other)
    }

    /// Resolves a version conflict of an update; false when the policy cannot.
    private mutating func resolveUpdate(at index: Int, stored: RowSnapshot?, policy: MergePolicy) -> Bool {
        guard policy != .error else { return false }
        guard let stored else {
            // Deleted from the store: the store-side policies let the object go with it.
            guard policy == .mergeByPropertyStoreTrump || policy == .rollback else { return false }
            updates[index].fate = .dropDeleted
            return true
        }
        let object = updates[index].object
        let mine = object.values
        let cached = object.committedValues ?? mine
        switch policy {
        case .rollback:
            updates[index].fate = .takeStore(stored)
        case .overwrite:
            updates[index].values = mine
        case .mergeByPropertyObjectTrump:
            updates[index].values = mine.indices.map { mine[$0] != cached[$0] ? mine[$0] : stored.values[$0] }
        case .mergeByPropertyStoreTrump:
            updates[index].values = mine.indices.map { stored.values[$0] != cached[$0] ? stored.values[$0] : mine[$0] }
        case .error:
            return false
        }
        updates[index].base = stored.values
        updates[index].expectedVersion = stored.version
        return true
    }

    private static func conflict(
        _ kind: SaveConflict.Kind, _ object: EntityObject, stored: RowSnapshot?,
        other: ObjectID? = nil
    ) -> SaveConflict {
        let names = object.entity.attributes.map(\.name)
        func dictionary(_ values: [AttributeValue]) -> [String: AttributeValue] {
            Dictionary(uniqueKeysWithValues: zip(names, values))
        }
        let cached = object.isInsertedFlag ? [:] : dictionary(object.committedValues ?? object.values)
        return SaveConflict(
            kind: kind, objectID: object.objectID, objectValues: dictionary(object.values),
            cachedValues: cached, storedValues: stored.map { dictionary($0.values) },
            conflictingObjectID: other)
    }
}

extension SavePlan.Insert {
    /// The existing row this insert writes over, or becomes; nil for a new row or a folded insert.
    var existingRow: ObjectID? {
        switch fate {
        case .upsert(let existing, _), .adopt(let existing): return existing.objectID
        case .insert, .mergedInto: return nil
        }
    }

    /// The row an upsert writes over, as an ID.
    var upsertTarget: ObjectID? {
        guard case .upsert(let existing, _) = fate else { return nil }
        return existing.objectID
    }
}
