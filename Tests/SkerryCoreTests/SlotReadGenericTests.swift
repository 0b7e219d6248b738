import Foundation
import Testing

@testable import SkerryCore

/// Reads `key` of `object` as `T` from code that is not specialized for `T`: the inlinable
/// `value(at:as:)` is inlined here with its tests of `T` made at run time.
@inline(never)
private func read<T: AttributeValueConvertible>(_ object: EntityObject, _ key: String, as type: T.Type) throws -> T {
    try object.value(at: try object.entity.requireAttributeIndex(key), as: type)
}

/// The slot reads of `value(at:as:)` called from unspecialized generic code give the values and
/// errors of the calls made with a concrete type.
@Suite struct SlotReadGenericTests {
    @Test func unspecializedReadsGiveWhatConcreteReadsGive() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insert(entityName: "Book")
            let title = "Dune, " + String(repeating: "a novel by Frank Herbert ", count: 3)
            try book.setValue(title, forKey: "title")
            try book.setValue(Int32(1965), forKey: "year")
            try book.setValue(Int64(-7), forKey: "sales")
            try book.setValue(4.5, forKey: "rating")
            try book.setValue(Date(timeIntervalSinceReferenceDate: 12.5), forKey: "published")
            try book.setValue(true, forKey: "inPrint")

            #expect(try read(book, "year", as: Int64.self) == 1965)
            #expect(try read(book, "sales", as: Int64.self) == -7)
            #expect(try read(book, "year", as: Int.self) == 1965)
            #expect(try read(book, "rating", as: Double.self) == 4.5)
            #expect(try read(book, "inPrint", as: Bool.self) == true)
            #expect(try read(book, "published", as: Date.self) == Date(timeIntervalSinceReferenceDate: 12.5))
            let string = try read(book, "title", as: String.self)
            #expect(string == title)
            #expect(try read(book, "title", as: String.self) == book.value(forKey: "title", as: String.self))
            // The read string is a copy: changing the attribute leaves it as it was.
            try book.setValue("Emma", forKey: "title")
            #expect(string == title)
            #expect(try read(book, "title", as: String.self) == "Emma")

            // A type that does not fit: the same error as a concrete read's.
            for (key, generic, concrete) in [
                ("title", { try read(book, "title", as: Int64.self) as Any }, { try book.value(forKey: "title", as: Int64.self) as Any }),
                ("year", { try read(book, "year", as: Double.self) as Any }, { try book.value(forKey: "year", as: Double.self) as Any }),
                ("year", { try read(book, "year", as: Bool.self) as Any }, { try book.value(forKey: "year", as: Bool.self) as Any }),
                ("inPrint", { try read(book, "inPrint", as: Int.self) as Any }, { try book.value(forKey: "inPrint", as: Int.self) as Any }),
                ("rating", { try read(book, "rating", as: Date.self) as Any }, { try book.value(forKey: "rating", as: Date.self) as Any }),
                ("year", { try read(book, "year", as: String.self) as Any }, { try book.value(forKey: "year", as: String.self) as Any }),
                ("isbn", { try read(book, "isbn", as: String.self) as Any }, { try book.value(forKey: "isbn", as: String.self) as Any }),
            ] as [(String, () throws -> Any, () throws -> Any)] {
                let genericError = #expect(throws: SkerryError.self) { _ = try generic() }
                let concreteError = #expect(throws: SkerryError.self) { _ = try concrete() }
                #expect(genericError?.code == .wrongValueType)
                #expect(genericError?.key == key)
                #expect(genericError.map { String(reflecting: $0) } == concreteError.map { String(reflecting: $0) })
            }
        }
    }
}
