/// One object's row as a store (or, for a child context, the parent context) gives it: the
/// object's ID, its version, its attribute values and whatever relationship values came with it.
///
/// The store decides which relationships it can give cheaply (the SQLite store gives to-one
/// relationships kept in a column of the row); the others are `.notLoaded` and the context asks
/// for them with ``ObjectStore/fetchRelated(_:relationship:sourceKeys:)`` when they are read.
package struct RowSnapshot: Sendable {
    /// The object: the store's identity, the row's concrete entity (a store that keeps an entity
    /// hierarchy in one table names the sub-entity of each row) and its key.
    package let objectID: ObjectID
    /// The row's version, for optimistic locking.
    package let version: Int64
    /// The attribute values, indexed like `objectID.entity.attributes`.
    package let values: [AttributeValue]
    /// The relationship values, indexed like `objectID.entity.relationships`; `.notLoaded` where
    /// the store did not read one. Related IDs name the related object's concrete entity.
    package let relationships: [RelationshipValue]

    package init(objectID: ObjectID, version: Int64, values: [AttributeValue], relationships: [RelationshipValue]) {
        self.objectID = objectID
        self.version = version
        self.values = values
        self.relationships = relationships
    }

    /// The row's key.
    package var primaryKey: Int64 { objectID.key }
}

/// A query on one entity, already resolved against it.
package struct StoreQuery: Sendable {
    package let entity: EntityDescription
    package let predicate: ResolvedPredicate?
    package let sortKeys: [ResolvedSortKey]
    /// The most rows to return; 0 for all.
    package var limit: Int = 0
    /// Rows to skip first.
    package var offset: Int = 0
    /// Whether rows of the entity's sub-entities match too (each returned under its own entity);
    /// false reads the entity's own rows only.
    package var includesSubentities: Bool = true

    package init(
        entity: EntityDescription, predicate: ResolvedPredicate?, sortKeys: [ResolvedSortKey],
        limit: Int = 0, offset: Int = 0
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.limit = limit
        self.offset = offset
    }
}

/// A new object to write.
package struct RowInsert {
    /// Its temporary ID (the store gives it a key).
    package let objectID: ObjectID
    /// Its attribute values, indexed like its entity's attributes (every attribute; the stored
    /// ones first), read in place from the object (see ``RowValues``).
    package let values: RowValues
    /// Its relationships, indexed like its entity's relationships: `.toOne(nil)` and
    /// `.toMany([])` where empty. Related IDs may be temporary IDs of other inserts of the write.
    package let relationships: [RelationshipValue]

    package init(objectID: ObjectID, values: RowValues, relationships: [RelationshipValue]) {
        self.objectID = objectID
        self.values = values
        self.relationships = relationships
    }

    package init(objectID: ObjectID, values: [AttributeValue], relationships: [RelationshipValue]) {
        self.init(objectID: objectID, values: RowValues(values), relationships: relationships)
    }
}

/// A change of one existing row: the changed attributes and relationships only, guarded by the
/// version the context read.
package struct RowUpdate {
    package let objectID: ObjectID
    package let expectedVersion: Int64
    /// The changed attributes, with their new values.
    package let changes: [(index: Int, value: AttributeValue)]
    /// The changed relationships, with their whole new value (every member of a to-many one, in
    /// order for an ordered one). Both sides of a pair come in the same write when both objects
    /// are saved; the store writes whichever side it keeps. An update may carry no change at all
    /// to what the store keeps for this row: its version is still checked and bumped, so that
    /// other contexts hear of the change and a row deleted meanwhile is a conflict.
    package let relationshipChanges: [(index: Int, value: RelationshipValue)]
}

/// Everything one save writes to one store, as logical changes: the store decides how to keep
/// them (columns, join tables, order columns, documents...).
package struct StoreWrite {
    package var inserts: [RowInsert] = []
    package var updates: [RowUpdate] = []
    /// Temporary IDs that name another object of the save (an insert folded into another, or one
    /// that became an existing row), so that references to them resolve.
    package var aliases: [ObjectID: ObjectID] = [:]
    /// Deleted rows, each with the version the context read (nil when it never read the row).
    /// The store also forgets every relationship link the row took part in that it keeps outside
    /// the row.
    package var deletes: [(objectID: ObjectID, expectedVersion: Int64?)] = []
}

/// The conflicts a write found; the write was rolled back.
package struct StoreWriteConflicts: Error {
    /// The store that found them.
    package var store: StoreIdentity?
    /// What an inserted row collided with.
    package enum Existing {
        /// A row already in the store.
        case row(RowSnapshot)
        /// An earlier insert of the same write (its position in `StoreWrite.inserts`).
        case insert(index: Int)
    }

    /// Updated or deleted rows whose version changed, with the row as it is now (nil: gone).
    package var versionConflicts: [(objectID: ObjectID, stored: RowSnapshot?)] = []
    /// Inserts that violate a uniqueness constraint, by position in `StoreWrite.inserts`.
    package var uniquenessConflicts: [(insertIndex: Int, constraint: [String], existing: Existing)] = []

    package init() {}

    package var isEmpty: Bool { versionConflicts.isEmpty && uniquenessConflicts.isEmpty }
}

/// Resolves, inside a store's write transaction, the conflicts the write found
/// (``ObjectStore/write(_:resolving:then:)``): returns the write to run instead, or throws to end
/// the save (the store rolls back and rethrows the error).
package typealias StoreWriteResolver = (_ found: StoreWriteConflicts) throws -> StoreWrite

/// The last step of a store's part of a save, run before it commits, which takes a lock shared
/// with other processes (a PostgreSQL store's history lock, held until the commit): see
/// ``ObjectStore/write(_:resolving:then:)``.
package struct StoreWriteFinish {
    /// The order in which a save runs the steps of its stores: the store's identifier, recorded
    /// in the store, so the same in every process whichever order it loaded its stores in.
    package let order: String
    /// The step, on the store's open transaction; throws ``SkerryError``.
    package let run: () throws -> Void

    package init(order: String, run: @escaping () throws -> Void) {
        self.order = order
        self.run = run
    }
}

/// What contexts need of a store. Contexts never see SQL, tables, columns or connections: they
/// hand a store logical changes ("object X's relationship R now holds these IDs") and receive
/// rows with IDs; a store for another database implements this protocol and nothing in
/// `Context/` changes. A store builds the ``ObjectID``s it returns with
/// ``ObjectID/init(store:entity:primaryKey:)`` from its ``identity``.
///
/// Every method is safe to call from any thread. Errors are ``SkerryError``s.
package protocol ObjectStore: AnyObject, Sendable {
    /// The store's identity in this process.
    var identity: StoreIdentity { get }
    /// How the store was described when loaded.
    var storeDescription: StoreDescription { get }
    /// What the store executed since it was loaded.
    var statistics: StoreStatistics { get }
    /// Whether the store records persistent history (``PersistentHistoryStore``). The default:
    /// false.
    var tracksPersistentHistory: Bool { get }

    /// The rows matching `query`, in its order.
    func fetchRows(_ query: StoreQuery) throws(SkerryError) -> [RowSnapshot]
    /// Reads the rows matching `query`, in its order, handing each to `body` as it is read: its
    /// version, its attribute values in storage laid out by its entity's `valueLayout`, and its
    /// relationships as in ``RowSnapshot``. The storage comes from `makeStorage`, called with the
    /// row's ID (its entity's, for a row of a sub-entity), which it takes (`consuming`: the caller
    /// keeps it in the object it makes, with no retain and release per row), before the row's
    /// values are read: it holds no value, and stays the caller's; the store sets every attribute
    /// that has a value (transient ones: their defaults) before it calls `body`, once, for the
    /// storage `makeStorage` just returned (the row is the one of that ID). Saves building every row's
    /// values first, and lets the caller read them straight into its object; a store may rely on
    /// the default, which reads ``fetchRows(_:)-(StoreQuery)``. If reading fails midway, the rows
    /// handed over stay handed over, and the storage of the row being read (holding the values
    /// read so far, each with its bit set) is not handed over: the caller releases it. A store
    /// that knows how many rows follow before it reads the first (a PostgreSQL result) passes
    /// that number to `reserve`, once, first, so that the caller makes room for them at once.
    func forEachRow(
        _ query: StoreQuery,
        reserve: (_ rowCount: Int) -> Void,
        _ makeStorage: (_ objectID: consuming ObjectID) -> UnsafeMutableRawPointer,
        _ body: (_ version: Int64, _ storage: UnsafeMutableRawPointer, _ relationships: [RelationshipValue]) -> Void) throws(SkerryError)
    /// The keys of the rows matching `query`, in its order.
    func fetchObjectIDs(_ query: StoreQuery) throws(SkerryError) -> [ObjectID]
    /// How many rows match `query` (limit and offset applied).
    func count(_ query: StoreQuery) throws(SkerryError) -> Int
    /// The rows of these objects (all of `entity`, or of its sub-entities) that still exist, in
    /// no particular order.
    func fetchRows(_ entity: EntityDescription, primaryKeys: [Int64]) throws(SkerryError) -> [RowSnapshot]
    /// The objects related to each of `sourceKeys` (rows of `entity`) through the relationship at
    /// `relationship` of `entity`, in the relationship's order; sources with none may be absent.
    func fetchRelated(_ entity: EntityDescription, relationship: Int, sourceKeys: [Int64]) throws(SkerryError) -> [Int64: [ObjectID]]
    /// The values of the attributes at `attributeIndexes` of the rows matching `query`.
    func fetchColumns(_ query: StoreQuery, attributeIndexes: [Int]) throws(SkerryError) -> [[AttributeValue]]
    /// Writes `changes` in one transaction and, before committing, runs `next` (the next store's
    /// write of the same save), so that a save spanning stores commits only if every store's part
    /// succeeded. Returns the keys given to the inserted rows, in order.
    ///
    /// A store whose write must end with a step that takes a lock shared with other processes
    /// (a PostgreSQL store's history lock) hands that step to `next` rather than running it
    /// itself; `next` must run it before it returns (the store commits after `next`). The save
    /// runs the steps of all its stores after every store's statements, in the steps' order
    /// (``StoreWriteFinish/order``), so that no store holds such a lock while another store's
    /// statements wait for rows, and stacks that list the stores in different orders take the
    /// locks in one order.
    ///
    /// When the write finds conflicts and `resolve` is given, the store undoes the write's
    /// statements, not the transaction, keeping the rows it found from changing again (SQLite: its
    /// write lock is held until the commit; PostgreSQL: the rows are locked before the statements
    /// run), and runs the write `resolve` returns instead, in the same transaction, until a write
    /// finds no conflict or `resolve` throws; the keys returned are those of the write that ran.
    /// - Throws: ``StoreWriteConflicts`` listing every updated or deleted row whose version is not
    ///   the one expected and every insert that collides with a uniqueness constraint (the write is
    ///   rolled back); what `resolve` throws; ``SkerryError`` for anything else.
    func write<T>(_ changes: StoreWrite, resolving resolve: StoreWriteResolver?, then next: (_ finish: StoreWriteFinish?) throws -> T)
        throws -> (insertedKeys: [Int64], next: T)
    /// The value of a raw SQL condition on each of `rows` (attribute values of `entity`), computed
    /// by the database as on stored rows, columns' types included, so that a raw predicate answers
    /// the same for unsaved objects as for rows. One statement for all the rows (or a few, for
    /// very many).
    func evaluate(
        condition: String, bindings: [AttributeValue], entity: EntityDescription,
        rows: [[AttributeValue]]
    ) throws(SkerryError) -> [Bool]
    /// Deletes the rows of `entity` (and of its sub-entities when `includesSubentities`) matching
    /// `predicate` in one transaction, without loading them, and returns their IDs.
    func batchDelete(_ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool) throws(SkerryError)
        -> [ObjectID]
    /// Deletes the rows of `entity` (and of its sub-entities when `includesSubentities`) matching
    /// `predicate` with one statement per table and returns how many.
    func batchDeleteCount(_ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool) throws(SkerryError) -> Int
    /// Sets `assignments` on the rows of `entity` (and of its sub-entities when
    /// `includesSubentities`) matching `predicate`, in one transaction, without loading them
    /// (``BatchUpdateRequest``): each row's version goes up, as a save's update does; the
    /// persistent history (when recorded) gets an update of each row naming the attributes set,
    /// and other instances hear of them as of a save (PostgreSQL's change notifications).
    /// Values computed from the rows are checked first: a row that would get a value its
    /// attribute cannot hold fails the update, and so does one that breaks a uniqueness
    /// constraint; nothing is then written.
    /// - Returns: how many rows were updated, and their IDs when `returningIDs` (else none).
    /// - Throws: ``SkerryError/Code/missingRequiredValue`` or ``SkerryError/Code/wrongValueType``
    ///   naming a row whose computed value does not fit; ``SkerryError/Code/constraintViolation``;
    ///   the database's errors.
    func batchUpdate(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool, assignments: [BatchUpdateAssignment],
        returningIDs: Bool
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID])
    /// Reserves `count` primary keys of `entity` for objects not saved yet, durably: no insert
    /// gets them later (in this process or another), and a ``write(_:resolving:then:)`` whose insert carries
    /// a permanent ID (one built from a reserved key) inserts the row under that key.
    /// (`ObjectContext.obtainPermanentIDs(for:)`.) The default throws: a store kind that cannot
    /// reserve keys says so.
    func reservePrimaryKeys(_ entity: EntityDescription, count: Int) throws(SkerryError) -> [Int64]
    /// The next key each entity's sequence (its hierarchy's) hands out, by entity name, for
    /// every entity of the store: past every key it ever handed out or reserved (deleted
    /// objects' and ``reservePrimaryKeys(_:count:)``'s included), for a copy of the store
    /// (``importWrites(_:keyFloors:)``) to go on from. The default is empty (no sequence).
    func nextPrimaryKeys() throws(SkerryError) -> [String: Int64]
    /// The keys of `entity`'s own rows (not its sub-entities') greater than `key`, in increasing
    /// order, at most `limit` of them: a copy of the store reads its keys page by page
    /// (`StoreCoordinator.migratePersistentStore(_:to:)`). The default reads every key of the
    /// entity and keeps the page.
    func fetchKeys(_ entity: EntityDescription, after key: Int64, limit: Int) throws(SkerryError) -> [Int64]
    /// Writes the rows of another store into this one, for
    /// `StoreCoordinator.migratePersistentStore(_:to:)`: every ``StoreWrite`` `next` returns, in
    /// order, until it returns nil, all in one transaction, rolled back whole when anything fails
    /// (`next` throwing included). Inserts carry permanent IDs, whose keys the rows keep; later
    /// inserts get keys past every key written and at or past `keyFloors` (asked once, after the
    /// last write: by entity name, the next key of the copied store's sequence of that entity,
    /// ``nextPrimaryKeys()``), so that no key the copied store handed out is handed out again.
    /// Records no persistent history and no change for other processes to hear of. The default
    /// throws ``SkerryError/Code/invalidArgument``: a store kind that cannot take a copy says so.
    /// - Throws: ``StoreWriteConflicts`` for an insert that collides with a uniqueness constraint
    ///   (or an update whose version is not the one expected); ``SkerryError`` for anything else.
    func importWrites(_ next: () throws -> StoreWrite?, keyFloors: () throws -> [String: Int64]) throws
    /// Closes the store's connections once it was removed from its coordinator
    /// (`StoreCoordinator.remove(_:)`): work already running ends first; later work throws
    /// ``SkerryError/Code/noStore``. Stores without connections of their own do nothing (the default).
    func close()
    /// Starts handing the stack what other processes (or other stacks) saved to this store, for
    /// stores shared that way that were asked to: `deliver` receives each such save's IDs, and
    /// word of saves it can no longer name, on a thread of the store's own. Called once, after
    /// the store was added. Stores that cannot learn of others' saves do nothing (the default).
    func deliverSavesOfOthers(to deliver: @escaping @Sendable (SavesOfOthers) -> Void)
}

/// What a store learned of the saves other processes made to it
/// (``ObjectStore/deliverSavesOfOthers(to:)``).
package enum SavesOfOthers: Sendable {
    /// One save, by the IDs of the objects it changed.
    case saved(StoreChanges)
    /// Saves were made that the store cannot name any more (they left its record of changes
    /// before it read them): any object may have changed.
    case missed
}

extension ObjectStore {
    package func close() {}

    package var tracksPersistentHistory: Bool { false }

    package func reservePrimaryKeys(_ entity: EntityDescription, count: Int) throws(SkerryError) -> [Int64] {
        throw SkerryError(
            .invalidArgument, "\(storeDescription) cannot give permanent IDs to objects before they are saved; save them instead.",
            entityName: entity.name)
    }

    package func deliverSavesOfOthers(to deliver: @escaping @Sendable (SavesOfOthers) -> Void) {}

    package func nextPrimaryKeys() throws(SkerryError) -> [String: Int64] { [:] }

    package func fetchKeys(_ entity: EntityDescription, after key: Int64, limit: Int) throws(SkerryError) -> [Int64] {
        var query = StoreQuery(entity: entity, predicate: nil, sortKeys: [])
        query.includesSubentities = false
        return Array(try fetchObjectIDs(query).map(\.key).filter { $0 > key }.sorted().prefix(limit))
    }

    package func importWrites(_ next: () throws -> StoreWrite?, keyFloors: () throws -> [String: Int64]) throws {
        throw SkerryError(.invalidArgument, "\(storeDescription) cannot take the objects of another store.")
    }
}

/// Opens stores of a kind implemented outside this module (see ``StoreDescription/storeFactory``):
/// the stack calls it when it loads a description that carries one.
package protocol ObjectStoreFactory: AnyObject, Sendable {
    /// How the store is named in messages and in the description's `description` (never with a
    /// password).
    var storeLabel: String { get }
    /// Opens (creating or migrating as needed) the store `description` describes.
    /// - Parameters:
    ///   - description: the store's description.
    ///   - model: the stack's model.
    ///   - entities: the entities of `model` this store holds.
    ///   - events: where the store reports its load, migration steps and (when traced)
    ///     statements, as the SQLite store does; nil when nobody listens.
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` or ``SkerryError/Code/modelMismatch``, as the
    ///   SQLite store does.
    func makeStore(
        description: StoreDescription, model: ObjectModel, entities: [EntityDescription],
        events: EventHub?
    ) throws(SkerryError) -> any ObjectStore
    /// Whether `other` describes the store this factory opens (the same place), for
    /// `StoreCoordinator.destroyPersistentStore(with:)` to find it among the loaded stores.
    func describesSameStore(as other: StoreDescription) -> Bool
    /// Whether anything is there where this factory opens a store (for PostgreSQL, the store's
    /// schema): a migration that fails destroys the store it made only when nothing was there.
    func placeExists() throws(SkerryError) -> Bool
    /// Deletes the store this factory opens, with everything in it
    /// (`StoreCoordinator.destroyPersistentStore(with:)`); a store that does not exist is no error.
    func destroyStore() throws(SkerryError)
    /// What is there where this factory opens a store, read without changing anything: nil when
    /// no Skerry store is there; else the model version it was written with and an entity of
    /// `entities` whose table holds rows (for `StoreCoordinator.migratePersistentStore(_:to:)`,
    /// which refuses such a destination before opening it).
    func existingStore(entities: [EntityDescription]) throws(SkerryError) -> ExistingStore?
}

extension ObjectStore {
    package func forEachRow(
        _ query: StoreQuery,
        reserve: (_ rowCount: Int) -> Void,
        _ makeStorage: (_ objectID: consuming ObjectID) -> UnsafeMutableRawPointer,
        _ body: (_ version: Int64, _ storage: UnsafeMutableRawPointer, _ relationships: [RelationshipValue]) -> Void
    ) throws(SkerryError) {
        forEachRow(of: try fetchRows(query), reserve: reserve, makeStorage, body)
    }

    /// Hands `rows` (already read, each decoded as its own entity) to a `forEachRow` caller: the
    /// count first, then each row's values stored into the storage made for its ID. For stores
    /// whose rows of a query come as snapshots (the default above, the family reads of the
    /// SQLite and PostgreSQL stores).
    package func forEachRow(
        of rows: [RowSnapshot],
        reserve: (_ rowCount: Int) -> Void,
        _ makeStorage: (_ objectID: consuming ObjectID) -> UnsafeMutableRawPointer,
        _ body: (_ version: Int64, _ storage: UnsafeMutableRawPointer, _ relationships: [RelationshipValue]) -> Void
    ) {
        reserve(rows.count)
        for row in rows {
            let storage = makeStorage(row.objectID)
            row.objectID.entity.valueLayout.store(row.values, into: storage)
            body(row.version, storage, row.relationships)
        }
    }
}
