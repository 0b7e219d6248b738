import Foundation

/// Where a pool's database lives.
enum DatabaseLocation: Sendable, Equatable {
    /// A file at this path.
    case file(String)
    /// A private in-memory database, alive as long as the pool.
    case memory
}

/// Connection settings a pool applies to every connection it opens.
struct ConnectionSettings: Sendable {
    var journalMode: JournalMode = .wal
    var synchronous: SynchronousMode = .normal
    var busyTimeout: TimeInterval = 5
    var maximumReaderCount: Int = 4
    /// Whether every connection opens the file read-only (the store was described read-only).
    var readOnly = false
}

/// One writer connection and, for file databases, a set of reader connections.
///
/// Writes are serialized on the writer. Reads run on up to `maximumReaderCount` reader
/// connections at once, which in WAL mode never wait for the writer. An in-memory database has
/// a single connection that serves both.
///
/// `@unchecked Sendable`: every connection is only touched inside `write` or `read` while the pool
/// holds the lock that owns it (the writer lock, or the reader checked out of `idleReaders` under
/// `readerLock`); no connection is ever handed out beyond the closure. `writer` is only read or
/// set while `writerLock` is held (after `init`), `closed` while `readerLock` is held.
final class ConnectionPool: @unchecked Sendable {
    let location: DatabaseLocation
    let settings: ConnectionSettings
    /// What the pool's connections executed.
    let counters: StoreCounters
    /// nil once the pool is closed (``close()``).
    private var writer: SQLiteConnection?
    /// Whether ``close()`` was called: readers handed back are dropped, none is opened.
    private var closed = false
    private let writerLock = NSLock()
    private let readerLock = NSLock()
    private var idleReaders: [SQLiteConnection] = []
    private let readerSlots: DispatchSemaphore
    /// For a read-only pool on a file whose folder cannot be written (read-only media), where
    /// SQLite cannot make the shared-memory file of a WAL database: every connection opens the file
    /// as immutable (no locks, no side files; nobody can change it there).
    private let immutable: Bool

    /// Opens the writer connection and applies the journal and synchronous modes.
    init(location: DatabaseLocation, settings: ConnectionSettings, counters: StoreCounters = StoreCounters()) throws(SQLiteError) {
        self.counters = counters
        self.location = location
        self.settings = settings
        self.readerSlots = DispatchSemaphore(value: max(1, settings.maximumReaderCount))
        let writer: SQLiteConnection
        switch location {
        case .memory:
            immutable = false
            writer = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: settings.busyTimeout, counters: counters)
        case .file(let path) where settings.readOnly:
            (writer, immutable) = try Self.openReadOnly(path, settings: settings, counters: counters)
        case .file(let path):
            immutable = false
            writer = try SQLiteConnection(path: path, readOnly: false, busyTimeout: settings.busyTimeout, counters: counters)
        }
        self.writer = writer
        if !settings.readOnly { try writer.execute("PRAGMA synchronous = \(settings.synchronous.rawValue)") }
        try writer.execute("PRAGMA foreign_keys = OFF")
    }

    /// Opens `path` read-only and reads its schema once; where that fails because SQLite cannot
    /// make a WAL database's side files (a read-only folder or file system), opens it immutable.
    private static func openReadOnly(
        _ path: String, settings: ConnectionSettings,
        counters: StoreCounters
    ) throws(SQLiteError) -> (SQLiteConnection, Bool) {
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true, busyTimeout: settings.busyTimeout, counters: counters)
            _ = try connection.scalarInt64("SELECT count(*) FROM sqlite_master")
            return (connection, false)
        } catch  where error.code.primaryResultCode == .cannotOpen || error.code.primaryResultCode == .readOnly {
            // Immutable ignores a write-ahead log: refuse rather than read without its commits.
            let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0 // no log file: size 0
            guard log == 0 else {
                throw SQLiteError(
                    extendedResultCode: SQLiteError.ResultCode.cannotOpen.rawValue,
                    message:
                        "cannot open \(path) read-only: its write-ahead log holds commits and its folder cannot be written; open it once where it can be written, so that the log is checkpointed"
                )
            }
            let connection = try SQLiteConnection(
                path: path, readOnly: true, immutable: true,
                busyTimeout: settings.busyTimeout, counters: counters)
            return (connection, true)
        }
    }

    /// Sets the journal mode of a file database. It is a property of the file, so the store calls
    /// this only once it knows the file is its own (a foreign database is left as it was).
    func applyJournalMode() throws(SQLiteError) {
        guard case .file = location, !settings.readOnly else { return }
        writerLock.lock()
        defer { writerLock.unlock() }
        // Setting the mode takes the file's exclusive lock. When several connections ask for it at
        // once while they hold its shared lock (instances loading one fresh file together), SQLite
        // answers SQLITE_BUSY at once to all but one, without calling the busy handler (waiting
        // there could deadlock): those try again, until the busy timeout has passed, as a write
        // would wait. (Clamped: a NaN, negative or huge timeout must not trap.)
        let timeout = settings.busyTimeout.isFinite ? min(max(settings.busyTimeout, 0), 86_400) : 0
        let deadline = ContinuousClock.now + .milliseconds(Int64((timeout * 1000).rounded()))
        while true {
            do {
                try writer?.execute("PRAGMA journal_mode = \(settings.journalMode.rawValue)")
                return
            } catch  where error.code.primaryResultCode == .busy && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
    }

    /// Runs `body` with exclusive use of the writer connection.
    /// - Throws: ``SkerryError/Code/noStore`` once the pool is closed.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        writerLock.lock()
        defer { writerLock.unlock() }
        guard let writer else { throw Self.closedError }
        return try body(writer)
    }

    private static var closedError: SkerryError {
        SkerryError(
            .noStore, "The store was removed from its coordinator (remove(_:) or destroyPersistentStore); its connections are closed.")
    }

    /// Closes the pool's connections: the writer at once (after the write in progress, if any),
    /// idle readers at once, readers in use when their read ends. Later reads and writes throw
    /// ``SkerryError/Code/noStore``. Calling it again does nothing.
    func close() {
        readerLock.withLock {
            closed = true
            idleReaders = []
        }
        writerLock.withLock { writer = nil }
    }

    /// Runs `body` on a reader connection, inside one read transaction so that every statement
    /// sees the same snapshot. An in-memory database reads on its writer.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        guard case .file(let path) = location else {
            return try write { connection in try connection.readTransaction { try body(connection) } }
        }
        readerSlots.wait()
        defer { readerSlots.signal() }
        let reader: SQLiteConnection
        let (isClosed, idle) = readerLock.withLock { (closed, closed ? nil : idleReaders.popLast()) }
        if isClosed {
            throw Self.closedError
        } else if let idle {
            reader = idle
        } else {
            reader = try SQLiteConnection(
                path: path, readOnly: true, immutable: immutable, busyTimeout: settings.busyTimeout,
                counters: counters)
        }
        defer { readerLock.withLock { if !closed { idleReaders.append(reader) } } }
        return try reader.readTransaction { try body(reader) }
    }
}
