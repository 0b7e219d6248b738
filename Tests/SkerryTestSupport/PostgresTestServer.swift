import Foundation
import SkerryCore
import SkerryPostgres
import Testing

/// The PostgreSQL server the tests run against: the one `scripts/postgres-server.sh` started,
/// named by `SKERRY_TEST_POSTGRES` (a libpq connection string). Without it, the PostgreSQL tests
/// are skipped and the SQLite tests still run. Each store gets a schema of its own, so that tests
/// running at once never see each other's rows.
public enum PostgresTestServer {
    /// The connection string of the test server's Unix socket, or nil when no server was started.
    public static let connectionString: String? = ProcessInfo.processInfo.environment["SKERRY_TEST_POSTGRES"]
    /// The same server over TCP on the loopback address (TLS available), as a URI.
    public static let tcpURI: String? = ProcessInfo.processInfo.environment["SKERRY_TEST_POSTGRES_TCP"]

    /// Whether a server is available.
    public static var isAvailable: Bool { connectionString != nil }

    /// The connection string, or a test failure when there is none.
    public static func require() throws -> String {
        try #require(connectionString, "SKERRY_TEST_POSTGRES is not set: run the tests through scripts/postgres-server.sh")
    }

    /// A name for a new, empty schema (the store creates it).
    public static func newSchema() -> String {
        "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// A description of a store in `schema` of the test server.
    public static func description(
        schema: String = newSchema(), maximumConnections: Int = 2, propagatesChanges: Bool = false, plan: MigrationPlan? = nil
    ) throws -> StoreDescription {
        var description = StoreDescription.postgres(
            try require(), maximumConnections: maximumConnections, schema: schema, propagatesChanges: propagatesChanges)
        description.migrationPlan = plan
        return description
    }

    /// A stack of `model` over a store in `schema` of the test server, loaded (and migrated, by
    /// `plan` where given).
    public static func stack(
        _ model: ObjectModel, _ schema: String, name: String = "Postgres", maximumConnections: Int = 2, plan: MigrationPlan? = nil
    ) throws -> PersistentStack {
        let stack = PersistentStack(name: name, model: model)
        stack.persistentStoreDescriptions = [try description(schema: schema, maximumConnections: maximumConnections, plan: plan)]
        try stack.loadPersistentStores()
        return stack
    }
}
