import Synchronization

/// What a store did: the I/O a user wants to see. Counted since the store was loaded.
public struct StoreStatistics: Sendable, Hashable, CustomStringConvertible {
    /// SQL statements executed (each run of a prepared statement counts once).
    public var statementsExecuted = 0
    /// Rows SQLite returned to the engine.
    public var rowsRead = 0
    /// Rows inserted, updated or deleted, Skerry's own bookkeeping rows included (the metadata
    /// written when a store is created or migrated, one key-sequence row per entity per save).
    public var rowsWritten = 0

    /// No counts.
    public init() {}

    public var description: String {
        "\(statementsExecuted) statements, \(rowsRead) rows read, \(rowsWritten) rows written"
    }

    /// The counts of `self` since `earlier`.
    public func since(_ earlier: StoreStatistics) -> StoreStatistics {
        var delta = StoreStatistics()
        delta.statementsExecuted = statementsExecuted - earlier.statementsExecuted
        delta.rowsRead = rowsRead - earlier.rowsRead
        delta.rowsWritten = rowsWritten - earlier.rowsWritten
        return delta
    }

    static func + (lhs: StoreStatistics, rhs: StoreStatistics) -> StoreStatistics {
        var sum = lhs
        sum.statementsExecuted += rhs.statementsExecuted
        sum.rowsRead += rhs.rowsRead
        sum.rowsWritten += rhs.rowsWritten
        return sum
    }
}

/// What a context did: how much it read from its source (store or parent) and how much its cache
/// (the registered objects) answered. Counted since the context was created.
public struct ContextStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Requests the context made to its store or parent (fetches, fault fills, relationship loads).
    public var sourceRequests = 0
    /// Rows the context received from its store or parent.
    public var rowsRead = 0
    /// Objects created or filled from rows (new registrations and faults loaded).
    public var objectsMaterialized = 0
    /// Look-ups by ID and relationship reads answered by registered, loaded objects without a read.
    public var cacheHits = 0

    /// No counts.
    public init() {}

    public var description: String {
        "\(sourceRequests) requests, \(rowsRead) rows read, \(objectsMaterialized) objects materialized, \(cacheHits) cache hits"
    }
}

/// Counters a store's connections add to. Each statement counts its rows locally and adds them
/// once per execution, so that counting costs a few atomic additions per statement, not per row.
package final class StoreCounters: Sendable {
    /// Where finished statements are reported when some observer traces them (nil: nowhere).
    let events: EventHub?
    /// The store the statements belong to, for the traces.
    let store: StoreDescription?
    private let statements = Atomic<Int>(0)
    private let rowsRead = Atomic<Int>(0)
    private let rowsWritten = Atomic<Int>(0)

    package init(events: EventHub? = nil, store: StoreDescription? = nil) {
        self.events = events
        self.store = store
    }

    /// When statements are traced, the instant a statement starts; nil otherwise (one atomic load).
    package var traceStart: ContinuousClock.Instant? {
        guard let events, events.tracesStatements else { return nil }
        return .now
    }

    /// Reports a statement that started at `start` (from ``traceStart``) to the observers.
    package func traceFinished(_ sql: String, start: ContinuousClock.Instant, rowsRead: Int, rowsWritten: Int) {
        guard let events, let store else { return }
        events.statementFinished(store: store, sql: sql, duration: .now - start, rowsRead: rowsRead, rowsWritten: rowsWritten)
    }

    /// Records one execution of a statement.
    package func record(rowsRead read: Int, rowsWritten written: Int) {
        statements.add(1, ordering: .relaxed)
        if read > 0 { rowsRead.add(read, ordering: .relaxed) }
        if written > 0 { rowsWritten.add(written, ordering: .relaxed) }
    }

    package var snapshot: StoreStatistics {
        var statistics = StoreStatistics()
        statistics.statementsExecuted = statements.load(ordering: .relaxed)
        statistics.rowsRead = rowsRead.load(ordering: .relaxed)
        statistics.rowsWritten = rowsWritten.load(ordering: .relaxed)
        return statistics
    }
}
