/// Relationships: loading on first touch, changes with the inverse kept in sync, delete rules and
/// validation.
extension ObjectContext {
    // MARK: Loading

    /// The value of relationship `index` of `object`, loaded from the source the first time.
    func relationshipValue(_ object: EntityObject, _ index: Int) throws(SkerryError) -> RelationshipValue {
        if object.isFaultFlag { try fulfillFault(object) }
        if case .notLoaded = object.relationshipValues[index] {
            try loadRelationship(object, index)
        } else {
            counts.cacheHits += 1
        }
        return object.relationshipValues[index]
    }

    private func loadRelationship(_ object: EntityObject, _ index: Int) throws(SkerryError) {
        let objectID = object.objectID
        var ids: [ObjectID] = []
        counts.sourceRequests += 1
        if let parent {
            ids = try Self.onParent(parent) {
                try parent.relationshipValue(try parent.existingObject(with: parent.resolvedID(objectID)), index).objectIDs
            }
        } else if !objectID.isTemporary, let store = coordinator.store(with: objectID.store) {
            ids = try store.fetchRelated(object.entity, relationship: index, sourceKeys: [objectID.key])[objectID.key] ?? []
            counts.rowsRead += ids.count
        }
        setLoadedRelationship(object, index, ids)
    }

    /// Records what the source says relationship `index` of `object` holds: that is its committed
    /// value; corrected by this context's unsaved changes, its current one. Where the two differ,
    /// the object has a pending change (so that the save writes it). `pointers` is
    /// ``pendingPointers(for:_:)`` when many objects are loaded at once.
    func setLoadedRelationship(
        _ object: EntityObject, _ index: Int, _ ids: [ObjectID],
        pointers: PendingPointers? = nil
    ) {
        let isToMany = object.entity.relationships[index].isToMany
        func value(_ ids: [ObjectID]) -> RelationshipValue { isToMany ? .toMany(ObjectIDList(ids)) : .toOne(ids.first) }
        let stored = value(ids)
        let current = value(reconcile(ids, of: object, index, pointers ?? pendingPointers(for: object.entity, index)))
        if current != stored { willChange(object) }
        object.relationshipValues[index] = current
        if object.committedRelationships?[index] == .notLoaded { object.committedRelationships?[index] = stored }
        noteTemporaryIDs(of: object)
    }

    /// The unsaved objects (inserted or changed) that point at objects through the inverse of a
    /// relationship, by the IDs they point at.
    struct PendingPointers {
        let inverseIndex: Int
        let byTarget: [ObjectID: [ObjectID]]
    }

    /// The unsaved objects that point, through the inverse of relationship `index` of `entity`, at
    /// objects of `entity`; nil for a relationship without inverse. Complexity: O(pending objects).
    func pendingPointers(for entity: EntityDescription, _ index: Int) -> PendingPointers? {
        guard let (inverseIndex, destination) = inverse(of: entity, index) else { return nil }
        var byTarget: [ObjectID: [ObjectID]] = [:]
        func note(_ other: EntityObject) {
            guard other.entity.isKind(of: destination), !other.isDeletedFlag else { return }
            for target in other.relationshipValues[inverseIndex].objectIDs { byTarget[target, default: []].append(other.objectID) }
        }
        for other in registry.inserted { note(other) }
        for other in registry.changed { note(other) }
        return PendingPointers(inverseIndex: inverseIndex, byTarget: byTarget)
    }

    /// What the source says, corrected by this context's unsaved changes: related objects that now
    /// point elsewhere or are deleted leave, unsaved objects that now point here join.
    private func reconcile(_ ids: [ObjectID], of object: EntityObject, _ index: Int, _ pointers: PendingPointers?) -> [ObjectID] {
        guard let pointers else {
            return ids.filter { registry[$0]?.isDeletedFlag != true }
        }
        let inverseIndex = pointers.inverseIndex
        var result = ids.filter { id in
            guard let other = registry[id] else { return true }
            if other.isDeletedFlag { return false }
            if case .notLoaded = other.relationshipValues[inverseIndex] { return true }
            return other.relationshipValues[inverseIndex].objectIDs.contains(object.objectID)
        }
        if let joining = pointers.byTarget[object.objectID] {
            var present = Set(result)
            for id in joining where present.insert(id).inserted { result.append(id) }
        }
        return result
    }

    /// The inverse of relationship `index` of `entity`: its index in the destination, and the destination.
    @inline(__always)
    func inverse(of entity: EntityDescription, _ index: Int) -> (index: Int, destination: EntityDescription)? {
        coordinator.inverse(of: entity, index)
    }

    /// The object for a related ID: registered, or a fault.
    func relatedObject(_ objectID: ObjectID) -> EntityObject? {
        if let object = registry[resolvedID(objectID)] { return object }
        let object = self.object(with: objectID)
        return object.context == nil ? nil : object
    }

    // MARK: Changing

    /// Sets a to-one relationship; the old and new destinations' inverses follow.
    func setRelated(_ object: EntityObject, _ index: Int, to target: EntityObject?) throws(SkerryError) {
        guard case .toOne(let oldID) = try relationshipValue(object, index) else { return }
        guard oldID != target?.objectID else { return }
        if let oldID, let old = relatedObject(oldID) { try unlinkInverse(object, index, old) }
        willChange(object)
        object.relationshipValues[index] = .toOne(target?.objectID)
        if let target { try linkInverse(object, index, target) }
    }

    /// Adds `target` to a to-many relationship (at `position` for an ordered one, else at the end);
    /// for a member already there, moves it to `position`. O(1) for an addition at the end (see
    /// ``ObjectIDList``).
    func insertRelated(_ object: EntityObject, _ index: Int, _ target: EntityObject, at position: Int?) throws(SkerryError) {
        let id = target.objectID
        guard let isMember = try holds(object, index, id) else { return }
        if isMember {
            // Already there (setRelatedObjects passes each member's position): no search.
            guard let position, !object.relationshipValues[index].holds(id, at: position),
                let existing = object.relationshipValues[index].position(of: id), position != existing
            else { return }
            willChange(object)
            object.changeMembers(index) { $0.insert(id, at: position) }
            return
        }
        willChange(object)
        object.changeMembers(index) { members in
            if let position { members.insert(id, at: position) } else { members.append(id) }
        }
        try linkInverse(object, index, target)
    }

    /// Removes `target` from a to-many relationship; its inverse follows.
    func removeRelated(_ object: EntityObject, _ index: Int, _ target: EntityObject) throws(SkerryError) {
        guard try holds(object, index, target.objectID) == true else { return }
        willChange(object)
        object.changeMembers(index) { $0.remove(target.objectID) }
        try unlinkInverse(object, index, target)
    }

    /// Removes from a to-many relationship an ID that names no object of this context any more (an
    /// insert deleted before its save, when the relationship has no inverse to clear it).
    func removeUnreachableMember(_ object: EntityObject, _ index: Int, _ objectID: ObjectID) {
        guard object.relationshipValues[index].holds(objectID) else { return }
        willChange(object)
        object.changeMembers(index) { $0.remove(objectID) }
    }

    /// Whether loaded to-many relationship `index` of `object` (loaded first) holds `id`; nil for a
    /// relationship that is not to-many. (A function of its own, so that no copy of the members
    /// outlives the answer: a change that follows finds them unshared, and changes them in place.)
    private func holds(_ object: EntityObject, _ index: Int, _ id: ObjectID) throws(SkerryError) -> Bool? {
        guard case .toMany = try relationshipValue(object, index) else { return nil }
        return object.relationshipValues[index].holds(id)
    }

    /// Makes `target`'s inverse of relationship `index` point at `object`.
    private func linkInverse(_ object: EntityObject, _ index: Int, _ target: EntityObject) throws(SkerryError) {
        guard let (inverseIndex, _) = inverse(of: object.entity, index) else { return }
        // Loaded, then read from the object, not switched over: a copy of a to-many's members
        // alive while they change would make each change copy them.
        try ensureLoaded(target, inverseIndex)
        if target.relationshipValues[inverseIndex].isToMany {
            guard !target.relationshipValues[inverseIndex].holds(object.objectID) else { return }
            willChange(target)
            target.changeMembers(inverseIndex) { $0.append(object.objectID) }
        } else if case .toOne(let previous) = target.relationshipValues[inverseIndex] {
            guard previous != object.objectID else { return }
            // The target leaves the relationship of the object it pointed at before.
            if let previous, let holder = relatedObject(previous) {
                try removeOneSide(holder, index, target.objectID)
            }
            willChange(target)
            target.relationshipValues[inverseIndex] = .toOne(object.objectID)
        }
    }

    /// Makes `target`'s inverse of relationship `index` stop pointing at `object`.
    private func unlinkInverse(_ object: EntityObject, _ index: Int, _ target: EntityObject) throws(SkerryError) {
        guard let (inverseIndex, _) = inverse(of: object.entity, index) else { return }
        try removeOneSide(target, inverseIndex, object.objectID)
    }

    /// Removes `objectID` from relationship `index` of `holder`, without touching inverses.
    private func removeOneSide(_ holder: EntityObject, _ index: Int, _ objectID: ObjectID) throws(SkerryError) {
        // Read from the object, not switched over (see linkInverse).
        try ensureLoaded(holder, index)
        if holder.relationshipValues[index].isToMany {
            guard holder.relationshipValues[index].holds(objectID) else { return }
            willChange(holder)
            holder.changeMembers(index) { $0.remove(objectID) }
        } else if case .toOne(let current) = holder.relationshipValues[index], current == objectID {
            willChange(holder)
            holder.relationshipValues[index] = .toOne(nil)
        }
    }

    /// Loads relationship `index` of `object` (see ``relationshipValue(_:_:)``), keeping no copy.
    private func ensureLoaded(_ object: EntityObject, _ index: Int) throws(SkerryError) {
        _ = try relationshipValue(object, index)
    }

    // MARK: Delete rules and validation

    /// Applies the delete rules of a deleted object's relationships: nullify removes it from its
    /// related objects' inverses, cascade marks them deleted too and appends them to `cascaded`,
    /// whose rules the caller applies next; deny is checked at save.
    func applyDeleteRules(_ object: EntityObject, cascadingTo cascaded: inout [EntityObject]) throws(SkerryError) {
        for (index, relationship) in object.entity.relationships.enumerated() {
            guard relationship.deleteRule == .nullify || relationship.deleteRule == .cascade else { continue }
            for id in try relationshipValue(object, index).objectIDs {
                guard let target = relatedObject(id) else { continue }
                if relationship.deleteRule == .cascade {
                    if !target.isDeletedFlag {
                        registry.markDeleted(target)
                        cascaded.append(target)
                    }
                } else {
                    try unlinkInverse(object, index, target)
                }
            }
        }
    }

    /// Checks the relationships of the objects being saved: deny rules of deleted objects,
    /// required to-one relationships, and to-many counts.
    func validateRelationships(saving objects: [EntityObject], deleting deleted: [EntityObject]) throws(SkerryError) {
        for object in deleted {
            for (index, relationship) in object.entity.relationships.enumerated() where relationship.deleteRule == .deny {
                let remaining = try relationshipValue(object, index).objectIDs.filter { relatedObject($0)?.isDeletedFlag != true }
                if !remaining.isEmpty {
                    throw SkerryError(
                        .relationshipViolation,
                        "\(object.objectID) cannot be deleted: its relationship '\(relationship.name)' denies it while it has \(remaining.count) related object(s). Nothing was saved.",
                        entityName: object.entity.name, key: relationship.name, objectID: object.objectID)
                }
            }
        }
        for object in objects {
            for (index, relationship) in object.entity.relationships.enumerated() {
                let value = object.relationshipValues[index]
                if case .notLoaded = value { continue }
                let count = value.objectIDs.count
                if !relationship.isToMany {
                    if !relationship.isOptional && count == 0 {
                        throw SkerryError(
                            .missingRequiredValue,
                            "The required relationship '\(object.entity.name).\(relationship.name)' of \(object.objectID) is empty. Nothing was saved.",
                            entityName: object.entity.name, key: relationship.name, objectID: object.objectID)
                    }
                    continue
                }
                let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
                if count < minimum || (relationship.maxCount > 0 && count > relationship.maxCount) {
                    throw SkerryError(
                        .relationshipViolation,
                        "The relationship '\(object.entity.name).\(relationship.name)' of \(object.objectID) has \(count) member(s); it needs \(minimum)\(relationship.maxCount > 0 ? " to \(relationship.maxCount)" : " or more"). Nothing was saved.",
                        entityName: object.entity.name, key: relationship.name, objectID: object.objectID)
                }
            }
        }
    }
}

extension RelationshipValue {
    /// Whether the value is a loaded to-many relationship's.
    var isToMany: Bool {
        if case .toMany = self { return true }
        return false
    }

    /// Whether the value is a to-many relationship's that holds `id`.
    func holds(_ id: ObjectID) -> Bool {
        guard case .toMany(let list) = self else { return false }
        return list.contains(id)
    }

    /// Whether the value is a to-many relationship's whose member at `position` is `id`.
    func holds(_ id: ObjectID, at position: Int) -> Bool {
        guard case .toMany(let list) = self else { return false }
        return list.member(at: position) == id
    }

    /// The position of `id` among a to-many relationship's members.
    func position(of id: ObjectID) -> Int? {
        guard case .toMany(let list) = self else { return nil }
        return list.firstIndex(of: id)
    }
}

extension EntityObject {
    /// Changes the members of loaded to-many relationship `index` in place: the object lets go of
    /// them while `body` runs, so that the list (unless the committed state shares it) is not
    /// copied for each change.
    func changeMembers(_ index: Int, _ body: (inout ObjectIDList) -> Void) {
        guard case .toMany(var list) = relationshipValues[index] else { return }
        relationshipValues[index] = .notLoaded
        body(&list)
        relationshipValues[index] = .toMany(list)
    }
}

/// An object of a context as a predicate subject: relationships are followed (and loaded) as the
/// predicate needs. An object or relationship that cannot be loaded is an error, thrown to the
/// caller of the fetch (never taken for "no match").
struct ObjectSubject: PredicateSubject {
    let object: EntityObject
    let context: ObjectContext

    var objectID: ObjectID { object.objectID }

    func value(_ key: ResolvedKey) throws(SkerryError) -> AttributeValue {
        var current = object
        for hop in key.path {
            guard case .toOne(let id?) = try context.relationshipValue(current, hop.index),
                let next = context.relatedObject(id), !next.isDeletedFlag
            else { return .null }
            current = next
        }
        if current.isFaultFlag { try context.fulfillFault(current) }
        return current.value(at: key.index)
    }

    func related(_ relationship: ResolvedRelationship) throws(SkerryError) -> [ObjectSubject] {
        var result: [ObjectSubject] = []
        for id in try context.relationshipValue(object, relationship.index).objectIDs {
            guard let member = context.relatedObject(id), !member.isDeletedFlag else { continue }
            result.append(ObjectSubject(object: member, context: context))
        }
        return result
    }

    static func evaluateSQL(
        _ condition: String, _ bindings: [AttributeValue], entity: EntityDescription,
        on subjects: [ObjectSubject]
    ) throws(SkerryError) -> [Bool] {
        guard let context = subjects.first?.context else { return [] }
        for subject in subjects where subject.object.isFaultFlag { try context.fulfillFault(subject.object) }
        return try context.coordinator.store(for: entity).evaluate(
            condition: condition, bindings: bindings, entity: entity,
            rows: subjects.map(\.object.values))
    }
}
