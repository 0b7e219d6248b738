import Foundation
import Testing

@testable import SkerryCore

private let shelf: [(String, Int32?)] = [
    ("Dune", 1965), ("Dune Messiah", 1969), ("Children of Dune", 1976), ("Neuromancer", 1984),
    ("Count Zero", 1986), ("Hyperion", 1989), ("Foundation", 1951), ("Untitled", nil),
]

/// A stack holding the shelf, saved; returns the books' IDs by title.
private func filledStack(_ kind: StoreKind, model: ObjectModel = Fixtures.model()) throws -> (
    PersistentStack, TemporaryDirectory?, [String: ObjectID]
) {
    let (stack, directory) = try makeStack(kind, model: model)
    let context = stack.newBackgroundContext()
    let ids = try context.performAndWait {
        var books: [String: EntityObject] = [:]
        for (title, year) in shelf { books[title] = try context.insertBook(title, year: year) }
        try context.save()
        return books.mapValues(\.objectID)
    }
    return (stack, directory, ids)
}

/// Every book as the store has it, read by a fresh context: title, then the attributes named, by title.
private func stored(_ stack: PersistentStack, _ keys: [String]) throws -> [String: [String]] {
    let context = stack.newBackgroundContext()
    return try context.performAndWait {
        var rows: [String: [String]] = [:]
        for book in try context.fetch(FetchRequest(entityName: "Book")) {
            rows[try book.value(forKey: "title", as: String.self)] = try keys.map { key in
                "\(try book.value(forKey: key, as: AttributeValue.self))"
            }
        }
        return rows
    }
}

/// The books' versions in the store, by title.
private func versions(_ stack: PersistentStack) throws -> [String: Int64] {
    let context = stack.newBackgroundContext()
    return try context.performAndWait {
        var versions: [String: Int64] = [:]
        for book in try context.fetch(FetchRequest(entityName: "Book")) {
            versions[try book.value(forKey: "title", as: String.self)] = book.version
        }
        return versions
    }
}

@Suite struct BatchUpdateTests {
    @Test(arguments: StoreKind.allCases)
    func updatesMatchingRowsInTheStoreWithoutLoadingThem(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        let before = try versions(stack)
        let context = stack.newBackgroundContext()
        let result = try context.performAndWait {
            var request = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("year") < Int32(1980))
            request.propertyUpdates = ["inPrint": .constant(.bool(false)), "rating": .constant(.int(4))]
            request.resultType = .objectIDs
            let result = try context.execute(request)
            #expect(context.registeredObjects.isEmpty)
            #expect(!context.hasChanges)
            return result
        }
        let updated = ["Dune", "Dune Messiah", "Children of Dune", "Foundation"]
        #expect(result.count == 4)
        #expect(Set(result.updatedObjectIDs) == Set(updated.map { ids[$0]! }))
        #expect(result.changes == StoreChanges(updated: Set(updated.map { ids[$0]! })))
        let rows = try stored(stack, ["inPrint", "rating"])
        for (title, _) in shelf {
            #expect(rows[title] == (updated.contains(title) ? ["false", "4.0"] : ["true", "nil"]), "\(title)")
        }
        // Each updated row's version went up by one; the others' stayed.
        let after = try versions(stack)
        for (title, _) in shelf { #expect(after[title] == before[title]! + (updated.contains(title) ? 1 : 0), "\(title)") }
        if let directory {
            let raw = try rawSQL(directory.file("Test.sqlite"), "SELECT count(*) FROM \"Book\" WHERE \"inPrint\" = 0")
            #expect(raw == [["4"]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func liveObjectsKeepTheirValuesUntilTheUpdateIsMerged(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let live = stack.newBackgroundContext()
        let worker = stack.newBackgroundContext()
        try live.performAndWait {
            _ = try live.fetch(FetchRequest(entityName: "Book"))
            // A pending change of another attribute, kept through the merge.
            try live.existingObject(with: ids["Dune Messiah"]!).setValue(Int32(1970), forKey: "year")
        }
        // Core Data's spelling, as Core Data code writes it.
        let result = try worker.performAndWait {
            var request = BatchUpdateRequest(entityName: "Book")
            request.predicate = try FetchPredicate(format: "title BEGINSWITH %@", "Dune")
            request.propertiesToUpdate = ["sales": NSNumber(value: 1000), "inPrint": false]
            request.resultType = .updatedObjectIDsResultType
            return try worker.execute(request)
        }
        let updatedIDs = try #require(result.result as? [ObjectID])
        #expect(Set(updatedIDs) == [ids["Dune"]!, ids["Dune Messiah"]!])
        try live.performAndWait {
            let dune = try live.existingObject(with: ids["Dune"]!)
            let messiah = try live.existingObject(with: ids["Dune Messiah"]!)
            // Before the merge: the old values.
            #expect(try dune.value(forKey: "sales", as: Int64.self) == 0)
            #expect(try dune.value(forKey: "inPrint", as: Bool.self) == true)
            ObjectContext.mergeChanges(fromRemoteContextSave: [UpdatedObjectsKey: updatedIDs], into: [live])
            #expect(live.recordedError == nil)
            // After: the store's values, the pending change kept on top.
            #expect(try dune.value(forKey: "sales", as: Int64.self) == 1000)
            #expect(try dune.value(forKey: "inPrint", as: Bool.self) == false)
            #expect(try messiah.value(forKey: "sales", as: Int64.self) == 1000)
            #expect(try messiah.value(forKey: "year", as: Int32?.self) == 1970)
            #expect(messiah.isUpdated)
            // Merged, the context saves its own change without a conflict.
            try live.save()
        }
        let rows = try stored(stack, ["year", "sales", "inPrint"])
        #expect(rows["Dune Messiah"] == ["1970", "1000", "false"])
        #expect(rows["Dune"] == ["1965", "1000", "false"])
        #expect(rows["Hyperion"] == ["1989", "0", "true"])
    }

    @Test(arguments: StoreKind.allCases)
    func aContextHoldingAStaleObjectGetsAConflictWhenItSaves(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let stale = stack.newBackgroundContext()
        try stale.performAndWait { _ = try stale.existingObject(with: ids["Dune"]!).value(forKey: "title", as: String.self) }
        let worker = stack.newBackgroundContext()
        try worker.performAndWait {
            _ = try worker.execute(
                BatchUpdateRequest(
                    entityName: "Book", predicate: AttributeKey("title") == "Dune", propertyUpdates: ["sales": .constant(.int(7))]))
        }
        try stale.performAndWait {
            try stale.existingObject(with: ids["Dune"]!).setValue(Int64(99), forKey: "sales")
            let error = expectError(.mergeConflict) { try stale.save() }
            #expect(error?.objectID == ids["Dune"]!)
            // The context keeps its change; after a refresh that keeps it, the save goes through.
            #expect(stale.hasChanges)
        }
        #expect(try stored(stack, ["sales"])["Dune"] == ["7"])
        try stale.performAndWait {
            try stale.refresh(stale.existingObject(with: ids["Dune"]!), mergeChanges: true)
            try stale.save()
        }
        #expect(try stored(stack, ["sales"])["Dune"] == ["99"])
    }

    @Test(arguments: StoreKind.allCases)
    func reportsWhatTheResultTypeAsksFor(kind: StoreKind) throws {
        let (stack, directory, _) = try filledStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var request = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("year") > Int32(1980))
            request.propertiesToUpdate = ["sales": 5]
            // Core Data's default: status only.
            #expect(request.resultType == .statusOnlyResultType)
            let status = try context.execute(request)
            #expect(status.result as? Bool == true)
            #expect(status.count == 3)
            #expect(status.updatedObjectIDs.isEmpty && status.changes.isEmpty)
            request.resultType = .updatedObjectsCountResultType
            let count = try context.execute(request)
            #expect(count.result as? Int == 3)
            #expect(count.updatedObjectIDs.isEmpty)
            // No match: nothing updated.
            request.predicate = AttributeKey("title") == "Nothing"
            request.resultType = .objectIDs
            let none = try context.execute(request)
            #expect(none.count == 0 && (none.result as? [ObjectID])?.isEmpty == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func setsValuesComputedFromOtherAttributes(kind: StoreKind) throws {
        let (stack, directory, _) = try filledStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try context.execute(BatchUpdateRequest(entityName: "Book", propertyUpdates: ["pages": .constant(.int(100))]))
            var request = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("year") != nil)
            request.propertiesToUpdate = [
                // sales = sales + pages * 2 + year, computed from each row as it was.
                "sales": BatchUpdateExpression(
                    forFunction: "add:to:",
                    arguments: [
                        BatchUpdateExpression(
                            forFunction: "add:to:",
                            arguments: [
                                BatchUpdateExpression(forKeyPath: "sales"),
                                BatchUpdateExpression(
                                    forFunction: "multiply:by:", arguments: [BatchUpdateExpression(forKeyPath: "pages"), 2]),
                            ]),
                        BatchUpdateExpression(forKeyPath: "year"),
                    ]),
                "rating": BatchUpdateExpression(forKeyPath: "year"),
                "weight": BatchUpdateExpression.arithmetic(.subtract, .keyPath("pages"), .constant(.double(0.5))),
            ]
            #expect(try context.execute(request).count == 7)
        }
        let rows = try stored(stack, ["sales", "rating", "weight", "pages"])
        #expect(rows["Dune"] == ["2165", "1965.0", "99.5", "100"])
        #expect(rows["Hyperion"] == ["2189", "1989.0", "99.5", "100"])
        #expect(rows["Untitled"] == ["0", "nil", "nil", "100"])
    }

    @Test(arguments: StoreKind.allCases)
    func refusesWhatItCannotWriteAndWritesNothing(kind: StoreKind) throws {
        let transient = AttributeDescription("scratch", .string, isOptional: true, isTransient: true)
        let model = try ObjectModel(entities: [Fixtures.bookEntity(extraAttributes: [transient]), Fixtures.authorEntity()])
        let (stack, directory, _) = try filledStack(kind, model: model)
        defer { withExtendedLifetime(directory) {} }
        let keys = ["year", "pages", "sales", "rating", "inPrint", "isbn"]
        let before = try stored(stack, keys)
        let beforeVersions = try versions(stack)
        let context = stack.newBackgroundContext()
        func attempt(_ code: SkerryError.Code, _ updates: [AnyHashable: Any], predicate: FetchPredicate? = nil) {
            var request = BatchUpdateRequest(entityName: "Book", predicate: predicate)
            request.propertiesToUpdate = updates
            context.performAndWait {
                let error = expectError(code) { try context.execute(request) }
                #expect(error?.message.hasSuffix("Nothing was updated.") == true, "\(String(describing: error))")
            }
        }
        attempt(.invalidArgument, [:])
        attempt(.unknownAttribute, ["subtitle": "x"])
        attempt(.invalidArgument, ["scratch": "x"])
        attempt(.wrongValueType, ["title": 5])
        attempt(.wrongValueType, ["year": "1990"])
        attempt(.wrongValueType, ["inPrint": 2])
        attempt(.wrongValueType, ["pages": 70_000])
        attempt(.wrongValueType, ["year": 1.5])
        attempt(.wrongValueType, ["title": BatchUpdateExpression(forKeyPath: "year")])
        attempt(.wrongValueType, ["pages": BatchUpdateExpression(forKeyPath: "sales")])
        attempt(.wrongValueType, ["title": BatchUpdateExpression(forFunction: "add:to:", arguments: ["a", "b"])])
        attempt(.missingRequiredValue, ["title": NSNull()])
        attempt(
            .invalidArgument,
            ["year": BatchUpdateExpression(forFunction: "divide:by:", arguments: [BatchUpdateExpression(forKeyPath: "year"), 2])])
        attempt(.invalidArgument, ["year": BatchUpdateExpression(forKeyPath: "author.born")])
        attempt(.invalidArgument, ["cover": [1, 2, 3]])
        // Values computed from the rows, checked before anything is written: pages * 1000 is out
        // of an integer16's range for the books with pages; year is nil for one book.
        try context.performAndWait {
            _ = try context.execute(
                BatchUpdateRequest(
                    entityName: "Book", predicate: AttributeKey("title") == "Dune",
                    propertyUpdates: ["pages": .constant(.int(100)), "rating": .constant(.double(4))]))
        }
        let withPages = try stored(stack, keys)
        let versionsWithPages = try versions(stack)
        attempt(
            .wrongValueType,
            ["pages": BatchUpdateExpression(forFunction: "multiply:by:", arguments: [BatchUpdateExpression(forKeyPath: "pages"), 1000])])
        attempt(.missingRequiredValue, ["sales": BatchUpdateExpression(forKeyPath: "year")])
        // 4e39 is beyond a float's range.
        attempt(.wrongValueType, ["weight": BatchUpdateExpression.arithmetic(.multiply, .keyPath("rating"), .constant(.double(1e39)))])
        // A uniqueness constraint broken by the update: every matching row would get one ISBN.
        attempt(.constraintViolation, ["isbn": "978-0"], predicate: AttributeKey("year") < Int32(1980))
        #expect(try stored(stack, keys) == withPages)
        #expect(try versions(stack) == versionsWithPages)
        #expect(withPages.filter { $0.key != "Dune" } == before.filter { $0.key != "Dune" })
        #expect(beforeVersions["Dune"]! + 1 == versionsWithPages["Dune"]!)
        // One matching row may take the ISBN.
        try context.performAndWait { () throws in
            var request = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("title") == "Hyperion")
            request.propertiesToUpdate = ["isbn": "978-0"]
            #expect(try context.execute(request).count == 1)
        }
        #expect(try stored(stack, ["isbn"])["Hyperion"] == ["\"978-0\""])
    }

    @Test(arguments: StoreKind.allCases)
    func refusesRelationships(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            try context.save()
            var request = BatchUpdateRequest(entityName: "Author")
            request.propertiesToUpdate = ["books": NSNull()]
            let error = expectError(.invalidArgument) { try context.execute(request) }
            #expect(error?.key == "books")
            request.propertiesToUpdate = ["name": BatchUpdateExpression(forKeyPath: "publisher")]
            expectError(.invalidArgument) { try context.execute(request) }
            context.reset()
            #expect(
                try context.fetch(FetchRequest(entityName: "Author")).map { try $0.value(forKey: "name", as: String.self) } == ["Herbert"])
        }
    }

    /// Item and its sub-entity Special, each with a title and a flag.
    static func hierarchyModel() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription("title", .string), AttributeDescription("flag", .boolean, defaultValue: false)])
        let special = EntityDescription(
            name: "Special", attributes: [AttributeDescription("note", .string, isOptional: true)], superentity: item)
        return try ObjectModel(entities: [item, special])
    }

    @Test(arguments: StoreKind.allCases)
    func updatesSubentitiesUnlessToldNotTo(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: Self.hierarchyModel())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        func flagged() throws -> [String] {
            try context.performAndWait {
                try context.fetch(FetchRequest(entityName: "Item", predicate: AttributeKey("flag") == true, sortKeys: [SortKey("title")]))
                    .map { "\($0.entity.name) \(try $0.value(forKey: "title", as: String.self))" }
            }
        }
        try context.performAndWait {
            for (entity, title) in [("Item", "a"), ("Item", "b"), ("Special", "c")] {
                try context.insert(entityName: entity).setValue(title, forKey: "title")
            }
            try context.save()
            var request = BatchUpdateRequest(entityName: "Item", propertyUpdates: ["flag": .constant(.bool(true))])
            request.includesSubentities = false
            request.resultType = .objectIDs
            let own = try context.execute(request)
            #expect(own.updatedObjectIDs.map(\.entityName).sorted() == ["Item", "Item"])
        }
        #expect(try flagged() == ["Item a", "Item b"])
        try context.performAndWait {
            var request = BatchUpdateRequest(entityName: "Item", predicate: AttributeKey("title") != "a")
            request.propertiesToUpdate = ["flag": false]
            request.resultType = .objectIDs
            let all = try context.execute(request)
            #expect(all.updatedObjectIDs.map(\.entityName).sorted() == ["Item", "Special"])
        }
        #expect(try flagged() == ["Item a"])
        try context.performAndWait {
            // A sub-entity's own attribute, on the sub-entity.
            var request = BatchUpdateRequest(entity: try #require(stack.model.entity(named: "Special")))
            request.propertiesToUpdate = ["note": "n", "flag": true]
            #expect(try context.execute(request).count == 1)
        }
        #expect(try flagged() == ["Item a", "Special c"])
    }

    @Test(arguments: StoreKind.allCases)
    func theHistoryRecordsAnUpdateOfEachRowWithTheAttributesSet(kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack()
        let writer = stack.newBackgroundContext()
        let ids = try writer.performAndWait {
            let books = try ["Dune", "Emma", "Solaris"].map { try writer.insertBook($0, year: 1965) }
            try writer.save()
            return books.map(\.objectID)
        }
        let consumer = stack.newBackgroundContext()
        try consumer.performAndWait { _ = try consumer.fetch(FetchRequest(entityName: "Book")) }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        try writer.performAndWait { () throws in
            var request = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("title") != "Emma")
            request.propertiesToUpdate = ["year": 2000, "inPrint": false]
            #expect(try writer.execute(request).count == 2)
        }
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        try #require(transactions.count == 1)
        let changes = (transactions[0].changes ?? []).map {
            "\($0.changeType) \($0.changedObjectID.key) \(($0.updatedProperties ?? []).sorted().joined(separator: ","))"
        }
        #expect(changes.sorted() == ["update \(ids[0].key) inPrint,year", "update \(ids[2].key) inPrint,year"].sorted())
        // Merging the history brings a consumer's objects up to date.
        try consumer.performAndWait { () throws in
            consumer.mergeChanges(fromContextDidSave: transactions[0].objectIDNotification())
            #expect(try consumer.existingObject(with: ids[0]).value(forKey: "year", as: Int32?.self) == 2000)
            #expect(try consumer.existingObject(with: ids[1]).value(forKey: "year", as: Int32?.self) == 1965)
        }
    }
}
