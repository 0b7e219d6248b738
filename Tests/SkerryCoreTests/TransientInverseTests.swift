import Foundation
import Testing

@testable import SkerryCore

/// A stored relationship whose inverse is transient (mogenerator's sample model has several) is
/// stored as if it had no inverse: its links survive a save, another context and reopening the
/// store; the transient side lives in memory only. Stores written before (which kept neither
/// side) open with the storage added, and migrations that make the inverse stored or transient
/// carry the links.
@Suite struct TransientInverseTests {
    /// Company.employees (to-many, stored) and Employee.company (transient); Employee.badge (to-one,
    /// stored) and Badge.holders (to-many, transient); Employee.desk and Desk.occupant (one-to-one,
    /// the transient side's name sorting first); Company.ranking (ordered, stored) and
    /// Employee.rankedIn (to-many, transient).
    static func model(storedInverses: Bool = false) throws -> ObjectModel {
        let transient = !storedInverses
        return try ObjectModel(entities: [
            EntityDescription(
                name: "Company", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("employees", destination: "Employee", inverse: "company", toMany: true),
                    RelationshipDescription("ranking", destination: "Employee", inverse: "rankedIn", toMany: true, ordered: true),
                ]),
            EntityDescription(
                name: "Employee", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("company", destination: "Company", inverse: "employees", isTransient: transient),
                    RelationshipDescription("rankedIn", destination: "Company", inverse: "ranking", toMany: true, isTransient: transient),
                    RelationshipDescription("badge", destination: "Badge", inverse: "holders"),
                    RelationshipDescription("desk", destination: "Desk", inverse: "occupant"),
                ]),
            EntityDescription(
                name: "Badge", attributes: [AttributeDescription("code", .string)],
                relationships: [
                    RelationshipDescription("holders", destination: "Employee", inverse: "badge", toMany: true, isTransient: transient)
                ]),
            EntityDescription(
                name: "Desk", attributes: [AttributeDescription("floor", .integer64)],
                relationships: [RelationshipDescription("occupant", destination: "Employee", inverse: "desk", isTransient: transient)]),
        ])
    }

    /// Makes a company with three employees, a badge and a desk, setting links from both sides
    /// (the transient side's change reaches the stored side through the inverse).
    static func populate(_ context: ObjectContext) throws {
        let company = try context.insert(entityName: "Company")
        try company.setValue("Acme", forKey: "name")
        var employees: [EntityObject] = []
        for name in ["Ada", "Bob", "Cy"] {
            let employee = try context.insert(entityName: "Employee")
            try employee.setValue(name, forKey: "name")
            employees.append(employee)
        }
        try employees[0].setRelatedObject(company, forKey: "company") // from the transient side
        try company.addRelatedObject(employees[1], forKey: "employees") // from the stored side
        try company.setRelatedObjects([employees[2], employees[0], employees[1]], forKey: "ranking")
        let badge = try context.insert(entityName: "Badge")
        try badge.setValue("B-1", forKey: "code")
        try employees[0].setRelatedObject(badge, forKey: "badge")
        try badge.addRelatedObject(employees[1], forKey: "holders") // from the transient side
        let desk = try context.insert(entityName: "Desk")
        try desk.setValue(Int64(3), forKey: "floor")
        try desk.setRelatedObject(employees[2], forKey: "occupant") // from the transient side
        try context.save()
    }

    /// What the store gives back: every link of the stored sides, in a context that never saw them.
    static func expectStoredLinks(_ stack: PersistentStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let company = try #require(try context.fetch(FetchRequest(entityName: "Company")).first)
            let names = { (objects: [EntityObject]) in try objects.map { try $0.value(forKey: "name", as: String.self) } }
            #expect(try names(company.relatedObjects(forKey: "employees")).sorted() == ["Ada", "Bob"])
            #expect(try names(company.relatedObjects(forKey: "ranking")) == ["Cy", "Ada", "Bob"])
            let employees = try context.fetch(FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")]))
            #expect(
                try employees.map { try $0.relatedObject(forKey: "badge")?.value(forKey: "code", as: String.self) } == ["B-1", "B-1", nil])
            #expect(try employees.map { try $0.relatedObject(forKey: "desk")?.value(forKey: "floor", as: Int64.self) } == [nil, nil, 3])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func linksOfAStoredSideSurviveSaveAndAnotherContext(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try Self.model())
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try Self.populate(context)
            // The transient sides hold what was set, in memory.
            let ada = try #require(try context.fetch(FetchRequest(entityName: "Employee", predicate: AttributeKey("name") == "Ada")).first)
            #expect(try ada.relatedObject(forKey: "company")?.value(forKey: "name", as: String.self) == "Acme")
            context.reset()
            // After a reset, the transient sides start empty: nothing of them was stored.
            let again = try #require(
                try context.fetch(FetchRequest(entityName: "Employee", predicate: AttributeKey("name") == "Ada")).first)
            #expect(try again.relatedObject(forKey: "company") == nil)
            #expect(try again.relatedObject(forKey: "badge") != nil)
        }
        try Self.expectStoredLinks(stack)
    }

    @Test func linksSurviveReopeningTheFile() throws {
        let directory = TemporaryDirectory()
        do {
            let stack = try makeFileStack(directory, model: try Self.model(), name: "Company")
            let context = stack.newBackgroundContext()
            try context.performAndWait { try Self.populate(context) }
        }
        let url = directory.file("Company.sqlite")
        // Where they are kept: as relationships without an inverse.
        #expect(try rawSQL(url, "SELECT count(*) FROM \"_Company_employees\"") == [["2"]])
        #expect(try rawSQL(url, "SELECT count(*) FROM \"_Company_ranking\"") == [["3"]])
        #expect(try rawSQL(url, "SELECT count(*) FROM \"Employee\" WHERE \"badge\" IS NOT NULL AND \"desk\" IS NULL") == [["2"]])
        #expect(try rawSQL(url, "SELECT name FROM pragma_table_info('Desk') WHERE name = 'occupant'") == [])
        let stack = try makeFileStack(directory, model: try Self.model(), name: "Company")
        try Self.expectStoredLinks(stack)
    }

    @Test func aStoreWrittenWhenNeitherSideWasStoredOpensWithTheStorageAdded() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Company.sqlite")
        do {
            let stack = try makeFileStack(directory, model: try Self.model(), name: "Company")
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let company = try context.insert(entityName: "Company")
                try company.setValue("Acme", forKey: "name")
                try context.save()
            }
        }
        // What earlier versions wrote for this model: the same recorded schema, no join table and
        // no column for these relationships.
        for index in try rawSQL(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Employee' AND sql IS NOT NULL") {
            try rawSQL(url, "DROP INDEX \"\(index[0])\"")
        }
        try rawSQL(url, "DROP TABLE \"_Company_employees\"")
        try rawSQL(url, "DROP TABLE \"_Company_ranking\"")
        try rawSQL(url, "ALTER TABLE \"Employee\" DROP COLUMN \"badge\"")
        try rawSQL(url, "ALTER TABLE \"Employee\" DROP COLUMN \"desk\"")

        // (Read-only, it opens without the storage: DanglingLinkTests.)
        let stack = try makeFileStack(directory, model: try Self.model(), name: "Company")
        #expect(try rawSQL(url, "SELECT count(*) FROM \"_Company_employees\"") == [["0"]])
        #expect(
            try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Employee' AND sql LIKE '%badge%'") == [
                ["1"]
            ])
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Company")).forEach { try context.delete($0) }
            try Self.populate(context)
        }
        try Self.expectStoredLinks(stack)
    }

    /// The inverses become stored (or transient again): the links move between the join tables
    /// and own columns and the foreign keys of a stored pair, all of them.
    @Test(arguments: [StoreKind.file, .postgres].filter { StoreKind.allCases.contains($0) })
    func migrationsThatStoreOrDropTheInverseCarryTheLinks(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let schema = PostgresTestServer.newSchema()
        func stack(_ model: ObjectModel) throws -> PersistentStack {
            kind == .file
                ? try makeFileStack(directory, model: model, name: "Company")
                : try PostgresTestServer.stack(model, schema)
        }
        do {
            let first = try stack(try Self.model())
            let context = first.newBackgroundContext()
            try context.performAndWait { try Self.populate(context) }
        }
        let stored = try stack(try Self.model(storedInverses: true))
        try Self.expectStoredLinks(stored)
        // The stored inverses read them too.
        let context = stored.newBackgroundContext()
        try context.performAndWait {
            let employees = try context.fetch(FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")]))
            #expect(
                try employees.map { try $0.relatedObject(forKey: "company")?.value(forKey: "name", as: String.self) } == [
                    "Acme", "Acme", nil,
                ])
            #expect(try employees.map { try $0.relatedObjects(forKey: "rankedIn").count } == [1, 1, 1])
        }
        if kind == .file {
            let url = directory.file("Company.sqlite")
            #expect(try rawSQL(url, "SELECT count(*) FROM sqlite_master WHERE name = '_Company_employees'") == [["0"]])
        }
        try Self.expectStoredLinks(try stack(try Self.model()))
    }

    /// Deleting an employee whose transient side holds its company (set in this context, or by
    /// the inverse when the company's list changed) applies that side's delete rule: the company's
    /// stored lists lose it. (After a reset the transient side is empty, and, as for any
    /// relationship without a stored inverse, the delete leaves the company's link in place.)
    @Test(arguments: StoreKind.allCases)
    func deletingAMemberWhoseTransientSideIsSetRemovesItsLinks(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try Self.model())
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try Self.populate(context)
            let bob = try #require(try context.fetch(FetchRequest(entityName: "Employee", predicate: AttributeKey("name") == "Bob")).first)
            #expect(try bob.relatedObject(forKey: "company") != nil) // set by the inverse when the company's list changed
            try context.delete(bob)
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let company = try #require(try reader.fetch(FetchRequest(entityName: "Company")).first)
            #expect(try company.relatedObjects(forKey: "employees").map { try $0.value(forKey: "name", as: String.self) } == ["Ada"])
            #expect(try company.relatedObjects(forKey: "ranking").map { try $0.value(forKey: "name", as: String.self) } == ["Cy", "Ada"])
        }
    }

    @Test func theLayoutStoresTheSideWhoseInverseIsTransient() throws {
        let entities = try Self.model().entities
        let layout = RelationshipLayout(entities: entities)
        #expect(
            layout.storage["Company"]?["employees"]
                == .joinTable(table: "_Company_employees", sourceColumn: "source", targetColumn: "target", orderColumn: nil))
        #expect(layout.storage["Employee"]?["company"] == .transient)
        #expect(layout.storage["Employee"]?["badge"] == .foreignKey(column: "badge"))
        #expect(layout.storage["Employee"]?["desk"] == .foreignKey(column: "desk"))
        #expect(layout.storage["Desk"]?["occupant"] == .transient)
        // The schema a store records (which leaves transient relationships out) gives the same.
        #expect(RelationshipLayout(schema: StoredSchema(entities: entities)).storage["Company"] == layout.storage["Company"])
        #expect(RelationshipLayout(schema: StoredSchema(entities: entities)).storage["Employee"]?["badge"] == .foreignKey(column: "badge"))
        // A model whose inverses became stored moves these relationships: not a change made in place.
        let migration = SchemaMigration(from: StoredSchema(entities: entities), to: try Self.model(storedInverses: true).entities)
        #expect(migration.incompatibilities.contains { $0.contains("'Company.employees' is stored elsewhere") })
    }
}

/// The same from an Xcode model: TransientInverses.xcdatamodel (hand-written in Xcode's shape),
/// whose Employee.company is transient and Company.employees stored, as in mogenerator's sample.
@Suite struct TransientInverseXcodeModelTests {
    @Test func theStoredSideOfAnXcodeModelKeepsItsLinks() throws {
        let model = try XcodeModel(contentsOf: FixtureFiles.url("TransientInverses.xcdatamodel")).loadCurrentVersion().model
        #expect(model.entity(named: "Employee")?.relationship(named: "company")?.isTransient == true)
        let directory = TemporaryDirectory()
        do {
            let stack = try makeFileStack(directory, model: model, name: "Company")
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let company = try context.insert(entityName: "Company")
                try company.setValue("Acme", forKey: "name")
                for name in ["Ada", "Bob"] {
                    let employee = try context.insert(entityName: "Employee")
                    try employee.setValue(name, forKey: "name")
                    try employee.setRelatedObject(company, forKey: "company")
                }
                try context.save()
            }
        }
        let stack = try makeFileStack(directory, model: model, name: "Company")
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let company = try #require(try context.fetch(FetchRequest(entityName: "Company")).first)
            #expect(
                try company.relatedObjects(forKey: "employees").map { try $0.value(forKey: "name", as: String.self) }.sorted() == [
                    "Ada", "Bob",
                ])
        }
    }
}
