import Foundation
import SkerryCore

/// How a PostgreSQL store connects and behaves: the settings of
/// ``SkerryCore/StoreDescription/postgres(_:maximumConnections:schema:propagatesChanges:)``.
public struct PostgresStoreOptions: Sendable, Hashable {
    /// The libpq connection string: `key=value` pairs or a `postgresql://` URI, with any libpq
    /// setting (`sslmode`, `sslrootcert`, `connect_timeout`, `application_name`, several hosts with
    /// `target_session_attrs`...). Settings it leaves out come from the `PG*` environment
    /// variables and `~/.pgpass`, as for `psql`.
    public var connectionString: String
    /// The most connections the store opens at once. Each context's request holds one connection
    /// for the length of one statement or transaction; a save holds one for its transaction.
    public var maximumConnections: Int
    /// The schema (namespace) that holds the store's tables; nil for the connection's default
    /// (`search_path`, normally `public`). Several stores can share a database in different schemas.
    /// The store puts it first on the search path of its connections (libpq's `options`, after
    /// those the connection string gives).
    public var schema: String?
    /// Whether the stack hears of the saves of other processes using the same store (did-save
    /// events that contexts merge, as they do for saves of the same stack). See the services guide.
    public var propagatesChanges: Bool
    /// How long a save stays in the change table for stacks that propagate changes: a stack cut
    /// off from the database for longer than this cannot learn what it missed (see the services
    /// guide). Default: one hour.
    public var changeRetention: Duration
    /// How long a save of a store that records persistent history waits for the store's history
    /// lock (held by another save from its number to its commit) before it fails: the save is
    /// not written, the context keeps its changes, and the error is `.database` with
    /// `postgres?.sqlState == .lockNotAvailable` (`55P03`), which a caller can retry. A client
    /// that stalls holding the lock (stopped, cut off) would otherwise hold up every saving
    /// instance; see also `idle_in_transaction_session_timeout` in the PostgreSQL guide. An
    /// opening with `PersistentHistoryTrackingKey` that turns tracking on waits as long at most
    /// for the saves under way of instances without the option, then fails to load
    /// (`.storeLoadFailed`; load again). nil waits without bound. Default: 10 seconds.
    public var historyLockTimeout: Duration?

    /// Options with defaults: 8 connections, the default schema, no change propagation, one hour
    /// of change retention, 10 seconds of history lock timeout.
    public init(
        connectionString: String, maximumConnections: Int = 8, schema: String? = nil, propagatesChanges: Bool = false,
        changeRetention: Duration = .seconds(3600), historyLockTimeout: Duration? = .seconds(10)
    ) {
        self.connectionString = connectionString
        self.maximumConnections = maximumConnections
        self.schema = schema
        self.propagatesChanges = propagatesChanges
        self.changeRetention = changeRetention
        self.historyLockTimeout = historyLockTimeout
    }
}

extension StoreDescription {
    /// Describes a store in a PostgreSQL database.
    ///
    /// - Parameters:
    ///   - connectionString: a libpq connection string or URI
    ///     (`postgresql://app@db.example/app?sslmode=verify-full`).
    ///   - maximumConnections: the most connections open at once (default 8).
    ///   - schema: the schema that holds the store's tables (default: the connection's default).
    ///   - propagatesChanges: whether saves of other processes reach this stack's contexts.
    public static func postgres(
        _ connectionString: String, maximumConnections: Int = 8, schema: String? = nil,
        propagatesChanges: Bool = false
    ) -> StoreDescription {
        postgres(
            PostgresStoreOptions(
                connectionString: connectionString, maximumConnections: maximumConnections,
                schema: schema, propagatesChanges: propagatesChanges))
    }

    /// Describes a store in a PostgreSQL database, with every option.
    public static func postgres(_ options: PostgresStoreOptions) -> StoreDescription {
        StoreDescription(kind: .postgres, factory: PostgresStoreFactory(options: options))
    }

    /// The PostgreSQL options of a description made by ``postgres(_:maximumConnections:schema:propagatesChanges:)``;
    /// nil for other kinds.
    public var postgresOptions: PostgresStoreOptions? {
        (storeFactory as? PostgresStoreFactory)?.options
    }
}

extension SkerryError {
    /// The PostgreSQL error underneath, for errors of a PostgreSQL store.
    public var postgres: PostgresError? {
        underlyingError as? PostgresError
    }
}

/// Opens PostgreSQL stores for the stack: what a ``StoreDescription/postgres(_:)`` description carries.
final class PostgresStoreFactory: ObjectStoreFactory {
    let options: PostgresStoreOptions

    init(options: PostgresStoreOptions) {
        self.options = options
    }

    var storeLabel: String {
        "PostgreSQL store (\(PostgresConnectionString.redacted(options.connectionString))"
            + (options.schema.map { ", schema \($0)" } ?? "") + ")"
    }

    func makeStore(
        description: StoreDescription, model: ObjectModel, entities: [EntityDescription],
        events: EventHub?
    ) throws(SkerryError) -> any ObjectStore {
        try PostgresStore(description: description, options: options, model: model, entities: entities, events: events)
    }
}
