import Foundation
import SkerryCore
import SkerryTestSupport
import Testing

/// Core Data's `NSBatchDeleteRequest(objectIDs:)`, its status-only result, and remote merges into
/// nested contexts, on PostgreSQL: the scenarios BatchDeleteByIDTests runs on SQLite.
@Suite(.postgres) struct PostgresBatchDeleteTests {
    static func stack() throws -> PersistentStack {
        try PostgresTestServer.stack(BatchDeleteScenarios.model, PostgresTestServer.newSchema(), maximumConnections: 4)
    }

    @Test func deletesByObjectIDs() throws {
        try BatchDeleteScenarios.deletesByObjectIDs(Self.stack())
    }

    @Test func statusOnlyIsCoreDatasDefault() throws {
        try BatchDeleteScenarios.statusOnlyIsCoreDatasDefault(Self.stack())
    }

    @Test func refusesIDsItCannotDelete() throws {
        try BatchDeleteScenarios.refusesIDsItCannotDelete(Self.stack(), otherStack: Self.stack())
    }

    @Test func deletesManyObjectIDs() throws {
        try BatchDeleteScenarios.deletesManyObjectIDs(Self.stack())
    }

    @Test func remoteMergesReachNestedContexts() throws {
        try BatchDeleteScenarios.remoteMergesReachNestedContexts(Self.stack())
    }
}
