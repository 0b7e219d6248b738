import Foundation

/// Something notable a stack's stores or contexts did: the engine's one event hook, which
/// logging, metrics and tracing subscribe to (``PersistentStack/addEventObserver(statements:_:)``).
///
/// Every store kind reports the same events. An event is delivered synchronously on the thread
/// that caused it (a context's queue, or the thread loading the stores); observers keep their work
/// short and never call back into the context that emitted it.
public enum StackEvent: Sendable {
    /// A store finished loading: created, opened as it was, or migrated.
    case storeLoaded(StoreLoadEvent)
    /// A store failed to load; the error is also what `loadPersistentStores` reports.
    case storeLoadFailed(store: StoreDescription, error: SkerryError)
    /// A migration step of a store completed (an automatic migration is one step).
    case migrationStep(MigrationStepEvent)
    /// A store's objects moved into a new store, which took its place
    /// (``StoreCoordinator/migratePersistentStore(_:to:)``): reported once the new store is in
    /// the old one's place. A move that fails reports nothing here (the call throws; a
    /// destination that failed to open reports ``storeLoadFailed(store:error:)``).
    case storeMigrated(StoreMigrationEvent)
    /// A statement finished, as asked with ``StatementTracing``: every statement, or those slower
    /// than a threshold.
    case statement(StatementTrace)
    /// A save met conflicts with the store and its merge policy resolved them (the save then went
    /// on). Conflicts the policy leaves unresolved fail the save instead, with a
    /// ``SkerryError/Code/mergeConflict`` or ``SkerryError/Code/constraintViolation`` error.
    case conflictsResolved(ConflictResolutionEvent)
}

/// How a store load ended.
public struct StoreLoadEvent: Sendable {
    /// What the load did to the store.
    public enum Outcome: Sendable, Hashable {
        /// The store was new: its schema was created.
        case created
        /// The store already had this model's schema.
        case opened
        /// The store's schema was migrated to this model (automatically or by a migration plan).
        case migrated
    }

    /// The store.
    public let store: StoreDescription
    /// What the load did.
    public let outcome: Outcome
    /// The version hash of the model the store now records.
    public let modelVersionHash: String
    /// How long the load took, migration included.
    public let duration: Duration
}

/// One completed migration step.
public struct MigrationStepEvent: Sendable {
    /// The store being migrated.
    public let store: StoreDescription
    /// The step's number, from 1.
    public let step: Int
    /// How many steps the migration has.
    public let stepCount: Int
    /// The version hash of the model the step started from, when known.
    public let fromVersionHash: String?
    /// The version hash of the model the step reached.
    public let toVersionHash: String
    /// What the step changed, in words (for example "added attribute 'Book.subtitle'").
    public let summary: String
    /// How long the step took.
    public let duration: Duration

    /// An event for a step of `store`'s migration (for the stores of other modules of the package).
    package init(
        store: StoreDescription, step: Int, stepCount: Int, fromVersionHash: String?, toVersionHash: String,
        summary: String, duration: Duration
    ) {
        self.store = store
        self.step = step
        self.stepCount = stepCount
        self.fromVersionHash = fromVersionHash
        self.toVersionHash = toVersionHash
        self.summary = summary
        self.duration = duration
    }
}

/// One completed move of a store's objects into a new store
/// (``StoreCoordinator/migratePersistentStore(_:to:)``).
public struct StoreMigrationEvent: Sendable {
    /// The store the objects moved from (closed now; its file or schema stays as it was).
    public let source: StoreDescription
    /// The store they moved into, which took the old one's place (what the call returns).
    public let destination: StoreDescription
    /// The old store's identifier (the host of its objects' URIs, ``ObjectID/uriRepresentation()``).
    public let sourceIdentifier: String
    /// The new store's identifier.
    public let destinationIdentifier: String
    /// How many objects were copied.
    public let objectCount: Int
    /// How long the move took: opening the destination, the copy, and the swap.
    public let duration: Duration

    /// An event for a completed move.
    /// - Parameters:
    ///   - source: the old store.
    ///   - destination: the new store.
    ///   - sourceIdentifier: the old store's identifier.
    ///   - destinationIdentifier: the new store's identifier.
    ///   - objectCount: how many objects were copied.
    ///   - duration: how long the move took.
    package init(
        source: StoreDescription, destination: StoreDescription, sourceIdentifier: String, destinationIdentifier: String,
        objectCount: Int, duration: Duration
    ) {
        self.source = source
        self.destination = destination
        self.sourceIdentifier = sourceIdentifier
        self.destinationIdentifier = destinationIdentifier
        self.objectCount = objectCount
        self.duration = duration
    }
}

/// One statement a store ran: its SQL (with `?` placeholders; values are never included), how long
/// it ran and how many rows it returned or changed.
public struct StatementTrace: Sendable, CustomStringConvertible {
    /// The store that ran it.
    public let store: StoreDescription
    /// The SQL text, as prepared.
    public let sql: String
    /// From the first step to completion (or reset).
    public let duration: Duration
    /// Rows the statement returned.
    public let rowsRead: Int
    /// Rows the statement inserted, updated or deleted.
    public let rowsWritten: Int

    /// Creates a trace (stores create them; public so that tests and other stores can).
    public init(store: StoreDescription, sql: String, duration: Duration, rowsRead: Int, rowsWritten: Int) {
        self.store = store
        self.sql = sql
        self.duration = duration
        self.rowsRead = rowsRead
        self.rowsWritten = rowsWritten
    }

    public var description: String {
        "\(sql) (\(duration), \(rowsRead) rows read, \(rowsWritten) rows written)"
    }
}

/// Conflicts a merge policy resolved during one save.
public struct ConflictResolutionEvent: Sendable {
    /// The saving context's name.
    public let contextName: String?
    /// The policy that resolved them.
    public let policy: MergePolicy
    /// Updated or deleted objects whose row had changed (or vanished) in the store.
    public let changedObjects: [ObjectID]
    /// How many inserts collided with a uniqueness constraint.
    public let uniquenessConflicts: Int
}

/// Which statements an event observer receives as ``StackEvent/statement(_:)``.
public enum StatementTracing: Sendable, Hashable {
    /// None (the default): statements are not even timed for this observer.
    case none
    /// Those that ran for at least this long: slow-statement reports.
    case slowerThan(Duration)
    /// Every statement: a SQL trace.
    case all

    /// The threshold in nanoseconds, or nil for none.
    var thresholdNanoseconds: Int64? {
        switch self {
        case .none: return nil
        case .all: return 0
        case .slowerThan(let duration): return max(0, duration.nanoseconds)
        }
    }
}

/// A registration of an event observer; the observer is called until ``cancel()``.
public final class EventObservation: Sendable {
    private let cancellation: @Sendable () -> Void

    init(cancellation: @escaping @Sendable () -> Void) {
        self.cancellation = cancellation
    }

    /// Stops the observer. Calling it again does nothing.
    public func cancel() { cancellation() }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = product.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (product < 0 ? .min : .max) : sum
    }
}
