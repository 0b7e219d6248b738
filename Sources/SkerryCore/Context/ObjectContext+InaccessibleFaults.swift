import Foundation

/// Core Data's inaccessible faults: an object whose row another context (or a batch delete)
/// removed from the store after this context registered it as a fault.
extension ObjectContext {
    /// Whether deleting an object whose row another context (or a batch delete) removed since this
    /// context registered it, or changing a relationship that involves such an object, goes
    /// through: true by default, as Core Data's `shouldDeleteInaccessibleFaults`.
    ///
    /// The object becomes a deleted object: it reads as empty (optional attributes nil, required
    /// ones zero, empty strings and data, no related objects), ``EntityObject/isDeleted`` is true
    /// and it is among ``deletedObjects``. It is exempt from validation, and the next ``save()`` or
    /// ``reset()`` discards it without an error. Registered objects whose loaded relationships held
    /// it no longer do. So 100 concurrent performs that add members to one relationship and delete
    /// them all succeed, whichever deletes first.
    ///
    /// Reading such an object's values before (a fetch, a predicate, ``existingObject(with:)``)
    /// still fails with ``SkerryError/Code/objectNotFound``: a read gets an error, never a made-up
    /// empty value. With the property false, deletes and relationship changes fail that way too.
    public var shouldDeleteInaccessibleFaults: Bool {
        get { deletesInaccessibleFaults.load(ordering: .relaxed) }
        set { deletesInaccessibleFaults.store(newValue, ordering: .relaxed) }
    }

    /// Runs `body`, a delete or a relationship change, during which a fault whose row is gone
    /// becomes a deleted object instead of failing.
    func changingTheGraph<T>(_ body: () throws(SkerryError) -> T) throws(SkerryError) -> T {
        let outer = isChangingTheGraph
        isChangingTheGraph = true
        defer { isChangingTheGraph = outer }
        return try body()
    }

    /// Turns `object`, a fault whose row is gone, into a deleted object during a delete or a
    /// relationship change; otherwise throws ``SkerryError/Code/objectNotFound``, as it does for
    /// an object of a store this stack has not loaded.
    func deleteInaccessibleFault(_ object: EntityObject) throws(SkerryError) {
        let objectID = object.objectID
        guard parent != nil || coordinator.store(with: objectID.store) != nil else {
            throw SkerryError(
                .objectNotFound, "\(objectID) belongs to a store this stack has not loaded.",
                entityName: objectID.entityName, objectID: objectID)
        }
        guard isChangingTheGraph, shouldDeleteInaccessibleFaults else {
            throw SkerryError(
                .objectNotFound, "The row of \(objectID) no longer exists in the store.",
                entityName: objectID.entityName, objectID: objectID)
        }
        object.values = object.entity.attributes.map(Self.emptyValue)
        object.relationshipValues = object.entity.relationships.map { $0.isToMany ? .toMany([]) : .toOne(nil) }
        object.isFaultFlag = false
        object.faultBatch = nil
        object.version = 0
        registry.markDeleted(object)
        forgetLinks(to: objectID)
    }

    /// What an inaccessible fault reads: nil for an optional attribute, zero or empty for a
    /// required one (nil where a type has no empty value).
    static func emptyValue(_ attribute: AttributeDescription) -> AttributeValue {
        if attribute.isOptional { return .null }
        switch attribute.type {
        case .boolean: return .bool(false)
        case .integer16, .integer32, .integer64: return .int(0)
        case .float, .double: return .double(0)
        case .decimal: return .decimal(0)
        case .string: return .string("")
        case .binary: return .data(Data())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: 0))
        default: return .null
        }
    }

    /// Removes `objectID` from the loaded relationships of the registered objects, in their
    /// current and committed values alike: the store no longer links anything to a row it does
    /// not have, so this is no pending change of theirs. Complexity: O(registered objects); it
    /// happens once per inaccessible fault.
    private func forgetLinks(to objectID: ObjectID) {
        func without(_ value: RelationshipValue) -> RelationshipValue {
            switch value {
            case .toOne(let id) where id == objectID: return .toOne(nil)
            case .toMany(var list) where list.contains(objectID):
                list.remove(objectID)
                return .toMany(list)
            default: return value
            }
        }
        for other in registry.objects.values
        where other.entity.relationships.contains(where: { objectID.entity.isKind(ofEntityNamed: $0.destinationEntityName) }) {
            other.relationshipValues = other.relationshipValues.map(without)
            if let committed = other.committedRelationships { other.committedRelationships = committed.map(without) }
        }
    }
}
