extension ObjectContext {
    /// Gives objects inserted and not saved yet their permanent IDs now, as Core Data's
    /// `obtainPermanentIDs(for:)` does: an ID taken in the perform that inserted an object (to
    /// hand to another context, or its ``ObjectID/uriRepresentation()`` to a service) then stays
    /// the object's ID after the save.
    ///
    /// The store reserves the keys durably (no other insert takes them, in this process or a later
    /// one); the objects stay pending inserts, written under these keys by the next save. Objects
    /// that already have permanent IDs are skipped. If the objects are never saved (rolled back,
    /// deleted), their keys stay unused. An insert merged into an existing row by a merge policy
    /// takes that row's ID instead, as in Core Data.
    /// - Parameter objects: objects registered in this context.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` for an object of another context (nothing
    ///   changes then); the store's error if it cannot reserve keys.
    public func obtainPermanentIDs(for objects: [EntityObject]) throws(SkerryError) {
        checkConfinement()
        defer { checkRegistryInvariants() }
        // Everything is checked and every key reserved before any object changes, so that a
        // failure leaves the context as it was.
        var groups: [(entity: EntityDescription, store: any ObjectStore, objects: [EntityObject])] = []
        var seen = Set<ObjectIdentifier>()
        for object in objects {
            guard object.context === self, registry[object.objectID] === object else {
                throw SkerryError(
                    .objectNotInContext,
                    "\(object.objectID) is not registered in this context; obtain its permanent ID in the context that inserted it.",
                    entityName: object.entity.name, objectID: object.objectID)
            }
            guard object.objectID.isTemporary, seen.insert(ObjectIdentifier(object)).inserted else { continue }
            if let index = groups.firstIndex(where: { $0.entity === object.entity && $0.store.identity === object.objectID.store }) {
                groups[index].objects.append(object)
            } else {
                guard let store = coordinator.store(with: object.objectID.store) else {
                    throw SkerryError(
                        .noStore, "The store of \(object.objectID) is not loaded in this stack.",
                        entityName: object.entity.name, objectID: object.objectID)
                }
                groups.append((object.entity, store, [object]))
            }
        }
        var assignments: [(object: EntityObject, permanent: ObjectID)] = []
        for group in groups {
            let keys = try group.store.reservePrimaryKeys(group.entity, count: group.objects.count)
            guard keys.count == group.objects.count else {
                throw SkerryError(
                    .invalidArgument,
                    "\(group.store.storeDescription) reserved \(keys.count) keys for \(group.objects.count) objects of '\(group.entity.name)'.",
                    entityName: group.entity.name)
            }
            for (object, key) in zip(group.objects, keys) {
                assignments.append((object, ObjectID(store: group.store.identity, entity: group.entity, primaryKey: key)))
            }
        }
        guard !assignments.isEmpty else { return }
        var mapping: [(temporary: ObjectID, permanent: ObjectID)] = []
        mapping.reserveCapacity(assignments.count)
        for (object, permanent) in assignments {
            mapping.append((object.objectID, permanent))
            registry.assignPermanentID(object, permanent)
        }
        // Relationships that name the objects by their temporary IDs follow them, and children
        // still holding a temporary ID find the object through the remembered mapping.
        let lookup = Dictionary(mapping, uniquingKeysWith: { _, new in new })
        remapTemporaryIDs(lookup, in: registry.inserted)
        remapTemporaryIDs(lookup, in: registry.changed)
        remapTemporaryIDs(lookup, in: registry.holdingTemporaryIDs)
        if hasChildren { registry.rememberPermanentIDs(mapping) }
    }
}
