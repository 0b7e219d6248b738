import Foundation
import Synchronization

/// The identity of a store within a process: one instance per loaded store, compared by reference.
package final class StoreIdentity: Sendable {
    /// The store's persistent identifier (a UUID recorded in the store when it was created).
    package let identifier: String
    package init(identifier: String) { self.identifier = identifier }
}

/// Source of temporary keys, unique within the process so that temporary IDs never collide
/// across contexts.
private let temporaryKeyCounter = Atomic<Int64>(0)

/// The identity of an object: its store, its entity and its row.
///
/// An object inserted in a context has a temporary ID until it is saved; the save gives it a
/// permanent ID, and from then on ``ObjectContext/object(with:)`` finds the same row from any
/// context of the stack. IDs are `Sendable`: pass IDs, never objects, between contexts.
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    package let store: StoreIdentity
    /// The object's entity.
    public let entity: EntityDescription
    /// Whether the ID is temporary: the object has not been saved yet.
    public let isTemporary: Bool
    /// The row's primary key when permanent; a process-unique number when temporary.
    package let key: Int64

    /// The permanent ID of the row with key `primaryKey` of `entity` in the store `store`.
    package init(store: StoreIdentity, entity: EntityDescription, primaryKey: Int64) {
        self.store = store
        self.entity = entity
        self.isTemporary = false
        self.key = primaryKey
    }

    /// A new temporary ID.
    static func temporary(store: StoreIdentity, entity: EntityDescription) -> ObjectID {
        ObjectID(store: store, entity: entity, temporaryKey: temporaryKeyCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    private init(store: StoreIdentity, entity: EntityDescription, temporaryKey: Int64) {
        self.store = store
        self.entity = entity
        self.isTemporary = true
        self.key = temporaryKey
    }

    /// The name of the object's entity.
    public var entityName: String { entity.name }

    public var description: String {
        "\(entity.name)/\(isTemporary ? "t" : "p")\(key)"
    }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.key == rhs.key && lhs.isTemporary == rhs.isTemporary && lhs.entity === rhs.entity && lhs.store === rhs.store
    }

    /// Hashes the key only (complemented for temporary IDs, so that temporary and permanent keys
    /// of one bulk insert do not share hash values): IDs of different entities with the same key
    /// are rare neighbours that `==` tells apart, and one combine keeps the identity map cheap.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isTemporary ? ~key : key)
    }
}
