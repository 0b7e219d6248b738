import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// The store's own row reading (columns of the types the store gives its attributes) marks the
/// attributes it sets in the object's value bitmap a word at a time: an entity with more than 64
/// attributes, NULL cells on both sides of the word boundary, and a cell that fails midway after
/// values were read (nothing is handed over half-read, the other rows read). NULL is told apart
/// from values whose binary form is empty or starts with a zero byte, in every column type.
@Suite(.postgres) struct PostgresRowReadingTests {
    /// 70 attributes: integers, with a string every seventh, all optional.
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Wide",
            attributes: (0..<70).map { AttributeDescription("a\($0)", $0 % 7 == 3 ? .string : .integer64, isOptional: true) }
                + [AttributeDescription("when", .date, isOptional: true)])
    ])

    /// Row `row`'s value of attribute `index`: nil for some, on both sides of index 64; `a0` is
    /// `row * 1000`, never nil.
    static func value(_ row: Int, _ index: Int) -> (any AttributeValueConvertible)? {
        if index != 0 && ((index + row) % 5 == 0 || index == 63 + row % 3) { return nil }
        return index % 7 == 3 ? "row \(row) attribute \(index), long enough to be on the heap" : Int64(row * 1_000 + index)
    }

    static func insertRows(_ stack: PersistentStack, count: Int) throws {
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for row in 0..<count {
                let object = try writer.insert(entityName: "Wide")
                for index in 0..<70 { try object.setValue(value(row, index), forKey: "a\(index)") }
                try object.setValue(Date(timeIntervalSinceReferenceDate: Double(row)), forKey: "when")
            }
            try writer.save()
        }
    }

    @Test func moreThan64AttributesWithNullsOnBothSidesOfTheBitmapWordRead() throws {
        let stack = try PostgresTestServer.stack(Self.model, PostgresTestServer.newSchema(), name: "RowReading")
        try Self.insertRows(stack, count: 6)
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let objects = try reader.fetch(FetchRequest(entityName: "Wide", sortKeys: [SortKey("a0")]))
            #expect(objects.count == 6)
            for (row, object) in objects.enumerated() {
                for index in 0..<70 {
                    let expected = Self.value(row, index)?.attributeValue ?? .null
                    #expect(try object.value(forKey: "a\(index)", as: AttributeValue.self) == expected, "row \(row), a\(index)")
                }
            }
        }
    }

    @Test func aCellThatFailsAfterValuesWereReadHandsNothingOverHalfRead() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(Self.model, schema, name: "RowReading")
        try Self.insertRows(stack, count: 4)
        // A timestamp no date holds, in the last column: the row fails after its 70 values were read.
        let connection = try PostgresTestServer.connect()
        try connection.execute("UPDATE \"\(schema)\".\"Wide\" SET \"when\" = 'infinity' WHERE \"a0\" = 2000")
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let error = #expect(throws: SkerryError.self) {
                try reader.fetch(FetchRequest(entityName: "Wide", sortKeys: [SortKey("a0")]))
            }
            #expect(error?.code == .undecodableValue)
            #expect(error?.key == "when")
            // The rows before it were handed over whole; the failing one was not.
            #expect(reader.registeredObjects.count == 2)
            let readable = try reader.fetch(
                FetchRequest(entityName: "Wide", predicate: .comparison(key: "a0", .notEqual, .int(2000)), sortKeys: [SortKey("a0")]))
            #expect(readable.count == 3)
            for object in readable {
                let row = Int(try object.value(forKey: "a0", as: Int64.self) / 1_000)
                for index in 0..<70 {
                    let expected = Self.value(row, index)?.attributeValue ?? .null
                    #expect(try object.value(forKey: "a\(index)", as: AttributeValue.self) == expected, "row \(row), a\(index)")
                }
            }
        }
    }

    /// One attribute of every type, all optional.
    static let kinds = try! ObjectModel(entities: [
        EntityDescription(
            name: "Kinds",
            attributes: [
                AttributeDescription("order", .integer64),
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
            ])
    ])

    /// Per row: values whose binary form is empty or all zero bytes (an empty string and data,
    /// zeros, false, PostgreSQL's epoch, the nil UUID), then no value at all, then ordinary ones.
    static var kindRows: [[String: any AttributeValueConvertible]] {
        [
            [
                "flag": false, "small": Int16(0), "medium": Int32(0), "large": Int64(0), "ratio": 0.0, "single": Float(0),
                "price": Decimal(0), "date": Date(timeIntervalSinceReferenceDate: -31_622_400), // 2000-01-01 UTC
                "name": "", "link": URL(string: "a")!, "blob": Data(), "tag": UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            ],
            [:],
            [
                "flag": true, "small": Int16(-1), "medium": Int32(1 << 24), "large": Int64(5), "ratio": -0.0, "single": Float(2.5),
                "price": Decimal(string: "0.001")!, "date": Date(timeIntervalSinceReferenceDate: 1), "name": "\u{1}x",
                "link": URL(string: "https://example.com")!, "blob": Data([0]),
                "tag": UUID(uuidString: "00FF0000-0000-0000-0000-000000000001")!,
            ],
        ]
    }

    @Test func nullIsToldApartFromEmptyAndZeroValuesOfEveryType() throws {
        let stack = try PostgresTestServer.stack(Self.kinds, PostgresTestServer.newSchema(), name: "RowReadingKinds")
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for (order, values) in Self.kindRows.enumerated() {
                let object = try writer.insert(entityName: "Kinds")
                try object.setValue(Int64(order), forKey: "order")
                for (key, value) in values { try object.setValue(value, forKey: key) }
            }
            try writer.save()
        }
        let keys = Self.kinds.entities[0].attributes.map(\.name).filter { $0 != "order" }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            // Read twice: into the empty context (each row into its new object's own memory), then
            // into the context holding them (each row into a block of its own, which they take).
            for pass in 0..<2 {
                let objects = try reader.fetch(FetchRequest(entityName: "Kinds", sortKeys: [SortKey("order")]))
                #expect(objects.count == Self.kindRows.count)
                for (order, object) in objects.enumerated() {
                    for key in keys {
                        let expected = Self.kindRows[order][key]?.attributeValue ?? .null
                        #expect(try object.value(forKey: key, as: AttributeValue.self) == expected, "pass \(pass), row \(order), \(key)")
                    }
                }
            }
        }
    }
}
