import Foundation

/// A context's identity map: registered objects by ID, in an open-addressing hash table with
/// linear probing, keyed by the ID's key and space, hashed by one multiplication (IDs are
/// integers; the standard dictionary would run SipHash per look-up). Removal shifts later
/// entries back, so the table never holds tombstones.
///
/// Each slot holds the ID's hash and the object (whose ID holds the rest): 16 bytes, at most 3/4
/// full. Beside the table, the map lists its objects in the order they were registered: that
/// list owns the map's one reference to each object (held as `Unmanaged`, so that list entries
/// and slots are plain bytes: growing and shifting move them without reference counting), and
/// tearing the map down visits the objects in that order. A bulk fetch registers objects in the
/// order they were allocated, so their memory is freed front to back rather than in hash order
/// (which would touch the heap at random, and make the allocator's merging of freed blocks miss
/// the cache for each). Each object knows its place in the list (`Registration.mapPosition`), so
/// removal costs O(1): it leaves a hole, and the list is compacted when holes outnumber objects.
/// Hence `~Copyable`: a copy would share those references.
struct IdentityMap: ~Copyable {
    private struct Slot {
        /// ``hash(_:)`` of the object's ID: its key, mixed with its space; its top bits are the
        /// slot where a search for it starts, found without reading the object.
        var hash: UInt64
        var object: Unmanaged<EntityObject>?
    }

    /// The table: `mask + 1` slots (a power of two, at least 8), owned by the map.
    private var slots: UnsafeMutablePointer<Slot>
    /// The number of slots minus one.
    private var mask: Int {
        didSet { shift = UInt64(64 - (mask + 1).trailingZeroBitCount) }
    }
    /// 64 minus the number of bits of a slot index (see ``home(_:)``).
    private var shift: UInt64 = 61
    /// The objects in the table (objects waiting in a bulk registration are not counted yet).
    private(set) var count = 0

    /// The registered objects in registration order, nil where one was removed (a hole); the first
    /// `listCount` of `listCapacity` entries are initialized. Holds the map's references.
    private var list: UnsafeMutablePointer<Unmanaged<EntityObject>?>
    private var listCount = 0
    private var listCapacity: Int

    /// Where the objects listed by ``insertLater(_:)`` and not in the table yet begin: they are
    /// the list's entries from here to `listCount` (none nil: nothing is removed while they wait).
    /// `listCount` when none waits.
    private var pendingStart = 0
    /// The number of objects waiting for the table.
    private var pendingCount: Int { listCount - pendingStart }

    init() {
        mask = 7
        slots = Self.allocateSlots(8)
        listCapacity = 8
        list = .allocate(capacity: 8)
    }

    deinit {
        for index in 0..<listCount { list[index]?.release() }
        list.deallocate()
        Self.deallocateSlots(slots)
    }

    /// A table of `size` empty slots: zeroed memory from `calloc` (an empty slot is all zero
    /// bits: no hash, no object), which a large table gets as fresh pages, zero already, rather
    /// than a loop storing each slot.
    private static func allocateSlots(_ size: Int) -> UnsafeMutablePointer<Slot> {
        guard let memory = calloc(size, MemoryLayout<Slot>.stride) else { fatalError("Skerry: out of memory for an identity map") }
        return memory.bindMemory(to: Slot.self, capacity: size)
    }

    /// Frees a table from ``allocateSlots(_:)`` (its slots are plain bytes: nothing to
    /// deinitialize).
    private static func deallocateSlots(_ slots: UnsafeMutablePointer<Slot>) {
        free(slots)
    }

    /// Whether the map holds no object (in the table or waiting for it).
    var isEmpty: Bool { count == 0 && pendingCount == 0 }

    /// The objects the map holds: in the table, or waiting for it.
    var registeredCount: Int { count + pendingCount }

    /// Whether objects wait for the table (see ``insertLater(_:)``).
    var hasPending: Bool { pendingStart < listCount }

    /// The hash of `objectID`: Fibonacci hashing of the key, mixed with the entity's address and
    /// the kind of key (what makes two IDs equal, so that equal IDs hash alike even if they came
    /// through different space objects). For IDs of one space it is a one-to-one function of the
    /// key (an exclusive or and a multiplication by an odd number): equal hashes and the same
    /// space mean the same key.
    @inline(__always)
    private static func hash(_ objectID: ObjectID) -> UInt64 {
        let space = objectID.space
        let entity = UInt64(UInt(bitPattern: Unmanaged.passUnretained(space.entity).toOpaque())) >> 4
        return (UInt64(bitPattern: objectID.key) ^ entity ^ (space.isTemporary ? 0x5555_5555 : 0)) &* 0x9E37_79B9_7F4A_7C15
    }

    /// The slot where a search for an ID of hash `hash` starts: the hash's top bits, so that the
    /// table is ordered by hash and growing it moves entries from slot `i` to slot `2i` or
    /// `2i + 1`: a sweep through both tables, never reading the objects.
    @inline(__always)
    private func home(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> shift) }

    /// The index of the slot holding `objectID`, or of the empty slot where it would go, and the
    /// ID's hash.
    @inline(__always)
    private func find(_ objectID: ObjectID) -> (index: Int, found: Bool, hash: UInt64) {
        let hash = Self.hash(objectID)
        var index = home(hash)
        while true {
            let slot = slots[index]
            guard let object = slot.object else { return (index, false, hash) }
            if slot.hash == hash && object._withUnsafeGuaranteedRef({ $0.objectID.space.isSame(as: objectID.space) }) {
                return (index, true, hash)
            }
            index = (index + 1) & mask
        }
    }

    /// The object registered for `objectID`, or nil. Complexity: O(1) on average.
    subscript(_ objectID: ObjectID) -> EntityObject? {
        @inline(__always) get {
            assert(pendingCount == 0, "identity map: a look-up while objects wait to be indexed")
            let (index, found, _) = find(objectID)
            return found ? slots[index].object?.takeUnretainedValue() : nil
        }
    }

    /// Registers `object` under `objectID`, replacing what was registered under it; `object` goes
    /// last in registration order.
    mutating func insert(_ object: EntityObject, for objectID: ObjectID) {
        precondition(pendingCount == 0, "identity map: an insert while objects wait to be indexed")
        if (count + 1) * 4 > (mask + 1) * 3 { grow(to: (mask + 1) * 2) }
        let unmanaged = Unmanaged.passRetained(object)
        place(Slot(hash: Self.hash(objectID), object: unmanaged)) { $0.isSame(as: objectID.space) }
        append(unmanaged)
        pendingStart = listCount
    }

    /// Puts `slot` in the table (which has room), replacing the object registered under the same
    /// ID (an equal hash, and a space for which `isSpace` is true: called only on equal hashes),
    /// which leaves the list.
    @inline(__always)
    private mutating func place(_ slot: Slot, isSpace: (ObjectIDSpace) -> Bool) {
        var index = home(slot.hash)
        while let object = slots[index].object {
            if slots[index].hash == slot.hash && object._withUnsafeGuaranteedRef({ isSpace($0.objectID.space) }) {
                count -= 1
                removeFromList(object)
                object.release()
                break
            }
            index = (index + 1) & mask
        }
        count += 1
        slots[index] = slot
    }

    // MARK: Registering many at once

    /// Lists `object` as registered under its ID now, and puts it in the table later, with
    /// every other object listed this way, at the next ``insertPending()``: until then, no
    /// look-up may happen. Inserting many objects at once, in the order of their slots, touches
    /// the table front to back rather than at random (a bulk fetch into an empty context).
    /// Takes the caller's reference (`consuming`), which the map keeps: retained for the map and
    /// the caller's reference ended at once, a pair the compiler removes.
    @inline(__always)
    mutating func insertLater(_ object: consuming EntityObject) {
        let unmanaged = Unmanaged.passRetained(object)
        _ = consume object
        // Listed only: hashed when indexed (`insertPending`), if ever.
        append(unmanaged)
    }

    /// Makes room for `additional` more objects listed by ``insertLater(_:for:)``: neither the
    /// list nor the objects waiting for the table grow on the way.
    mutating func reserveLater(_ additional: Int) {
        let needed = listCount + additional
        guard needed > listCapacity else { return }
        let grown = UnsafeMutablePointer<Unmanaged<EntityObject>?>.allocate(capacity: needed)
        grown.moveInitialize(from: list, count: listCount)
        list.deallocate()
        list = grown
        listCapacity = needed
    }

    /// Puts the objects listed by ``insertLater(_:for:)`` in the table: grows it once for all of
    /// them, orders them by the region of the table they go to (a counting sort on the top bits
    /// of their hashes, regions of 256 slots: 4 KB), and places them in that order. A later one
    /// for the ID of an earlier one replaces it, as ``insert(_:for:)`` would have.
    mutating func insertPending() {
        let total = pendingCount
        guard total > 0 else { return }
        reserveCapacity(total)
        // Each waiting object with its ID's hash (the ID read in place, borrowed from the object,
        // which the list holds).
        let entries = UnsafeMutablePointer<Slot>.allocate(capacity: total)
        defer { entries.deallocate() }
        for index in 0..<total {
            let object = list[pendingStart + index]!
            let hash = object._withUnsafeGuaranteedRef { Self.hash($0.state.pointee.registration.objectID) }
            (entries + index).initialize(to: Slot(hash: hash, object: object))
        }
        pendingStart = listCount
        Self.inRegionOrder(entries, count: total, shift: shift) { placePending($0) }
    }

    /// Calls `body` with the `count` entries of `entries`, ordered by the region of the table
    /// their hashes start at (a counting sort on the top bits of the hashes, regions of 256
    /// slots: 4 KB), so that what `body` does to the table goes front to back rather than at
    /// random. Stable: of two entries of one region, the earlier comes first.
    @inline(__always)
    private static func inRegionOrder(
        _ entries: UnsafeMutablePointer<Slot>, count total: Int, shift: UInt64, _ body: (Slot) -> Void
    ) {
        let regionBits = max(0, min(14, 64 - Int(shift) - 8))
        if regionBits < 2 || total < 1024 {
            for index in 0..<total { body(entries[index]) }
            return
        }
        let regionShift = UInt64(64 - regionBits)
        var starts = [Int](repeating: 0, count: (1 << regionBits) + 1)
        for index in 0..<total { starts[Int(truncatingIfNeeded: entries[index].hash >> regionShift) + 1] += 1 }
        for region in 0..<(1 << regionBits) { starts[region + 1] += starts[region] }
        let sorted = UnsafeMutablePointer<Slot>.allocate(capacity: total)
        for index in 0..<total {
            let region = Int(truncatingIfNeeded: entries[index].hash >> regionShift)
            (sorted + starts[region]).initialize(to: entries[index])
            starts[region] += 1
        }
        for index in 0..<total { body(sorted[index]) }
        sorted.deallocate()
    }

    @inline(__always)
    private mutating func placePending(_ slot: Slot) {
        // Two objects for one ID in one bulk registration would leave the displaced one flagged
        // as registered, unlisted, never invalidated, its owner pointer outliving the context:
        // refuse it (the rows of one fetch name distinct objects).
        place(slot) { space in
            let isSame = slot.object!._withUnsafeGuaranteedRef { $0.objectID.space.isSame(as: space) }
            precondition(!isSame, "identity map: two objects for one ID in a bulk registration")
            return false
        }
    }

    /// Registers `object`, which the map holds under `oldID`, under `newID` instead, keeping its
    /// place in registration order. Nothing may be registered under `newID`.
    mutating func move(_ object: EntityObject, from oldID: ObjectID, to newID: ObjectID) {
        let (oldIndex, found, _) = find(oldID)
        precondition(
            found && slots[oldIndex].object?.toOpaque() == Unmanaged.passUnretained(object).toOpaque(),
            "identity map: moving an object not registered under \(oldID)")
        let unmanaged = removeSlot(at: oldIndex)
        let (index, taken, hash) = find(newID)
        precondition(!taken, "identity map: \(newID) is already registered")
        slots[index] = Slot(hash: hash, object: unmanaged)
    }

    // MARK: Indexing every object again

    /// Whether `object` is listed here, that is registered in the map (O(1): its list position).
    func holds(_ object: EntityObject) -> Bool {
        let position = Int(object.registration.mapPosition)
        return position < listCount && list[position]?.toOpaque() == Unmanaged.passUnretained(object).toOpaque()
    }

    /// Indexes every object again under the ID it has now, after the caller gave many of them new
    /// IDs at once (a save re-keying its inserts from temporary to permanent IDs): empties the
    /// table and fills it again in the order of its slots (front to back, not at random), keeping
    /// registration order. Where two objects now have one ID, the one for which `hasMoved` is
    /// false leaves the map (as ``insert(_:for:)`` would replace it), returned with the map's
    /// reference; `hasMoved` is asked only then, and must be true for exactly one of the two.
    /// Complexity: O(registered objects).
    mutating func reindex(hasMoved: (EntityObject) -> Bool) -> [EntityObject] {
        precondition(pendingCount == 0, "identity map: re-indexed while objects wait to be indexed")
        guard count > 0 else { return [] }
        let entries = UnsafeMutablePointer<Slot>.allocate(capacity: count)
        defer { entries.deallocate() }
        var total = 0
        for position in 0..<listCount {
            guard let object = list[position] else { continue }
            precondition(total < count, "identity map: more objects listed than counted")
            let hash = object._withUnsafeGuaranteedRef { Self.hash($0.registration.objectID) }
            (entries + total).initialize(to: Slot(hash: hash, object: object))
            total += 1
        }
        precondition(total == count, "identity map: \(total) objects listed, count \(count)")
        slots.update(repeating: Slot(hash: 0, object: nil), count: mask + 1)
        count = 0
        var displaced: [EntityObject] = []
        Self.inRegionOrder(entries, count: total, shift: shift) { entry in
            let placing = entry.object!
            let space = placing._withUnsafeGuaranteedRef { $0.registration.objectID.space }
            var index = home(entry.hash)
            while let object = slots[index].object {
                if slots[index].hash == entry.hash && object._withUnsafeGuaranteedRef({ $0.registration.objectID.space.isSame(as: space) })
                {
                    let placedHasMoved = hasMoved(object.takeUnretainedValue())
                    precondition(
                        placedHasMoved != hasMoved(placing.takeUnretainedValue()),
                        "identity map: two objects re-keyed to one ID, \(placing.takeUnretainedValue().objectID)")
                    let leaving = placedHasMoved ? placing : object
                    removeFromList(leaving)
                    displaced.append(leaving.takeRetainedValue())
                    if placedHasMoved { return }
                    count -= 1
                    break
                }
                index = (index + 1) & mask
            }
            count += 1
            slots[index] = entry
        }
        return displaced
    }

    /// Removes what is registered under `objectID`; returns it.
    @discardableResult
    mutating func removeValue(forKey objectID: ObjectID) -> EntityObject? {
        let (index, found, _) = find(objectID)
        guard found else { return nil }
        count -= 1
        let removed = removeSlot(at: index)
        removeFromList(removed)
        return removed.takeRetainedValue()
    }

    /// Empties slot `index` (occupied), shifting back the entries after it that would not be found
    /// across the hole; returns what it held. Leaves `count` and the list as they are.
    private mutating func removeSlot(at start: Int) -> Unmanaged<EntityObject> {
        var index = start
        let removed = slots[index].object!
        slots[index].object = nil
        var next = (index + 1) & mask
        while slots[next].object != nil {
            let home = home(slots[next].hash)
            // Whether `home` lies cyclically in (index, next]: the entry is fine where it is.
            let stays = index <= next ? (index < home && home <= next) : (index < home || home <= next)
            if !stays {
                slots[index] = slots[next]
                slots[next].object = nil
                index = next
            }
            next = (next + 1) & mask
        }
        return removed
    }

    // MARK: Registration order

    /// Puts `object` (retained for the list) last in the list, compacting or growing it first
    /// when full.
    private mutating func append(_ object: Unmanaged<EntityObject>) {
        // An object listed twice would be released twice: refuse a second registration (O(1)).
        let previous = Int(object._withUnsafeGuaranteedRef { $0.registration.mapPosition })
        precondition(
            !(previous < listCount && list[previous]?.toOpaque() == object.toOpaque()), "identity map: an object registered twice")
        if listCount == listCapacity {
            // Holes are listed entries neither in the table nor waiting for it.
            if (count + pendingCount) * 2 <= listCount { compactList() }
            if listCount == listCapacity {
                let capacity = listCapacity * 2
                let grown = UnsafeMutablePointer<Unmanaged<EntityObject>?>.allocate(capacity: capacity)
                grown.moveInitialize(from: list, count: listCount)
                list.deallocate()
                list = grown
                listCapacity = capacity
            }
        }
        precondition(listCount < Int(UInt32.max), "identity map: more than 2^32 registrations")
        object._withUnsafeGuaranteedRef { $0.registration.mapPosition = UInt32(truncatingIfNeeded: listCount) }
        (list + listCount).initialize(to: object)
        listCount += 1
    }

    /// Leaves a hole where `object`'s list entry was; the list's reference passes to the caller.
    private mutating func removeFromList(_ object: Unmanaged<EntityObject>) {
        let position = Int(object._withUnsafeGuaranteedRef { $0.registration.mapPosition })
        // A precondition, not an assertion: a wrong entry cleared here would be released twice
        // (and objects waiting for the table are never removed: they are indexed first).
        precondition(
            position < pendingStart && list[position]?.toOpaque() == object.toOpaque(), "identity map: list entry out of place")
        list[position] = nil
    }

    /// Moves the live entries to the front, in order, renumbering their positions.
    private mutating func compactList() {
        var kept = 0
        var newPendingStart = 0
        for index in 0..<listCount {
            // Waiting objects (none nil) keep their order after the others.
            if index == pendingStart { newPendingStart = kept }
            guard let object = list[index] else { continue }
            if kept != index {
                list[kept] = object
                object._withUnsafeGuaranteedRef { $0.registration.mapPosition = UInt32(truncatingIfNeeded: kept) }
            }
            kept += 1
        }
        pendingStart = pendingStart == listCount ? kept : newPendingStart
        listCount = kept
    }

    // MARK: Capacity

    /// Makes room for `additional` more objects without growing on the way.
    mutating func reserveCapacity(_ additional: Int) {
        let needed = (count + additional) * 4 / 3 + 1
        guard needed > mask + 1 else { return }
        var size = mask + 1
        while size < needed { size *= 2 }
        grow(to: size)
    }

    private mutating func grow(to size: Int) {
        let old = slots
        let oldSize = mask + 1
        slots = Self.allocateSlots(size)
        mask = size - 1
        for oldIndex in 0..<oldSize {
            let slot = old[oldIndex]
            guard slot.object != nil else { continue }
            var index = home(slot.hash)
            while slots[index].object != nil { index = (index + 1) & mask }
            slots[index] = slot
        }
        Self.deallocateSlots(old)
    }

    // MARK: Every object

    /// Forgets every object, keeping no capacity. `body` gets each object first, in registration
    /// order, with whether the map held its only reference (then nothing else can see it again: it
    /// goes with the map). Inlined, so that `body` is too: no closure call and no reference count
    /// for passing each object.
    @inline(__always)
    mutating func removeAll(_ body: (EntityObject, _ isOnlyReference: Bool) -> Void) {
        // Objects waiting for the table are listed: the list is all that is walked.
        pendingStart = 0
        let old = list
        let oldCount = listCount
        Self.deallocateSlots(slots)
        slots = Self.allocateSlots(8)
        mask = 7
        count = 0
        list = .allocate(capacity: 8)
        listCount = 0
        listCapacity = 8
        for index in 0..<oldCount {
            guard let unmanaged = old[index] else { continue }
            var object = unmanaged.takeRetainedValue()
            // Asked before `object` is passed on: as the second argument of the call, the check
            // came after the first argument's copy, and saw two references to every object.
            let isOnlyReference = isKnownUniquelyReferenced(&object)
            body(object, isOnlyReference)
        }
        old.deallocate()
    }

    /// The registered objects, in registration order (named as a dictionary's).
    var values: [EntityObject] {
        // Written in place: no capacity check or call per object (a bulk fetch returns this).
        Array(unsafeUninitializedCapacity: count + pendingCount) { buffer, initialized in
            for index in 0..<listCount {
                guard let object = list[index] else { continue }
                precondition(initialized < buffer.count, "identity map: more objects listed than counted")
                (buffer.baseAddress! + initialized).initialize(to: object.takeUnretainedValue())
                initialized += 1
            }
        }
    }

    /// Calls `body` with the registered objects, in registration order, borrowed: the list itself
    /// when it has no hole (no object was removed since the map was last emptied, as after a bulk
    /// fetch into an empty context), else a copy (``values``). `body` must not change the map.
    func withObjects<R>(_ body: (UnsafeBufferPointer<EntityObject>) -> R) -> R {
        // The list holds every object, in the table or waiting for it.
        let total = count + pendingCount
        guard listCount == total else { return values.withUnsafeBufferPointer(body) }
        // No hole: the first `total` entries are the objects, each a reference the map holds, as
        // plain pointers (an `Unmanaged<EntityObject>?` that is not nil is laid out as the
        // reference it holds).
        return list.withMemoryRebound(to: EntityObject.self, capacity: total) { body(UnsafeBufferPointer(start: $0, count: total)) }
    }

    /// Whether some registered object satisfies `predicate`.
    func contains(where predicate: (EntityObject) throws -> Bool) rethrows -> Bool {
        for index in 0..<listCount { if let object = list[index], try predicate(object.takeUnretainedValue()) { return true } }
        return false
    }

    /// Checks that every object is found under its own ID (its ID did not change behind the
    /// map's back), that the list holds each object once, at its position, and that `count` is
    /// right, stopping with a message otherwise.
    func checkConsistency() {
        // Objects waiting for the table: listed at their positions, after the others, none
        // removed, none in the table (checked below: the table's objects are listed before them).
        precondition(pendingStart <= listCount, "identity map: objects wait past the list's end")
        for index in pendingStart..<listCount {
            guard let object = list[index]?.takeUnretainedValue() else { preconditionFailure("identity map: a waiting object was removed") }
            precondition(
                Int(object.registration.mapPosition) == index,
                "identity map: \(object.objectID), waiting for the table, is not listed at its position")
        }
        var seen = 0
        for index in 0...mask {
            guard let object = slots[index].object?.takeUnretainedValue() else { continue }
            seen += 1
            let objectID = object.objectID
            precondition(
                slots[index].hash == Self.hash(objectID) && find(objectID) == (index, true, slots[index].hash),
                "identity map: \(objectID) is not registered under its own ID")
            let position = Int(object.registration.mapPosition)
            precondition(
                position < pendingStart && list[position]?.takeUnretainedValue() === object,
                "identity map: \(objectID) is not listed at its position")
        }
        precondition(seen == count, "identity map: \(seen) entries, count \(count)")
        var listed = 0
        for index in 0..<listCount where list[index] != nil { listed += 1 }
        precondition(
            listed == count + pendingCount, "identity map: \(listed) objects listed, count \(count), \(pendingCount) waiting")
    }

    /// Calls `body` with every (ID, object) entry, in registration order.
    func forEach(_ body: (ObjectID, EntityObject) throws -> Void) rethrows {
        for index in 0..<listCount {
            if let object = list[index]?.takeUnretainedValue() { try body(object.objectID, object) }
        }
    }
}
