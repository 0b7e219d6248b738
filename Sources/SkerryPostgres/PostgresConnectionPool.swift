import Foundation
import SkerryCore
import Synchronization

/// A bounded set of connections to one PostgreSQL database, opened on demand and reused.
///
/// Unlike SQLite's single writer, PostgreSQL serves concurrent writers itself: any connection
/// reads or writes. A caller waits when every connection is in use; a connection that broke
/// (the server restarted, the network failed) is closed and replaced on the next use.
///
/// Once ``close()`` was called (the store was removed from its coordinator), no connection is
/// opened or handed out again: idle connections are closed at once, those in use when their
/// caller is done, and later callers get ``SkerryError/Code/noStore``.
///
/// `@unchecked Sendable`: a connection is touched only inside `withConnection`, by the one caller
/// that took it out of `idle` under `state`'s lock; it goes back to `idle` (or is closed) when the
/// closure ends and is never handed out beyond the closure.
final class PostgresConnectionPool: @unchecked Sendable {
    let connectionString: String
    let maximumConnections: Int
    /// What the pool's connections executed (and where statement traces go).
    let counters: StoreCounters
    private let state = Mutex<State>(State())
    private let slots: DispatchSemaphore

    struct State {
        var idle: [Idle] = []
        var opened = 0
        /// Set by ``close()``: no connection is handed out or kept idle any more.
        var closed = false
    }

    /// An idle connection, owned by the pool's state while it waits for its next user.
    ///
    /// `@unchecked Sendable`: whoever takes it out of `State.idle` (under the lock) is its only
    /// user until it puts it back; nobody keeps a reference across that hand-over.
    struct Idle: @unchecked Sendable {
        let connection: PostgresConnection
    }

    /// Creates a pool; no connection is opened until the first use.
    /// - Parameters:
    ///   - connectionString: a libpq connection string (`key=value` pairs or a URI).
    ///   - maximumConnections: the most connections open at once (at least 1).
    ///   - counters: what the connections count their statements in.
    init(connectionString: String, maximumConnections: Int, counters: StoreCounters = StoreCounters()) {
        self.connectionString = connectionString
        self.counters = counters
        self.maximumConnections = max(1, maximumConnections)
        self.slots = DispatchSemaphore(value: self.maximumConnections)
    }

    /// How many connections are open (idle or in use).
    var openConnections: Int { state.withLock { $0.opened } }

    /// Runs `body` with exclusive use of a connection, waiting for one if all are busy.
    /// - Throws: ``PostgresError`` when no connection can be opened,
    ///   ``SkerryError/Code/noStore`` once the pool is closed, or what `body` throws.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        slots.wait()
        defer { slots.signal() }
        let connection: PostgresConnection
        let (isClosed, idle) = state.withLock { state in (state.closed, state.closed ? nil : state.idle.popLast()) }
        if isClosed {
            throw Self.closedError
        } else if let idle {
            connection = idle.connection
        } else {
            connection = try PostgresConnection(connectionString: connectionString, counters: counters)
            state.withLock { $0.opened += 1 }
        }
        defer {
            let reusable = connection.isReusable
            let idle = Idle(connection: connection)
            state.withLock { state in
                if reusable && !state.closed {
                    state.idle.append(idle)
                } else {
                    state.opened -= 1 // closed when the last reference goes, here or in `close()`
                }
            }
        }
        return try body(connection)
    }

    private static var closedError: SkerryError {
        SkerryError(
            .noStore, "The store was removed from its coordinator (remove(_:) or destroyPersistentStore); its connections are closed.")
    }

    /// Closes the pool for good: idle connections at once, connections in use when their caller
    /// is done with them. Later uses throw ``SkerryError/Code/noStore``. Calling it again does
    /// nothing.
    func close() {
        let closing = state.withLock { state -> [Idle] in
            state.closed = true
            let idle = state.idle
            state.idle.removeAll()
            state.opened -= idle.count
            return idle
        }
        _ = closing // released here, outside the lock: PQfinish may wait on the network
    }

    /// Closes every idle connection (those in use close when their caller is done).
    func closeIdleConnections() {
        let closing = state.withLock { state -> [Idle] in
            let idle = state.idle
            state.idle.removeAll()
            state.opened -= idle.count
            return idle
        }
        _ = closing // released here, outside the lock: PQfinish may wait on the network
    }
}
