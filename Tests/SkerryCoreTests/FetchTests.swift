import Foundation
import Testing

@testable import SkerryCore

/// A book of the fetch data set.
private struct Item: Sendable {
    var title: String
    var year: Int32?
    var rating: Double?
    var price: String?
    var inPrint: Bool

    var decimalPrice: Decimal? { price.map { Decimal(string: $0)! } }

    @discardableResult
    func insert(into context: ObjectContext) throws -> EntityObject {
        let book = try context.insertBook(title, year: year)
        try book.setValue(rating, forKey: "rating")
        try book.setValue(decimalPrice, forKey: "price")
        try book.setValue(inPrint, forKey: "inPrint")
        return book
    }
}

private let items: [Item] = [
    Item(title: "Alpha", year: 1965, rating: 4.0, price: "9.5", inPrint: true),
    Item(title: "Bravo", year: nil, rating: 3.5, price: "10.25", inPrint: true),
    Item(title: "Charlie", year: 1984, rating: nil, price: "100", inPrint: false),
    Item(title: "Delta", year: 1965, rating: 4.5, price: nil, inPrint: true),
    Item(title: "Echo", year: 2001, rating: 4.0, price: "2", inPrint: true),
    Item(title: "Foxtrot", year: nil, rating: nil, price: "9.75", inPrint: false),
    Item(title: "Golf", year: 1984, rating: 3.0, price: "10", inPrint: true),
    Item(title: "Hotel", year: 1999, rating: 4.0, price: "0.1", inPrint: false),
    Item(title: "India", year: 1965, rating: 3.5, price: "-3.75", inPrint: true),
    Item(title: "Juliet", year: 2001, rating: nil, price: nil, inPrint: true),
    Item(title: "Kilo", year: nil, rating: 5.0, price: "9.5", inPrint: true),
    Item(title: "Lima", year: 1970, rating: 4.0, price: "10.25", inPrint: false),
    Item(title: "Mike", year: 1984, rating: 4.5, price: "20", inPrint: true),
    Item(title: "November", year: 1999, rating: 2.5, price: "1000", inPrint: true),
    Item(title: "Oscar", year: 1970, rating: nil, price: "3", inPrint: false),
    Item(title: "Papa", year: 1965, rating: 4.0, price: "9.5", inPrint: true),
]

/// Three-way comparison with nil smallest.
private func compareOptional<T: Comparable>(_ x: T?, _ y: T?) -> Int {
    switch (x, y) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (let a?, let b?): return a < b ? -1 : (a == b ? 0 : 1)
    }
}

/// The order `sortKeys` gives `list` in plain Swift; ties keep the list's order (store order).
private func expectedOrder(_ list: [Item], _ sortKeys: [SortKey]) -> [String] {
    func compare(_ a: Item, _ b: Item) -> Int {
        for key in sortKeys {
            var order: Int
            switch key.key {
            case "title": order = compareOptional(a.title, b.title)
            case "year": order = compareOptional(a.year, b.year)
            case "rating": order = compareOptional(a.rating, b.rating)
            case "price": order = compareOptional(a.decimalPrice, b.decimalPrice)
            case "inPrint": order = compareOptional(a.inPrint ? 1 : 0, b.inPrint ? 1 : 0)
            default: fatalError("no such key \(key.key)")
            }
            if !key.ascending { order = -order }
            if order != 0 { return order }
        }
        return 0
    }
    return list.enumerated().sorted { lhs, rhs in
        let order = compare(lhs.element, rhs.element)
        return order != 0 ? order < 0 : lhs.offset < rhs.offset
    }.map(\.element.title)
}

private func titles(_ objects: [EntityObject]) throws -> [String] {
    try objects.map { try $0.value(forKey: "title", as: String.self) }
}

private func request(
    _ predicate: FetchPredicate? = nil, _ sortKeys: [SortKey] = [], limit: Int = 0,
    offset: Int = 0
) -> FetchRequest {
    var request = FetchRequest(entityName: "Book", predicate: predicate, sortKeys: sortKeys)
    request.fetchLimit = limit
    request.fetchOffset = offset
    return request
}

/// A stack whose store holds every item, saved, and a context on it.
private func savedStack(_ kind: StoreKind, _ list: [Item] = items) throws -> (PersistentStack, TemporaryDirectory?, ObjectContext) {
    let (stack, directory) = try makeStack(kind)
    let context = stack.newBackgroundContext()
    try context.performAndWait {
        for item in list { try item.insert(into: context) }
        try context.save()
    }
    return (stack, directory, context)
}

/// A stack with an empty store and a context where every item is inserted and not saved.
private func pendingStack(_ kind: StoreKind, _ list: [Item] = items) throws -> (PersistentStack, TemporaryDirectory?, ObjectContext) {
    let (stack, directory) = try makeStack(kind)
    let context = stack.newBackgroundContext()
    try context.performAndWait {
        for item in list { try item.insert(into: context) }
    }
    return (stack, directory, context)
}

private let sortConfigurations: [[SortKey]] = [
    [SortKey("title")],
    [SortKey("title", ascending: false)],
    [SortKey("year"), SortKey("rating", ascending: false), SortKey("title")],
    [SortKey("year", ascending: false), SortKey("title", ascending: false)],
    [SortKey("price"), SortKey("title")],
    [SortKey("price", ascending: false), SortKey("title")],
    [SortKey("rating"), SortKey("year", ascending: false), SortKey("title")],
    [SortKey("inPrint", ascending: false), SortKey("price"), SortKey("title")],
    // Ties left to store order.
    [SortKey("year")],
    [SortKey("inPrint")],
    [SortKey("rating", ascending: false)],
    [],
]

@Suite struct FetchTests {
    @Test(arguments: StoreKind.allCases)
    func sortsBySeveralKeysInBothPaths(kind: StoreKind) throws {
        let (s1, d1, saved) = try savedStack(kind)
        let (s2, d2, pending) = try pendingStack(kind)
        _ = (s1, d1, s2, d2)
        for sortKeys in sortConfigurations {
            let expected = expectedOrder(items, sortKeys)
            let fromStore = try saved.performAndWait { try titles(saved.fetch(request(nil, sortKeys))) }
            let inMemory = try pending.performAndWait { try titles(pending.fetch(request(nil, sortKeys))) }
            #expect(fromStore == expected, "\(sortKeys) (store)")
            #expect(inMemory == expected, "\(sortKeys) (memory)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nilsFirstAscendingAndLastDescending(kind: StoreKind) throws {
        let (s1, d1, saved) = try savedStack(kind)
        let (s2, d2, pending) = try pendingStack(kind)
        _ = (s1, d1, s2, d2)
        let nilYears: Set = ["Bravo", "Foxtrot", "Kilo"]
        for context in [saved, pending] {
            try context.performAndWait {
                let ascending = try titles(context.fetch(request(nil, [SortKey("year"), SortKey("title")])))
                #expect(Array(ascending.prefix(3)) == ["Bravo", "Foxtrot", "Kilo"])
                #expect(ascending[3...].allSatisfy { !nilYears.contains($0) })
                #expect(ascending[3] == "Alpha") // 1965
                #expect(ascending.last == "Juliet") // 2001
                let descending = try titles(context.fetch(request(nil, [SortKey("year", ascending: false), SortKey("title")])))
                #expect(Array(descending.suffix(3)) == ["Bravo", "Foxtrot", "Kilo"])
                #expect(Array(descending.prefix(2)) == ["Echo", "Juliet"])
                let byRating = try titles(context.fetch(request(nil, [SortKey("rating", ascending: false), SortKey("title")])))
                #expect(byRating.first == "Kilo")
                #expect(Array(byRating.suffix(4)) == ["Charlie", "Foxtrot", "Juliet", "Oscar"])
            }
        }
    }

    /// Unsaved inserts interleaved with saved rows, plus an update and a delete, sort exactly as
    /// they do once saved, ties included.
    @Test(arguments: StoreKind.allCases)
    func pendingChangesSortAsAfterSave(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        var expectedItems = items
        try context.performAndWait {
            for (index, item) in items.enumerated() where index % 2 == 0 { try item.insert(into: context) }
            try context.save()
            for (index, item) in items.enumerated() where index % 2 == 1 { try item.insert(into: context) }
            let all = try context.fetch(request())
            let alpha = try #require(all.first { try $0.value(forKey: "title", as: String.self) == "Alpha" })
            try alpha.setValue(Int32(2023), forKey: "year")
            let echo = try #require(all.first { try $0.value(forKey: "title", as: String.self) == "Echo" })
            try echo.setValue(Double?.none, forKey: "rating")
            let golf = try #require(all.first { try $0.value(forKey: "title", as: String.self) == "Golf" })
            try context.delete(golf)
        }
        expectedItems[0].year = 2023
        expectedItems[4].rating = nil
        expectedItems.remove(at: 6)
        // Store order after the save: the saved (even) items first, then the inserted (odd) ones.
        let storeOrder = expectedItems.enumerated().sorted { lhs, rhs in
            let l = items.firstIndex { $0.title == lhs.element.title }!
            let r = items.firstIndex { $0.title == rhs.element.title }!
            return (l % 2, l) < (r % 2, r)
        }.map(\.element)

        var before: [[String]] = []
        try context.performAndWait {
            #expect(context.hasChanges)
            for sortKeys in sortConfigurations {
                before.append(try titles(context.fetch(request(nil, sortKeys))))
                before.append(try titles(context.fetch(request(AttributeKey("year") >= Int32(1970), sortKeys, limit: 4, offset: 2))))
            }
            try context.save()
            #expect(!context.hasChanges)
        }
        var after: [[String]] = []
        try context.performAndWait {
            for sortKeys in sortConfigurations {
                after.append(try titles(context.fetch(request(nil, sortKeys))))
                after.append(try titles(context.fetch(request(AttributeKey("year") >= Int32(1970), sortKeys, limit: 4, offset: 2))))
            }
        }
        #expect(before == after)
        for (index, sortKeys) in sortConfigurations.enumerated() {
            #expect(after[index * 2] == expectedOrder(storeOrder, sortKeys), "\(sortKeys)")
        }
        // A fresh context, which reads the store only, agrees as well.
        let fresh = stack.newBackgroundContext()
        try fresh.performAndWait { () throws -> Void in
            for (index, sortKeys) in sortConfigurations.enumerated() {
                #expect(try titles(fresh.fetch(request(nil, sortKeys))) == after[index * 2], "\(sortKeys)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func limitAndOffsetAgreeInBothPaths(kind: StoreKind) throws {
        let (s1, d1, saved) = try savedStack(kind)
        let (s2, d2, pending) = try pendingStack(kind)
        _ = (s1, d1, s2, d2)
        let byTitle = [SortKey("title")]
        let all = expectedOrder(items, byTitle)
        let sixtyFive = AttributeKey("year") == Int32(1965)
        let cases: [(FetchRequest, [String])] = [
            (request(nil, byTitle, limit: 5), Array(all.prefix(5))),
            (request(nil, byTitle, limit: 4, offset: 3), Array(all[3..<7])),
            (request(nil, byTitle, limit: 5, offset: 14), Array(all[14...])),
            (request(nil, byTitle, limit: 5, offset: 20), []),
            (request(nil, byTitle, offset: 3), Array(all.dropFirst(3))),
            (request(nil, byTitle, offset: 16), []),
            (request(nil, byTitle, limit: 0), all),
            (request(nil, byTitle, limit: 100), all),
            (request(sixtyFive, byTitle, limit: 2, offset: 1), ["Delta", "India"]),
            (request(sixtyFive, [SortKey("title", ascending: false)], limit: 1), ["Papa"]),
            (request(nil, [SortKey("price", ascending: false), SortKey("title")], limit: 3), ["November", "Charlie", "Mike"]),
        ]
        for (fetchRequest, expected) in cases {
            let fromStore = try saved.performAndWait { try titles(saved.fetch(fetchRequest)) }
            let inMemory = try pending.performAndWait { try titles(pending.fetch(fetchRequest)) }
            #expect(fromStore == expected, "limit \(fetchRequest.fetchLimit) offset \(fetchRequest.fetchOffset) (store)")
            #expect(inMemory == expected, "limit \(fetchRequest.fetchLimit) offset \(fetchRequest.fetchOffset) (memory)")
            // count(for:) counts what fetch returns, limit and offset included.
            #expect(try saved.performAndWait { try saved.count(for: fetchRequest) } == expected.count)
            #expect(try pending.performAndWait { try pending.count(for: fetchRequest) } == expected.count)
            #expect(try saved.performAndWait { try saved.fetchObjectIDs(fetchRequest).count } == expected.count)
            #expect(try pending.performAndWait { try pending.fetchObjectIDs(fetchRequest).count } == expected.count)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func includesPendingChangesMatchesInMemory(kind: StoreKind) throws {
        let (stack, directory, context) = try savedStack(kind)
        _ = (stack, directory)
        let sixtyFive = AttributeKey("year") == Int32(1965)
        try context.performAndWait {
            let all = try context.fetch(request())
            func book(_ title: String) throws -> EntityObject {
                try #require(all.first { try $0.value(forKey: "title", as: String.self) == title })
            }
            let storeIDs = try ["Alpha", "Delta", "India", "Papa"].map { try book($0).objectID }
            try context.insertBook("Quebec", year: 1965) // new, matches
            try context.insertBook("Romeo", year: 1965) // new, matches
            try context.insertBook("Sierra", year: 1966) // new, does not match
            try book("Echo").setValue(Int32(1965), forKey: "year") // now matches
            try book("Alpha").setValue(Int32(1970), forKey: "year") // no longer matches
            try context.delete(try book("Delta")) // matched, deleted
            try book("Hotel").setValue(Int32(1998), forKey: "year") // unrelated change
            try book("India").setValue("India!", forKey: "title") // still matches

            let pendingTitles = ["Echo", "India!", "Papa", "Quebec", "Romeo"]
            var withPending = request(sixtyFive, [SortKey("title")])
            #expect(try titles(context.fetch(withPending)) == pendingTitles)
            #expect(try context.count(for: withPending) == 5)
            let ids = try context.fetchObjectIDs(withPending)
            #expect(ids == (try context.fetch(withPending).map(\.objectID)))
            #expect(ids.filter(\.isTemporary).count == 2)
            withPending.fetchLimit = 2
            withPending.fetchOffset = 1
            #expect(try titles(context.fetch(withPending)) == ["India!", "Papa"])
            #expect(try context.count(for: withPending) == 2)

            // Without pending changes: the store's rows, as they are saved.
            var storeOnly = request(sixtyFive, [SortKey("title")])
            storeOnly.includesPendingChanges = false
            let objects = try context.fetch(storeOnly)
            #expect(objects.map(\.objectID) == storeIDs)
            #expect(objects.contains { $0.isDeleted })
            #expect(try context.count(for: storeOnly) == 4)
            #expect(try context.fetchObjectIDs(storeOnly) == storeIDs)
            #expect(try context.fetchObjectIDs(storeOnly).allSatisfy { !$0.isTemporary })
            // The unsaved insert that does not match is left out, the one that does is in.
            var everything = request(nil, [SortKey("title")])
            #expect(try context.count(for: everything) == items.count + 3 - 1)
            everything.includesPendingChanges = false
            #expect(try context.count(for: everything) == items.count)

            try context.save()
            #expect(try titles(context.fetch(request(sixtyFive, [SortKey("title")]))) == pendingTitles)
        }
        // A fresh context sees the saved result.
        let fresh = stack.newBackgroundContext()
        let freshTitles = try fresh.performAndWait { try titles(fresh.fetch(request(sixtyFive, [SortKey("title")]))) }
        #expect(freshTitles == ["Echo", "India!", "Papa", "Quebec", "Romeo"])
    }

    @Test(arguments: StoreKind.allCases)
    func fetchObjectIDsWithoutMaterializing(kind: StoreKind) throws {
        let (stack, directory, _) = try savedStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let byPrice = request(AttributeKey("price") < Decimal(10), [SortKey("price"), SortKey("title")])
            let ids = try context.fetchObjectIDs(byPrice)
            #expect(context.registeredObjects.isEmpty)
            #expect(ids.count == 8)
            #expect(ids.allSatisfy { !$0.isTemporary && $0.entityName == "Book" })
            #expect(Set(ids).count == ids.count)
            let fetched = try titles(ids.map { try context.existingObject(with: $0) })
            #expect(fetched == ["India", "Hotel", "Echo", "Oscar", "Alpha", "Kilo", "Papa", "Foxtrot"])
            #expect(try context.fetch(byPrice).map(\.objectID) == ids)
            #expect(try context.fetchObjectIDs(request(AttributeKey("title") == "Nobody")).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func countRespectsPredicateAndPendingChanges(kind: StoreKind) throws {
        let (stack, directory, context) = try savedStack(kind)
        _ = (stack, directory)
        try context.performAndWait {
            #expect(try context.count(for: request()) == 16)
            #expect(try context.count(for: request(AttributeKey("inPrint") == false)) == 5)
            #expect(try context.count(for: request(AttributeKey("year").isNil)) == 3)
            #expect(try context.count(for: request(.constant(false))) == 0)
            #expect(try context.count(for: FetchRequest(entityName: "Author")) == 0)
            try context.insertBook("Tango", year: nil)
            let kilo = try #require(try context.fetch(request(AttributeKey("title") == "Kilo")).first)
            try kilo.setValue(Int32(1990), forKey: "year")
            #expect(try context.count(for: request(AttributeKey("year").isNil)) == 3) // Bravo, Foxtrot, Tango
            #expect(try context.count(for: request()) == 17)
            var storeOnly = request(AttributeKey("year").isNil)
            storeOnly.includesPendingChanges = false
            #expect(try context.count(for: storeOnly) == 3) // Bravo, Foxtrot, Kilo
            try context.delete(kilo)
            #expect(try context.count(for: request()) == 16)
            #expect(try context.count(for: request(AttributeKey("year") == Int32(1990))) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func fetchDictionariesReturnsChosenProperties(kind: StoreKind) throws {
        let (stack, directory, context) = try savedStack(kind)
        _ = (stack, directory)
        try context.performAndWait {
            var fetchRequest = request(AttributeKey("inPrint") == false, [SortKey("title")])
            fetchRequest.propertiesToFetch = ["title", "year", "price"]
            let rows = try context.fetchDictionaries(fetchRequest)
            let expected: [[String: AttributeValue]] = [
                ["title": .string("Charlie"), "year": .int(1984), "price": .decimal(Decimal(100))],
                ["title": .string("Foxtrot"), "year": .null, "price": .decimal(Decimal(string: "9.75")!)],
                ["title": .string("Hotel"), "year": .int(1999), "price": .decimal(Decimal(string: "0.1")!)],
                ["title": .string("Lima"), "year": .int(1970), "price": .decimal(Decimal(string: "10.25")!)],
                ["title": .string("Oscar"), "year": .int(1970), "price": .decimal(Decimal(3))],
            ]
            #expect(rows == expected)

            // Every attribute when propertiesToFetch is nil, .null for missing values.
            var allProperties = request(AttributeKey("title") == "Juliet")
            allProperties.propertiesToFetch = nil
            let juliet = try #require(try context.fetchDictionaries(allProperties).first)
            #expect(Set(juliet.keys) == Set(context.model.entity(named: "Book")!.attributes.map(\.name)))
            #expect(juliet["rating"] == .null)
            #expect(juliet["price"] == .null)
            #expect(juliet["cover"] == .null)
            #expect(juliet["year"] == .int(2001))
            #expect(juliet["inPrint"] == .bool(true))
            #expect(juliet["sales"] == .int(0))

            // Limit and offset apply; unsaved inserts are not read.
            try context.insertBook("Aardvark", year: 1)
            var limited = request(nil, [SortKey("title")], limit: 2, offset: 1)
            limited.propertiesToFetch = ["title"]
            #expect(try context.fetchDictionaries(limited) == [["title": .string("Bravo")], ["title": .string("Charlie")]])

            var unknown = request()
            unknown.propertiesToFetch = ["title", "nope"]
            expectError(.unknownAttribute) { _ = try context.fetchDictionaries(unknown) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchSizeReturnsFaultsLoadedOneBatchAtATime(kind: StoreKind) throws {
        let (stack, directory, _) = try savedStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var fetchRequest = request(nil, [SortKey("title")])
            fetchRequest.fetchBatchSize = 4
            let objects = try context.fetch(fetchRequest)
            #expect(objects.count == 16)
            #expect(objects.allSatisfy { $0.isFault })
            #expect(context.registeredObjects.count == 16)

            // Reading one object loads its batch, and only its batch.
            #expect(try objects[5].value(forKey: "title", as: String.self) == "Foxtrot")
            #expect(objects[4..<8].allSatisfy { !$0.isFault })
            #expect(objects[0..<4].allSatisfy { $0.isFault })
            #expect(objects[8...].allSatisfy { $0.isFault })

            #expect(try objects[15].value(forKey: "year", as: Int32?.self) == 1965) // Papa
            #expect(objects[12..<16].allSatisfy { !$0.isFault })
            #expect(objects[8..<12].allSatisfy { $0.isFault })

            // The values are right, and in the requested order.
            #expect(try titles(objects) == expectedOrder(items, [SortKey("title")]))
            #expect(objects.allSatisfy { !$0.isFault })

            // A later batched fetch returns the loaded objects, not new faults.
            let again = try context.fetch(fetchRequest)
            #expect(again.map(ObjectIdentifier.init) == objects.map(ObjectIdentifier.init))
            #expect(again.allSatisfy { !$0.isFault })
        }
        // With a limit and a predicate, batches cover the result only.
        let other = stack.newBackgroundContext()
        try other.performAndWait {
            var fetchRequest = request(AttributeKey("year") == Int32(1965), [SortKey("title")], limit: 3)
            fetchRequest.fetchBatchSize = 2
            let objects = try other.fetch(fetchRequest)
            #expect(objects.count == 3)
            #expect(objects.allSatisfy { $0.isFault })
            #expect(try objects[2].value(forKey: "title", as: String.self) == "India")
            #expect(objects[0].isFault && objects[1].isFault)
            #expect(try titles(objects) == ["Alpha", "Delta", "India"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func decimalsCompareAndSortNumerically(kind: StoreKind) throws {
        let (s1, d1, saved) = try savedStack(kind)
        let (s2, d2, pending) = try pendingStack(kind)
        _ = (s1, d1, s2, d2)
        let price = AttributeKey("price")
        for context in [saved, pending] {
            try context.performAndWait {
                let ascending = try context.fetch(request(price.isNotNil, [SortKey("price"), SortKey("title")]))
                let prices = try ascending.map { try $0.value(forKey: "price", as: Decimal.self) }
                #expect(
                    prices
                        == ["-3.75", "0.1", "2", "3", "9.5", "9.5", "9.5", "9.75", "10", "10.25", "10.25", "20", "100", "1000"]
                        .map { Decimal(string: $0)! })
                #expect(
                    try titles(context.fetch(request(price < Decimal(10), [SortKey("title")])))
                        == ["Alpha", "Echo", "Foxtrot", "Hotel", "India", "Kilo", "Oscar", "Papa"])
                #expect(
                    try titles(context.fetch(request(price > Decimal(string: "9.5")!, [SortKey("title")])))
                        == ["Bravo", "Charlie", "Foxtrot", "Golf", "Lima", "Mike", "November"])
                #expect(
                    try titles(
                        context.fetch(request(price.between(Decimal(string: "9.5")!...Decimal(string: "10.25")!), [SortKey("title")])))
                        == ["Alpha", "Bravo", "Foxtrot", "Golf", "Kilo", "Lima", "Papa"])
                #expect(
                    try titles(context.fetch(request(price == Decimal(string: "9.50")!, [SortKey("title")])))
                        == ["Alpha", "Kilo", "Papa"])
                #expect(try titles(context.fetch(request(price >= 100, [SortKey("title")]))) == ["Charlie", "November"])
                let descending = try titles(context.fetch(request(nil, [SortKey("price", ascending: false), SortKey("title")])))
                #expect(Array(descending.prefix(3)) == ["November", "Charlie", "Mike"])
                #expect(Array(descending.suffix(2)) == ["Delta", "Juliet"]) // nil prices last
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func badRequestsThrow(kind: StoreKind) throws {
        let (stack, directory, context) = try savedStack(kind, Array(items.prefix(2)))
        _ = (stack, directory)
        try context.performAndWait {
            for pending in [false, true] {
                if pending { try context.insertBook("Pending") }
                expectError(.invalidArgument) { _ = try context.fetch(request(limit: -1)) }
                expectError(.invalidArgument) { _ = try context.fetch(request(offset: -1)) }
                var batch = request()
                batch.fetchBatchSize = -1
                expectError(.invalidArgument) { _ = try context.fetch(batch) }
                expectError(.invalidArgument) { _ = try context.count(for: request(limit: -5)) }
                expectError(.invalidArgument) { _ = try context.fetchObjectIDs(request(limit: -1)) }
                expectError(.invalidArgument) { _ = try context.fetchDictionaries(request(offset: -1)) }
                expectError(.unknownAttribute) { _ = try context.fetch(request(nil, [SortKey("nope")])) }
                expectError(.unknownAttribute) {
                    _ = try context.fetch(request(nil, [SortKey("title"), SortKey("nope", ascending: false)]))
                }
                expectError(.unknownEntity) { _ = try context.fetch(FetchRequest(entityName: "Nope")) }
                expectError(.unknownEntity) { _ = try context.count(for: FetchRequest(entityName: "Nope")) }
                expectError(.unknownEntity) { _ = try context.fetchObjectIDs(FetchRequest(entityName: "Nope")) }
                expectError(.unknownEntity) { _ = try context.fetchDictionaries(FetchRequest(entityName: "Nope")) }
            }
        }
    }
}
