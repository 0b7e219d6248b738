import Foundation

extension StoreCoordinator {
    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`: Core Data's
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`,
    /// used to restore a backup or to copy a store.
    ///
    /// ```swift
    /// try coordinator.replacePersistentStore(
    ///     at: storeURL, destinationOptions: nil, withPersistentStoreFrom: backupURL, sourceOptions: nil, ofType: SQLiteStoreType)
    /// ```
    ///
    /// The source is copied with SQLite's `VACUUM INTO` (its committed contents, write-ahead log
    /// included) into a new file beside the destination; only when the copy succeeded is the
    /// destination destroyed as ``destroyPersistentStore(at:ofType:options:)`` does (a store this
    /// coordinator, or another of the process, has loaded there is removed first, its contexts
    /// then get ``SkerryError/Code/noStore``) and the copy put in its place. Add the store again
    /// to use it. When the copy is an older state of the same store with persistent history (a
    /// backup restored), its history goes on after the replaced store's last transaction, and
    /// every history token taken before expires.
    /// The source may be loaded (by this coordinator or another); it is only read.
    /// - Parameters:
    ///   - destinationURL: the database file to replace (created if missing).
    ///   - destinationOptions: the destination's options; Skerry needs none of them.
    ///   - sourceURL: the database file to copy; it must exist.
    ///   - sourceOptions: the source's options; Skerry needs none of them.
    ///   - storeType: ``SQLiteStoreType``.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for another store type or a missing source;
    ///   SQLite's error when the source cannot be copied (the destination is then unchanged);
    ///   ``SkerryError/Code/underlyingError`` when a file cannot be removed or moved.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
        withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
        ofType storeType: String
    ) throws(SkerryError) {
        guard storeType == SQLiteStoreType else {
            throw SkerryError(
                .invalidArgument,
                "Store type '\(storeType)' is not one Skerry replaces: use SQLiteStoreType (for a PostgreSQL store, see replacePersistentStore(_:withPersistentStoreFrom:))."
            )
        }
        let source = sourceURL.standardizedFileURL
        let destination = destinationURL.standardizedFileURL
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw SkerryError(.invalidArgument, "There is no store at \(source.path) to copy.")
        }
        guard source.path != destination.path else { return }
        let copy = destination.path + ".skerry-replace"
        do {
            if FileManager.default.fileExists(atPath: copy) { try FileManager.default.removeItem(atPath: copy) }
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            var failure = SkerryError(.underlyingError, "Could not prepare \(copy): \(error.localizedDescription)")
            failure.underlyingError = error
            throw failure
        }
        do {
            let connection = try SQLiteConnection(path: source.path, readOnly: true, busyTimeout: 5)
            try connection.execute("VACUUM INTO '\(copy.replacingOccurrences(of: "'", with: "''"))'")
        } catch {
            // A partial copy is of no use; nothing else was changed. (Removal failing leaves a stray file only.)
            try? FileManager.default.removeItem(atPath: copy)
            throw SkerryError.wrapping(error)
        }
        // An older copy of the same store (a backup restored) goes on after the replaced store's
        // history, so that numbers are not given twice and tokens of after the backup expire.
        if let replaced = SQLiteStore.historyPosition(ofFileAt: destination.path) {
            do {
                try SQLiteStore.continueHistory(of: try SQLiteConnection(path: copy, readOnly: false, busyTimeout: 5), after: replaced)
            } catch {
                // As above: the copy is not used; the destination is unchanged.
                try? FileManager.default.removeItem(atPath: copy)
                throw SkerryError.converting(error)
            }
        }
        try destroyPersistentStore(at: destination, ofType: SQLiteStoreType)
        do {
            try FileManager.default.moveItem(atPath: copy, toPath: destination.path)
        } catch {
            var failure = SkerryError(
                .underlyingError, "Could not move the copy \(copy) to \(destination.path): \(error.localizedDescription)")
            failure.underlyingError = error
            throw failure
        }
    }

    /// Replaces the store `destination` describes with a copy of the store `source` describes:
    /// ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``
    /// with descriptions, for SQLite files.
    ///
    /// ```swift
    /// try coordinator.replacePersistentStore(StoreDescription(url: storeURL), withPersistentStoreFrom: StoreDescription(url: backupURL))
    /// ```
    ///
    /// A PostgreSQL store (source or destination) is refused with a typed error, because Core
    /// Data's semantics do not carry over: a replace copies the store as a whole (its identifier,
    /// so durable object IDs stay valid, and its persistent history) and puts the copy in place
    /// only once it is complete, so that a failed copy leaves the destination as it was. A
    /// PostgreSQL store is a schema that running instances hold open, whose triggers and functions
    /// name it: it cannot be swapped for a copy at once, and a row-by-row copy carries neither
    /// the identifier nor the history. Use ``destroyPersistentStore(with:)`` and then
    /// ``migratePersistentStore(_:to:)`` from a coordinator that has the source loaded (a copy of
    /// the objects, in one transaction, with new IDs), or PostgreSQL's `pg_dump` and `pg_restore`
    /// for a copy of the schema as a whole.
    /// - Parameters:
    ///   - destination: the store to replace (a SQLite file, created if missing).
    ///   - source: the store to copy (a SQLite file).
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a store that is not a SQLite file (a
    ///   PostgreSQL or in-memory store); the errors of
    ///   ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    public func replacePersistentStore(
        _ destination: StoreDescription, withPersistentStoreFrom source: StoreDescription
    ) throws(SkerryError) {
        let destination = destination.resolvedForLoading
        let source = source.resolvedForLoading
        for store in [destination, source] where store.kind != .sqlite || store.url == nil {
            let why =
                store.kind == .postgres
                ? "a PostgreSQL store cannot be swapped for a whole copy of another under the instances that hold it open, and a copy of its rows "
                    + "would carry neither its identifier nor its history: use destroyPersistentStore(with:) then migratePersistentStore(_:to:), "
                    + "or pg_dump and pg_restore"
                : "an in-memory store has no file to copy: use migratePersistentStore(_:to:)"
            throw SkerryError(.invalidArgument, "\(store) cannot be replaced or copied by replacePersistentStore: \(why).")
        }
        try replacePersistentStore(at: destination.url!, withPersistentStoreFrom: source.url!, ofType: SQLiteStoreType)
    }
}
