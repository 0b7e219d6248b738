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
}

/// One writer connection and, for file databases, a set of reader connections.
///
/// Writes are serialized on the writer. Reads run on up to `maximumReaderCount` reader
/// connections at once, which in WAL mode never wait for the writer. An in-memory database has
/// a single connection that serves both.
///
/// `@unchecked Sendable`: every connection is only touched inside `write` or `read` while the pool
/// holds the lock that owns it (the writer lock, or the reader checked out of `idleReaders` under
/// `readerLock`); no connection is ever handed out beyond the closure.
final class ConnectionPool: @unchecked Sendable {
    let location: DatabaseLocation
    let settings: ConnectionSettings
    /// What the pool's connections executed.
    let counters: StoreCounters
    private let writer: SQLiteConnection
    private let writerLock = NSLock()
    private let readerLock = NSLock()
    private var idleReaders: [SQLiteConnection] = []
    private let readerSlots: DispatchSemaphore

    /// Opens the writer connection and applies the journal and synchronous modes.
    init(location: DatabaseLocation, settings: ConnectionSettings, counters: StoreCounters = StoreCounters()) throws(SQLiteError) {
        self.counters = counters
        self.location = location
        self.settings = settings
        self.readerSlots = DispatchSemaphore(value: max(1, settings.maximumReaderCount))
        switch location {
        case .memory:
            writer = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: settings.busyTimeout, counters: counters)
        case .file(let path):
            writer = try SQLiteConnection(path: path, readOnly: false, busyTimeout: settings.busyTimeout, counters: counters)
        }
        try writer.execute("PRAGMA synchronous = \(settings.synchronous.rawValue)")
        try writer.execute("PRAGMA foreign_keys = OFF")
    }

    /// Sets the journal mode of a file database. It is a property of the file, so the store calls
    /// this only once it knows the file is its own (a foreign database is left as it was).
    func applyJournalMode() throws(SQLiteError) {
        guard case .file = location else { return }
        writerLock.lock()
        defer { writerLock.unlock() }
        try writer.execute("PRAGMA journal_mode = \(settings.journalMode.rawValue)")
    }

    /// Runs `body` with exclusive use of the writer connection.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        writerLock.lock()
        defer { writerLock.unlock() }
        return try body(writer)
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
        if let idle = readerLock.withLock({ idleReaders.popLast() }) {
            reader = idle
        } else {
            reader = try SQLiteConnection(path: path, readOnly: true, busyTimeout: settings.busyTimeout, counters: counters)
        }
        defer { readerLock.withLock { idleReaders.append(reader) } }
        return try reader.readTransaction { try body(reader) }
    }
}
