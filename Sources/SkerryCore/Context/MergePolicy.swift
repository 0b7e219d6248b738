/// How a save resolves conflicts with the store: NSMergePolicy's role.
///
/// Conflicts come from optimistic locking (a row changed or was deleted in the store since the
/// context read it) and from uniqueness constraints (an inserted object has the constrained values
/// of an existing row).
public enum MergePolicy: Sendable, Hashable {
    /// The save fails and ``SkerryError/conflicts`` lists every conflict. The default.
    case error
    /// Property by property, the store's changes win over the object's; the object's changes to
    /// properties the store did not change are saved. An inserted object that collides with a
    /// constrained row takes that row's identity and values.
    case mergeByPropertyStoreTrump
    /// Property by property, the object's changes win; properties the object did not change take
    /// the store's values. An inserted object that collides with a constrained row takes that row's
    /// identity and writes every value it has, nil and values equal to the defaults included, as
    /// Core Data does (to an inserted object, every property is a change): an upsert.
    case mergeByPropertyObjectTrump
    /// The object's whole state replaces the row. An inserted object that collides with a
    /// constrained row takes its identity and replaces all its values.
    case overwrite
    /// The object's changes are dropped and it takes the store's values. An inserted object that
    /// collides with a constrained row takes that row's identity and values.
    case rollback
}

/// One conflict found by a save.
public struct SaveConflict: Sendable, CustomStringConvertible {
    /// What kind of conflict.
    public enum Kind: Sendable, Hashable {
        /// The row changed in the store since the context read it.
        case changedInStore
        /// The row was deleted from the store since the context read it.
        case deletedInStore
        /// An inserted object has the values of an existing row for this uniqueness constraint.
        case uniqueness(constraint: [String])
    }

    /// What kind of conflict.
    public let kind: Kind
    /// The object of the context.
    public let objectID: ObjectID
    /// The object's values in memory, by attribute name.
    public let objectValues: [String: AttributeValue]
    /// The values the context last read from the store (empty for an inserted object).
    public let cachedValues: [String: AttributeValue]
    /// The values in the store now (nil when the row is gone); for a uniqueness conflict, the
    /// values of the existing row.
    public let storedValues: [String: AttributeValue]?
    /// For a uniqueness conflict, the existing row (permanent) or the other inserted object
    /// (temporary) it collides with.
    public let conflictingObjectID: ObjectID?

    public var description: String {
        switch kind {
        case .changedInStore: return "\(objectID) changed in the store"
        case .deletedInStore: return "\(objectID) was deleted from the store"
        case .uniqueness(let constraint):
            return
                "\(objectID) has the same \(constraint.joined(separator: ", ")) as \(conflictingObjectID?.description ?? "another object")"
        }
    }
}
