/// What a store's metadata says about its persistent history, shared by the stores that keep it
/// (SQLite and PostgreSQL write the same keys and values).
package enum PersistentHistoryMetadata {
    /// The key of the tracking state (`on`, `cleared`, `off`).
    package static let trackingKey = "historyTracking"
    /// The key of the first transaction number still held (history below it was deleted).
    package static let expiredBeforeKey = "historyExpiredBefore"
    /// The tracking state whose saves are not recorded.
    package static let trackingOff = "off"

    /// The statement that reads the tracking state from the store's metadata table (no row: the
    /// store never had history).
    package static let readTrackingSQL =
        "SELECT \"value\" FROM \(SQLBuilder.quote(StoreSchema.metadataTable)) WHERE \"key\" = '\(trackingKey)'"

    /// Throws ``SkerryError/Code/storeIsReadOnly`` when a store loaded without
    /// PersistentHistoryTrackingKey reads, in a write's transaction, that another instance records
    /// its history (`tracking` is `on`, or `cleared` and not yet turned off): a save not recorded
    /// would be a gap its consumers never learn of.
    ///
    /// - Parameters:
    ///   - tracking: The tracking state read by ``readTrackingSQL`` (nil: no row or NULL).
    ///   - store: The store, named in the error.
    package static func refuseUntrackedWrite(tracking: String?, store: StoreDescription) throws(SkerryError) {
        guard let tracking, tracking != trackingOff else { return }
        throw untrackedWriteRefusal(store: store)
    }

    /// The error of ``refuseUntrackedWrite(tracking:store:)``, for a store that learns of the
    /// tracking state from a check that failed on the server (PostgreSQL).
    package static func untrackedWriteRefusal(store: StoreDescription) -> SkerryError {
        SkerryError(
            .storeIsReadOnly,
            "\(store) was loaded without PersistentHistoryTrackingKey while it recorded no history, and another instance has turned persistent history on since: a save not recorded would leave a gap in the history that the instances reading it never learn of, so this instance can no longer write to it. Load it again with the option. Nothing was written."
        )
    }

    /// Throws ``SkerryError/Code/persistentHistoryTokenExpired`` unless the history after the
    /// transaction `number` (a token's) is all there: not deleted, not past the last transaction
    /// (a token taken before an older copy of the store was restored), and recorded (tracking not
    /// off).
    ///
    /// - Parameters:
    ///   - number: The token's transaction number.
    ///   - metadata: The store's metadata, read in the fetch's transaction.
    ///   - last: The store's last transaction number, read in the same transaction.
    ///   - store: The store, named in the errors.
    ///   - reopening: How the error says to open the store to record again.
    package static func checkToken(
        _ number: Int64, metadata: [String: String], last: Int64, store: StoreDescription, reopening: String
    ) throws(SkerryError) {
        if let expired = metadata[expiredBeforeKey].flatMap(Int64.init), number < expired - 1 {
            throw SkerryError(
                .persistentHistoryTokenExpired,
                "The persistent history of \(store) after transaction \(number) was deleted (it now starts after \(expired - 1)): fetch all history again (after nil) and take a new token."
            )
        }
        if number > last {
            throw SkerryError(
                .persistentHistoryTokenExpired,
                "The token names transaction \(number) of \(store), past its last transaction \(last): it was taken from a later state of the store (an older copy was restored since). Fetch all history again (after nil) and take a new token."
            )
        }
        if metadata[trackingKey] == trackingOff {
            throw SkerryError(
                .persistentHistoryTokenExpired,
                "Persistent history tracking of \(store) was turned off (it was opened without PersistentHistoryTrackingKey after its history was deleted): the saves since are not recorded after transaction \(number). \(reopening) to record again, then fetch all history (after nil)."
            )
        }
    }
}
