import Foundation
// Every file of this target sees the shared test kit without importing it.
@_exported import SkerryTestSupport
import Testing

@testable import SkerryPostgres

/// The PostgreSQL server the tests run against: the one `scripts/postgres-server.sh` started,
/// named by `SKERRY_TEST_POSTGRES` (a libpq connection string). Without it, the PostgreSQL
/// suites are skipped and the SQLite suites still run.
enum PostgresTestServer {
    /// The connection string of the test server's Unix socket, or nil when no server was started.
    static let connectionString: String? = ProcessInfo.processInfo.environment["SKERRY_TEST_POSTGRES"]
    /// The same server over TCP on the loopback address (TLS available), as a URI.
    static let tcpURI: String? = ProcessInfo.processInfo.environment["SKERRY_TEST_POSTGRES_TCP"]

    /// Whether a server is available.
    static var isAvailable: Bool { connectionString != nil }

    /// The connection string, or a test failure when there is none.
    static func require() throws -> String {
        try #require(connectionString, "SKERRY_TEST_POSTGRES is not set: run the tests through scripts/postgres-server.sh")
    }

    /// A new connection to the test server.
    static func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: require())
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when a PostgreSQL test server is available.
    static var postgres: Self {
        .enabled(if: PostgresTestServer.isAvailable, "no PostgreSQL test server (SKERRY_TEST_POSTGRES is not set)")
    }
}
