/// The members of a loaded to-many relationship, in order (the order of an ordered
/// relationship; for an unordered one, the order they were read or added in).
///
/// Past ``indexedCount`` members, a list being changed keeps a hash set of its members, so that
/// adding a member (or finding it already there) costs O(1) rather than a scan, and a removal
/// leaves a tombstone, compacted away once they are half the entries, rather than moving every
/// member after it: adding or removing n members one at a time costs O(n) in all, not O(n^2).
/// A list that is only read (most are) never builds the set.
package struct ObjectIDList: Sendable {
    /// The members, and the removed members not compacted away yet (only with `index`); no ID
    /// twice.
    private var storage: [ObjectID]
    /// The members (nil until the list, at least `indexedCount` long, is changed).
    private var index: Set<ObjectID>?
    /// The entries of `storage` that are no longer members (empty without `index`).
    private var removed: Set<ObjectID> = []

    /// Lists shorter than this are scanned: no set is built for them.
    static let indexedCount = 32

    /// The list of `ids` (no ID twice).
    package init(_ ids: [ObjectID] = []) {
        storage = ids
    }

    /// The members, in order. O(1), or O(n) after removals from a long list not compacted yet.
    package var ids: [ObjectID] {
        removed.isEmpty ? storage : storage.filter { !removed.contains($0) }
    }

    /// The number of members.
    package var count: Int { storage.count - removed.count }

    package var isEmpty: Bool { count == 0 }

    /// The first member.
    package var first: ObjectID? { removed.isEmpty ? storage.first : storage.first { !removed.contains($0) } }

    /// Whether `id` is a member. O(1) once the list keeps its set, O(n) before.
    package func contains(_ id: ObjectID) -> Bool {
        if let index { return index.contains(id) }
        return storage.contains(id)
    }

    /// Builds the set of members of a long list about to change.
    private mutating func indexIfLong() {
        guard index == nil, storage.count >= Self.indexedCount else { return }
        index = Set(storage)
    }

    /// Drops the removed entries from `storage`.
    private mutating func compact() {
        guard !removed.isEmpty else { return }
        let removed = self.removed
        self.removed = []
        storage.removeAll { removed.contains($0) }
    }

    /// Adds `id` at the end unless it is a member. Returns whether it was added.
    @discardableResult
    package mutating func append(_ id: ObjectID) -> Bool {
        indexIfLong()
        if index != nil {
            guard index!.insert(id).inserted else { return false }
            // A removed entry for it keeps its old place: drop the tombstones first.
            if removed.contains(id) { compact() }
        } else if storage.contains(id) {
            return false
        }
        storage.append(id)
        return true
    }

    /// Puts `id` at `position` (clamped to the list), adding it, or moving it there when it is
    /// a member already.
    package mutating func insert(_ id: ObjectID, at position: Int) {
        let position = Swift.min(Swift.max(position, 0), count)
        if position == count && !contains(id) {
            append(id)
            return
        }
        compact()
        if let existing = storage.firstIndex(of: id) {
            storage.remove(at: existing)
        } else {
            index?.insert(id)
        }
        storage.insert(id, at: Swift.min(position, storage.count))
    }

    /// The member at `position`, when the list can say without a scan (no removal waits to be
    /// compacted); nil otherwise or outside the list.
    package func member(at position: Int) -> ObjectID? {
        guard removed.isEmpty, storage.indices.contains(position) else { return nil }
        return storage[position]
    }

    /// The position of member `id`; nil when it is not a member.
    package func firstIndex(of id: ObjectID) -> Int? {
        guard contains(id) else { return nil }
        guard !removed.isEmpty else { return storage.firstIndex(of: id) }
        var position = 0
        for entry in storage where !removed.contains(entry) {
            if entry == id { return position }
            position += 1
        }
        return nil
    }

    /// Removes `id`. Returns whether it was a member.
    @discardableResult
    package mutating func remove(_ id: ObjectID) -> Bool {
        indexIfLong()
        guard index != nil else {
            guard let position = storage.firstIndex(of: id) else { return false }
            storage.remove(at: position)
            return true
        }
        guard index!.remove(id) != nil else { return false }
        if storage.last == id && removed.isEmpty {
            storage.removeLast()
        } else {
            removed.insert(id)
            if removed.count * 2 > storage.count { compact() }
        }
        return true
    }
}

extension ObjectIDList: Equatable {
    /// Lists are equal when they hold the same members in the same order.
    package static func == (lhs: ObjectIDList, rhs: ObjectIDList) -> Bool {
        lhs.count == rhs.count && lhs.ids == rhs.ids
    }
}

extension ObjectIDList: ExpressibleByArrayLiteral {
    package init(arrayLiteral elements: ObjectID...) {
        self.init(elements)
    }
}

extension ObjectIDList: Sequence {
    package func makeIterator() -> IndexingIterator<[ObjectID]> { ids.makeIterator() }
    package var underestimatedCount: Int { count }
}
