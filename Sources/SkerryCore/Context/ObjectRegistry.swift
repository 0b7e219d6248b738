/// The part of an object's state that says who it is and where it belongs: its ID, whether a
/// context holds it, whether it is a pending insert or delete. Only ``ObjectRegistry`` changes it
/// (its setters are private to this file); anything else can only make an unregistered one.
@usableFromInline
struct Registration {
    /// The object's ID: temporary until the object is saved (or its parent saved it).
    fileprivate(set) var objectID: ObjectID
    /// Whether a context's registry holds the object.
    @usableFromInline fileprivate(set) var isRegistered: Bool
    /// Whether the object is a pending insert of its context.
    fileprivate(set) var isInserted = false
    /// Whether the object is a pending delete of its context.
    fileprivate(set) var isDeleted = false
    /// Whether the object's values are not loaded yet. Not identity: the context writes it; it
    /// lives here, in the bytes the flags above leave free, so that an object is 16 bytes smaller.
    @usableFromInline var isFault = false
    /// The object's place in its identity map's registration order (see ``IdentityMap``), written
    /// only by the map while the object is registered. In the bytes the flags leave free.
    var mapPosition: UInt32 = 0

    /// The registration of an object not (yet) held by any registry.
    init(unregistered objectID: ObjectID) {
        self.objectID = objectID
        self.isRegistered = false
    }
}

/// The one owner of object identity in a context: which object stands for which row, which
/// objects are pending inserts, updates and deletes, and the temporary IDs of saved objects.
///
/// It registers objects, unregisters and invalidates them, re-keys them from temporary to
/// permanent IDs (after the context's own save, or its parent's, alike), and marks inserts,
/// changes and deletes. Nothing else writes an object's ``Registration`` or these tables.
///
/// Its invariants, checked by ``checkInvariants(context:)`` (in debug builds after the context's
/// operations, see ``debugCheckSpacing``, and in tests):
/// - one object per ID: every entry of the identity map is keyed by its object's ID, and no
///   object is in it twice;
/// - every registered object belongs to this registry's context, and every object the registry
///   lists is registered;
/// - the inserted, changed and deleted tables agree with the objects' flags: an object is
///   inserted or deleted (or neither), never both; changed objects are saved, registered objects
///   with a captured committed state; deleted objects are saved, registered objects;
/// - an object holds values exactly when it is not a fault (whatever its entity, one without
///   attributes included), and an object with room for its values holds them there.
///
/// Every method runs on the context's queue (the context checks that before calling).
final class ObjectRegistry {
    // The state below is `@exclusivity(unchecked)` for the reason the context's is (see
    // `ObjectContext`): touched by one thread at a time, and never with an `inout` access held
    // across a call that reaches the same property again (each mutation is one statement).

    /// Registered objects by ID: the identity map.
    @exclusivity(unchecked) private(set) var objects = IdentityMap()
    /// Inserted objects in insertion order (saved in that order, so that keys follow it). An
    /// entry whose object is no longer an insert is a tombstone, skipped and compacted away, so
    /// that removing an insert costs O(1).
    @exclusivity(unchecked) private var insertedList: [EntityObject] = []
    /// How many entries of `insertedList` are live inserts.
    @exclusivity(unchecked) private(set) var insertedCount = 0
    /// Saved objects with a captured committed state (`committedValues` set).
    @exclusivity(unchecked) private(set) var changed: Set<EntityObject> = []
    /// Saved objects marked for deletion.
    @exclusivity(unchecked) private(set) var deleted: Set<EntityObject> = []
    /// The temporary IDs of objects this context saved (or its parent saved), with the permanent
    /// IDs they got, so that a child still holding a temporary ID finds the object. Kept only
    /// once the context has children.
    @exclusivity(unchecked) private(set) var permanentIDs: [ObjectID: ObjectID] = [:]
    /// In a child context: objects whose relationships, as read from the parent, hold temporary IDs
    /// of the parent's inserts, re-keyed when the parent saves them. (Objects that got temporary IDs
    /// by a change of their own are inserts or changed objects, re-keyed with those.)
    @exclusivity(unchecked) private(set) var holdingTemporaryIDs: Set<EntityObject> = []

    /// The number of registered objects.
    var count: Int { objects.registeredCount }
    var isEmpty: Bool { objects.isEmpty }

    /// The object registered for `objectID`, or nil.
    @inline(__always)
    subscript(_ objectID: ObjectID) -> EntityObject? {
        indexPending()
        return objects[objectID]
    }

    /// Puts the objects of the last bulk registration in the identity map's table, if they are not
    /// there yet: before anything that looks up, adds or removes an object by ID. A bulk
    /// registration leaves them waiting, so that a context that never looks one up (a fetch whose
    /// objects are read and dropped) never indexes them.
    @inline(__always)
    private func indexPending() {
        if objects.hasPending { objects.insertPending() }
    }

    /// The pending inserts, in insertion order.
    var inserted: [EntityObject] {
        insertedCount == insertedList.count ? insertedList : insertedList.filter { $0.registration.isInserted }
    }

    /// `objectID`, or the permanent ID it got when this context (or its parent) saved it.
    func resolved(_ objectID: ObjectID) -> ObjectID {
        objectID.isTemporary ? (permanentIDs[objectID] ?? objectID) : objectID
    }

    /// Makes room for `additional` more objects.
    func reserveCapacity(_ additional: Int) {
        indexPending()
        objects.reserveCapacity(additional)
    }

    // MARK: Registering

    /// Registers `object`, a new object for a row that has none registered here.
    func register(_ object: EntityObject) {
        indexPending()
        assert(objects[object.registration.objectID] == nil, "a second object for \(object.registration.objectID)")
        object.registration.isRegistered = true
        objects.insert(object, for: object.registration.objectID)
    }

    /// Registers the new objects `body` passes to its argument, each for a row
    /// that has none registered here. They are listed at once, and put in the identity map's
    /// table together later, before the first look-up, addition or removal by ID (never, for a
    /// context whose objects are read and dropped): inserting them in the order of its slots
    /// touches the table front to back, not at random. `body` must not look objects up in this
    /// registry. Inlined, with the registration of each object: one bulk fetch calls it, once per
    /// object. The registration takes the caller's reference to the object (`consuming`): the
    /// identity map keeps it, with no retain and release per object.
    @inline(__always)
    func registerNewInBulk<E: Error>(_ body: ((consuming EntityObject) -> Void) throws(E) -> Void) throws(E) {
        indexPending()
        try body { (object: consuming EntityObject) in
            object.registration.isRegistered = true
            objects.insertLater(object)
        }
    }

    /// Makes room for `additional` more objects in the bulk registration under way (see
    /// ``registerNewInBulk(_:)``), so that registering them grows nothing on the way.
    func reserveInBulk(_ additional: Int) {
        objects.reserveLater(additional)
    }

    /// Registers `object` as a pending insert.
    func registerInserted(_ object: EntityObject) {
        register(object)
        object.registration.isInserted = true
        insertedList.append(object)
        insertedCount += 1
    }

    /// Removes `object` from the context and invalidates it: references held elsewhere see an
    /// object that belongs to no context.
    func unregister(_ object: EntityObject) {
        indexPending()
        let objectID = object.registration.objectID
        if objects[objectID] === object { objects.removeValue(forKey: objectID) }
        forget(object)
    }

    /// Unregisters `object`, which the identity map no longer holds: takes it out of the other
    /// tables, and invalidates it.
    private func forget(_ object: EntityObject) {
        if object.committedValues != nil { changed.remove(object) }
        if object.registration.isDeleted { deleted.remove(object) }
        if object.registration.isInserted { removeInsert(object) }
        if !holdingTemporaryIDs.isEmpty { holdingTemporaryIDs.remove(object) }
        object.invalidate()
    }

    /// Forgets every object (invalidating each) and every pending change.
    func unregisterAll() {
        insertedList = []
        insertedCount = 0
        changed = []
        deleted = []
        permanentIDs = [:]
        holdingTemporaryIDs = []
        // Last, so that the map's reference is the only one the registry held: an object nobody
        // else holds goes with the table as it is (no one can see it again); the others are
        // invalidated first. So is an object of a subclass: its `deinit` is the user's code, which
        // must find the object out of its context (not registered in a registry being cleared).
        objects.removeAll { object, isOnlyReference in
            if !isOnlyReference || ObjectIdentifier(type(of: object)) != ObjectIdentifier(EntityObject.self) {
                object.invalidate()
            }
        }
    }

    private func removeInsert(_ object: EntityObject) {
        object.registration.isInserted = false
        insertedCount -= 1
        if insertedCount == 0 {
            insertedList.removeAll()
        } else if insertedCount < insertedList.count / 2 {
            insertedList.removeAll { !$0.registration.isInserted }
        }
    }

    // MARK: Inserts, changes, deletes

    /// Marks `object` deleted. A saved object becomes a pending delete; an insert stays listed
    /// as an insert until the caller unregisters it (a delete rule may still reach it meanwhile).
    func markDeleted(_ object: EntityObject) {
        object.registration.isDeleted = true
        if !object.registration.isInserted { deleted.insert(object) }
    }

    /// Takes back every pending delete.
    func unmarkAllDeleted() {
        for object in deleted { object.registration.isDeleted = false }
        deleted = []
    }

    /// Records that `object` (saved, its committed state just captured) has a pending change.
    func markChanged(_ object: EntityObject) {
        changed.insert(object)
    }

    /// Records that `object` no longer has a pending change (its committed state was cleared).
    func unmarkChanged(_ object: EntityObject) {
        changed.remove(object)
    }

    /// Empties the changed table (the caller cleared every object's committed state).
    func unmarkAllChanged() {
        changed = []
    }

    /// Makes every insert a saved object, keeping their IDs: for a child whose inserts moved into
    /// its parent, and for a save, before it re-keys them.
    func endInserts() {
        for object in insertedList { object.registration.isInserted = false }
        insertedList = []
        insertedCount = 0
    }

    // MARK: Re-keying

    /// Gives `object` the ID `permanentID` (an insert this context saved, or an object whose
    /// insert the parent saved). An object already registered for that row leaves the context:
    /// one object per row. `object` is a saved object afterwards.
    func rekey(_ object: EntityObject, to permanentID: ObjectID) {
        indexPending()
        let previousID = object.registration.objectID
        let isRegistered = objects[previousID] === object
        if let other = objects[permanentID], other !== object { unregister(other) }
        if object.registration.isInserted { removeInsert(object) }
        // A registered object keeps its place in registration order (moved while the map still
        // finds it under its previous ID).
        if isRegistered && previousID != permanentID { objects.move(object, from: previousID, to: permanentID) }
        object.registration.objectID = permanentID
        if !isRegistered { objects.insert(object, for: permanentID) }
    }

    /// Re-keys the objects `body` passes to its argument, each to the permanent ID passed with it,
    /// with the outcome of ``rekey(_:to:)`` called for each in turn, but all at once when they are
    /// many (`expectedCount`, at least half the registered objects): their IDs change, then the
    /// identity map indexes every object again in one pass in the order of its slots, rather than
    /// searching, removing and inserting each at random (the save of a bulk insert, a child
    /// adopting its parent's permanent IDs). Each object must be registered here, and no two may
    /// go to one ID; `body` must not look objects up in this registry.
    func rekeyInBulk(expectedCount: Int, _ body: ((EntityObject, ObjectID) -> Void) -> Void) {
        indexPending()
        // A few among many objects: one at a time costs less than indexing every object again.
        guard expectedCount * 2 >= objects.count else {
            body { object, permanentID in rekey(object, to: permanentID) }
            return
        }
        var moved: [ObjectIdentifier] = []
        moved.reserveCapacity(expectedCount)
        body { object, permanentID in
            precondition(objects.holds(object), "registry: re-keying \(object.registration.objectID), which is not registered here")
            if object.registration.isInserted { removeInsert(object) }
            if object.registration.objectID != permanentID {
                object.registration.objectID = permanentID
                moved.append(ObjectIdentifier(object))
            }
        }
        guard !moved.isEmpty else { return }
        // Objects registered under the new IDs (rows read before the inserts' keys were known)
        // leave the context: one object per row. Which objects moved is looked up only then.
        var movedSet: Set<ObjectIdentifier>?
        let displaced = objects.reindex { object in
            if movedSet == nil { movedSet = Set(moved) }
            return movedSet!.contains(ObjectIdentifier(object))
        }
        for other in displaced { forget(other) }
    }

    /// Gives `object`, a pending insert, the permanent ID `permanentID` reserved for it before its
    /// save (``ObjectContext/obtainPermanentIDs(for:)``); it stays a pending insert.
    func assignPermanentID(_ object: EntityObject, _ permanentID: ObjectID) {
        indexPending()
        assert(object.registration.isInserted && objects[permanentID] == nil, "\(permanentID) assigned to a non-insert or twice")
        let previousID = object.registration.objectID
        let isRegistered = objects[previousID] === object
        if isRegistered { objects.move(object, from: previousID, to: permanentID) }
        object.registration.objectID = permanentID
        if !isRegistered { objects.insert(object, for: permanentID) }
    }

    /// Notes that `object`'s relationships (read from the parent) hold temporary IDs.
    func noteHoldsTemporaryIDs(_ object: EntityObject) {
        holdingTemporaryIDs.insert(object)
    }

    /// Forgets the objects whose relationships no longer hold temporary IDs.
    func pruneHoldersOfTemporaryIDs() {
        holdingTemporaryIDs = holdingTemporaryIDs.filter { $0.relationshipValues.contains(where: \.holdsTemporaryIDs) }
    }

    /// Remembers what temporary IDs became, for children still holding them.
    func rememberPermanentIDs(_ mapping: some Sequence<(temporary: ObjectID, permanent: ObjectID)>) {
        for (temporary, permanent) in mapping { permanentIDs[temporary] = permanent }
    }

    // MARK: Invariants

    /// Checks every invariant listed on the type, stopping with a message that names the first one
    /// broken. Complexity: O(registered objects).
    func checkInvariants(context: ObjectContext) {
        objects.checkConsistency()
        var seen = Set<ObjectIdentifier>()
        var insertedSeen = 0
        var deletedSeen = 0
        objects.forEach { objectID, object in
            let registration = object.registration
            precondition(registration.objectID == objectID, "registry: \(registration.objectID) is registered under \(objectID)")
            precondition(registration.isRegistered, "registry: \(objectID) is in the identity map but not registered")
            precondition(object.isOwned(by: context), "registry: \(objectID) belongs to another context")
            precondition(seen.insert(ObjectIdentifier(object)).inserted, "registry: \(objectID) is registered twice")
            precondition(!(registration.isInserted && registration.isDeleted), "registry: \(objectID) is both inserted and deleted")
            precondition(
                object.isFaultFlag == (object.storage == nil),
                "registry: \(objectID) is \(object.isFaultFlag ? "a fault holding values" : "loaded without storage")")
            precondition(
                !object.state.pointee.hasRoomForValues || object.storage == nil || object.storage == object.inlineStorage,
                "registry: \(objectID) has room for its values but holds them in a block of their own")
            precondition(
                (object.committedValues != nil) == changed.contains(object),
                "registry: \(objectID) has \(object.committedValues == nil ? "no " : "")committed state but is \(changed.contains(object) ? "" : "not ")in the changed table"
            )
            if registration.isInserted { insertedSeen += 1 }
            if registration.isDeleted { deletedSeen += 1 }
        }
        precondition(insertedSeen == insertedCount, "registry: \(insertedSeen) objects are inserts, the table counts \(insertedCount)")
        let liveInserts = insertedList.filter { $0.registration.isInserted }
        precondition(
            liveInserts.count == insertedCount,
            "registry: the inserted list holds \(liveInserts.count) inserts, the count is \(insertedCount)")
        precondition(Set(liveInserts.map(ObjectIdentifier.init)).count == liveInserts.count, "registry: an insert is listed twice")
        // `holds` (listed) stands for "registered under its ID": `checkConsistency` checked that
        // each listed object is in the table under its ID, or waits for it with its ID's hash.
        for object in liveInserts {
            precondition(
                objects.holds(object), "registry: insert \(object.registration.objectID) is not registered")
        }
        precondition(deletedSeen == deleted.count, "registry: \(deletedSeen) objects are deleted, the table holds \(deleted.count)")
        for object in deleted {
            precondition(
                objects.holds(object) && !object.registration.isInserted,
                "registry: deleted \(object.registration.objectID) is not a registered saved object")
        }
        for object in changed {
            precondition(
                objects.holds(object) && !object.registration.isInserted,
                "registry: changed \(object.registration.objectID) is not a registered saved object")
        }
        for object in holdingTemporaryIDs {
            precondition(
                objects.holds(object),
                "registry: \(object.registration.objectID), noted as holding temporary IDs, is not registered")
        }
    }

    #if DEBUG
        /// Operations of the context since the registry was last checked (debug builds).
        var operationsSinceCheck = 0
        /// How many objects the checks after operations looked at, in all (debug builds; tests
        /// read it to see that the checks stay linear).
        var objectsChecked = 0
    #endif

    /// Debug builds check the registry after an operation once the operations since the last
    /// check, times this, reach the number of registered objects: after every operation while it
    /// holds up to this many objects, and for more, often enough to catch a broken invariant soon
    /// while each operation pays for this many objects' checks on average. (Checking all of them
    /// after every operation made debug builds quadratic: inserting, or cascading a delete over,
    /// thousands of objects took minutes.)
    static let debugCheckSpacing = 64
}

extension ObjectContext {
    /// Checks the registry's invariants after an operation, in debug builds (free in release):
    /// see ``ObjectRegistry/debugCheckSpacing`` for how often.
    @inline(__always)
    func checkRegistryInvariants() {
        #if DEBUG
            registry.operationsSinceCheck += 1
            if registry.operationsSinceCheck * ObjectRegistry.debugCheckSpacing >= registry.count {
                registry.operationsSinceCheck = 0
                registry.objectsChecked += registry.count
                registry.checkInvariants(context: self)
            }
        #endif
    }
}

extension EntityObject {
    /// Forgets everything: the object no longer belongs to a context. Only the registry calls it.
    fileprivate func invalidate() {
        registration.isRegistered = false
        registration.isInserted = false
        registration.isDeleted = false
        releaseStorage()
        relationshipValues = []
        side = nil // committed state and fault batch
        isFaultFlag = true
    }
}
