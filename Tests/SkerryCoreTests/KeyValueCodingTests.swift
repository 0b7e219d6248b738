import Foundation
import Testing

@testable import SkerryCore

/// Core Data's key-value habits: `value(forKey:) as? T`, `setValue(nil, forKey:)`, `== nil`.
@Suite struct KeyValueCodingTests {
    @Test func valueForKeyReturnsWhatCoreDataReturns() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(Int32(1965), forKey: "year")
            try book.setValue(4.5, forKey: "rating")
            try book.setValue(Decimal(string: "9.99")!, forKey: "price")
            try book.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "published")

            #expect(try book.value(forKey: "title") as? String == "Dune")
            #expect(try book.value(forKey: "year") as? Int == 1965)
            #expect(try book.value(forKey: "year") as? Int32 == 1965)
            #expect((try book.value(forKey: "year") as? NSNumber)?.intValue == 1965)
            #expect(try book.value(forKey: "rating") as? Double == 4.5)
            #expect(try book.value(forKey: "price") as? Decimal == Decimal(string: "9.99"))
            #expect(try book.value(forKey: "inPrint") as? Bool == true)
            #expect(try book.value(forKey: "published") as? Date == Date(timeIntervalSinceReferenceDate: 0))
            #expect(try book.value(forKey: "isbn") == nil)
            #expect(try book.value(forKey: "title") as? Int == nil)
            #expect(throws: SkerryError.self) { try book.value(forKey: "subtitle") }
        }
    }

    @Test func setValueTakesNilAndFoundationNumbers() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            try book.setValue("Dune", forKey: "title")
            try book.setValue(NSNumber(value: 1965), forKey: "year") // an NSNumber, as Core Data code passes
            try book.setValue(NSNumber(value: 412), forKey: "pages")
            try book.setValue(NSNumber(value: false), forKey: "inPrint")
            try book.setValue(NSNumber(value: 7), forKey: "rating")
            let anyValue: Any = 12 // an Int into an Int64 attribute
            try book.setValue(anyValue, forKey: "sales")
            try context.save()
            #expect(try book.value(forKey: "year", as: Int32?.self) == 1965)
            #expect(try book.value(forKey: "pages", as: Int16?.self) == 412)
            #expect(try book.value(forKey: "inPrint", as: Bool.self) == false)
            #expect(try book.value(forKey: "rating", as: Double?.self) == 7)
            #expect(try book.value(forKey: "sales", as: Int64.self) == 12)

            try book.setValue(nil, forKey: "year")
            try context.save()
            #expect(try book.value(forKey: "year", as: Int32?.self) == nil)

            let wrongType = #expect(throws: SkerryError.self) { try book.setValue(NSNumber(value: 1.5), forKey: "year") }
            #expect(wrongType?.code == .wrongValueType)
            let notANumber = #expect(throws: SkerryError.self) { try book.setValue("1965" as Any, forKey: "year") }
            #expect(notANumber?.code == .wrongValueType)
            let outOfRange = #expect(throws: SkerryError.self) { try book.setValue(NSNumber(value: 70_000), forKey: "pages") }
            #expect(outOfRange?.code == .wrongValueType)
            #expect(try book.value(forKey: "pages", as: Int16?.self) == 412)
        }
    }

    @Test func relationshipsThroughKeyValueCoding() throws {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insertNamed("Author", "Herbert")
            let dune = try context.insertNamed("Book", "Dune")
            let messiah = try context.insertNamed("Book", "Dune Messiah")
            let shelf = try context.insertNamed("Shelf", "SF")
            try dune.setValue(author, forKey: "author")
            try shelf.setValue([messiah, dune], forKey: "items")

            #expect(try dune.value(forKey: "author") as? EntityObject === author)
            #expect(try author.value(forKey: "books") as? Set<EntityObject> == [dune])
            #expect((try shelf.value(forKey: "items") as? [EntityObject])?.map(\.label) == ["Dune Messiah", "Dune"])

            try dune.setValue(nil, forKey: "author")
            #expect(try dune.value(forKey: "author") == nil)
            #expect(try author.value(forKey: "books") as? Set<EntityObject> == [])
            try shelf.setValue(nil, forKey: "items")
            #expect(try messiah.value(forKey: "shelf") == nil)
            #expect(throws: SkerryError.self) { try dune.setValue("Herbert", forKey: "author") }
        }
    }

    @Test func nilComparisonsInPredicates() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let (withoutYear, withYear) = try context.performAndWait {
            for (title, year) in [("Dune", Int32(1965)), ("Untitled", nil)] {
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(year, forKey: "year")
            }
            try context.save()
            let without = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("year") == nil))
            let with = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("year") != nil))
            return (without.map(\.objectID), with.map(\.objectID))
        }
        #expect(withoutYear.count == 1)
        #expect(withYear.count == 1)
        #expect(withoutYear != withYear)
    }
}
