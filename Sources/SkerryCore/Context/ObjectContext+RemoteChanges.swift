import Foundation

/// Core Data's `NSInsertedObjectsKey`: the key of inserted objects' IDs in the changes given to
/// ``ObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
public let InsertedObjectsKey = "inserted"
/// Core Data's `NSUpdatedObjectsKey`: the key of updated objects' IDs.
public let UpdatedObjectsKey = "updated"
/// Core Data's `NSDeletedObjectsKey`: the key of deleted objects' IDs.
public let DeletedObjectsKey = "deleted"

extension ObjectContext {
    /// Merges changes made elsewhere (a batch delete, another process, a saved list of IDs) into
    /// each of `contexts`, on each context's queue: Core Data's
    /// `mergeChanges(fromRemoteContextSave:into:)`.
    ///
    /// ```swift
    /// let result = try context.execute(batchDelete)
    /// ObjectContext.mergeChanges(
    ///     fromRemoteContextSave: [DeletedObjectsKey: result.result as? [ObjectID] ?? []], into: [context])
    /// ```
    ///
    /// Each context merges as ``mergeChanges(_:)`` does: deleted objects are dropped, updated ones
    /// refreshed (their own pending changes kept on top), and it waits for each context's queue
    /// (from inside a block of one of them, that context merges at once).
    ///
    /// The changes reach the child contexts of `contexts` too, and their children, each after its
    /// parent ("into multiple contexts as well as nested contexts", as Core Data's documentation
    /// says): a context listed twice, or listed beside one of its ancestors, merges once.
    ///
    /// Like Core Data's, it cannot throw: input it cannot read (a key other than
    /// ``InsertedObjectsKey``, ``UpdatedObjectsKey`` and ``DeletedObjectsKey``, a value that is not
    /// a collection of ``ObjectID``s or of their URIs, a URI of no store here) is recorded on each
    /// context (``recordedError``, so that its next save fails with it), and nothing is merged
    /// into it.
    /// - Parameters:
    ///   - changeNotificationData: object IDs (or their `uriRepresentation()`s) under the three keys.
    ///   - contexts: the contexts to bring up to date, with their child contexts.
    public static func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [ObjectContext]) {
        var merged: Set<ObjectIdentifier> = []
        for context in contexts.flatMap(\.selfAndDescendants) where merged.insert(ObjectIdentifier(context)).inserted {
            context.performAndWait {
                do {
                    context.mergeChanges(try context.storeChanges(fromRemoteContextSave: changeNotificationData))
                } catch {
                    context.recordError(error)
                }
            }
        }
    }

    /// Reads Core Data's change dictionary as this context's store changes.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for an unknown key or a value of another
    ///   kind; ``SkerryError/Code/unknownObjectURI`` for a URI that names no object here.
    private func storeChanges(fromRemoteContextSave data: [AnyHashable: Any]) throws(SkerryError) -> StoreChanges {
        var changes = StoreChanges()
        for (key, value) in data {
            let ids = try objectIDs(in: value, key: key)
            switch key.base as? String {
            case InsertedObjectsKey: changes.inserted.formUnion(ids)
            case UpdatedObjectsKey: changes.updated.formUnion(ids)
            case DeletedObjectsKey: changes.deleted.formUnion(ids)
            default:
                throw SkerryError(
                    .invalidArgument,
                    "'\(key)' is not a key of merged changes: use InsertedObjectsKey, UpdatedObjectsKey or DeletedObjectsKey.")
            }
        }
        return changes
    }

    /// The object IDs in `value`: a collection of ``ObjectID``s or of their URIs.
    private func objectIDs(in value: Any, key: AnyHashable) throws(SkerryError) -> [ObjectID] {
        let elements: [Any]
        switch value {
        case let ids as [ObjectID]: return ids
        case let ids as Set<ObjectID>: return Array(ids)
        case let array as [Any]: elements = array
        case let set as Set<AnyHashable>: elements = set.map(\.base)
        case let array as NSArray: elements = array.map { $0 }
        case let set as NSSet: elements = set.map { $0 }
        default:
            throw SkerryError(.invalidArgument, "The value of '\(key)' must be an array or set of object IDs or their URIs, not \(value).")
        }
        var ids: [ObjectID] = []
        ids.reserveCapacity(elements.count)
        for element in elements {
            switch element {
            case let id as ObjectID: ids.append(id)
            case let uri as URL: ids.append(try objectID(forURIRepresentation: uri))
            default: throw SkerryError(.invalidArgument, "\(element) under '\(key)' is neither an object ID nor an object ID's URI.")
            }
        }
        return ids
    }
}
