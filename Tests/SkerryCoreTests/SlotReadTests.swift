import Foundation
import Testing

@testable import SkerryCore

/// `value(at:as:)` reads `Int64`, `Int`, `Double`, `Bool`, `Date` and `String` straight from the
/// attribute's slot: the same values and the same errors as the general path (through
/// `AttributeValue`), on loaded objects, faults and invalidated objects.
@Suite struct SlotReadTests {
    // Attribute indexes of `Fixtures.bookEntity()`.
    let title = 0, year = 1, pages = 2, sales = 3, rating = 4, weight = 5, price = 6, published = 7, inPrint = 8, isbn = 10

    @Test func slotReadsGiveWhatTheGeneralPathGives() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(Int32(1965), forKey: "year")
            try book.setValue(Int16(412), forKey: "pages")
            try book.setValue(Int64(-7), forKey: "sales")
            try book.setValue(4.5, forKey: "rating")
            try book.setValue(Float(1.25), forKey: "weight")
            try book.setValue(Date(timeIntervalSinceReferenceDate: 12.5), forKey: "published")
            try book.setValue(false, forKey: "inPrint")

            #expect(try book.value(at: title, as: String.self) == "Dune")
            #expect(try book.value(at: year, as: Int64.self) == 1965)
            #expect(try book.value(at: year, as: Int.self) == 1965)
            #expect(try book.value(at: pages, as: Int.self) == 412)
            #expect(try book.value(at: sales, as: Int64.self) == -7)
            #expect(try book.value(at: rating, as: Double.self) == 4.5)
            #expect(try book.value(at: weight, as: Double.self) == 1.25)
            #expect(try book.value(at: published, as: Date.self) == Date(timeIntervalSinceReferenceDate: 12.5))
            #expect(try book.value(at: inPrint, as: Bool.self) == false)
            // The general path agrees, value for value.
            for index in [title, year, pages, sales, rating, weight, published, inPrint] {
                let general = try book.value(at: index, as: AttributeValue.self)
                switch general {
                case .int(let value): #expect(try book.value(at: index, as: Int64.self) == value)
                case .double(let value): #expect(try book.value(at: index, as: Double.self) == value)
                case .bool(let value): #expect(try book.value(at: index, as: Bool.self) == value)
                case .date(let value): #expect(try book.value(at: index, as: Date.self) == value)
                case .string(let value): #expect(try book.value(at: index, as: String.self) == value)
                default: Issue.record("unexpected \(general)")
                }
            }
        }
    }

    @Test func slotReadsRefuseWhatTheGeneralPathRefuses() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(Int32(1965), forKey: "year")
            // A type that does not fit the attribute: Booleans are not integers, integers not
            // floating-point numbers, dates not numbers.
            for (index, read) in [
                (title, { try book.value(at: title, as: Int64.self) as Any }),
                (year, { try book.value(at: year, as: Double.self) as Any }),
                (year, { try book.value(at: year, as: Bool.self) as Any }),
                (inPrint, { try book.value(at: inPrint, as: Int64.self) as Any }),
                (inPrint, { try book.value(at: inPrint, as: Int.self) as Any }),
                (published, { try book.value(at: published, as: Double.self) as Any }),
                (rating, { try book.value(at: rating, as: Date.self) as Any }),
                (price, { try book.value(at: price, as: String.self) as Any }),
            ] as [(Int, () throws -> Any)] {
                let error = #expect(throws: SkerryError.self) { _ = try read() }
                #expect(error?.code == .wrongValueType)
                #expect(error?.key == book.entity.attributes[index].name)
            }
            // No value: an error for a non-optional type, nil for an optional one.
            let missing = #expect(throws: SkerryError.self) { try book.value(at: isbn, as: String.self) }
            #expect(missing?.code == .wrongValueType)
            #expect(missing?.message.contains("read it as an Optional") == true)
            #expect(try book.value(at: isbn, as: String?.self) == nil)
            #expect(throws: SkerryError.self) { try book.value(at: rating, as: Double.self) }
            #expect(try book.value(at: rating, as: Double?.self) == nil)
            // An index past the attributes.
            let outside = #expect(throws: SkerryError.self) { try book.value(at: 99, as: Int64.self) }
            #expect(outside?.code == .unknownAttribute)
            let negative = #expect(throws: SkerryError.self) { try book.value(at: -1, as: String.self) }
            #expect(negative?.code == .unknownAttribute)
        }
    }

    @Test func slotReadsLoadFaultsAndRefuseInvalidatedObjects() throws {
        let stack = try makeMemoryStack()
        let writer = stack.newBackgroundContext()
        let objectID = try writer.performAndWait {
            let book = try writer.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(Int32(1965), forKey: "year")
            try book.setValue(4.5, forKey: "rating")
            try writer.save()
            return book.objectID
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let fault = reader.object(with: objectID)
            #expect(fault.isFault)
            #expect(try fault.value(at: year, as: Int64.self) == 1965)
            #expect(!fault.isFault)
            let another = reader.object(with: objectID)
            #expect(another === fault)
            #expect(try another.value(at: title, as: String.self) == "Dune")
            try reader.refresh(fault, mergeChanges: false)
            #expect(fault.isFault)
            #expect(try fault.value(at: rating, as: Double.self) == 4.5)
            reader.reset()
            let invalid = #expect(throws: SkerryError.self) { try fault.value(at: year, as: Int64.self) }
            #expect(invalid?.code == .objectNotInContext)
        }
    }

    /// `storageForReading(_:)` (the typed layer's whole-object decode) runs the checks of
    /// `withSlots(reading:_:)`, with the same outcomes: a loaded object's values, a fault loaded
    /// first, the same error for an invalidated object and for a fault whose row is gone.
    @Test func storageForReadingChecksAsWithSlotsDoes() throws {
        let stack = try makeMemoryStack()
        let writer = stack.newBackgroundContext()
        let (kept, deleted) = try writer.performAndWait {
            let book = try writer.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(Int32(1965), forKey: "year")
            let other = try writer.insert(entityName: "Book")
            try other.setValue("Emma", forKey: "title")
            try writer.save()
            return (book.objectID, other.objectID)
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let fault = reader.object(with: kept)
            #expect(fault.isFault)
            let storage = try fault.storageForReading("test")
            #expect(!fault.isFault)
            let layout = fault.entity.valueLayout
            #expect(storage.load(fromByteOffset: layout.offsets[year], as: Int64.self) == 1965)
            #expect(try fault.withSlots(reading: "test") { UnsafeRawPointer($0.base) } == storage)
            #expect(fault.entityIdentity == ObjectIdentifier(fault.entity))

            let gone = reader.object(with: deleted)
            try writer.performAndWait {
                try writer.delete(writer.existingObject(with: deleted))
                try writer.save()
            }
            let notFound = #expect(throws: SkerryError.self) { _ = try gone.storageForReading("test") }
            let notFoundBySlots = #expect(throws: SkerryError.self) { try gone.withSlots(reading: "test") { _ in } }
            #expect(notFound?.code == .objectNotFound)
            #expect(notFound?.message == notFoundBySlots?.message)

            reader.reset()
            let invalid = #expect(throws: SkerryError.self) { _ = try fault.storageForReading("test") }
            let invalidBySlots = #expect(throws: SkerryError.self) { try fault.withSlots(reading: "test") { _ in } }
            #expect(invalid?.code == .objectNotInContext)
            #expect(invalid?.message == invalidBySlots?.message)
            #expect(fault.entityIdentity == ObjectIdentifier(fault.entity))
        }
    }
}
