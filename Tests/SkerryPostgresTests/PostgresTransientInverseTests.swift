import Foundation
import SkerryCore
import Testing

@testable import SkerryPostgres

/// A PostgreSQL store written when a stored relationship whose inverse is transient was not
/// stored (neither side was) opens with the relationship's join table or column added, and
/// keeps its links from then on (the SQLite store's case is in TransientInverseTests).
@Suite(.postgres) struct PostgresTransientInverseTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Company", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("employees", destination: "Employee", inverse: "company", toMany: true)]),
        EntityDescription(
            name: "Employee", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("company", destination: "Company", inverse: "employees", isTransient: true),
                RelationshipDescription("badge", destination: "Badge", inverse: "holders"),
            ]),
        EntityDescription(
            name: "Badge", attributes: [AttributeDescription("code", .string)],
            relationships: [RelationshipDescription("holders", destination: "Employee", inverse: "badge", toMany: true, isTransient: true)]),
    ])

    @Test func aStoreWrittenWhenNeitherSideWasStoredOpensWithTheStorageAdded() throws {
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(Self.model, schema)
        // What earlier versions made of this model: no join table, no column for these relationships.
        let connection = try PostgresTestServer.connect()
        try connection.execute("DROP TABLE \"\(schema)\".\"_Company_employees\"")
        try connection.execute("ALTER TABLE \"\(schema)\".\"Employee\" DROP COLUMN \"badge\"")

        let stack = try PostgresTestServer.stack(Self.model, schema)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let company = try context.insert(entityName: "Company")
            try company.setValue("Acme", forKey: "name")
            let badge = try context.insert(entityName: "Badge")
            try badge.setValue("B-1", forKey: "code")
            for name in ["Ada", "Bob"] {
                let employee = try context.insert(entityName: "Employee")
                try employee.setValue(name, forKey: "name")
                try employee.setRelatedObject(company, forKey: "company")
                try badge.addRelatedObject(employee, forKey: "holders")
            }
            try context.save()
        }
        #expect(try connection.scalarInt64("SELECT count(*) FROM \"\(schema)\".\"_Company_employees\"") == 2)
        let reader = try PostgresTestServer.stack(Self.model, schema).newBackgroundContext()
        try reader.performAndWait {
            let company = try #require(try reader.fetch(FetchRequest(entityName: "Company")).first)
            #expect(try company.relatedObjects(forKey: "employees").count == 2)
            let employees = try reader.fetch(FetchRequest(entityName: "Employee"))
            #expect(try employees.map { try $0.relatedObject(forKey: "badge")?.value(forKey: "code", as: String.self) } == ["B-1", "B-1"])
        }
    }
}
