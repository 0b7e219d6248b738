import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Entity inheritance is not laid out on PostgreSQL yet: a model with a hierarchy is refused at
/// load, with a typed error naming the sub-entity, before anything is written.
@Suite(.postgres) struct PostgresInheritanceTests {
    @Test func aModelWithSubentitiesIsRefusedAndNothingIsCreated() throws {
        let media = EntityDescription(name: "Media", attributes: [AttributeDescription("title", .string)], isAbstract: true)
        let book = EntityDescription(name: "Book", attributes: [AttributeDescription("pages", .integer32)], superentity: media)
        let model = try ObjectModel(entities: [media, book])
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let stack = PersistentStack(name: "Hierarchy", model: model)
        stack.persistentStoreDescriptions = [.postgres(try PostgresTestServer.require(), maximumConnections: 2, schema: schema)]
        let error = expectError(.storeLoadFailed) { try stack.loadPersistentStores() }
        #expect(error?.entityName == "Book")
        #expect(error?.message.contains("sub-entity of 'Media'") == true)
        let tables = try PostgresTestServer.connect().scalarInt64(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = ?", [.string(schema)])
        #expect(tables == 0)
    }
}
