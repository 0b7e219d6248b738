import Foundation
import Synchronization

/// The identity of a store within a process: one instance per loaded store, compared by reference.
///
/// It also interns the ``ObjectIDSpace``s of the store's IDs, so that an ``ObjectID`` holds one
/// reference. The spaces refer back to it; the cycle is broken by ``forgetSpaces()`` when the
/// stack that loaded the store goes away (IDs kept elsewhere keep their space, and stay valid).
package final class StoreIdentity: Sendable {
    /// The store's persistent identifier (a UUID recorded in the store when it was created).
    package let identifier: String
    /// The spaces of each entity, permanent and temporary, by entity identity (each space holds
    /// its entity, so an identity cannot be reused while it is in the table).
    private let spaces = Mutex<[ObjectIdentifier: (permanent: ObjectIDSpace, temporary: ObjectIDSpace)]>([:])

    package init(identifier: String) { self.identifier = identifier }

    /// The space of the IDs of `entity` in this store: permanent ones, or temporary ones.
    /// Complexity: O(1), under a lock; hot paths keep the spaces they use.
    package func space(for entity: EntityDescription, temporary: Bool) -> ObjectIDSpace {
        spaces.withLock { spaces in
            if let pair = spaces[ObjectIdentifier(entity)] { return temporary ? pair.temporary : pair.permanent }
            let pair = (
                permanent: ObjectIDSpace(store: self, entity: entity, isTemporary: false),
                temporary: ObjectIDSpace(store: self, entity: entity, isTemporary: true)
            )
            spaces[ObjectIdentifier(entity)] = pair
            return temporary ? pair.temporary : pair.permanent
        }
    }

    /// Drops the interned spaces (and with them the cycle between this identity and its spaces).
    /// IDs made later get new spaces; they still compare equal to older IDs of the same row.
    package func forgetSpaces() {
        spaces.withLock { $0 = [:] }
    }
}

/// What the IDs of one entity in one store have in common: the store, the entity, and whether
/// they are temporary. Interned by ``StoreIdentity``, so that an ``ObjectID`` is one reference
/// and a key, and two IDs of the same space compare by key alone.
package final class ObjectIDSpace: Sendable {
    package let store: StoreIdentity
    package let entity: EntityDescription
    package let isTemporary: Bool

    fileprivate init(store: StoreIdentity, entity: EntityDescription, isTemporary: Bool) {
        self.store = store
        self.entity = entity
        self.isTemporary = isTemporary
    }

    /// Whether `other` names the same store, entity and kind of key.
    @inline(__always)
    func isSame(as other: ObjectIDSpace) -> Bool {
        self === other || (store === other.store && entity === other.entity && isTemporary == other.isTemporary)
    }
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
    /// The store, entity and kind of key.
    package let space: ObjectIDSpace
    /// The row's primary key when permanent; a process-unique number when temporary.
    package let key: Int64

    /// The ID with `key` in `space`. Complexity: O(1), no look-up.
    @inline(__always)
    package init(space: ObjectIDSpace, key: Int64) {
        self.space = space
        self.key = key
    }

    /// The permanent ID of the row with key `primaryKey` of `entity` in the store `store`.
    package init(store: StoreIdentity, entity: EntityDescription, primaryKey: Int64) {
        self.init(space: store.space(for: entity, temporary: false), key: primaryKey)
    }

    /// A new temporary ID in `space` (a temporary space).
    static func temporary(in space: ObjectIDSpace) -> ObjectID {
        ObjectID(space: space, key: temporaryKeyCounter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// A new temporary ID of `entity` in `store`.
    static func temporary(store: StoreIdentity, entity: EntityDescription) -> ObjectID {
        temporary(in: store.space(for: entity, temporary: true))
    }

    /// The store the object lives in.
    package var store: StoreIdentity { space.store }
    /// The object's entity.
    public var entity: EntityDescription { space.entity }
    /// Whether the ID is temporary: the object has not been saved yet.
    public var isTemporary: Bool { space.isTemporary }
    /// The name of the object's entity.
    public var entityName: String { entity.name }

    public var description: String {
        "\(entity.name)/\(isTemporary ? "t" : "p")\(key)"
    }

    @inline(__always)
    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.key == rhs.key && lhs.space.isSame(as: rhs.space)
    }

    /// Hashes the key only (complemented for temporary IDs, so that temporary and permanent keys
    /// of one bulk insert do not share hash values): IDs of different entities with the same key
    /// are rare neighbours that `==` tells apart, and one combine keeps sets of IDs cheap.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isTemporary ? ~key : key)
    }
}
