import Foundation
import SkerryCore
import Synchronization

/// A store kept in a PostgreSQL database: one table per entity (in the description's schema), a
/// metadata table, one key sequence per entity hierarchy, and a pool of connections.
///
/// The tables have the SQLite store's shape — a `bigint` key `_pk`, a `_version` for optimistic
/// locking, one column per attribute in its native PostgreSQL type, and relationships kept the
/// same way (foreign-key columns, order columns, join tables) — so that both stores follow one
/// layout (``SQLiteStoreLayout``) and one SQL generator (``SQLBuilder`` in its PostgreSQL dialect).
///
/// Entity inheritance is laid out as in the SQLite store: each entity of a hierarchy has its own
/// table, keys are unique in the hierarchy (they come from the root's sequence), a read of an
/// entity with sub-entities reads the union of its family's tables, and a uniqueness constraint
/// declared on a parent holds across its sub-entities' tables (triggers).
///
/// Several processes may use one store at once: keys come from sequences (never handed out
/// twice), every update and delete checks the version the context read, and a schema change
/// runs in one transaction while other loading processes wait on an advisory lock.
final class PostgresStore: ObjectStore {
    let identity: StoreIdentity
    let storeDescription: StoreDescription
    let options: PostgresStoreOptions
    /// The entities this store holds.
    let entities: [EntityDescription]
    /// The model.
    let model: ObjectModel
    /// Where each entity's relationships are kept, and the SQL of its rows.
    let layout: SQLiteStoreLayout
    /// The statements of a save, in PostgreSQL's dialect.
    let planner: StoreWritePlanner
    /// How each entity's rows are read into objects' storage, by entity.
    let rowReadings: [ObjectIdentifier: PostgresRowReading]
    let pool: PostgresConnectionPool
    /// This store instance's name in the change table: its own saves are not news to it.
    let origin = UUID().uuidString
    /// Hears the saves of others, when the description asked for change propagation.
    let listener: PostgresChangeListener?
    /// Whether saves and batch deletes are recorded in the store's persistent history
    /// (PostgresStore+History.swift).
    let tracksPersistentHistory: Bool
    /// Why the store refuses writes: it tracks persistent history and was opened without the option.
    let historyReadOnlyReason: String?
    /// How many times a write was begun again because the server ended it to break a deadlock
    /// or a serialization conflict (``write(_:resolving:then:)``): for tests, which expect none where the
    /// store's locks rule deadlocks out.
    let writesRetried = Atomic<Int>(0)

    /// Opens the store: connects, creates or checks (and additively migrates) the schema.
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` when the server cannot be reached or the
    ///   schema is not a Skerry store; ``SkerryError/Code/modelMismatch`` when the store was
    ///   written with a model that cannot be migrated automatically. The database is left as it
    ///   was on any failure (schema changes are transactional).
    init(
        description: StoreDescription, options: PostgresStoreOptions, model: ObjectModel,
        entities: [EntityDescription], events: EventHub? = nil
    ) throws(SkerryError) {
        self.storeDescription = description
        self.options = options
        self.entities = entities
        self.model = model
        try StoreSchema.checkDestinationsHeld(entities, description)
        do {
            try PostgresConnectionString.validate(options.connectionString)
        } catch {
            throw Self.loadError(error, description)
        }
        pool = PostgresConnectionPool(
            connectionString: Self.connectionString(options), maximumConnections: options.maximumConnections,
            counters: StoreCounters(events: events, store: description))
        let identifier = try Self.prepareSchema(
            pool: pool, description: description, options: options, model: model, entities: entities, events: events)
        identity = StoreIdentity(identifier: identifier)
        (tracksPersistentHistory, historyReadOnlyReason) = try Self.prepareHistory(
            pool: pool, description: description,
            tables: entities.map(\.name) + RelationshipLayout(entities: entities).joinTables, lockTimeout: options.historyLockTimeout)
        layout = SQLiteStoreLayout(entities: entities, identity: identity)
        planner = StoreWritePlanner(layout: layout, dialect: .postgres)
        rowReadings = Self.rowReadings(entities)
        if options.propagatesChanges {
            do {
                listener = try PostgresChangeListener(
                    connectionString: pool.connectionString, channel: Self.changesChannel(identifier),
                    origin: origin, identity: identity, entities: entities,
                    retention: options.changeRetention)
            } catch {
                throw Self.loadError(
                    error as? PostgresError ?? PostgresError(sqlState: .connectionFailure, message: "\(error)"), description)
            }
        } else {
            listener = nil
        }
    }

    deinit { listener?.stop() }

    /// Closes the store's connections once it was removed from its coordinator
    /// (`StoreCoordinator.remove(_:)`, `destroyPersistentStore`): the change listener's at once
    /// (after the read in progress), the pool's idle ones at once and those in use when their
    /// work ends; later work throws ``SkerryError/Code/noStore``.
    func close() {
        listener?.stopAndWait()
        pool.close()
    }

    /// The connection string with the schema put first on the search path: libpq's `options`
    /// parameter gets `-c search_path=...` for every connection of the pool, after the options
    /// the string has (a `default_transaction_isolation` or `statement_timeout` of the user's).
    static func connectionString(_ options: PostgresStoreOptions) -> String {
        guard let schema = options.schema else { return options.connectionString }
        let searchPath = "-c search_path=\(SQLBuilder.quote(schema).replacingOccurrences(of: " ", with: "\\ "))"
        // A malformed string is left as it is: opening it fails with libpq's explanation.
        return (try? PostgresConnectionString.adding(option: searchPath, to: options.connectionString)) ?? options.connectionString
    }

    static func loadError(_ error: PostgresError, _ description: StoreDescription) -> SkerryError {
        var failure = SkerryError(.storeLoadFailed, "Cannot load \(description): \(error.message)")
        failure.underlyingError = error
        return failure
    }

    var statistics: StoreStatistics { pool.counters.snapshot }

    // MARK: Connection access with error mapping

    /// Runs `body` on a connection of the pool, turning errors into ``SkerryError``s.
    func withConnection<T>(_ entity: EntityDescription?, _ body: (PostgresConnection) throws -> T) throws(SkerryError) -> T {
        do {
            return try pool.withConnection(body)
        } catch {
            throw Self.mapError(error, entity: entity)
        }
    }

    /// Any error of the store as a ``SkerryError``: a PostgreSQL unique violation is
    /// ``SkerryError/Code/constraintViolation``, other PostgreSQL errors ``SkerryError/Code/database``,
    /// each carrying the ``PostgresError``.
    static func mapError(_ error: any Error, entity: EntityDescription?) -> SkerryError {
        switch error {
        case let error as SkerryError:
            return error
        case let error as PostgresError where error.sqlState == .lockNotAvailable:
            var mapped = SkerryError(
                .database,
                "Timed out waiting for a lock (PostgresStoreOptions.historyLockTimeout for the persistent history's lock; another save holds it): nothing was written; the save can be tried again. \(error.message)",
                entityName: entity?.name)
            mapped.underlyingError = error
            return mapped
        case let error as PostgresError:
            var mapped = SkerryError(
                error.isUniqueViolation ? .constraintViolation : .database,
                error.isUniqueViolation ? "A uniqueness constraint failed: \(error.message)" : error.message,
                entityName: entity?.name)
            mapped.underlyingError = error
            return mapped
        default:
            return SkerryError(.database, "\(error)", entityName: entity?.name)
        }
    }

    static func undecodable(_ entity: EntityDescription, _ attribute: AttributeDescription, primaryKey: Int64) -> SkerryError {
        SkerryError(
            .undecodableValue,
            "The stored value of '\(entity.name).\(attribute.name)' in row \(primaryKey) is not a valid \(attribute.type).",
            entityName: entity.name, key: attribute.name)
    }
}
