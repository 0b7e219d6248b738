import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// The store's own row reading (columns of the types the store gives its attributes) marks the
/// attributes it sets in the object's value bitmap a word at a time: an entity with more than 64
/// attributes, NULL cells on both sides of the word boundary, and a cell that fails midway after
/// values were read (nothing is handed over half-read, the other rows read).
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
}
