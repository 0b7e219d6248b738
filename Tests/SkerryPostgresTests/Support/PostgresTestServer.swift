import Foundation
// Every file of this target sees the shared test kit without importing it.
@_exported import SkerryTestSupport
import Testing

@testable import SkerryPostgres

// The test server itself (connection string, schemas, stacks) is SkerryTestSupport's
// PostgresTestServer, shared with the core tests' PostgreSQL store kind.
extension PostgresTestServer {
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
