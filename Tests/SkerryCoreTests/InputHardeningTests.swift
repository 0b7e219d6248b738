import Foundation
import Testing

@testable import SkerryCore

/// Inputs at the edges of the public API get typed errors, never a trap or a silent loss.
@Suite struct InputHardeningTests {
    @Test func nanValuesOfEveryKindAreRefusedAndNothingIsLost() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("Dune")
            let nanDate = Date(timeIntervalSinceReferenceDate: .nan)
            for (key, value) in [
                ("rating", AttributeValue.double(.nan)), ("published", .date(nanDate)),
                ("price", .decimal(.nan)),
            ] {
                expectError(.wrongValueType) {
                    try book.setValue(value, forKey: key)
                }
                #expect(try book.value(forKey: key, as: AttributeValue.self) == .null)
            }
            expectError(.wrongValueType) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("published") < nanDate))
            }
        }
    }

    @Test func nanDefaultValueMakesAnInvalidModel() {
        expectError(.invalidModel) {
            _ = try ObjectModel(entities: [
                EntityDescription(
                    name: "M",
                    attributes: [
                        AttributeDescription("x", .double, defaultValue: Double.nan)
                    ])
            ])
        }
    }

    @Test(arguments: [Double.infinity, -1, .nan, 1e300])
    func anyBusyTimeoutOpensTheStore(timeout: Double) throws {
        let directory = TemporaryDirectory()
        var description = StoreDescription(url: directory.file("t.sqlite"))
        description.busyTimeout = timeout
        let stack = PersistentStack(name: "T", model: Fixtures.model())
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        let count = try context.performAndWait {
            try context.insertBook("Dune")
            try context.save()
            return try context.count(for: FetchRequest(entityName: "Book"))
        }
        #expect(count == 1)
    }

    @Test func aNonFileURLIsAStoreLoadError() {
        let stack = PersistentStack(name: "T", model: Fixtures.model())
        stack.persistentStoreDescriptions = [StoreDescription(url: URL(string: "https://example.invalid/db.sqlite")!)]
        expectError(.storeLoadFailed) {
            try stack.loadPersistentStores()
        }
    }

    @Test func anIDFromAnotherStackIsNotFoundRatherThanATrap() throws {
        let first = try makeMemoryStack(), second = try makeMemoryStack()
        let id = try first.viewContext.performAndWait {
            try first.viewContext.insertBook("Dune")
            try first.viewContext.save()
            return try first.viewContext.fetchObjectIDs(FetchRequest(entityName: "Book"))[0]
        }
        second.viewContext.performAndWait {
            expectError(.objectNotFound) {
                _ = try second.viewContext.existingObject(with: id)
            }
            let fault = second.viewContext.object(with: id)
            expectError(.objectNotFound) {
                _ = try fault.value(forKey: "title", as: String.self)
            }
        }
    }

    @Test func anEntityOfAnotherModelIsRefused() throws {
        let stack = try makeMemoryStack()
        let foreign = Fixtures.bookEntity()
        stack.viewContext.performAndWait {
            expectError(.unknownEntity) {
                _ = try stack.viewContext.insert(foreign)
            }
        }
    }

    @Test func insertingBeforeLoadingIsANoStoreError() throws {
        let stack = PersistentStack(name: "T", model: Fixtures.model())
        stack.viewContext.performAndWait {
            expectError(.noStore) {
                _ = try stack.viewContext.insert(entityName: "Book")
            }
        }
    }
}
