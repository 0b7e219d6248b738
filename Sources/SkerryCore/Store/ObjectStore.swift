/// One row of an entity as read from a store: its key, its version and its attribute values
/// (indexed like the entity's attributes).
struct RowSnapshot: Sendable {
    let primaryKey: Int64
    let version: Int64
    let values: [AttributeValue]
    /// The keys in the row's foreign-key columns, one per relationship of
    /// `EntityRelationships.foreignKeyIndexes`.
    var foreignKeys: [Int64?] = []
}

/// A query on one entity, already resolved against it.
struct StoreQuery: Sendable {
    let entity: EntityDescription
    let predicate: ResolvedPredicate?
    let sortKeys: [ResolvedSortKey]
    /// The most rows to return; 0 for all.
    var limit: Int = 0
    /// Rows to skip first.
    var offset: Int = 0
}

/// An update of one row: the changed attributes and foreign keys only, guarded by the version the
/// context read.
struct RowUpdate {
    let objectID: ObjectID
    let expectedVersion: Int64
    let changes: [(index: Int, value: AttributeValue)]
    /// Changed foreign keys, by relationship index.
    var foreignKeyChanges: [(relationship: Int, target: ObjectID?)] = []
}

/// A new row: its attribute values and, per `EntityRelationships.foreignKeyIndexes`, the objects
/// its foreign keys point at (possibly other inserts of the same write).
struct RowInsert {
    let objectID: ObjectID
    let values: [AttributeValue]
    var foreignKeys: [ObjectID?] = []
}

/// The members of a to-many relationship, written in full for the side that stores it (a join
/// table's owner, or an ordered relationship's order column).
struct RelationshipWrite {
    let source: ObjectID
    let relationship: Int
    let members: [ObjectID]
}

/// Everything one save writes to one store.
struct StoreWrite {
    var inserts: [RowInsert] = []
    var updates: [RowUpdate] = []
    var relationshipWrites: [RelationshipWrite] = []
    /// Temporary IDs that name another object of the save (an insert folded into another, or one
    /// that became an existing row), so that references to them resolve.
    var aliases: [ObjectID: ObjectID] = [:]
    /// Deleted rows, each with the version the context read (nil when it never read the row).
    var deletes: [(objectID: ObjectID, expectedVersion: Int64?)] = []
}

/// The conflicts a write found; the write was rolled back.
struct StoreWriteConflicts: Error {
    /// The store that found them.
    var store: StoreIdentity?
    /// What an inserted row collided with.
    enum Existing {
        /// A row already in the store.
        case row(RowSnapshot)
        /// An earlier insert of the same write (its position in `StoreWrite.inserts`).
        case insert(index: Int)
    }

    /// Updated or deleted rows whose version changed, with the row as it is now (nil: gone).
    var versionConflicts: [(objectID: ObjectID, stored: RowSnapshot?)] = []
    /// Inserts that violate a uniqueness constraint, by position in `StoreWrite.inserts`.
    var uniquenessConflicts: [(insertIndex: Int, constraint: [String], existing: Existing)] = []

    var isEmpty: Bool { versionConflicts.isEmpty && uniquenessConflicts.isEmpty }
}

/// What contexts need of a store. Contexts never see SQL or connections: a store for another
/// database implements this protocol and nothing in `Context/` changes.
///
/// Every method is safe to call from any thread. Errors are ``SkerryError``s.
protocol ObjectStore: AnyObject, Sendable {
    /// The store's identity in this process.
    var identity: StoreIdentity { get }
    /// How the store was described when loaded.
    var storeDescription: StoreDescription { get }
    /// What the store executed since it was loaded.
    var statistics: StoreStatistics { get }

    /// The rows matching `query`, in its order.
    func fetchRows(_ query: StoreQuery) throws(SkerryError) -> [RowSnapshot]
    /// The primary keys of the rows matching `query`, in its order.
    func fetchPrimaryKeys(_ query: StoreQuery) throws(SkerryError) -> [Int64]
    /// How many rows match `query` (limit and offset applied).
    func count(_ query: StoreQuery) throws(SkerryError) -> Int
    /// The rows of `entity` with these primary keys that still exist, in no particular order.
    func fetchRows(_ entity: EntityDescription, primaryKeys: [Int64]) throws(SkerryError) -> [RowSnapshot]
    /// The keys of the objects related to each of `sourceKeys` through the relationship at
    /// `relationship` of `entity`, in the relationship's order.
    func fetchRelatedKeys(_ entity: EntityDescription, relationship: Int, sourceKeys: [Int64]) throws(SkerryError) -> [Int64: [Int64]]
    /// The values of the attributes at `attributeIndexes` of the rows matching `query`.
    func fetchColumns(_ query: StoreQuery, attributeIndexes: [Int]) throws(SkerryError) -> [[AttributeValue]]
    /// Writes `changes` in one transaction and, before committing, runs `next` (the next store's
    /// write of the same save), so that a save spanning stores commits only if every store's part
    /// succeeded. Returns the primary keys given to the inserted rows, in order.
    /// - Throws: ``StoreWriteConflicts`` listing every updated or deleted row whose version is not
    ///   the one expected and every insert that collides with a uniqueness constraint (the write is
    ///   rolled back); ``SkerryError`` for anything else.
    func write<T>(_ changes: StoreWrite, then next: () throws -> T) throws -> (insertedKeys: [Int64], next: T)
    /// The value of a raw SQL condition on each of `rows` (attribute values of `entity`), computed
    /// by the database as on stored rows, columns' types included, so that a raw predicate answers
    /// the same for unsaved objects as for rows. One statement for all the rows (or a few, for
    /// very many).
    func evaluate(condition: String, bindings: [AttributeValue], entity: EntityDescription,
                  rows: [[AttributeValue]]) throws(SkerryError) -> [Bool]
    /// Deletes the rows of `entity` matching `predicate` in one transaction, without loading them,
    /// and returns their primary keys.
    func batchDelete(_ entity: EntityDescription, predicate: ResolvedPredicate?) throws(SkerryError) -> [Int64]
    /// Deletes the rows of `entity` matching `predicate` with one statement and returns how many.
    func batchDeleteCount(_ entity: EntityDescription, predicate: ResolvedPredicate?) throws(SkerryError) -> Int
}
