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
                .invalidArgument, "Store type '\(storeType)' is not one Skerry destroys: use SQLiteStoreType or InMemoryStoreType.")
        }
        let file = url.standardizedFileURL
        for loaded in persistentStores where loaded.url?.standardizedFileURL.path == file.path {
            try remove(loaded)
        }
        guard storeType == SQLiteStoreType, file.path != "/dev/null" else { return }
        removeFromOtherCoordinators(sqliteFileAt: file.path)
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
}
