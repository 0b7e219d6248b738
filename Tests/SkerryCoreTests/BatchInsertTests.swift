import Foundation
import Testing

@testable import SkerryCore

/// Every book in the store, read by a fresh context: its stored values by attribute name, by title.
private func storedBooks(_ stack: PersistentStack) throws -> [String: [String: AttributeValue]] {
    let context = stack.newBackgroundContext()
    return try context.performAndWait {
        let books = try context.fetch(FetchRequest(entityName: "Book"))
        return Dictionary(
            uniqueKeysWithValues: try books.map { (try $0.value(forKey: "title", as: String.self), try $0.committedValues()) })
    }
}

/// The values of `names` among `values`.
private func stored(_ values: [String: AttributeValue]?, _ names: [String]) throws -> [String: AttributeValue] {
    let values = try #require(values)
    return Dictionary(uniqueKeysWithValues: names.map { ($0, values[$0] ?? .null) })
}

private func bookCount(_ stack: PersistentStack) throws -> Int {
    let context = stack.newBackgroundContext()
    return try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) }
}

/// Batch inserts (Core Data's `NSBatchInsertRequest`) in SQLite file, in-memory and PostgreSQL
/// stores: what a context fetches afterwards, the result forms, upserts through uniqueness
/// constraints, bad rows, history, keys, large inputs.
@Suite struct BatchInsertTests {
    @Test(arguments: StoreKind.allCases)
    func insertedRowsAreFetchableWithTheirValuesAndDefaults(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let published = Date(timeIntervalSince1970: 1_000_000_000)
        let uuid = UUID()
        let link = URL(string: "https://example.com/dune")!
        var request = BatchInsertRequest(
            entityName: "Book",
            objects: [
                [
                    "title": "Dune", "year": 1965, "pages": NSNumber(value: 412), "sales": Int64(20_000_000),
                    "rating": 4.5, "weight": Float(0.5), "price": Decimal(string: "9.99")!, "published": published,
                    "inPrint": false, "cover": Data([1, 2, 3]), "isbn": "0441013597", "uuid": uuid, "link": link,
                ],
                ["title": "Emma", "year": NSNull(), "rating": NSNumber(value: 3)],
            ])
        request.resultType = .objectIDs
        let context = stack.newBackgroundContext()
        let ids = try context.performAndWait {
            let result = try context.execute(request)
            // Nothing was registered in the context, which has nothing to save.
            #expect(context.registeredObjects.isEmpty)
            #expect(!context.hasChanges)
            #expect(result.count == 2)
            let ids = try #require(result.result as? [ObjectID])
            #expect(ids.count == 2 && ids.allSatisfy { !$0.isTemporary })
            #expect(result.changes.inserted == Set(ids))
            return ids
        }

        let books = try storedBooks(stack)
        let dune = try #require(books["Dune"])
        #expect(dune["year"] == .int(1965))
        #expect(dune["pages"] == .int(412))
        #expect(dune["sales"] == .int(20_000_000))
        #expect(dune["rating"] == .double(4.5))
        #expect(dune["weight"] == .double(0.5))
        #expect(dune["price"] == .decimal(Decimal(string: "9.99")!))
        #expect(dune["published"] == .date(published))
        #expect(dune["inPrint"] == .bool(false))
        #expect(dune["cover"] == .data(Data([1, 2, 3])))
        #expect(dune["isbn"] == .string("0441013597"))
        #expect(dune["uuid"] == .uuid(uuid))
        #expect(dune["link"] == .url(link))
        // Emma: the attributes its dictionary leaves out have their default values.
        let emma = try stored(books["Emma"], ["year", "sales", "inPrint", "rating", "isbn"])
        #expect(emma == ["year": .null, "sales": .int(0), "inPrint": .bool(true), "rating": .double(3), "isbn": .null])

        // The IDs name the objects for any context.
        let reader = stack.newBackgroundContext()
        try reader.performAndWait { () throws in
            #expect(try reader.existingObject(with: ids[0]).value(forKey: "title", as: String.self) == "Dune")
            #expect(try reader.existingObject(with: ids[1]).value(forKey: "title", as: String.self) == "Emma")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func resultTypesReportAsCoreDataDoes(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            let plain = BatchInsertRequest(entityName: "Book", objects: [["title": "A"], ["title": "B"]])
            #expect(plain.resultType == .statusOnly)
            let status = try context.execute(plain)
            #expect(status.result as? Bool == true)
            #expect(status.objectIDs.isEmpty)

            var counting = BatchInsertRequest(entityName: "Book", objects: [["title": "C"], ["title": "D"], ["title": "E"]])
            counting.resultType = BatchInsertRequestResultType.count
            #expect(try context.execute(counting).result as? Int == 3)
        }
        #expect(try storedBooks(stack).keys.sorted() == ["A", "B", "C", "D", "E"])
    }

    @Test(arguments: StoreKind.allCases)
    func aRowMatchingAStoredObjectThroughAConstraintUpdatesIt(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let live = stack.newBackgroundContext()
        let duneID = try live.performAndWait {
            let dune = try live.insertBook("Dune (first edition)", year: 1965, isbn: "0441013597")
            try dune.setValue(Int64(5), forKey: "sales")
            try live.save()
            return dune.objectID
        }

        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump // as Core Data code sets it for an upsert
        let result = try context.performAndWait {
            var request = BatchInsertRequest(
                entityName: "Book",
                objects: [
                    ["title": "Dune", "isbn": "0441013597"],
                    ["title": "Emma (draft)", "isbn": "0141439580"],
                    ["title": "Emma", "isbn": "0141439580", "year": 1815],
                ])
            request.resultType = .objectIDs
            return try context.execute(request)
        }
        // One object per isbn: Dune kept its ID, the two Emma rows made one object (the later won).
        #expect(result.count == 2)
        #expect(result.objectIDs.count == 2 && result.objectIDs[0] == duneID)
        #expect(result.changes.updated == [duneID])
        #expect(result.changes.inserted == [result.objectIDs[1]])
        let books = try storedBooks(stack)
        #expect(books.keys.sorted() == ["Dune", "Emma"])
        // Every stored attribute took the row's value or default, as Core Data's upsert does.
        #expect(try stored(books["Dune"], ["year", "sales"]) == ["year": .null, "sales": .int(0)])
        #expect(try stored(books["Emma"], ["year"]) == ["year": .int(1815)])

        // A live context merging the changes sees the new values.
        try live.performAndWait { () throws in
            live.mergeChanges(result.changes)
            #expect(try live.existingObject(with: duneID).value(forKey: "title", as: String.self) == "Dune")
            // The updated object's version moved on: saving a change to it is no conflict.
            try live.existingObject(with: duneID).setValue(Int32(1966), forKey: "year")
            try live.save()
        }
    }

    /// A row matching a stored object, and rows matching each other, under the other policies:
    /// `.error` (the default) refuses and writes nothing, the store-side policies keep the stored
    /// object as it is and the first of two matching rows.
    @Test(arguments: StoreKind.allCases)
    func aRowMatchingAStoredObjectGoesToTheMergePolicy(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let live = stack.newBackgroundContext()
        let duneID = try live.performAndWait {
            let dune = try live.insertBook("Dune", year: 1965, isbn: "0441013597")
            try live.save()
            return dune.objectID
        }
        let context = stack.newBackgroundContext()
        let matchingStored: [[String: Any]] = [
            ["title": "Emma", "isbn": "0141439580"], ["title": "Dune (reissue)", "isbn": "0441013597"],
        ]
        let matchingEachOther: [[String: Any]] = [["title": "Kim", "isbn": "x"], ["title": "Kim (later)", "isbn": "x"]]
        for objects in [matchingStored, matchingEachOther] {
            try context.performAndWait { () throws in
                let error = try #require(throws: SkerryError.self) {
                    try context.execute(BatchInsertRequest(entityName: "Book", objects: objects))
                }
                #expect(error.code == .constraintViolation)
                #expect(error.key == "isbn")
            }
        }
        #expect(try storedBooks(stack).keys.sorted() == ["Dune"])

        for policy in [MergePolicy.mergeByPropertyStoreTrump, .rollback] {
            context.mergePolicy = policy
            let result = try context.performAndWait {
                var request = BatchInsertRequest(entityName: "Book", objects: matchingStored + matchingEachOther)
                request.resultType = .objectIDs
                return try context.execute(request)
            }
            #expect(result.objectIDs.count == 3)
            #expect(result.objectIDs[1] == duneID)
            #expect(result.changes.updated.isEmpty)
            #expect(result.changes.inserted.count == (policy == .rollback ? 0 : 2)) // the second time, both exist
            let books = try storedBooks(stack)
            #expect(books.keys.sorted() == ["Dune", "Emma", "Kim"]) // Dune as stored, the first Kim
            #expect(try stored(books["Dune"], ["year"]) == ["year": .int(1965)])
        }
    }

    /// A constraint of a superentity holds across its hierarchy: a row of the superentity that
    /// matches an object of a sub-entity updates that object's inherited attributes (and the
    /// other way round), keeping its entity and its own attributes.
    @Test(arguments: StoreKind.allCases)
    func anUpsertAcrossAHierarchyUpdatesTheStoredObjectOfItsOwnEntity(_ kind: StoreKind) throws {
        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription("code", .string), AttributeDescription("label", .string, isOptional: true)],
            uniquenessConstraints: [["code"]])
        let special = EntityDescription(
            name: "Special", attributes: [AttributeDescription("grade", .integer64, isOptional: true)], superentity: item)
        let (stack, directory) = try makeStack(kind, model: try ObjectModel(entities: [item, special]))
        _ = directory
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let (specialID, plainID) = try context.performAndWait {
            let stored = try context.insert(entityName: "Special")
            try stored.setValue("a", forKey: "code")
            try stored.setValue(Int64(7), forKey: "grade")
            let plain = try context.insert(entityName: "Item")
            try plain.setValue("b", forKey: "code")
            try context.save()
            return (stored.objectID, plain.objectID)
        }
        try context.performAndWait { () throws in
            var request = BatchInsertRequest(entityName: "Special", objects: [["code": "a", "label": "new", "grade": 8]])
            request.resultType = .objectIDs
            #expect(try context.execute(request).objectIDs == [specialID])
            request = BatchInsertRequest(entityName: "Item", objects: [["code": "c"], ["code": "a", "label": "from Item"]])
            request.resultType = .objectIDs
            let ids = try context.execute(request).objectIDs
            #expect(ids.count == 2 && ids[1] == specialID)
            request = BatchInsertRequest(entityName: "Special", objects: [["code": "b", "label": "from Special", "grade": 3]])
            request.resultType = .objectIDs
            #expect(try context.execute(request).objectIDs == [plainID])
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait { () throws in
            let a = try reader.existingObject(with: specialID)
            #expect(a.entity.name == "Special")
            #expect(try a.committedValues() == ["code": .string("a"), "label": .string("from Item"), "grade": .int(8)])
            let b = try reader.existingObject(with: plainID)
            #expect(b.entity.name == "Item")
            #expect(try b.committedValues() == ["code": .string("b"), "label": .string("from Special")])
            #expect(try reader.count(for: FetchRequest(entityName: "Item")) == 3)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBadRowThrowsATypedErrorAndNothingIsInserted(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            try context.insertBook("Kept")
            try context.save()
        }
        let cases: [([[String: Any]], SkerryError.Code, String)] = [
            ([["title": "A"], ["year": 1999]], .missingRequiredValue, "title"),
            ([["title": "A"], ["title": "B"], ["title": "C", "year": "1999"]], .wrongValueType, "year"),
            ([["title": "A", "pages": 70_000]], .wrongValueType, "pages"),
            ([["title": "A", "rating": Double.nan]], .wrongValueType, "rating"),
            ([["title": "A"], ["title": "B", "subtitle": "x"]], .unknownAttribute, "subtitle"),
            ([["title": "A", "title ": "B"]], .unknownAttribute, "title "),
        ]
        for (objects, code, key) in cases {
            try context.performAndWait { () throws in
                let error = try #require(throws: SkerryError.self) {
                    try context.execute(BatchInsertRequest(entityName: "Book", objects: objects))
                }
                #expect(error.code == code)
                #expect(error.key == key)
                #expect(error.entityName == "Book")
                #expect(error.message.contains("Row \(objects.count - 1)"))
            }
        }
        #expect(try storedBooks(stack).keys.sorted() == ["Kept"])
    }

    @Test(arguments: StoreKind.allCases)
    func aRowSettingARelationshipIsRefused(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            let error = try #require(throws: SkerryError.self) {
                try context.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "Dune", "author": NSNull()]]))
            }
            #expect(error.code == .invalidArgument)
            #expect(error.key == "author")
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aLaterInsertGetsAFreshKey(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            var request = BatchInsertRequest(entityName: "Book", objects: (0..<5).map { ["title": "Batch \($0)"] })
            request.resultType = .objectIDs
            let batch = try context.execute(request).objectIDs
            #expect(Set(batch.map(\.key)).count == 5)
            let later = try context.insertBook("Later")
            try context.save()
            #expect(!batch.map(\.key).contains(later.objectID.key))
            let again = try context.execute(request).objectIDs
            #expect(Set(again.map(\.key)).isDisjoint(with: batch.map(\.key) + [later.objectID.key]))
        }
        #expect(try bookCount(stack) == 11)
    }

    @Test(arguments: StoreKind.allCases)
    func historyRecordsAnInsertPerRowAndAnUpdatePerUpsert(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        context.transactionAuthor = "importer"
        context.mergePolicy = .mergeByPropertyObjectTrump
        let existing = try context.performAndWait {
            let book = try context.insertBook("Dune", isbn: "1")
            try context.save()
            return book.objectID
        }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let ids = try context.performAndWait {
            var request = BatchInsertRequest(
                entityName: "Book", objects: [["title": "Dune", "isbn": "1"], ["title": "Emma", "isbn": "2"], ["title": "Kim"]])
            request.resultType = .objectIDs
            return try context.execute(request).objectIDs
        }
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        try #require(transactions.count == 1)
        #expect(transactions[0].author == "importer")
        let changes = (transactions[0].changes ?? []).map { ($0.changeType, $0.changedObjectID) }
        #expect(Set(changes.filter { $0.0 == .insert }.map(\.1)) == Set(ids.dropFirst()))
        #expect(changes.filter { $0.0 == .update }.map(\.1) == [existing])
        #expect(changes.count == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func handlersGiveOneObjectPerCallUntilTheyReturnTrue(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            var index = 0
            let titles = ["Dune", "Emma", "Kim"]
            var byDictionary = BatchInsertRequest(entityName: "Book") { dictionary in
                guard index < titles.count else { return true }
                dictionary["title"] = titles[index]
                dictionary["year"] = 2000 + index
                index += 1
                return false
            }
            byDictionary.resultType = .count
            #expect(try context.execute(byDictionary).count == 3)

            var made = 0
            var byObject = BatchInsertRequest(entity: try #require(stack.model.entity(named: "Book"))) { object in
                guard made < 2 else { return true }
                try? object.setValue("Object \(made)", forKey: "title")
                try? object.setValue(Int64(made), forKey: "sales")
                made += 1
                return false
            }
            byObject.resultType = .count
            #expect(try context.execute(byObject).count == 2)
            #expect(context.registeredObjects.isEmpty)
        }
        let books = try storedBooks(stack)
        #expect(books.keys.sorted() == ["Dune", "Emma", "Kim", "Object 0", "Object 1"])
        #expect(try stored(books["Kim"], ["year"]) == ["year": .int(2002)])
        #expect(try stored(books["Object 1"], ["sales", "inPrint"]) == ["sales": .int(1), "inPrint": .bool(true)])
    }

    /// More rows than one statement can bind (13 attributes a row: past SQLite's 32,766 and
    /// PostgreSQL's 65,535 parameters), with upserts among them.
    @Test(arguments: StoreKind.allCases)
    func aLargeInputIsWrittenInOneTransaction(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait { () throws in
            try context.insertBook("Old 17", isbn: "isbn-17")
            try context.save()
        }
        let rows: [[String: Any]] = (0..<12_000).map {
            ["title": "Book \($0)", "year": $0, "isbn": "isbn-\($0)", "rating": Double($0) / 2, "inPrint": $0 % 2 == 0]
        }
        let count = try context.performAndWait {
            var request = BatchInsertRequest(entityName: "Book", objects: rows)
            request.resultType = .count
            return try context.execute(request).count
        }
        #expect(count == 12_000)
        #expect(try bookCount(stack) == 12_000)
        let check = stack.newBackgroundContext()
        try check.performAndWait { () throws in
            let request = FetchRequest(entityName: "Book", predicate: AttributeKey("isbn") == "isbn-17")
            let books = try check.fetch(request)
            #expect(try books.map { try $0.value(forKey: "title", as: String.self) } == ["Book 17"])
            let last = try check.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("year") == Int32(11_999)))
            #expect(
                try last.map { try stored($0.committedValues(), ["rating", "inPrint"]) } == [
                    ["rating": .double(5_999.5), "inPrint": .bool(false)]
                ])
        }
    }
}
