import Foundation
import Testing

@testable import SkerryCore

/// A save's inserts of one entity run one statement, row after row, binding every parameter of
/// each row again without clearing the previous row's bindings: a row without a value (or
/// without a related object) after a row with one must store NULL, never the previous row's.
@Suite struct InsertStatementTests {
    @Test func aRowWithoutValuesAfterOneWithValuesStoresNulls() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<6 {
                let book = try context.insertBook("Book \(index)")
                guard index % 2 == 0 else { continue }
                try book.setValue(Int32(1900 + index), forKey: "year")
                try book.setValue(Double(index) / 2, forKey: "rating")
                try book.setValue("isbn-\(index)", forKey: "isbn")
                try book.setValue(Data([UInt8(index), 1, 2]), forKey: "cover")
            }
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let books = try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(books.count == 6)
            for (index, book) in books.enumerated() {
                let withValues = index % 2 == 0
                #expect(try book.value(forKey: "year", as: Int32?.self) == (withValues ? Int32(1900 + index) : nil))
                #expect(try book.value(forKey: "rating", as: Double?.self) == (withValues ? Double(index) / 2 : nil))
                #expect(try book.value(forKey: "isbn", as: String?.self) == (withValues ? "isbn-\(index)" : nil))
                #expect(try book.value(forKey: "cover", as: Data?.self) == (withValues ? Data([UInt8(index), 1, 2]) : nil))
            }
        }
    }

    @Test func aRowWithoutARelatedObjectAfterOneWithOneStoresNoForeignKey() throws {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insertNamed("Author", "Le Guin")
            for index in 0..<4 {
                let book = try context.insertNamed("Book", "Book \(index)")
                if index % 2 == 0 { try book.setRelatedObject(author, forKey: "author") }
            }
            try context.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let books = try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
            #expect(books.count == 4)
            for (index, book) in books.enumerated() {
                let author = try book.relatedObject(forKey: "author")
                #expect((author != nil) == (index % 2 == 0))
                if let author { #expect(try author.value(forKey: "name", as: String.self) == "Le Guin") }
            }
        }
    }
}
