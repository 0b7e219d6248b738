import Foundation

/// Persistent history in a SQLite store (``PersistentHistoryTrackingKey``): two tables of
/// Skerry's own beside the entities' tables, written in the transaction of each save or batch
/// delete. Transactions and changes are numbered by `AUTOINCREMENT`, so that a number is never
/// given twice, even after the history was deleted (tokens keep meaning the same point).
///
/// The metadata records whether history is tracked (`historyTracking`: `on`, `cleared`, `off`,
/// see ``Tracking``) and below
/// which number it was deleted (`historyExpiredBefore`): a token older than that lost some of
/// the transactions after it, and fails with ``SkerryError/Code/persistentHistoryTokenExpired``.
extension SQLiteStore {
    static let historyTransactionsTable = "_skerry_history_transactions"
    static let historyChangesTable = "_skerry_history_changes"
    /// The values kept of deleted objects (tombstones): one row per preserved attribute, its
    /// value stored as the attribute's column stores it.
    static let historyTombstonesTable = "_skerry_history_tombstones"
    private static let trackingKey = PersistentHistoryMetadata.trackingKey
    private static let expiredBeforeKey = PersistentHistoryMetadata.expiredBeforeKey

    /// What loading `description` means for its history.
    ///
    /// With the option, creates the tables and marks tracking `on` in the metadata, in one
    /// write transaction (instances loading one fresh file at once all find the tables). Once
    /// `on`, the store opened without the option is read-only (as Core Data forces such a store
    /// into read-only mode), whether it holds transactions or not: a save not recorded would be
    /// a gap the consumers of the history never learn of. Tracking stops only on purpose: after
    /// all history up to now was deleted (``deleteHistory(before:)`` with a date not before now,
    /// `cleared`), an opening without the option finding no transaction recorded since turns
    /// it `off` and writes. Returns whether the store tracks history, and why it is read-only, if
    /// it is.
    static func prepareHistory(pool: ConnectionPool, description: StoreDescription) throws(SkerryError)
        -> (tracks: Bool, readOnlyReason: String?)
    {
        do {
            if description.isReadOnly {
                guard description.tracksPersistentHistory else { return (false, nil) }
                guard try pool.read({ connection in try historyTablesExist(connection) }) else {
                    throw SkerryError(
                        .invalidArgument,
                        "\(description) asks for persistent history but is read-only and has none: open it once read-write with PersistentHistoryTrackingKey to start recording."
                    )
                }
                return (true, nil)
            }
            if !description.tracksPersistentHistory {
                // A store that never had history stays as it is (no write lock taken at load);
                // one that has is decided in the write transaction below.
                guard try pool.read({ connection in try historyTablesExist(connection) }) else { return (false, nil) }
            }
            return try pool.write { connection in
                try connection.writeTransaction {
                    if description.tracksPersistentHistory {
                        try createHistoryTables(connection)
                        let tracking = try readMetadata(connection)[trackingKey]
                        if tracking == Tracking.off {
                            // Saves made while history was off are not in it: older tokens expire.
                            try expireAllHistory(connection)
                        }
                        if tracking != Tracking.on { try schema.writeMetadata([trackingKey: Tracking.on], connection) }
                        return (true, nil)
                    }
                    guard try historyTablesExist(connection) else { return (false, nil) }
                    switch try readMetadata(connection)[trackingKey] {
                    case Tracking.off?:
                        return (false, nil)
                    case Tracking.cleared?
                    where try connection.scalarInt64("SELECT count(*) FROM \(SQLBuilder.quote(historyTransactionsTable))") == 0:
                        try schema.writeMetadata([trackingKey: Tracking.off], connection)
                        return (false, nil)
                    default:
                        return (
                            false,
                            "\(description) tracks persistent history and was opened without PersistentHistoryTrackingKey, so it is read-only (as Core Data forces such a store into read-only mode): a save not recorded would leave a gap in the history. Open it with the option; to stop tracking, delete all its history up to now (PersistentHistoryChangeRequest.deleteHistory(before: .distantFuture)) with the option, then open it without."
                        )
                    }
                }
            }
        } catch {
            let reason = SkerryError.converting(error)
            if reason.code == .invalidArgument { throw reason }
            throw SkerryError(
                .storeLoadFailed, "Cannot prepare the persistent history of \(description): \(reason.message)", sqlite: reason.sqlite)
        }
    }

    /// The values of the metadata's `historyTracking`.
    enum Tracking {
        /// Saves are recorded; without the option the store is read-only.
        static let on = "on"
        /// All history up to a moment was deleted to stop tracking: the next opening without the
        /// option turns tracking off, unless a transaction was recorded since.
        static let cleared = "cleared"
        /// Saves are not recorded: the history, if any, has a gap after its last transaction.
        static let off = PersistentHistoryMetadata.trackingOff
    }

    static func historyTablesExist(_ connection: SQLiteConnection) throws -> Bool {
        try connection.tableExists(historyTransactionsTable)
    }

    /// Creates the history's tables that are missing.
    private static func createHistoryTables(_ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(q(historyTransactionsTable)) ("number" INTEGER PRIMARY KEY AUTOINCREMENT, \
            "timestamp" REAL NOT NULL, "author" TEXT, "contextName" TEXT, "bundleID" TEXT NOT NULL, "processID" TEXT NOT NULL)
            """)
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(q(historyChangesTable)) ("id" INTEGER PRIMARY KEY AUTOINCREMENT, \
            "transactionNumber" INTEGER NOT NULL, "changeType" INTEGER NOT NULL, "entity" TEXT NOT NULL, \
            "objectKey" INTEGER NOT NULL, "updatedProperties" TEXT)
            """)
        try connection.execute(
            "CREATE INDEX IF NOT EXISTS \(q(historyChangesTable + "_transaction")) ON \(q(historyChangesTable)) (\"transactionNumber\")")
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS \(q(historyTombstonesTable)) (\"changeID\" INTEGER NOT NULL, \"name\" TEXT NOT NULL, \"value\")")
        try connection.execute(
            "CREATE INDEX IF NOT EXISTS \(q(historyTombstonesTable + "_change")) ON \(q(historyTombstonesTable)) (\"changeID\")")
    }

    /// Deletes every transaction and makes every token taken so far expire: for history that no
    /// longer describes the store (saves made while it was off, tables rebuilt by a migration).
    /// The transaction numbers go on from two past the last, so that a token taken just before
    /// (it names the last) is older than the expiry, and the current token after it is not.
    static func expireAllHistory(_ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        try connection.execute("DELETE FROM \(q(historyTombstonesTable))")
        try connection.execute("DELETE FROM \(q(historyChangesTable))")
        try connection.execute("DELETE FROM \(q(historyTransactionsTable))")
        let next = try lastHistoryNumber(connection) + 1
        // Moves the AUTOINCREMENT sequence past `next` (its row exists once a transaction was recorded).
        try connection.cachedStatement("DELETE FROM sqlite_sequence WHERE name = ?").run([.string(historyTransactionsTable)])
        try connection.cachedStatement("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)").run([
            .string(historyTransactionsTable), .int(next),
        ])
        // A token names the last transaction it saw: every one taken before this, up to `next - 1`, expires.
        try schema.writeMetadata([expiredBeforeKey: String(next + 1)], connection)
    }

    /// The identifier and last transaction number of the store file at `path`, when it is a
    /// Skerry store with history; nil otherwise (no file, another database, no history, or a
    /// file that cannot be read: a damaged store is what a restore replaces, and must not stop it).
    static func historyPosition(ofFileAt path: String) -> (identifier: String, last: Int64)? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        // Read-write: a read-only connection may fail on a WAL file whose side files are gone.
        guard let connection = try? SQLiteConnection(path: path, readOnly: false, busyTimeout: 5) else { return nil }
        return try? connection.readTransaction {
            guard try connection.tableExists(StoreSchema.metadataTable), try historyTablesExist(connection),
                let identifier = try readMetadata(connection)["storeIdentifier"]
            else { return nil }
            return (identifier, try lastHistoryNumber(connection))
        }
    }

    /// Makes the history of `copy` (a copy of a store, about to replace the store `replaced`
    /// describes: its identifier and last transaction number) go on after the replaced store's
    /// last transaction, when both are the same store and the copy is older (a backup restored).
    /// Its transactions stay; every token taken so far expires, since one taken after the copy
    /// was made saw transactions the copy does not have, and new saves would reuse their numbers.
    static func continueHistory(of copy: SQLiteConnection, after replaced: (identifier: String, last: Int64)) throws {
        try copy.writeTransaction {
            guard try historyTablesExist(copy), try readMetadata(copy)["storeIdentifier"] == replaced.identifier,
                try lastHistoryNumber(copy) < replaced.last
            else { return }
            let next = replaced.last + 1
            try copy.cachedStatement("DELETE FROM sqlite_sequence WHERE name = ?").run([.string(historyTransactionsTable)])
            try copy.cachedStatement("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)").run([
                .string(historyTransactionsTable), .int(next),
            ])
            // As expireAllHistory: tokens up to `next - 1` expire, the current one (`next`) does not.
            let expired = try readMetadata(copy)[expiredBeforeKey].flatMap(Int64.init) ?? 0
            if next + 1 > expired { try schema.writeMetadata([expiredBeforeKey: String(next + 1)], copy) }
        }
    }

    /// The number of the last transaction ever recorded (0 before the first).
    private static func lastHistoryNumber(_ connection: SQLiteConnection) throws -> Int64 {
        guard try connection.scalarInt64("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") ?? 0 > 0 else { return 0 }
        return try connection.scalarInt64("SELECT seq FROM sqlite_sequence WHERE name = ?", [.string(historyTransactionsTable)]) ?? 0
    }

    // MARK: Stores that do not record history

    /// Whether the writes of this store check that no other instance (another process, or
    /// another stack) turned tracking on since it was loaded: a writable file store that does not
    /// record history (an in-memory database is this store's alone).
    var checksHistoryTracking: Bool { !tracksPersistentHistory && historyReadOnlyReason == nil && storeDescription.kind != .inMemory }

    /// Throws ``SkerryError/Code/storeIsReadOnly`` when the metadata, read in the write's
    /// transaction, says another instance records the store's history (tracking `on`, or
    /// `cleared` and not yet turned off): a save not recorded would be a gap its consumers never
    /// learn of. The write holds the database's write lock, and an instance turning tracking on
    /// writes the metadata under it too: either the write commits first, or it reads `on`. One
    /// read of a cached statement.
    func refuseIfHistoryTracked(_ connection: SQLiteConnection) throws {
        let statement = try connection.cachedStatement(PersistentHistoryMetadata.readTrackingSQL)
        defer { statement.reset() }
        let tracking = try statement.step() && !statement.isNull(at: 0) ? statement.text(at: 0) : nil
        try PersistentHistoryMetadata.refuseUntrackedWrite(tracking: tracking, store: storeDescription)
    }

    // MARK: Recording

    /// Records one transaction with `entries`, inside the write transaction of `connection`.
    /// Records nothing without entries.
    func recordHistory(_ entries: [HistoryEntry], _ connection: SQLiteConnection) throws {
        guard !entries.isEmpty else { return }
        let q = SQLBuilder.quote
        let author = HistoryAuthor.current
        try connection.cachedStatement(
            "INSERT INTO \(q(Self.historyTransactionsTable)) (\"timestamp\", \"author\", \"contextName\", \"bundleID\", \"processID\") VALUES (?, ?, ?, ?, ?)"
        ).run([
            .double(Date().timeIntervalSinceReferenceDate), author?.author.map(AttributeValue.string) ?? .null,
            author?.contextName.map(AttributeValue.string) ?? .null, .string(HistoryProcess.bundleID),
            .string(HistoryProcess.processID),
        ])
        let number = connection.lastInsertRowID
        let insert = try connection.cachedStatement(
            "INSERT INTO \(q(Self.historyChangesTable)) (\"transactionNumber\", \"changeType\", \"entity\", \"objectKey\", \"updatedProperties\") VALUES (?, ?, ?, ?, ?)"
        )
        for entry in entries {
            try insert.run([
                .int(number), .int(Int64(entry.type.rawValue)), .string(entry.entity.name), .int(entry.key),
                entry.properties.map { .string($0.joined(separator: ",")) } ?? .null,
            ])
            guard let tombstone = entry.tombstone, !tombstone.isEmpty else { continue }
            let changeID = connection.lastInsertRowID
            let keep = try connection.cachedStatement(
                "INSERT INTO \(q(Self.historyTombstonesTable)) (\"changeID\", \"name\", \"value\") VALUES (?, ?, ?)")
            for (name, value) in tombstone { try keep.run([.int(changeID), .string(name), value]) }
        }
    }

    /// The tombstone of the current row of `statement`, whose columns from `column` on are
    /// `attributes` (`HistoryEntry.preservedAttributes(_:)`); nil when the entity preserves nothing.
    static func tombstone(_ statement: SQLiteStatement, _ attributes: [AttributeDescription], from column: Int32) -> [(
        name: String, value: AttributeValue
    )]? {
        guard !attributes.isEmpty else { return nil }
        return attributes.enumerated().map { offset, attribute in
            (attribute.name, statement.value(at: column + Int32(offset), as: attribute.type) ?? .null)
        }
    }

    /// The tombstone of the row `objectID` is about to delete, read in the write transaction.
    func tombstone(of objectID: ObjectID, _ connection: SQLiteConnection) throws -> [(name: String, value: AttributeValue)]? {
        let attributes = HistoryEntry.preservedAttributes(objectID.entity)
        guard !attributes.isEmpty else { return nil }
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement(
            "SELECT \(attributes.map { q($0.name) }.joined(separator: ", ")) FROM \(q(objectID.entityName)) WHERE \(q(SQLBuilder.primaryKeyColumn)) = ?"
        )
        defer { statement.reset() }
        try statement.bind([.int(objectID.key)])
        return try statement.step() ? Self.tombstone(statement, attributes, from: 0) : nil
    }
}

extension SQLiteStore: PersistentHistoryStore {
    func fetchHistory(after bound: HistoryBound) throws(SkerryError) -> [HistoryTransactionRecord] {
        let q = SQLBuilder.quote
        let condition: (sql: String, value: AttributeValue)
        switch bound {
        case .number(let number): condition = ("t.\"number\" > ?", .int(number ?? 0))
        case .date(let date): condition = ("t.\"timestamp\" > ?", .double(date.timeIntervalSinceReferenceDate))
        }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let identity = identity
        return try read(nil) { connection in
            try connection.readTransaction {
                if case .number(let number?) = bound { try checkToken(number, connection) }
                let statement = try connection.cachedStatement(
                    """
                    SELECT t."number", t."timestamp", t."author", t."contextName", t."bundleID", t."processID", \
                    c."id", c."changeType", c."entity", c."objectKey", c."updatedProperties" \
                    FROM \(q(Self.historyTransactionsTable)) t LEFT JOIN \(q(Self.historyChangesTable)) c \
                    ON c."transactionNumber" = t."number" WHERE \(condition.sql) ORDER BY t."number", c."id"
                    """)
                defer { statement.reset() }
                try statement.bind([condition.value])
                var records: [HistoryTransactionRecord] = []
                while try statement.step() {
                    let number = statement.int64(at: 0)
                    if records.last?.number != number {
                        let timestamp: Double
                        if case .double(let seconds)? = statement.value(at: 1, as: .double) { timestamp = seconds } else { timestamp = 0 }
                        records.append(
                            HistoryTransactionRecord(
                                number: number, timestamp: Date(timeIntervalSinceReferenceDate: timestamp),
                                author: statement.isNull(at: 2) ? nil : statement.text(at: 2),
                                contextName: statement.isNull(at: 3) ? nil : statement.text(at: 3),
                                bundleID: statement.text(at: 4), processID: statement.text(at: 5), changes: []))
                    }
                    guard !statement.isNull(at: 6) else { continue }
                    let name = statement.text(at: 8)
                    guard let entity = byName[name], let type = PersistentHistoryChangeType(rawValue: Int(statement.int64(at: 7))) else {
                        throw SkerryError(
                            .undecodableValue,
                            "The persistent history of \(storeDescription) names a change of '\(name)' that this store cannot read (transaction \(number)).",
                            entityName: name)
                    }
                    let properties = statement.isNull(at: 10) ? nil : Set(statement.text(at: 10).split(separator: ",").map(String.init))
                    records[records.count - 1].changes.append(
                        PersistentHistoryChange(
                            changeID: statement.int64(at: 6),
                            changedObjectID: ObjectID(store: identity, entity: entity, primaryKey: statement.int64(at: 9)),
                            changeType: type, updatedProperties: properties))
                }
                return try readTombstones(into: records, condition, connection)
            }
        }
    }

    /// Throws ``SkerryError/Code/persistentHistoryTokenExpired`` unless the history after the
    /// transaction `number` (a token's) is all there, read in the fetch's transaction: not
    /// deleted, not past the last transaction (a token taken before an older copy of the store
    /// was restored: later saves would reuse its numbers), and recorded (tracking not off).
    private func checkToken(_ number: Int64, _ connection: SQLiteConnection) throws {
        try PersistentHistoryMetadata.checkToken(
            number, metadata: try Self.readMetadata(connection), last: try Self.lastHistoryNumber(connection),
            store: storeDescription, reopening: "Open it read-write with the option")
    }

    /// Gives the delete changes of `records` the tombstones kept for them (read in the same
    /// transaction as the records, with the same condition on their transactions).
    private func readTombstones(
        into records: [HistoryTransactionRecord], _ condition: (sql: String, value: AttributeValue), _ connection: SQLiteConnection
    ) throws -> [HistoryTransactionRecord] {
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement(
            """
            SELECT b."changeID", b."name", b."value" FROM \(q(Self.historyTombstonesTable)) b \
            JOIN \(q(Self.historyChangesTable)) c ON c."id" = b."changeID" \
            JOIN \(q(Self.historyTransactionsTable)) t ON t."number" = c."transactionNumber" WHERE \(condition.sql)
            """)
        defer { statement.reset() }
        try statement.bind([condition.value])
        var pending: [Int64: [String: AttributeValue]] = [:]
        // Each value is decoded as its attribute's type, found through the change's entity.
        var entityOfChange: [Int64: EntityDescription] = [:]
        for record in records { for change in record.changes { entityOfChange[change.changeID] = change.changedObjectID.entity } }
        while try statement.step() {
            let changeID = statement.int64(at: 0), name = statement.text(at: 1)
            guard let entity = entityOfChange[changeID], let index = entity.attributeIndex(named: name),
                let value = statement.value(at: 2, as: entity.attributes[index].type)
            else {
                throw SkerryError(
                    .undecodableValue,
                    "The persistent history of \(storeDescription) keeps a value of '\(name)' for change \(changeID) that this store cannot read.",
                    key: name)
            }
            pending[changeID, default: [:]][name] = value
        }
        guard !pending.isEmpty else { return records }
        return records.map { record in
            var record = record
            record.changes = record.changes.map { change in
                guard let values = pending[change.changeID] else { return change }
                var change = change
                change.tombstoneValues = values
                return change
            }
            return record
        }
    }

    func deleteHistory(before bound: HistoryBound) throws(SkerryError) -> Int {
        try checkWritable()
        let q = SQLBuilder.quote
        let condition: (sql: String, value: AttributeValue)
        switch bound {
        case .number(nil): return 0
        case .number(let number?): condition = ("\"number\" < ?", .int(number))
        case .date(let date): condition = ("\"timestamp\" < ?", .double(date.timeIntervalSinceReferenceDate))
        }
        // Deleting all history up to now or later (Core Data's `deleteHistory(before: .distantFuture)`)
        // is how tracking is stopped: an opening without the option may then turn it off.
        let clears: Bool
        if case .date(let date) = bound { clears = date >= Date() } else { clears = false }
        return try writeConnection(nil) { connection in
            try connection.writeTransaction {
                if clears, try Self.readMetadata(connection)[Self.trackingKey] == Tracking.on {
                    try Self.schema.writeMetadata([Self.trackingKey: Tracking.cleared], connection)
                }
                guard
                    let last = try connection.scalarInt64(
                        "SELECT max(\"number\") FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql)", [condition.value])
                else { return 0 }
                try connection.cachedStatement(
                    "DELETE FROM \(q(Self.historyTombstonesTable)) WHERE \"changeID\" IN (SELECT \"id\" FROM \(q(Self.historyChangesTable)) WHERE \"transactionNumber\" IN (SELECT \"number\" FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql)))"
                ).run([condition.value])
                try connection.cachedStatement(
                    "DELETE FROM \(q(Self.historyChangesTable)) WHERE \"transactionNumber\" IN (SELECT \"number\" FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql))"
                ).run([condition.value])
                try connection.cachedStatement("DELETE FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql)").run([
                    condition.value
                ])
                let count = connection.changes
                let expired = try Self.readMetadata(connection)[Self.expiredBeforeKey].flatMap(Int64.init) ?? 0
                if last + 1 > expired { try Self.schema.writeMetadata([Self.expiredBeforeKey: String(last + 1)], connection) }
                return count
            }
        }
    }

    func lastHistoryNumber() throws(SkerryError) -> Int64 {
        try read(nil) { connection in try Self.lastHistoryNumber(connection) }
    }
}
