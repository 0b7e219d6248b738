/// A context's identity map: registered objects by ID, in an open-addressing hash table with
/// linear probing, keyed by the ID's key and space, hashed by one multiplication (IDs are
/// integers; the standard dictionary would run SipHash per look-up). Removal shifts later
/// entries back, so the table never holds tombstones.
///
/// Each slot holds the key and the object (whose ID holds the rest): 16 bytes, at most 3/4 full.
/// The map owns one reference to each object, held as `Unmanaged` so that slots are plain bytes:
/// growing and shifting move them without reference counting, and tearing the table down visits
/// only the occupied slots. Hence `~Copyable`: a copy would share those references.
struct IdentityMap: ~Copyable {
    private struct Slot {
        var key: Int64
        var object: Unmanaged<EntityObject>?
    }

    private var slots: [Slot]
    /// `slots.count - 1`; the table's size is a power of two.
    private var mask: Int
    private(set) var count = 0

    init() {
        slots = Array(repeating: Slot(key: 0, object: nil), count: 8)
        mask = 7
    }

    deinit {
        for slot in slots { slot.object?.release() }
    }

    var isEmpty: Bool { count == 0 }

    /// The slot where a search for `objectID` starts: Fibonacci hashing of the key, mixed with
    /// the entity's address and the kind of key (what makes two IDs equal, so that equal IDs
    /// start at the same slot even if they came through different space objects).
    @inline(__always)
    private func home(_ objectID: ObjectID) -> Int {
        let space = objectID.space
        let entity = UInt64(UInt(bitPattern: Unmanaged.passUnretained(space.entity).toOpaque())) >> 4
        let mixed = (UInt64(bitPattern: objectID.key) ^ entity ^ (space.isTemporary ? 0x5555_5555 : 0)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> 32) & mask
    }

    /// The index of the slot holding `objectID`, or of the empty slot where it would go.
    @inline(__always)
    private func find(_ objectID: ObjectID) -> (index: Int, found: Bool) {
        let key = objectID.key
        var index = home(objectID)
        while true {
            let slot = slots[index]
            guard let object = slot.object else { return (index, false) }
            if slot.key == key && object._withUnsafeGuaranteedRef({ $0.objectID.space.isSame(as: objectID.space) }) {
                return (index, true)
            }
            index = (index + 1) & mask
        }
    }

    /// The object registered for `objectID`, or nil. Complexity: O(1) on average.
    subscript(_ objectID: ObjectID) -> EntityObject? {
        @inline(__always) get {
            let (index, found) = find(objectID)
            return found ? slots[index].object?.takeUnretainedValue() : nil
        }
    }

    /// Registers `object` under `objectID`, replacing what was registered under it.
    mutating func insert(_ object: EntityObject, for objectID: ObjectID) {
        if (count + 1) * 4 > slots.count * 3 { grow(to: slots.count * 2) }
        let (index, found) = find(objectID)
        let replaced = slots[index].object
        if !found { count += 1 }
        slots[index] = Slot(key: objectID.key, object: Unmanaged.passRetained(object))
        replaced?.release()
    }

    /// Removes what is registered under `objectID`; returns it.
    @discardableResult
    mutating func removeValue(forKey objectID: ObjectID) -> EntityObject? {
        var (index, found) = find(objectID)
        guard found, let removed = slots[index].object else { return nil }
        slots[index].object = nil
        count -= 1
        // Shift back the entries after it that would not be found across the hole.
        var next = (index + 1) & mask
        while let object = slots[next].object {
            // A registered object's ID is its key (see ObjectRegistry).
            let start = object._withUnsafeGuaranteedRef { home($0.objectID) }
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
        guard needed > slots.count else { return }
        var size = slots.count
        while size < needed { size *= 2 }
        grow(to: size)
    }

    private mutating func grow(to size: Int) {
        let old = slots
        slots = Array(repeating: Slot(key: 0, object: nil), count: size)
        mask = size - 1
        for slot in old {
            guard let object = slot.object else { continue }
            var index = object._withUnsafeGuaranteedRef { home($0.objectID) }
            while slots[index].object != nil { index = (index + 1) & mask }
            slots[index] = slot
        }
    }

    /// Forgets every object, keeping no capacity. `body` gets each object first, with whether the
    /// map held its only reference (then nothing else can see it again: it goes with the table).
    mutating func removeAll(_ body: (EntityObject, _ isOnlyReference: Bool) -> Void) {
        let old = slots
        slots = Array(repeating: Slot(key: 0, object: nil), count: 8)
        mask = 7
        count = 0
        for slot in old {
            guard let unmanaged = slot.object else { continue }
            var object = unmanaged.takeRetainedValue()
            body(object, isKnownUniquelyReferenced(&object))
        }
    }

    /// The registered objects, in no particular order (named as a dictionary's).
    var values: [EntityObject] {
        var result: [EntityObject] = []
        result.reserveCapacity(count)
        for slot in slots { if let object = slot.object { result.append(object.takeUnretainedValue()) } }
        return result
    }

    /// Whether some registered object satisfies `predicate`.
    func contains(where predicate: (EntityObject) throws -> Bool) rethrows -> Bool {
        for slot in slots { if let object = slot.object, try predicate(object.takeUnretainedValue()) { return true } }
        return false
    }

    /// Checks that every object is found under its own ID (its ID did not change behind the
    /// map's back) and that `count` is right, stopping with a message otherwise.
    func checkConsistency() {
        var seen = 0
        for index in slots.indices {
            guard let object = slots[index].object?.takeUnretainedValue() else { continue }
            seen += 1
            let objectID = object.objectID
            precondition(
                slots[index].key == objectID.key && find(objectID) == (index, true),
                "identity map: \(objectID) is not registered under its own ID")
        }
        precondition(seen == count, "identity map: \(seen) entries, count \(count)")
    }

    /// Calls `body` with every (ID, object) entry.
    func forEach(_ body: (ObjectID, EntityObject) throws -> Void) rethrows {
        for slot in slots {
            if let object = slot.object?.takeUnretainedValue() { try body(object.objectID, object) }
        }
    }
}
