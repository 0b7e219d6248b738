import Foundation
import SkerryCore
import Testing

@testable import SkerryPostgres

/// The test helper that holds a store's history lock from another session: a test that ends
/// without letting go (it threw before its `release()`) leaves no lock held for the tests after it.
@Suite(.postgres) struct PostgresHistoryLockHolderTests {
    @Test func aHolderNotReleasedLetsGoOfTheLockWhenItGoes() throws {
        struct Thrown: Error {}
        let schema = "holder_\(UInt32.random(in: 0...UInt32.max))"
        let other = try PostgresTestServer.connect()
        // Whether another session can take the lock now (it lets go at once, with its transaction).
        func isFree() throws -> Bool {
            try other.transaction {
                try other.scalarInt64(
                    "SELECT CASE WHEN pg_try_advisory_xact_lock(hashtextextended('skerry-history:' || ?, 0)) THEN 1 ELSE 0 END",
                    [.string(schema)]) == 1
            }
        }
        #expect(throws: Thrown.self) {
            let holder = PostgresHistoryLockHolder(schema)
            #expect(holder.failure.value == nil)
            #expect(try !isFree())
            throw Thrown()
        }
        // At once, not after the holder's 10 s.
        #expect(try isFree())
        let released = PostgresHistoryLockHolder(schema)
        released.release()
        released.release() // again: nothing to wait for
        #expect(try isFree())
    }
}
