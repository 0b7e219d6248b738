import SkerryCore

/// What keeps a PostgreSQL store loaded without `PersistentHistoryTrackingKey` from writing
/// unrecorded once another instance turned tracking on: two statements at the head of each
/// write's transaction, sent with the write's other statements (no round trip of their own).
///
/// The first takes the store's history lock shared: an instance turning tracking on takes it
/// exclusively (``prepareHistory(pool:description:lockTimeout:)``), so it waits for the writes
/// under way, and the writes after it wait for it. The second (``trackingCheckSQL``) then reads
/// the tracking state, in a snapshot taken once the lock is held (a statement of its own: in one
/// statement with the lock, the read would use the snapshot taken before the wait), and fails on
/// the server when tracking is on. The server then skips the write's later statements, so the
/// write's statements and its commit can all be sent before the client waits once: a batch delete
/// of one table is one round trip.
extension PostgresStore {
    /// Whether the writes of this store check that no other instance turned tracking on since it
    /// was loaded: a writable store that does not record history (loaded without the option,
    /// while tracking was off or before the store had any history).
    var checksHistoryTracking: Bool { !tracksPersistentHistory && historyReadOnlyReason == nil }

    /// Sends, with `send` (into a write's pipeline, in its transaction, before its other
    /// statements), the history lock, shared, then the tracking check. The write fails with the
    /// check's error when tracking is on: ``trackingRefusal(_:)`` makes it the store's refusal.
    func sendTrackingCheck(_ send: (_ sql: String) throws -> Void) throws {
        try send(Self.sharedHistoryLockSQL)
        try send(Self.trackingCheckSQL)
    }

    /// ``historyLockSQL``'s lock, shared.
    static let sharedHistoryLockSQL =
        "SELECT pg_advisory_xact_lock_shared(hashtextextended('skerry-history:' || current_schema(), 0))"

    /// Reads the tracking state (as `PersistentHistoryMetadata.readTrackingSQL`) and fails when
    /// `PersistentHistoryMetadata.refuseUntrackedWrite(tracking:store:)` would refuse the write
    /// (a state neither missing nor `off`): the state, in a sentence saying why, is cast to an
    /// integer, which fails with `invalid_text_representation` (22P02). The cast depends on the
    /// row, so the planner cannot fold it; no function is created in the store's schema.
    static let trackingCheckSQL = """
        SELECT CASE WHEN "value" <> '\(PersistentHistoryMetadata.trackingOff)' THEN \
        ('skerry: persistent history tracking is ' || "value" || ': a store loaded without PersistentHistoryTrackingKey may not write')::integer END \
        FROM \(SQLBuilder.quote(StoreSchema.metadataTable)) WHERE "key" = '\(PersistentHistoryMetadata.trackingKey)'
        """

    /// The store's refusal (`.storeIsReadOnly`, the message of
    /// `PersistentHistoryMetadata.refuseUntrackedWrite(tracking:store:)`) when `error` is the
    /// failure of ``trackingCheckSQL``; nil for any other error.
    func trackingRefusal(_ error: any Error) -> SkerryError? {
        guard let error = error as? PostgresError, error.sql == Self.trackingCheckSQL, error.sqlState == .invalidTextRepresentation
        else { return nil }
        return PersistentHistoryMetadata.untrackedWriteRefusal(store: storeDescription)
    }
}
