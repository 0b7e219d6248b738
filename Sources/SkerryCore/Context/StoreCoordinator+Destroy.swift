import Foundation

/// Core Data's `NSPersistentStoreForceDestroyOption`, for
/// ``StoreCoordinator/destroyPersistentStore(at:ofType:options:)``: accepted, without effect
/// (Skerry takes no locks it could override; a store this coordinator has loaded is refused with it
/// too).
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
    /// `/dev/null`) has no files: nothing is done.
    ///
    /// A store this coordinator has loaded is not destroyed: its contexts would go on reading and
    /// writing files that are gone. The call throws ``SkerryError/Code/invalidArgument`` naming it
    /// and changes nothing; release the stack (its coordinator and contexts) first, then destroy
    /// the store and load a new one. (Core Data empties a loaded store in place instead.)
    /// - Parameters:
    ///   - url: the store's database file.
    ///   - storeType: ``SQLiteStoreType`` or ``InMemoryStoreType``.
    ///   - options: the options the store was added with; Skerry needs none of them.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a loaded store or another store type;
    ///   ``SkerryError/Code/underlyingError`` when a file cannot be removed (the files removed
    ///   before it stay removed).
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws(SkerryError) {
        switch storeType {
        case SQLiteStoreType: break
        case InMemoryStoreType: return
        default:
            throw SkerryError(
                .invalidArgument, "Store type '\(storeType)' is not one Skerry destroys: use SQLiteStoreType or InMemoryStoreType.")
        }
        let file = url.standardizedFileURL
        guard file.path != "/dev/null" else { return }
        if persistentStore(for: file) != nil {
            throw SkerryError(
                .invalidArgument,
                "The store at \(file.path) is loaded by this coordinator: release the stack that loaded it (its coordinator and contexts) before destroying it."
            )
        }
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
