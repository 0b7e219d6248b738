import Dispatch
import Foundation
import SkerryCore
import Testing

@testable import SkerryPostgres

/// Another session holding a store's history lock in an open transaction, as another instance's
/// save under way does (`shared`: a save without history, which holds it shared until it
/// commits; otherwise a save with history, or a stalled client). The tests that make a store
/// wait for it use either form: ``holding(_:shared:)`` on the calling thread (the connection it
/// returns ends its session, and the lock, when released), or an instance, which holds it on a
/// thread of its own until ``release()``, or until the instance goes (a test that throws before
/// its `release()` leaves no lock held behind it).
final class PostgresHistoryLockHolder: Sendable {
    private let held = DispatchSemaphore(value: 0), releasing = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
    /// Whether ``release()`` ran (it waits for the holder's transaction to end once).
    private let isReleased = Locked(false)
    /// Why the holder could not take the lock or let go of it, if it could not.
    let failure = Locked<String?>(nil)

    /// The statement that takes the history lock (`shared` or not) of the store in the schema
    /// bound to it, as the store takes it (`PostgresStore.historyLockSQL`) in its own schema.
    static func lockSQL(shared: Bool = false) -> String {
        "SELECT pg_advisory_xact_lock\(shared ? "_shared" : "")(hashtextextended('skerry-history:' || ?, 0))"
    }

    /// How many sessions wait for the history lock of the store in the schema given (a bigint
    /// advisory lock shows its halves in `classid` and `objid`, with `objsubid` 1).
    static let waiting = """
        SELECT count(*) FROM pg_locks, (SELECT hashtextextended('skerry-history:' || ?, 0) AS k) AS history \
        WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1 \
        AND classid::bigint = (history.k >> 32) & 4294967295 AND objid::bigint = history.k & 4294967295
        """

    /// A new session that holds the history lock of the store in `schema` in a transaction it
    /// leaves open (ended by the caller's `COMMIT` or `ROLLBACK`).
    static func holding(_ schema: String, shared: Bool = false) throws -> PostgresConnection {
        let holder = try PostgresTestServer.connect()
        try holder.execute("BEGIN")
        try holder.query(lockSQL(shared: shared), [.string(schema)])
        return holder
    }

    /// Takes the history lock of the store in `schema` on a thread of its own, and returns once
    /// it holds it (or failed to: ``failure``). It lets go when told (``release()``), or after
    /// 120 s anyway: a store that waited that long then goes on, and the test's expectations fail
    /// instead of the test hanging. (Not sooner: on a loaded machine a test may take many seconds
    /// to get from taking the lock to letting it go, and the lock must be held until then.)
    init(_ schema: String, shared: Bool = false) {
        let held = held, releasing = releasing, released = released, failure = failure
        Thread.detachNewThread {
            defer { released.signal() }
            do {
                let holder = try Self.holding(schema, shared: shared)
                held.signal()
                _ = releasing.wait(timeout: .now() + 120)
                try holder.execute("ROLLBACK")
            } catch {
                failure.set("\(error)")
                held.signal()
            }
        }
        held.wait()
    }

    /// Lets go of the lock, and returns once the holder's transaction ended; again, does nothing.
    func release() {
        var first = false
        isReleased.update { released in
            first = !released
            released = true
        }
        guard first else { return }
        releasing.signal()
        released.wait()
    }

    deinit { release() }
}
