import Foundation
import SkerryCore
import SkerryTestSupport
import Testing

/// `EntityObject` subclasses on PostgreSQL: the scenario SubclassTests runs on SQLite files.
@Suite(.postgres) struct PostgresSubclassTests {
    @Test func objectsOfTheStoreAreOfTheirEntitiesClasses() throws {
        let schema = PostgresTestServer.newSchema()
        try SubclassScenarios.roundTrip(
            PostgresTestServer.stack(SubclassScenarios.model(), schema),
            reopened: PostgresTestServer.stack(SubclassScenarios.model(), schema))
    }
}
