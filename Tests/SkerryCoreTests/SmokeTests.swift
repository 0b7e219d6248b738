import Foundation
import Testing
@testable import SkerryCore

@Suite struct SmokeTests {
    @Test(arguments: StoreKind.allCases)
    func insertSaveFetch(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        let titles = try context.performAndWait {
            let book = try context.insertBook("Dune", year: 1965)
            #expect(book.objectID.isTemporary)
            try context.save()
            #expect(!book.objectID.isTemporary)
            return try context.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }
        }
        #expect(titles == ["Dune"])
    }
}
