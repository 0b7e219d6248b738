import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Reading rows into objects on a PostgreSQL store: every attribute type read straight into an
/// object's storage (the store's own row path), transient defaults, to-one relationships, and a
/// row whose cells the store cannot read; and inserts written straight from objects' storage.
@Suite(.postgres) struct PostgresFetchTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription("flag", .boolean, isOptional: true),
                AttributeDescription("small", .integer16, isOptional: true),
                AttributeDescription("medium", .integer32, isOptional: true),
                AttributeDescription("large", .integer64, isOptional: true),
                AttributeDescription("ratio", .double, isOptional: true),
                AttributeDescription("single", .float, isOptional: true),
                AttributeDescription("price", .decimal, isOptional: true),
                AttributeDescription("date", .date, isOptional: true),
                AttributeDescription("name", .string, isOptional: true),
                AttributeDescription("link", .url, isOptional: true),
                AttributeDescription("blob", .binary, isOptional: true),
                AttributeDescription("tag", .uuid, isOptional: true),
                AttributeDescription("note", .string, defaultValue: "scratch", isTransient: true),
            ],
            relationships: [RelationshipDescription("owner", destination: "Owner", inverse: "items")]),
        EntityDescription(
            name: "Owner", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("items", destination: "Item", inverse: "owner", toMany: true)]),
    ])

    static func stack(_ schema: String) throws -> PersistentStack {
        try PostgresTestServer.stack(model, schema, name: "Fetching")
    }

    static var values: [String: any AttributeValueConvertible] {
        [
            "flag": true, "small": Int16.min, "medium": Int32.max, "large": Int64.min, "ratio": -0.1,
            "single": Float(1.5), "price": Decimal(string: "-12345.678")!,
            "date": Date(timeIntervalSinceReferenceDate: 790_000_000.25), "name": "Ünïcödé ✓",
            "link": URL(string: "https://example.com/a?b=c")!, "blob": Data([0, 1, 255]),
            "tag": UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!,
        ]
    }

    @Test func rowsAreReadIntoObjectsWithEveryTypeTransientDefaultsAndToOnes() throws {
        let stack = try Self.stack(PostgresTestServer.newSchema())
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            let owner = try writer.insert(entityName: "Owner")
            try owner.setValue("Ann", forKey: "name")
            let full = try writer.insert(entityName: "Item")
            for (key, value) in Self.values { try full.setValue(value, forKey: key) }
            try full.setValue("changed in memory", forKey: "note")
            try full.setRelatedObject(owner, forKey: "owner")
            _ = try writer.insert(entityName: "Item") // every optional nil, no owner
            try writer.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let items = try reader.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name", ascending: false)]))
            #expect(items.count == 2)
            let full = items[0], empty = items[1]
            for (key, value) in Self.values {
                #expect(try full.value(forKey: key, as: AttributeValue.self) == value.attributeValue, "\(key)")
                #expect(try empty.value(forKey: key, as: AttributeValue.self) == .null, "\(key)")
            }
            // A transient attribute is never stored: a fetched object starts from its default.
            #expect(try full.value(forKey: "note") as? String == "scratch")
            #expect(try full.relatedObject(forKey: "owner")?.value(forKey: "name") as? String == "Ann")
            #expect(try empty.relatedObject(forKey: "owner") == nil)
            // The same values as dictionaries (the columns' path).
            var request = FetchRequest(entityName: "Item", sortKeys: [SortKey("name", ascending: false)])
            request.propertiesToFetch = ["tag", "note", "price"]
            let rows = try reader.fetchDictionaries(request)
            #expect(rows.map { $0["tag"] } == [Self.values["tag"]!.attributeValue, .null])
            #expect(rows.map { $0["note"] } == [.string("scratch"), .string("scratch")])
            #expect(rows.map { $0["price"] } == [Self.values["price"]!.attributeValue, .null])
        }
    }

    /// Inserts write each value straight from the object's storage: edge values come back as
    /// written, and a date no PostgreSQL timestamp can hold fails the save with an error, storing
    /// nothing and keeping the context's change.
    @Test func insertsWriteEdgeValuesFromStorageAndADateNoTimestampHoldsFailsTheSave() throws {
        let stack = try Self.stack(PostgresTestServer.newSchema())
        let edges: [String: any AttributeValueConvertible] = [
            "flag": false, "small": Int16.max, "medium": Int32.min, "large": Int64.max, "ratio": -Double.infinity,
            "single": Float(-0.5), "date": Date(timeIntervalSinceReferenceDate: -1_000_000_000.5), "name": "",
        ]
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            let item = try writer.insert(entityName: "Item")
            for (key, value) in edges { try item.setValue(value, forKey: key) }
            try writer.save()
            let far = try writer.insert(entityName: "Item")
            try far.setValue(Date(timeIntervalSinceReferenceDate: 1e17), forKey: "date")
            #expect(throws: (any Error).self) { try writer.save() }
            #expect(writer.hasChanges)
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let items = try reader.fetch(FetchRequest(entityName: "Item"))
            #expect(items.count == 1)
            for (key, value) in edges {
                #expect(try items.first?.value(forKey: key, as: AttributeValue.self) == value.attributeValue, "\(key)")
            }
        }
    }

    /// The store reads cells by the column types it gives attributes; columns changed by hand to
    /// other types that hold the attributes' values still read, also through connections that
    /// prepared the fetch before the change (the server refuses the old statement; it is prepared
    /// again), as do empty strings and data (which only a NULL flag tells from NULL).
    @Test func columnsChangedByHandToOtherTypesThatHoldTheValuesStillRead() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema)
        let stored: [String: any AttributeValueConvertible] = [
            "flag": true, "small": Int16(-7), "medium": Int32(70_000), "large": Int64(-5), "ratio": 0.5,
            "date": Date(timeIntervalSinceReferenceDate: 1_000.5), "name": "", "blob": Data(),
        ]
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            let item = try writer.insert(entityName: "Item")
            for (key, value) in stored { try item.setValue(value, forKey: key) }
            try writer.save()
        }
        func read(_ stack: PersistentStack) throws -> [String: AttributeValue] {
            let reader = stack.newBackgroundContext()
            return try reader.performAndWait {
                let items = try reader.fetch(FetchRequest(entityName: "Item"))
                #expect(items.count == 1)
                var values: [String: AttributeValue] = [:]
                for key in stored.keys { values[key] = try items.first?.value(forKey: key, as: AttributeValue.self) }
                return values
            }
        }
        #expect(try read(stack) == stored.mapValues(\.attributeValue))
        let connection = try PostgresTestServer.connect()
        let table = "\"\(schema)\".\"Item\""
        try connection.execute("SET TIME ZONE 'UTC'") // timestamptz to timestamp keeps the UTC time
        try connection.execute(
            """
            ALTER TABLE \(table) ALTER COLUMN "small" TYPE bigint, ALTER COLUMN "medium" TYPE bigint,
                ALTER COLUMN "large" TYPE integer, ALTER COLUMN "ratio" TYPE real,
                ALTER COLUMN "date" TYPE timestamp, ALTER COLUMN "name" TYPE varchar(20)
            """)
        // The same stack: its connections prepared the fetch before the types changed, and
        // prepare it again when the server refuses the old statement.
        #expect(try read(stack) == stored.mapValues(\.attributeValue))
        #expect(try read(Self.stack(schema)) == stored.mapValues(\.attributeValue))
    }

    @Test func aCellTheStoreCannotReadIsAnUndecodableErrorNamingTheAttribute() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema)
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for small in [Int16(1), 2] {
                try writer.insert(entityName: "Item").setValue(small, forKey: "small")
            }
            try writer.save()
        }
        // Changed by hand: the column now holds a value no `integer16` attribute can.
        let connection = try PostgresTestServer.connect()
        try connection.execute("ALTER TABLE \"\(schema)\".\"Item\" ALTER COLUMN \"small\" TYPE integer")
        try connection.execute("UPDATE \"\(schema)\".\"Item\" SET \"small\" = 70000 WHERE \"small\" = 2")
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let error = #expect(throws: SkerryError.self) {
                try reader.fetch(FetchRequest(entityName: "Item", predicate: .comparison(key: "small", .greaterThan, .int(1))))
            }
            #expect(error?.code == .undecodableValue)
            #expect(error?.entityName == "Item")
            #expect(error?.key == "small")
            #expect(reader.registeredObjects.isEmpty) // the row was not handed over half-read
            // The readable row still reads.
            let one = try reader.fetch(FetchRequest(entityName: "Item", predicate: .comparison(key: "small", .equal, .int(1))))
            #expect(try one.map { try $0.value(forKey: "small") as? Int16 } == [1])
        }
    }
}
