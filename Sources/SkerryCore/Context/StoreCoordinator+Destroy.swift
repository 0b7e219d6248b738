import Foundation

/// Core Data's `NSPersistentStoreForceDestroyOption`, for
/// ``StoreCoordinator/destroyPersistentStore(at:ofType:options:)``: accepted, without effect
/// (Skerry takes no locks it could override; a store this coordinator has loaded is removed with
/// or without it).
public let PersistentStoreForceDestroyOption = "NSPersistentStoreForceDestroyOption"

extension StoreCoordinator {
    /// Deletes the store at `url`: Core Data's `destroyPersistentStore(at:ofType:options:)`.
    ///
    /// ```swift
    /// try container.persistentStoreCoordinator.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: nil)
    /// ```
    ///
    /// For a SQLite store it removes the database file and the files SQLite keeps beside it
    /// (`-wal`, `-shm`, `-journal`); files that are not there are skipped, so destroying a store
    /// that does not exist succeeds. An in-memory store (``InMemoryStoreType``, or a SQLite store at
    /// `/dev/null`) has no files.
    ///
    /// Every store this coordinator has loaded at `url` (whatever its type) is removed from it
    /// first, as ``remove(_:)`` does (its connections are closed, an in-memory store's data is
    /// gone; the coordinator's contexts then get ``SkerryError/Code/noStore`` for its entities and
    /// objects), so that Core Data's reset loop ports as written, in-memory stores included (they
    /// are listed with the URL they were described with, else `/dev/null`):
    ///
    /// ```swift
    /// for store in coordinator.persistentStores {
    ///     try coordinator.destroyPersistentStore(at: store.url!, ofType: store.type, options: nil)
    /// }
    /// try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
    /// ```
    ///
    /// The other coordinators (other stacks) of the process that have the SQLite file loaded lose
    /// it too, before the files go: their contexts get ``SkerryError/Code/noStore`` rather than
    /// go on reading and writing a deleted database, and a ``PersistentStack`` among them loads
    /// the store again (a new, empty one) on its next ``PersistentStack/loadPersistentStores()``.
    /// Other processes are not told: do not destroy a store another process has open.
    /// - Parameters:
    ///   - url: the store's database file (for an in-memory store, the URL
    ///     ``persistentStores`` lists).
    ///   - storeType: ``SQLiteStoreType`` or ``InMemoryStoreType``.
    ///   - options: the options the store was added with; Skerry needs none of them.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for another store type;
    ///   ``SkerryError/Code/underlyingError`` when a file cannot be removed (the files removed
    ///   before it stay removed).
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws(SkerryError) {
        switch storeType {
        case SQLiteStoreType, InMemoryStoreType: break
        default:
            throw SkerryError(
                .invalidArgument,
                "Store type '\(storeType)' is not one Skerry destroys at a URL: use SQLiteStoreType or InMemoryStoreType "
                    + "(a PostgreSQL store: destroyPersistentStore(with:) and its description).")
        }
        let file = url.standardizedFileURL
        for loaded in persistentStores where loaded.url?.standardizedFileURL.path == file.path {
            try remove(loaded)
        }
        guard storeType == SQLiteStoreType, file.path != "/dev/null" else { return }
        try removeFromOtherCoordinators(sqliteFileAt: file.path)
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = file.path + suffix
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                var failure = SkerryError(.underlyingError, "Could not remove \(path): \(error.localizedDescription)")
                failure.underlyingError = error
                throw failure
            }
        }
    }

    /// Deletes the store `description` describes, of any kind: Core Data's
    /// `destroyPersistentStore(at:type:options:)` with a description for the store, as
    /// ``addPersistentStore(with:)`` takes one, so that it reaches PostgreSQL stores too.
    ///
    /// ```swift
    /// try coordinator.destroyPersistentStore(with: .postgres(connectionString, schema: "tenant_42"))
    /// ```
    ///
    /// A SQLite or in-memory store is destroyed as ``destroyPersistentStore(at:ofType:options:)``
    /// destroys it. A PostgreSQL store is destroyed the way Core Data destroys a file: its schema
    /// is dropped with everything in it (tables, key sequences, functions, triggers, history),
    /// under the lock a load takes, in one transaction. It must have a schema of its own
    /// (`StoreDescription.postgres(_:schema:)`), and the schema must hold a Skerry store: a store
    /// in the connection's default schema shares it with whatever else is there, so Skerry drops
    /// nothing of it. A schema that does not exist is no error (as a missing file is not). Every
    /// coordinator of the process that has the store loaded (with the same connection string and
    /// schema) loses it first, as for a SQLite file. Other processes are not told: their next
    /// statements fail (the tables are gone); stop the other instances first.
    /// - Parameter description: the store.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a PostgreSQL store without a schema of its
    ///   own or whose schema holds no Skerry store; ``SkerryError/Code/database`` for the server's
    ///   errors (a connection that cannot be made); the errors of
    ///   ``destroyPersistentStore(at:ofType:options:)``.
    public func destroyPersistentStore(with description: StoreDescription) throws(SkerryError) {
        let description = description.resolvedForLoading
        guard let factory = description.storeFactory else {
            try destroyPersistentStore(
                at: description.url ?? StoreDescription.inMemoryURL,
                ofType: description.kind == .sqlite ? SQLiteStoreType : InMemoryStoreType)
            return
        }
        try removeFromEveryCoordinator { factory.describesSameStore(as: $0) }
        try factory.destroyStore()
    }
}
