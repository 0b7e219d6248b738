import Foundation

/// Who makes the writes a store records in its persistent history: the saving context's
/// transaction author and name. Set by the context around its writes (a task-local value, so
/// that the stores' write methods keep their signatures; it reaches synchronous code too).
package struct HistoryAuthor: Sendable {
    package var author: String?
    package var contextName: String?

    /// The author of the writes running now; nil outside a context's save or batch delete.
    @TaskLocal package static var current: HistoryAuthor?
}

/// Where a history request starts or ends in one store.
package enum HistoryBound: Sendable {
    /// After (fetch) or before (delete) the transaction with this number; nil: from the
    /// beginning (fetch) or nothing (delete).
    case number(Int64?)
    /// After (fetch) or before (delete) this moment.
    case date(Date)
}

/// One transaction as a store read it from its history.
package struct HistoryTransactionRecord: Sendable {
    package var number: Int64
    package var timestamp: Date
    package var author: String?
    package var contextName: String?
    package var bundleID: String
    package var processID: String
    package var changes: [PersistentHistoryChange]

    package init(
        number: Int64, timestamp: Date, author: String?, contextName: String?, bundleID: String, processID: String,
        changes: [PersistentHistoryChange]
    ) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.bundleID = bundleID
        self.processID = processID
        self.changes = changes
    }
}

extension PersistentHistoryChange {
    /// A change as a store read it from its history; `preservedValues`: a delete's tombstone.
    package init(
        changeID: Int64, changedObjectID: ObjectID, changeType: PersistentHistoryChangeType, updatedProperties: Set<String>?,
        preservedValues tombstoneValues: [String: AttributeValue]?
    ) {
        self.changeID = changeID
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.tombstoneValues = tombstoneValues
    }
}

/// One change a store records in its history: its kind, the object's entity and key, for an
/// update the properties it changed, for a delete the preserved values.
package struct HistoryEntry {
    package var type: PersistentHistoryChangeType
    package var entity: EntityDescription
    package var key: Int64
    package var properties: [String]? = nil
    /// For a delete, the preserved attributes' values (``AttributeDescription/preservesValueInHistoryOnDeletion``).
    package var tombstone: [(name: String, value: AttributeValue)]? = nil

    package init(
        type: PersistentHistoryChangeType, entity: EntityDescription, key: Int64, properties: [String]? = nil,
        tombstone: [(name: String, value: AttributeValue)]? = nil
    ) {
        self.type = type
        self.entity = entity
        self.key = key
        self.properties = properties
        self.tombstone = tombstone
    }

    /// The entries of a save's write: `keys` are the inserts' keys, `deleted` the entries of the
    /// rows its deletes removed (a row already gone was deleted, and recorded, by someone else),
    /// `unlinked` the updates of the objects whose links to deleted objects the store cleared
    /// (``unlinkedUpdates(_:of:)``), merged into the write's own update of the same object.
    package static func entries(
        of changes: StoreWrite, keys: [Int64], deleted: [HistoryEntry], unlinked: [HistoryEntry] = []
    ) -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        entries.reserveCapacity(changes.inserts.count + changes.updates.count + unlinked.count + deleted.count)
        for (insert, key) in zip(changes.inserts, keys) {
            entries.append(HistoryEntry(type: .insert, entity: insert.objectID.entity, key: key))
        }
        var updated: [ObjectKey: Int] = [:]
        for update in changes.updates {
            let entity = update.objectID.entity
            let names =
                update.changes.map { entity.attributes[$0.index].name }
                + update.relationshipChanges.map { entity.relationships[$0.index].name }
            if !unlinked.isEmpty { updated[ObjectKey(entity.name, update.objectID.key)] = entries.count }
            entries.append(HistoryEntry(type: .update, entity: entity, key: update.objectID.key, properties: names))
        }
        for entry in unlinked {
            guard let index = updated[ObjectKey(entry.entity.name, entry.key)] else {
                entries.append(entry)
                continue
            }
            for name in entry.properties ?? [] where entries[index].properties?.contains(name) == false {
                entries[index].properties?.append(name)
            }
        }
        entries += deleted
        return entries
    }

    /// An object, by its entity's name and key.
    private struct ObjectKey: Hashable {
        let entity: String
        let key: Int64
        init(_ entity: String, _ key: Int64) {
            self.entity = entity
            self.key = key
        }
    }

    /// The updates of the objects whose relationship `links.name` a store cleared of deleted
    /// objects (``StoreWritePlanner/danglingLinkDeletes(of:_:)``, one entry per object and
    /// relationship in `cleared`), as Core Data reports a relationship that lost an object: one
    /// update per object naming every such relationship, none for an object the write deletes.
    package static func unlinkedUpdates(_ cleared: [HistoryEntry], of changes: StoreWrite) -> [HistoryEntry] {
        guard !cleared.isEmpty else { return [] }
        let deleted = Set(changes.deletes.map { ObjectKey($0.objectID.entityName, $0.objectID.key) })
        return unlinkedUpdates(cleared) { deleted.contains(ObjectKey($0.name, $1)) }
    }

    /// The updates of ``unlinkedUpdates(_:of:)`` for a write whose deleted objects `isDeleted`
    /// tells (a batch delete's: by key in the deleted objects' hierarchy).
    package static func unlinkedUpdates(
        _ cleared: [HistoryEntry], excluding isDeleted: (_ entity: EntityDescription, _ key: Int64) -> Bool
    ) -> [HistoryEntry] {
        var updates: [HistoryEntry] = []
        var index: [ObjectKey: Int] = [:]
        for entry in cleared {
            let object = ObjectKey(entry.entity.name, entry.key)
            guard !isDeleted(entry.entity, entry.key) else { continue }
            guard let at = index[object] else {
                index[object] = updates.count
                updates.append(entry)
                continue
            }
            for name in entry.properties ?? [] where updates[at].properties?.contains(name) == false {
                updates[at].properties?.append(name)
            }
        }
        return updates
    }

    /// `entity`'s preserved attributes, the columns a store reads for a delete's tombstone; empty
    /// for most entities.
    package static func preservedAttributes(_ entity: EntityDescription) -> [AttributeDescription] {
        entity.storedAttributes.filter(\.preservesValueInHistoryOnDeletion)
    }
}

/// What a store that can keep persistent history offers (the SQLite and PostgreSQL stores, when
/// their description asks for history: ``ObjectStore/tracksPersistentHistory``).
package protocol PersistentHistoryStore: ObjectStore {
    /// The transactions after `bound`, in commit order.
    /// - Throws: ``SkerryError/Code/persistentHistoryTokenExpired`` when transactions after
    ///   `bound` were deleted.
    func fetchHistory(after bound: HistoryBound) throws(SkerryError) -> [HistoryTransactionRecord]
    /// Deletes the transactions before `bound`; returns how many.
    func deleteHistory(before bound: HistoryBound) throws(SkerryError) -> Int
    /// The number of the last transaction recorded (0 before the first).
    func lastHistoryNumber() throws(SkerryError) -> Int64
}

extension ObjectStore {
    /// The store as a history store, when it records history (no cast for the others).
    var historyStore: (any PersistentHistoryStore)? {
        guard tracksPersistentHistory else { return nil }
        return self as? any PersistentHistoryStore
    }
}

/// The process as history names it.
package enum HistoryProcess {
    package static let processID = String(ProcessInfo.processInfo.processIdentifier)
    package static let bundleID = ProcessInfo.processInfo.processName
}
