import Foundation
import SkerryCore

/// Persistent history in a PostgreSQL store (`PersistentHistoryTrackingKey`): the SQLite store's
/// three tables, in the store's schema, written in the transaction of each save or batch delete.
///
/// Several processes write one store at once, so numbers must follow commit order: a sequence
/// alone does not (a reader could see transaction 8 committed before 7, fetch after 8, and never
/// see 7). A write with history takes a transaction-long advisory lock of the store's history
/// (``historyLockSQL``) just before it takes its number, and holds it until it commits: the next
/// writer gets its number only once the one before is committed and visible. Any snapshot that
/// sees a transaction sees every one numbered below it, so a consumer that fetched after token N
/// never later meets a new transaction numbered N or below.
///
/// The lock is taken after the statements of every store of the save (the record is the
/// `StoreWriteFinish` of the store's write), so it is never held while rows are awaited; in a
/// save over several stores, the stores record in the order of their identifiers (the same in
/// every process), and a store's lock is held too while the stores after it record and the
/// stores its transaction encloses commit. Holders of the lock therefore wait only for history
/// locks later in that one order: stacks that loaded their stores in different orders cannot
/// wait for each other in a cycle.
///
/// The metadata records whether history is tracked (`historyTracking`: `on`, `cleared`, `off`)
/// and below which number it was deleted (`historyExpiredBefore`), as in the SQLite store.
extension PostgresStore {
    static let historyTransactionsTable = "_skerry_history_transactions"
    static let historyChangesTable = "_skerry_history_changes"
    /// The values kept of deleted objects (tombstones): one row per preserved attribute, its
    /// value in the column of its type (``tombstoneColumn(_:)``).
    static let historyTombstonesTable = "_skerry_history_tombstones"
    /// The sequence of transaction numbers (never handed out twice, even after a rollback).
    /// It must keep the default `CACHE 1` (never ALTER it): with a cache, each session hands out
    /// numbers from its own block, so a later commit could get a lower number than one already
    /// committed, and a consumer past the higher number would never see it. Under the history
    /// lock, `CACHE 1` numbers follow commit order.
    static let historyNumbersSequence = "_skerry_history_numbers"
    /// The sequence of change IDs.
    static let historyChangeIDsSequence = "_skerry_history_change_ids"
    private static let trackingKey = PersistentHistoryMetadata.trackingKey
    private static let expiredBeforeKey = PersistentHistoryMetadata.expiredBeforeKey

    /// The lock that orders the store's history writers: held from a writer's number to its commit.
    static let historyLockSQL = "SELECT pg_advisory_xact_lock(hashtextextended('skerry-history:' || current_schema(), 0))"

    /// The values of the metadata's `historyTracking` (the SQLite store's).
    enum HistoryTracking {
        static let on = "on"
        static let cleared = "cleared"
        static let off = PersistentHistoryMetadata.trackingOff
    }

    /// What loading `description` means for its history, decided in one transaction under the
    /// store's schema lock (instances loading at once take turns): as in the SQLite store, the
    /// option creates the tables and marks tracking `on` (expiring older tokens when it was `off`);
    /// a store once `on` opened without the option is read-only until all its history up to a
    /// moment was deleted (`cleared`), when the opening turns tracking `off`.
    ///
    /// The history tables and sequences made for a store that had none get the grants of the
    /// store's `tables` (its entity and join tables) and key sequences (``Privileges``).
    static func prepareHistory(
        pool: PostgresConnectionPool, description: StoreDescription, tables: [String], lockTimeout: Duration?
    ) throws(SkerryError)
        -> (tracks: Bool, readOnlyReason: String?)
    {
        let tracks = description.tracksPersistentHistory
        do {
            return try pool.withConnection { connection in
                // A store that never had history stays as it is (no lock taken at load).
                if !tracks, try !historyTablesExist(connection) { return (false, nil) }
                return try connection.transaction { () throws -> (Bool, String?) in
                    try connection.query("SELECT pg_advisory_xact_lock(hashtextextended('skerry:' || current_schema(), 0))")
                    if tracks {
                        let privileges = try Privileges(connection, tables: tables)
                        try createHistoryTables(connection)
                        try privileges.extend(connection, tables: tables)
                        let tracking = try schema.readMetadata(connection)[trackingKey]
                        if tracking != HistoryTracking.on {
                            // Under the history lock, which the writes of instances loaded without
                            // the option hold shared (``sendTrackingCheck(_:)``): those under way
                            // commit first, later ones read `on` and refuse. The wait is bounded
                            // (`historyLockTimeout`): a writer that stalls, or one whose save over
                            // several stores waits on rows held by a writer queued behind this
                            // opening (a cycle through the application, which the server cannot
                            // see), fails the load instead of holding it up.
                            if let lockTimeout { try connection.execute("SET LOCAL lock_timeout = \(milliseconds(lockTimeout))") }
                            try connection.query(historyLockSQL)
                            if lockTimeout != nil { try connection.execute("SET LOCAL lock_timeout TO DEFAULT") }
                            // Saves made while history was off are not in it: older tokens expire.
                            if tracking == HistoryTracking.off { try expireAllHistory(connection) }
                            try schema.writeMetadata([trackingKey: HistoryTracking.on], connection)
                        }
                        return (true, nil)
                    }
                    switch try schema.readMetadata(connection)[trackingKey] {
                    case HistoryTracking.off?:
                        return (false, nil)
                    case HistoryTracking.cleared?
                    where try connection.scalarInt64("SELECT count(*) FROM \(SQLBuilder.quote(historyTransactionsTable))") == 0:
                        try schema.writeMetadata([trackingKey: HistoryTracking.off], connection)
                        return (false, nil)
                    default:
                        return (
                            false,
                            "\(description) tracks persistent history and was opened without PersistentHistoryTrackingKey, so it is read-only (as Core Data forces such a store into read-only mode): a save not recorded would leave a gap in the history that the other instances reading it never learn of. Open it with the option; to stop tracking, delete all its history up to now (PersistentHistoryChangeRequest.deleteHistory(before: .distantFuture)) with the option, then open it without."
                        )
                    }
                }
            }
        } catch {
            let reason = mapError(error, entity: nil)
            // Turning tracking on makes the history's tables: the schema's owner's business.
            let owner =
                (reason.underlyingError as? PostgresError)?.sqlState == .insufficientPrivilege
                ? " Turning persistent history tracking on changes the store's schema: load the store once with PersistentHistoryTrackingKey as a role that owns its schema, then as this role."
                : ""
            var failure = SkerryError(
                .storeLoadFailed, "Cannot prepare the persistent history of \(description): \(reason.message)\(owner)")
            failure.underlyingError = reason.underlyingError
            throw failure
        }
    }

    static func historyTablesExist(_ connection: PostgresConnection) throws -> Bool {
        let result = try connection.query(
            "SELECT to_regclass(?) IS NOT NULL", [.string(SQLBuilder.quote(historyTransactionsTable))])
        return result.value(0, 0, as: .boolean) == .bool(true)
    }

    /// The tombstone column that keeps values of attributes of `type` (one per native type).
    static func tombstoneColumn(_ type: AttributeType) -> String {
        "v_" + columnType(type).replacingOccurrences(of: " ", with: "_")
    }

    /// Creates the history's tables and sequences that are missing.
    /// Only when one is missing: `CREATE … IF NOT EXISTS` needs the right to create in the
    /// schema, which an application role loading a store that tracks history already lacks.
    private static func createHistoryTables(_ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        let names = [
            historyNumbersSequence, historyChangeIDsSequence, historyTransactionsTable, historyTransactionsTable + "_timestamp",
            historyChangesTable, historyChangesTable + "_transaction", historyTombstonesTable, historyTombstonesTable + "_change",
        ]
        guard try !missingRelations(names, connection).isEmpty else { return }
        let valueColumns = Set(AttributeType.allCases.map { "\(q(tombstoneColumn($0))) \(columnType($0))" }).sorted()
        // The numbers' sequence keeps the default CACHE 1 (see ``historyNumbersSequence``).
        try connection.execute(
            """
            CREATE SEQUENCE IF NOT EXISTS \(q(historyNumbersSequence)); \
            CREATE SEQUENCE IF NOT EXISTS \(q(historyChangeIDsSequence)); \
            CREATE TABLE IF NOT EXISTS \(q(historyTransactionsTable)) ("number" bigint PRIMARY KEY, \
            "timestamp" timestamptz NOT NULL, "author" text, "contextName" text, "bundleID" text NOT NULL, "processID" text NOT NULL); \
            CREATE INDEX IF NOT EXISTS \(q(historyTransactionsTable + "_timestamp")) ON \(q(historyTransactionsTable)) ("timestamp"); \
            CREATE TABLE IF NOT EXISTS \(q(historyChangesTable)) ("id" bigint PRIMARY KEY, \
            "transactionNumber" bigint NOT NULL, "changeType" integer NOT NULL, "entity" text NOT NULL, \
            "objectKey" bigint NOT NULL, "updatedProperties" text); \
            CREATE INDEX IF NOT EXISTS \(q(historyChangesTable + "_transaction")) ON \(q(historyChangesTable)) ("transactionNumber"); \
            CREATE TABLE IF NOT EXISTS \(q(historyTombstonesTable)) ("changeID" bigint NOT NULL, "name" text NOT NULL, \
            \(valueColumns.joined(separator: ", "))); \
            CREATE INDEX IF NOT EXISTS \(q(historyTombstonesTable + "_change")) ON \(q(historyTombstonesTable)) ("changeID")
            """)
    }

    /// Deletes every transaction and makes every token taken so far expire: for history that no
    /// longer describes the store (saves made while it was off, tables rebuilt by a migration).
    /// Runs in the caller's transaction, under the history lock. A number is taken and left
    /// unused: it is the store's last transaction from now on, so that a token taken before
    /// (older) expires and the current token after this does not.
    static func expireAllHistory(_ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        try connection.query(historyLockSQL)
        try connection.execute(
            "DELETE FROM \(q(historyTombstonesTable)); DELETE FROM \(q(historyChangesTable)); DELETE FROM \(q(historyTransactionsTable))")
        let next = try connection.scalarInt64("SELECT nextval(?::regclass)", [.string(q(historyNumbersSequence))]) ?? 0
        try schema.writeMetadata([expiredBeforeKey: String(next + 1)], connection)
    }

    /// The number of the last transaction committed (0 before the first): the highest number
    /// held, or, when the history up to it was deleted, the one below the expiry.
    private static func lastHistoryNumber(_ connection: PostgresConnection) throws -> Int64 {
        let held = try connection.scalarInt64("SELECT max(\"number\") FROM \(SQLBuilder.quote(historyTransactionsTable))") ?? 0
        let expired = try schema.readMetadata(connection)[expiredBeforeKey].flatMap(Int64.init) ?? 0
        return max(held, expired - 1)
    }

    /// Throws unless the store may be written.
    func checkWritable() throws(SkerryError) {
        if let historyReadOnlyReason { throw SkerryError(.storeIsReadOnly, historyReadOnlyReason + " Nothing was written.") }
    }

    // MARK: Recording

    /// Records one transaction with `entries`, in the write's open transaction on `connection`,
    /// after the statements of every store of the save: takes the history lock (held until the
    /// commit), then the next number, in one pipeline. Records nothing without entries.
    func recordHistory(_ entries: [HistoryEntry], _ connection: PostgresConnection) throws {
        guard !entries.isEmpty else { return }
        try connection.pipeline { pipeline in try sendHistory(entries, pipeline) }
    }

    /// Sends the statements of ``recordHistory(_:_:)`` into `pipeline`, whose statements after
    /// them (a batch delete's `COMMIT`) are the transaction's last. Sends nothing without entries.
    func sendHistory(_ entries: [HistoryEntry], _ pipeline: PostgresPipeline) throws {
        guard !entries.isEmpty else { return }
        let q = SQLBuilder.quote
        let author = HistoryAuthor.current
        let numbers = q(Self.historyNumbersSequence), changeIDs = q(Self.historyChangeIDsSequence)
        // Bounded (PostgresStoreOptions.historyLockTimeout): a holder that stalls fails the
        // waiting saves with 55P03 instead of holding them up. Only the history's own
        // statements (and the commit) follow in this transaction, so the setting reaches
        // nothing else.
        if let timeout = options.historyLockTimeout {
            try pipeline.send("SET LOCAL lock_timeout = \(Self.milliseconds(timeout))", [])
        }
        try pipeline.send(Self.historyLockSQL, [])
        // The server's clock, read under the lock: timestamps follow the numbers.
        try pipeline.send(
            "INSERT INTO \(q(Self.historyTransactionsTable)) (\"number\", \"timestamp\", \"author\", \"contextName\", \"bundleID\", \"processID\") VALUES (nextval('\(numbers)'), clock_timestamp(), ?, ?, ?, ?)",
            [
                author?.author.map(AttributeValue.string) ?? .null, author?.contextName.map(AttributeValue.string) ?? .null,
                .string(HistoryProcess.bundleID), .string(HistoryProcess.processID),
            ])
        let columns =
            "INSERT INTO \(q(Self.historyChangesTable)) (\"id\", \"transactionNumber\", \"changeType\", \"entity\", \"objectKey\", \"updatedProperties\")"
        let insertChange = columns + " VALUES (nextval('\(changeIDs)'), currval('\(numbers)'), ?, ?, ?, ?)"
        // A run of changes alike but for their keys (a bulk insert, a bulk update of the same
        // properties) is one statement over the array of keys, numbered in the keys' order.
        let insertChanges =
            columns
            + " SELECT nextval('\(changeIDs)'), currval('\(numbers)'), ?, ?, u.k, ? FROM unnest(?::bigint[]) WITH ORDINALITY AS u(k, o) ORDER BY u.o"
        func hasTombstone(_ entry: HistoryEntry) -> Bool { !(entry.tombstone?.isEmpty ?? true) }
        var index = entries.startIndex
        while index < entries.endIndex {
            let entry = entries[index]
            var end = index + 1
            while end < entries.endIndex, !hasTombstone(entry), entries[end].type == entry.type,
                entries[end].entity === entry.entity, entries[end].properties == entry.properties, !hasTombstone(entries[end])
            {
                end += 1
            }
            let properties: AttributeValue = entry.properties.map { .string($0.joined(separator: ",")) } ?? .null
            if end - index > 1 {
                let keys = entries[index..<end].map(\.key)
                try pipeline.send(insertChanges) { writer in
                    try writer.append(.int(Int64(entry.type.rawValue)))
                    try writer.append(.string(entry.entity.name))
                    try writer.append(properties)
                    try writer.append(keys: keys)
                }
                index = end
                continue
            }
            index = end
            try pipeline.send(
                insertChange, [.int(Int64(entry.type.rawValue)), .string(entry.entity.name), .int(entry.key), properties])
            guard let tombstone = entry.tombstone, !tombstone.isEmpty else { continue }
            for (name, value) in tombstone {
                guard let index = entry.entity.attributeIndex(named: name), !value.isNull else { continue }
                let column = Self.tombstoneColumn(entry.entity.attributes[index].type)
                try pipeline.send(
                    "INSERT INTO \(q(Self.historyTombstonesTable)) (\"changeID\", \"name\", \(q(column))) VALUES (currval('\(changeIDs)'), ?, ?)",
                    [.string(name), value])
            }
        }
    }

    /// `duration` in whole milliseconds for `lock_timeout`, at least 1 (0 would mean no limit).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        // The setting's largest value (about 24 days) for anything longer.
        guard seconds < Int64(Int32.max) / 1000 else { return Int64(Int32.max) }
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// The SQL that a delete of a row of `entity` ends with to return the values its tombstone
    /// keeps (``SkerryCore/HistoryEntry/preservedAttributes(_:)``); nil when it keeps none.
    static func returningTombstone(_ entity: EntityDescription) -> (sql: String, attributes: [AttributeDescription])? {
        let attributes = HistoryEntry.preservedAttributes(entity)
        guard !attributes.isEmpty else { return nil }
        return (" RETURNING " + attributes.map { SQLBuilder.quote($0.name) }.joined(separator: ", "), attributes)
    }

    /// The tombstone in `row` of `result`, whose columns from `column` on are `attributes`.
    static func tombstone(_ result: PostgresResult, _ row: Int32, _ attributes: [AttributeDescription], from column: Int32) -> [(
        name: String, value: AttributeValue
    )] {
        attributes.enumerated().map { offset, attribute in
            (attribute.name, result.value(row, column + Int32(offset), as: attribute.type) ?? .null)
        }
    }
}

extension PostgresStore: PersistentHistoryStore {
    func fetchHistory(after bound: HistoryBound) throws(SkerryError) -> [HistoryTransactionRecord] {
        let q = SQLBuilder.quote
        let condition: (sql: String, value: AttributeValue)
        switch bound {
        case .number(let number): condition = ("t.\"number\" > ?", .int(number ?? 0))
        case .date(let date): condition = ("t.\"timestamp\" > ?", .date(date))
        }
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let identity = identity
        return try withConnection(nil) { connection in
            // One snapshot for the token's check, the transactions and their tombstones.
            try connection.transaction(isolation: "REPEATABLE READ, READ ONLY") {
                if case .number(let number?) = bound { try checkToken(number, connection) }
                let result = try connection.query(
                    """
                    SELECT t."number", t."timestamp", t."author", t."contextName", t."bundleID", t."processID", \
                    c."id", c."changeType", c."entity", c."objectKey", c."updatedProperties" \
                    FROM \(q(Self.historyTransactionsTable)) t LEFT JOIN \(q(Self.historyChangesTable)) c \
                    ON c."transactionNumber" = t."number" WHERE \(condition.sql) ORDER BY t."number", c."id"
                    """, [condition.value])
                var records: [HistoryTransactionRecord] = []
                for row in 0..<result.rowCount {
                    let number = result.int64(row, 0)
                    if records.last?.number != number {
                        let timestamp: Date
                        if case .date(let date)? = result.value(row, 1, as: .date) { timestamp = date } else { timestamp = .distantPast }
                        records.append(
                            HistoryTransactionRecord(
                                number: number, timestamp: timestamp,
                                author: result.isNull(row, 2) ? nil : result.text(row, 2),
                                contextName: result.isNull(row, 3) ? nil : result.text(row, 3),
                                bundleID: result.text(row, 4), processID: result.text(row, 5), changes: []))
                    }
                    guard !result.isNull(row, 6) else { continue }
                    let name = result.text(row, 8)
                    guard let entity = byName[name], let type = PersistentHistoryChangeType(rawValue: Int(result.int64(row, 7))) else {
                        throw SkerryError(
                            .undecodableValue,
                            "The persistent history of \(storeDescription) names a change of '\(name)' that this store cannot read (transaction \(number)).",
                            entityName: name)
                    }
                    let properties = result.isNull(row, 10) ? nil : Set(result.text(row, 10).split(separator: ",").map(String.init))
                    records[records.count - 1].changes.append(
                        PersistentHistoryChange(
                            changeID: result.int64(row, 6),
                            changedObjectID: ObjectID(store: identity, entity: entity, primaryKey: result.int64(row, 9)),
                            changeType: type, updatedProperties: properties, preservedValues: nil))
                }
                return try readTombstones(into: records, condition, connection)
            }
        }
    }

    /// Throws ``SkerryCore/SkerryError/Code/persistentHistoryTokenExpired`` unless the history
    /// after the transaction `number` (a token's) is all there, read in the fetch's snapshot: not
    /// deleted, not past the last transaction, and recorded (tracking not off).
    private func checkToken(_ number: Int64, _ connection: PostgresConnection) throws {
        try PersistentHistoryMetadata.checkToken(
            number, metadata: try Self.schema.readMetadata(connection), last: try Self.lastHistoryNumber(connection),
            store: storeDescription, reopening: "Open it with the option")
    }

    /// Gives the delete changes of `records` the tombstones kept for them (read in the same
    /// snapshot as the records, with the same condition on their transactions).
    private func readTombstones(
        into records: [HistoryTransactionRecord], _ condition: (sql: String, value: AttributeValue), _ connection: PostgresConnection
    ) throws -> [HistoryTransactionRecord] {
        var entityOfChange: [Int64: EntityDescription] = [:]
        for record in records {
            for change in record.changes where change.changeType == .delete {
                entityOfChange[change.changeID] = change.changedObjectID.entity
            }
        }
        // Most entities preserve nothing: no statement then.
        guard entityOfChange.values.contains(where: { !HistoryEntry.preservedAttributes($0).isEmpty }) else { return records }
        let q = SQLBuilder.quote
        let columns = Set(AttributeType.allCases.map(Self.tombstoneColumn)).sorted()
        let result = try connection.query(
            """
            SELECT b."changeID", b."name", \(columns.map { "b." + q($0) }.joined(separator: ", ")) \
            FROM \(q(Self.historyTombstonesTable)) b JOIN \(q(Self.historyChangesTable)) c ON c."id" = b."changeID" \
            JOIN \(q(Self.historyTransactionsTable)) t ON t."number" = c."transactionNumber" WHERE \(condition.sql)
            """, [condition.value])
        var pending: [Int64: [String: AttributeValue]] = [:]
        for row in 0..<result.rowCount {
            let changeID = result.int64(row, 0), name = result.text(row, 1)
            guard let entity = entityOfChange[changeID], let index = entity.attributeIndex(named: name),
                let column = columns.firstIndex(of: Self.tombstoneColumn(entity.attributes[index].type)),
                let value = result.value(row, Int32(2 + column), as: entity.attributes[index].type)
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
                return PersistentHistoryChange(
                    changeID: change.changeID, changedObjectID: change.changedObjectID, changeType: change.changeType,
                    updatedProperties: change.updatedProperties, preservedValues: values)
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
        case .date(let date): condition = ("\"timestamp\" < ?", .date(date))
        }
        // Deleting all history up to now or later (Core Data's `deleteHistory(before: .distantFuture)`)
        // is how tracking is stopped: an opening without the option may then turn it off.
        let clears: Bool
        if case .date(let date) = bound { clears = date >= Date() } else { clears = false }
        return try withConnection(nil) { connection in
            try connection.transaction {
                // Under the history lock: deletes and expiries of several instances take turns.
                try connection.query(Self.historyLockSQL)
                if clears, try Self.schema.readMetadata(connection)[Self.trackingKey] == HistoryTracking.on {
                    try Self.schema.writeMetadata([Self.trackingKey: HistoryTracking.cleared], connection)
                }
                let transactions = "SELECT \"number\" FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql)"
                guard
                    let last = try connection.scalarInt64(
                        "SELECT max(\"number\") FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql)", [condition.value])
                else { return 0 }
                try connection.query(
                    "DELETE FROM \(q(Self.historyTombstonesTable)) WHERE \"changeID\" IN (SELECT \"id\" FROM \(q(Self.historyChangesTable)) WHERE \"transactionNumber\" IN (\(transactions)))",
                    [condition.value])
                try connection.query(
                    "DELETE FROM \(q(Self.historyChangesTable)) WHERE \"transactionNumber\" IN (\(transactions))", [condition.value])
                let count = try connection.query(
                    "DELETE FROM \(q(Self.historyTransactionsTable)) WHERE \(condition.sql)", [condition.value]
                ).affectedRows
                let expired = try Self.schema.readMetadata(connection)[Self.expiredBeforeKey].flatMap(Int64.init) ?? 0
                if last + 1 > expired { try Self.schema.writeMetadata([Self.expiredBeforeKey: String(last + 1)], connection) }
                return count
            }
        }
    }

    func lastHistoryNumber() throws(SkerryError) -> Int64 {
        try withConnection(nil) { connection in
            try connection.transaction(isolation: "REPEATABLE READ, READ ONLY") { try Self.lastHistoryNumber(connection) }
        }
    }
}
