import CLibPQ
import Foundation
import SkerryCore
import Synchronization

/// Hears the saves other processes (and other stacks) make to one PostgreSQL store and hands
/// them to the stack: one connection per store that opted in, `LISTEN`ing on the store's
/// channel, on a thread of its own.
///
/// A `NOTIFY` only wakes the listener; what it delivers comes from the change table, read from
/// a cursor: every change whose transaction may still have been running at the last read (a
/// transaction ID at or above that read's snapshot `xmin`) is read again, and changes already
/// delivered are skipped by id. So a save is delivered once it committed, whatever order
/// transactions committed in, after a lost notification (the listener also reads every few
/// seconds) and after a reconnection (it resumes from its cursor) — as long as the change is
/// still in the table (kept for ``PostgresStoreOptions/changeRetention``). When changes it had not
/// read were deleted for age (the listener was away longer than that), it says so once
/// (``SavesOfOthers/missed``): the pruning records the highest transaction it deleted, and a
/// listener whose cursor is at or below it may have lost some.
final class PostgresChangeListener: Sendable {
    /// Where the listener has read up to: changes of transactions below `watermark` are all
    /// read; those at or above it that were already delivered are in `delivered` (id: transaction).
    struct Cursor {
        var watermark: Int64
        var delivered: [Int64: Int64] = [:]
        /// The highest transaction of the pruned changes, at the last read.
        var pruned: Int64 = 0
    }

    /// The connection and cursor handed from the loading thread to the listener's thread.
    ///
    /// `@unchecked Sendable`: the connection is used by the loading thread only until the
    /// listener's thread takes it out of `state` (under its lock, once), then by that thread only;
    /// a listener stopped before it started drops it unused.
    private struct Handover: @unchecked Sendable {
        let connection: PostgresConnection
        let cursor: Cursor
    }

    private let connectionString: String
    private let channel: String
    private let origin: String
    private let identity: StoreIdentity
    private let entities: [String: EntityDescription]
    private let retention: Duration
    private let state: Mutex<Handover?>
    private let stopped = Atomic<Bool>(false)
    /// Whether the thread was started, and whether it may still be.
    private enum Phase { case notStarted, running, stopped }
    private let phase = Mutex<Phase>(.notStarted)
    /// Signalled by the thread once it ended and closed its connection.
    private let finished = DispatchSemaphore(value: 0)
    /// The server process of the listener's current connection (for tests that cut it).
    let backendPID = Atomic<Int32>(0)
    /// For tests that keep the listener away: while `holdRequested` is set the listener reads
    /// nothing, and `isHeld` says that it has stopped reading.
    let holdRequested = Atomic<Bool>(false), isHeld = Atomic<Bool>(false)

    /// Connects, listens, and takes the starting cursor now — so that every save committed after
    /// the store loaded is delivered, even one made before the thread runs.
    /// - Throws: ``PostgresError`` when the server cannot be reached.
    init(
        connectionString: String, channel: String, origin: String, identity: StoreIdentity,
        entities: [EntityDescription], retention: Duration
    ) throws {
        self.connectionString = connectionString
        self.channel = channel
        self.origin = origin
        self.identity = identity
        self.entities = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.retention = retention
        let connection = try PostgresConnection(connectionString: connectionString)
        try connection.listen(channel)
        var cursor = Cursor(watermark: 0)
        _ = try Self.read(connection, &cursor, starting: true) // what is in the table already is not news
        state = Mutex(Handover(connection: connection, cursor: cursor))
        backendPID.store(PQbackendPID(connection.handle), ordering: .relaxed)
    }

    /// Starts the listener's thread, which hands each save of others to `deliver`. Only the
    /// first call starts it, and none after ``stopAndWait()``.
    func start(_ deliver: @escaping @Sendable (SavesOfOthers) -> Void) {
        let starts = phase.withLock { phase -> Bool in
            guard phase == .notStarted else { return false }
            phase = .running
            return true
        }
        guard starts else { return }
        let thread = Thread { [self] in run(deliver) }
        thread.name = Self.threadName
        thread.start()
    }

    /// Stops the thread (within a fraction of a second) and closes its connection.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Stops the thread and returns once its connection is closed (a listener never started
    /// closes its connection at once): for a store removed from its coordinator, whose
    /// connections are gone when `remove(_:)` returns. Called on the listener's own thread (from
    /// a delivery), it does not wait for itself; it waits 10 s at most.
    func stopAndWait() {
        stopped.store(true, ordering: .relaxed)
        let wasRunning = phase.withLock { phase -> Bool in
            defer { phase = .stopped }
            return phase == .running
        }
        if !wasRunning {
            let unused = state.withLock { value -> Handover? in
                defer { value = nil }
                return value
            }
            _ = unused // closed here, outside the lock
        } else if Thread.current.name != Self.threadName {
            // The thread notices within a fraction of a second, unless a read of the change table
            // hangs on a dead network: then give up waiting (the thread closes the connection
            // when that read fails) rather than hang the caller.
            if finished.wait(timeout: .now() + Self.stopTimeout) == .success {
                finished.signal() // for any other caller waiting too
            }
        }
    }

    /// The longest ``stopAndWait()`` waits for the thread.
    private static let stopTimeout: DispatchTimeInterval = .seconds(10)

    private static let threadName = "skerry.postgres.changes"

    /// Seconds between reads of the change table when no notification came: short while a
    /// change may be pending behind a running transaction, longer otherwise.
    private static let pollWhilePending = 0.5, pollIdle = 5.0, pruneInterval = 60.0

    private func run(_ deliver: @escaping @Sendable (SavesOfOthers) -> Void) {
        defer { finished.signal() }
        // The handover is taken out of `state` here, so that `connection` is the only reference to
        // the connection: it closes when this function sets it to nil.
        var connection: PostgresConnection?
        var cursor: Cursor
        do {
            let taken = state.withLock { value -> Handover? in
                defer { value = nil }
                return value
            }
            guard let taken else { return }
            connection = taken.connection
            cursor = taken.cursor
        }
        var lastRead = ContinuousClock.now, lastPrune = ContinuousClock.now - .seconds(Self.pruneInterval)
        var failures = 0
        while !stopped.load(ordering: .relaxed) {
            if holdRequested.load(ordering: .relaxed) {
                isHeld.store(true, ordering: .relaxed)
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            isHeld.store(false, ordering: .relaxed)
            do {
                let current: PostgresConnection
                if let connection {
                    current = connection
                } else {
                    current = try PostgresConnection(connectionString: connectionString)
                    try current.listen(channel)
                    backendPID.store(PQbackendPID(current.handle), ordering: .relaxed)
                    connection = current
                    lastRead = ContinuousClock.now - .seconds(Self.pollIdle) // catch up at once
                }
                let woken = try !current.waitForNotifications(timeout: 0.25).isEmpty
                // Changes read at or above the watermark: a transaction may still be running below them.
                let pending = !cursor.delivered.isEmpty
                let due = ContinuousClock.now - lastRead >= .seconds(pending ? Self.pollWhilePending : Self.pollIdle)
                if woken || due {
                    lastRead = ContinuousClock.now
                    let (missed, records) = try Self.read(current, &cursor)
                    if missed { deliver(.missed) }
                    for record in records where record.origin != origin {
                        let changes = record.changes.storeChanges(identity, entities)
                        if !changes.isEmpty { deliver(.saved(changes)) }
                    }
                }
                if ContinuousClock.now - lastPrune >= .seconds(Self.pruneInterval) {
                    lastPrune = ContinuousClock.now
                    try Self.prune(current, retention: retention)
                }
                failures = 0
            } catch {
                // The connection broke (or the server refused a statement): reconnect after a
                // pause and resume from the cursor, so that nothing committed meanwhile is lost.
                connection = nil
                failures += 1
                let pause = min(5.0, 0.25 * Double(1 << min(failures, 5)))
                var waited = 0.0
                while waited < pause && !stopped.load(ordering: .relaxed) {
                    Thread.sleep(forTimeInterval: 0.1)
                    waited += 0.1
                }
            }
        }
        connection = nil // the last reference: closed before `finished` is signalled
    }

    /// Reads the changes not yet seen from `cursor`, in one snapshot, and moves the cursor.
    /// Every transaction below the snapshot's `xmin` has ended (committed: visible; rolled back:
    /// absent), so the next read starts there; changes at or above it are kept by id to skip.
    /// `starting`: the first read, which starts at `xmin` (older changes are not news).
    /// Returns whether changes this cursor had not read were pruned since the last read (the
    /// pruned transactions reach its watermark), and the changes read.
    static func read(
        _ connection: PostgresConnection, _ cursor: inout Cursor,
        starting: Bool = false
    ) throws -> (missed: Bool, records: [(origin: String, changes: PostgresChangeRecord)]) {
        let q = SQLBuilder.quote
        return try connection.transaction(isolation: "REPEATABLE READ READ ONLY") {
            let xmin = try connection.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint").int64(0, 0)
            let pruned = try connection.query("SELECT coalesce(max(\"transaction\"), 0) FROM \(q(PostgresStore.prunedTable))").int64(0, 0)
            // Every change below the watermark was read; one at or above it may not have been.
            let missed = !starting && pruned > cursor.pruned && pruned >= cursor.watermark
            cursor.pruned = pruned
            let rows = try connection.query(
                "SELECT \"id\", \"transaction\", \"origin\", \"changes\" FROM \(q(PostgresStore.changesTable)) WHERE \"transaction\" >= ? ORDER BY \"id\"",
                [.int(starting ? xmin : cursor.watermark)])
            var records: [(String, PostgresChangeRecord)] = []
            let decoder = JSONDecoder()
            for row in 0..<rows.rowCount {
                let id = rows.int64(row, 0), transaction = rows.int64(row, 1)
                guard cursor.delivered[id] == nil else { continue }
                cursor.delivered[id] = transaction
                // A record another version of Skerry wrote in a form this one cannot read names
                // nothing this process can merge: skipped, as a change to an unknown entity is.
                guard let record = try? decoder.decode(PostgresChangeRecord.self, from: Data(rows.text(row, 3).utf8)) else { continue }
                records.append((rows.text(row, 2), record))
            }
            cursor.watermark = max(cursor.watermark, xmin)
            cursor.delivered = cursor.delivered.filter { $0.value >= cursor.watermark }
            return (missed, records)
        }
    }

    /// Deletes the changes older than `retention` (any listener may), and records the highest
    /// transaction deleted, in the same statement.
    static func prune(_ connection: PostgresConnection, retention: Duration) throws {
        let q = SQLBuilder.quote
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        try connection.query(
            """
            WITH gone AS (DELETE FROM \(q(PostgresStore.changesTable)) WHERE "savedAt" < now() - make_interval(secs => ?) \
            RETURNING "transaction") \
            UPDATE \(q(PostgresStore.prunedTable)) SET "transaction" = GREATEST("transaction", (SELECT max("transaction") FROM gone)) \
            WHERE EXISTS (SELECT 1 FROM gone)
            """,
            [.double(seconds)])
    }
}
