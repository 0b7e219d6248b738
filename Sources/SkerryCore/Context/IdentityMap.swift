/// A context's identity map: registered objects by ID, in an open-addressing hash table with
/// linear probing, keyed by the ID's key and space, hashed by one multiplication (IDs are
/// integers; the standard dictionary would run SipHash per look-up). Removal shifts later
/// entries back, so the table never holds tombstones.
///
/// Each slot holds the ID's hash and the object (whose ID holds the rest): 16 bytes, at most 3/4
/// full.
/// The map owns one reference to each object, held as `Unmanaged` so that slots are plain bytes:
/// growing and shifting move them without reference counting, and tearing the table down visits
/// only the occupied slots. Hence `~Copyable`: a copy would share those references.
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
    private(set) var count = 0

    init() {
        mask = 7
        slots = Self.allocateSlots(8)
    }

    deinit {
        for index in 0...mask { slots[index].object?.release() }
        Self.deallocateSlots(slots)
    }

    private static func allocateSlots(_ size: Int) -> UnsafeMutablePointer<Slot> {
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: size)
        slots.initialize(repeating: Slot(hash: 0, object: nil), count: size)
        return slots
    }

    /// Frees a table (its slots are plain bytes: nothing to deinitialize).
    private static func deallocateSlots(_ slots: UnsafeMutablePointer<Slot>) {
        slots.deallocate()
    }

    var isEmpty: Bool { count == 0 }

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
            let (index, found, _) = find(objectID)
            return found ? slots[index].object?.takeUnretainedValue() : nil
        }
    }

    /// Registers `object` under `objectID`, replacing what was registered under it.
    mutating func insert(_ object: EntityObject, for objectID: ObjectID) {
        if (count + 1) * 4 > (mask + 1) * 3 { grow(to: (mask + 1) * 2) }
        let (index, found, hash) = find(objectID)
        let replaced = slots[index].object
        if !found { count += 1 }
        slots[index] = Slot(hash: hash, object: Unmanaged.passRetained(object))
        replaced?.release()
    }

    /// Removes what is registered under `objectID`; returns it.
    @discardableResult
    mutating func removeValue(forKey objectID: ObjectID) -> EntityObject? {
        var (index, found, _) = find(objectID)
        guard found, let removed = slots[index].object else { return nil }
        slots[index].object = nil
        count -= 1
        // Shift back the entries after it that would not be found across the hole.
        var next = (index + 1) & mask
        while slots[next].object != nil {
            let start = home(slots[next].hash)
            // Whether `start` lies cyclically in (index, next]: the entry is fine where it is.
            let stays = index <= next ? (index < start && start <= next) : (index < start || start <= next)
            if !stays {
                slots[index] = slots[next]
                slots[next].object = nil
                index = next
            }
            next = (next + 1) & mask
        }
        return removed.takeRetainedValue()
    }

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

    /// Forgets every object, keeping no capacity. `body` gets each object first, with whether the
    /// map held its only reference (then nothing else can see it again: it goes with the table).
    mutating func removeAll(_ body: (EntityObject, _ isOnlyReference: Bool) -> Void) {
        let old = slots
        let oldSize = mask + 1
        slots = Self.allocateSlots(8)
        mask = 7
        count = 0
        for index in 0..<oldSize {
            guard let unmanaged = old[index].object else { continue }
            var object = unmanaged.takeRetainedValue()
            body(object, isKnownUniquelyReferenced(&object))
        }
        Self.deallocateSlots(old)
    }

    /// The registered objects, in no particular order (named as a dictionary's).
    var values: [EntityObject] {
        var result: [EntityObject] = []
        result.reserveCapacity(count)
        for index in 0...mask { if let object = slots[index].object { result.append(object.takeUnretainedValue()) } }
        return result
    }

    /// Whether some registered object satisfies `predicate`.
    func contains(where predicate: (EntityObject) throws -> Bool) rethrows -> Bool {
        for index in 0...mask { if let object = slots[index].object, try predicate(object.takeUnretainedValue()) { return true } }
        return false
    }

    /// Checks that every object is found under its own ID (its ID did not change behind the
    /// map's back) and that `count` is right, stopping with a message otherwise.
    func checkConsistency() {
        var seen = 0
        for index in 0...mask {
            guard let object = slots[index].object?.takeUnretainedValue() else { continue }
            seen += 1
            let objectID = object.objectID
            precondition(
                slots[index].hash == Self.hash(objectID) && find(objectID) == (index, true, slots[index].hash),
                "identity map: \(objectID) is not registered under its own ID")
        }
        precondition(seen == count, "identity map: \(seen) entries, count \(count)")
    }

    /// Calls `body` with every (ID, object) entry.
    func forEach(_ body: (ObjectID, EntityObject) throws -> Void) rethrows {
        for index in 0...mask {
            if let object = slots[index].object?.takeUnretainedValue() { try body(object.objectID, object) }
        }
    }
}
