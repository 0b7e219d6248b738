import Foundation
import Synchronization
import Testing

@testable import SkerryCore

/// Review of batch inserts and batch updates (Core Data's `NSBatchInsertRequest` and
/// `NSBatchUpdateRequest`) on every kind of store: edges a user meets (nothing to do, every
/// attribute type, hierarchies with constraints, read-only stores, stores another instance tracks,
/// large inputs).
@Suite struct BatchReviewTests: ItemHierarchyFixture {
    /// The items of the hierarchy's stack, `entity code` sorted.
    static func items(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Item")).map {
                "\($0.entity.name) \(try $0.value(forKey: "code", as: String?.self) ?? "nil")"
            }.sorted()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchUpdateCannotMakeObjectsOfTwoSubentitiesCollide(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: Self.model())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try Self.insert("Book", "A", in: context)
            _ = try Self.insert("Film", "B", in: context)
            try context.save()
            // A film takes a book's code.
            var request = BatchUpdateRequest(entityName: "Film", predicate: AttributeKey("code") == "B")
            request.propertyUpdates = ["code": .constant(.string("A"))]
            expectError(.constraintViolation) { try context.execute(request) }
            // Every item of the hierarchy takes one code: a book and a film then share it.
            var all = BatchUpdateRequest(entityName: "Item")
            all.propertyUpdates = ["code": .constant(.string("Z"))]
            expectError(.constraintViolation) { try context.execute(all) }
        }
        #expect(try Self.items(stack) == ["Book A", "Film B"])
    }

    @Test(arguments: StoreKind.allCases)
    func nothingToDoIsNoError(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try context.insertBook("Dune")
            try context.save()
        }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        try context.performAndWait { () throws in
            var insert = BatchInsertRequest(entityName: "Book", objects: [])
            insert.resultType = .objectIDs
            let inserted = try context.execute(insert)
            #expect(inserted.count == 0 && inserted.objectIDs.isEmpty)
            #expect((inserted.result as? [ObjectID])?.isEmpty == true)
            let handler = BatchInsertRequest(entityName: "Book") { (_: NSMutableDictionary) in true }
            #expect(try context.execute(handler).count == 0)
            var update = BatchUpdateRequest(entityName: "Book", predicate: AttributeKey("title") == "Nothing")
            update.propertyUpdates = ["year": .constant(.int(1))]
            update.resultType = .objectIDs
            let updated = try context.execute(update)
            #expect(updated.count == 0 && updated.updatedObjectIDs.isEmpty)
        }
        // Nothing happened: no transaction recorded.
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).isEmpty)
        // The history continues.
        try context.performAndWait { () throws in
            _ = try context.insertBook("Emma")
            try context.save()
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func everyAttributeTypeRoundTrips(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        // PostgreSQL's text holds no NUL (a save there fails with the server's 22021 too).
        let nul = kind == .postgres ? "" : "\u{0}"
        let title = "Nul\(nul)in 🦀 the middle"
        let published = Date(timeIntervalSinceReferenceDate: 123_456_789.25)
        let uuid = UUID()
        let link = URL(string: "https://example.com/a%20b?c=d#e")!
        let price = Decimal(string: "12345678901234.5678")!
        let cover = Data([0, 1, 2, 0, 255])
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            var insert = BatchInsertRequest(
                entityName: "Book",
                objects: [
                    [
                        "title": title, "year": Int32.max, "pages": Int16.min, "sales": Int64.max, "rating": -0.125,
                        "weight": Float(3.5), "price": price, "published": published, "inPrint": false, "cover": cover,
                        "isbn": "🦀", "uuid": uuid, "link": link,
                    ]
                ])
            insert.resultType = .objectIDs
            let id = try #require(try context.execute(insert).objectIDs.first)
            let book = try context.existingObject(with: id)
            #expect(try book.value(forKey: "title", as: String.self) == title)
            #expect(try book.value(forKey: "year", as: Int32?.self) == Int32.max)
            #expect(try book.value(forKey: "pages", as: Int16?.self) == Int16.min)
            #expect(try book.value(forKey: "sales", as: Int64.self) == Int64.max)
            #expect(try book.value(forKey: "weight", as: Float?.self) == 3.5)
            #expect(try book.value(forKey: "price", as: Decimal?.self) == price)
            #expect(try book.value(forKey: "published", as: Date?.self) == published)
            #expect(try book.value(forKey: "cover", as: Data?.self) == cover)
            #expect(try book.value(forKey: "uuid", as: UUID?.self) == uuid)
            #expect(try book.value(forKey: "link", as: URL?.self) == link)
            // Out of range, or not a number: refused.
            for (key, value) in [("pages", 40_000 as Any), ("year", Int64(Int32.max) + 1), ("weight", 1e300), ("rating", Double.nan)] {
                expectError(.wrongValueType) {
                    try context.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "Bad", key: value]]))
                }
            }

            // A batch update sets every type too.
            let title2 = "second\(nul)🦀"
            let date2 = Date(timeIntervalSinceReferenceDate: -5)
            let uuid2 = UUID()
            let link2 = URL(string: "file:///tmp/x%2Fy")!
            let price2 = Decimal(string: "-0.000001")!
            var update = BatchUpdateRequest(entityName: "Book")
            update.propertyUpdates = [
                "title": .constant(.string(title2)), "published": .constant(.date(date2)), "uuid": .constant(.uuid(uuid2)),
                "link": .constant(.url(link2)), "price": .constant(.decimal(price2)), "cover": .constant(.data(Data([0]))),
                "weight": .constant(.double(-1.5)), "pages": .constant(.int(Int64(Int16.max))),
            ]
            #expect(try context.execute(update).count == 1)
            try context.refresh(book, mergeChanges: false)
            #expect(try book.value(forKey: "title", as: String.self) == title2)
            #expect(try book.value(forKey: "published", as: Date?.self) == date2)
            #expect(try book.value(forKey: "uuid", as: UUID?.self) == uuid2)
            #expect(try book.value(forKey: "link", as: URL?.self) == link2)
            #expect(try book.value(forKey: "price", as: Decimal?.self) == price2)
            #expect(try book.value(forKey: "cover", as: Data?.self) == Data([0]))
            #expect(try book.value(forKey: "weight", as: Float?.self) == -1.5)
            #expect(try book.value(forKey: "pages", as: Int16?.self) == Int16.max)
            // Predicates over what the update wrote find it.
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("uuid") == uuid2)) == 1)
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("published") == date2)) == 1)
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("link") == link2)) == 1)
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("price") == price2)) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchInsertUpsertsThroughCompoundConstraints(kind: StoreKind) throws {
        let entity = EntityDescription(
            name: "Edition",
            attributes: [
                AttributeDescription("work", .string), AttributeDescription("lang", .string, isOptional: true),
                AttributeDescription("copies", .integer32, defaultValue: Int32(0)),
            ], uniquenessConstraints: [["work", "lang"]])
        let (stack, directory) = try makeStack(kind, model: try ObjectModel(entities: [entity]))
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
        try context.performAndWait { () throws in
            let first = BatchInsertRequest(
                entityName: "Edition",
                objects: [
                    ["work": "Dune", "lang": "en", "copies": 1], ["work": "Dune", "lang": "fr", "copies": 2],
                    // A nil constrained value never matches.
                    ["work": "Dune", "copies": 3], ["work": "Dune", "copies": 4],
                    // Two rows of the request colliding: the later wins.
                    ["work": "Emma", "lang": "en", "copies": 5], ["work": "Emma", "lang": "en", "copies": 6],
                ])
            #expect(try context.execute(first).count == 5)
            let second = BatchInsertRequest(
                entityName: "Edition", objects: [["work": "Dune", "lang": "en", "copies": 10], ["work": "Dune", "copies": 11]])
            #expect(try context.execute(second).count == 2)
            let rows = try context.fetch(FetchRequest(entityName: "Edition")).map {
                "\(try $0.value(forKey: "work", as: String.self)) \(try $0.value(forKey: "lang", as: String?.self) ?? "-") \(try $0.value(forKey: "copies", as: Int32.self))"
            }
            #expect(rows.sorted() == ["Dune - 11", "Dune - 3", "Dune - 4", "Dune en 10", "Dune fr 2", "Emma en 6"])
        }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aStoreAnotherInstanceTracksRefusesBatchesAsASaveIsRefused(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let plain = try store.stack(name: "Plain", tracking: false)
        try plain.viewContext.performAndWait { () throws in
            _ = try plain.viewContext.insertBook("Dune", year: 1965)
            try plain.viewContext.save()
        }
        let tracking = try store.stack()
        let token = tracking.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        try plain.viewContext.performAndWait { () throws in
            expectError(.storeIsReadOnly) {
                try plain.viewContext.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "Unrecorded"]]))
            }
            var update = BatchUpdateRequest(entityName: "Book")
            update.propertyUpdates = ["year": .constant(.int(2000))]
            expectError(.storeIsReadOnly) { try plain.viewContext.execute(update) }
        }
        #expect(try tracking.viewContext.history(.fetchHistory(after: token)).isEmpty)
        try tracking.viewContext.performAndWait { () throws in
            let books = try tracking.viewContext.fetch(FetchRequest(entityName: "Book"))
            #expect(books.count == 1)
            #expect(try books.first?.value(forKey: "year", as: Int32?.self) == 1965)
        }
    }

    @Test func aReadOnlyStoreRefusesBatches() throws {
        let directory = TemporaryDirectory()
        do {
            let stack = try makeFileStack(directory)
            try stack.viewContext.performAndWait { () throws in
                _ = try stack.viewContext.insertBook("Dune")
                try stack.viewContext.save()
            }
        }
        let stack = PersistentStack(name: "Test", model: Fixtures.model())
        var description = StoreDescription(url: directory.file("Test.sqlite"))
        description.isReadOnly = true
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        try stack.viewContext.performAndWait { () throws in
            expectError(.storeIsReadOnly) {
                try stack.viewContext.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "Emma"]]))
            }
            var update = BatchUpdateRequest(entityName: "Book")
            update.propertyUpdates = ["year": .constant(.int(2000))]
            expectError(.storeIsReadOnly) { try stack.viewContext.execute(update) }
            #expect(try stack.viewContext.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("year") == Int32?.none)) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchInsertIntoASubentityUpsertsThroughTheParentsConstraint(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: Self.model())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
        try context.performAndWait { () throws in
            expectError(.invalidArgument) { try context.execute(BatchInsertRequest(entityName: "Item", objects: [["code": "A"]])) }
            #expect(try context.execute(BatchInsertRequest(entityName: "Book", objects: [["code": "A", "pages": 1]])).count == 1)
            #expect(try context.execute(BatchInsertRequest(entityName: "Book", objects: [["code": "A", "pages": 2]])).count == 1)
            #expect(try context.execute(BatchInsertRequest(entityName: "Film", objects: [["code": "B"], ["code": "B"]])).count == 1)
        }
        #expect(try Self.items(stack) == ["Book A", "Film B"])
    }

    @Test(arguments: StoreKind.allCases)
    func aHundredThousandRowsAreInserted(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let rows: [[String: Any]] = (0..<100_000).map { (index: Int) -> [String: Any] in
            let year: Int = 1900 + index % 100
            let rating: Double = Double(index) / 7
            let inPrint: Bool = index % 2 == 0
            return ["title": "Book \(index)", "year": year, "isbn": "isbn-\(index)", "rating": rating, "inPrint": inPrint]
        }
        let context = stack.newBackgroundContext()
        // One transaction, one statement a row (no bind limit); about 3 s in a debug build here.
        try context.performAndWait { () throws in
            var request = BatchInsertRequest(entityName: "Book", objects: rows)
            request.resultType = .count
            #expect(try context.execute(request).count == 100_000)
        }
        try context.performAndWait { () throws in
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 100_000)
            let later = try context.insertBook("Later")
            try context.save()
            let maximum = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("title") != "Later"))
                .map(\.objectID.key).max()
            #expect(later.objectID.key > maximum!)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchUpdatePredicateCanGoThroughRelationshipsAndRawSQL(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: LibraryFixtures.model())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            try LibraryFixtures.fill(context)
            try context.save()
            func titles(_ predicate: FetchPredicate) throws -> [String] {
                // Reset every novel's flag, then set it through the predicate.
                var clear = BatchUpdateRequest(entityName: "Novel")
                clear.propertyUpdates = ["inPrint": .constant(.bool(false))]
                try context.execute(clear)
                var request = BatchUpdateRequest(entityName: "Novel", predicate: predicate)
                request.propertyUpdates = ["inPrint": .constant(.bool(true))]
                let count = try context.execute(request).count
                let set = try context.fetch(FetchRequest(entityName: "Novel", predicate: AttributeKey("inPrint") == true)).map {
                    try $0.value(forKey: "title", as: String.self)
                }.sorted()
                #expect(count == set.count)
                return set
            }
            context.reset()
            #expect(try titles(FetchPredicate(format: "writer.name == %@", "Herbert")) == ["Dune", "Dune Messiah"])
            #expect(try titles(FetchPredicate(format: "writer.agency.name == %@", "Ace")) == ["Dune", "Dune Messiah", "Solaris"])
            #expect(try titles(FetchPredicate(format: "ANY tags.text == %@", "classic")) == ["Emma", "Solaris"])
            #expect(try titles(FetchPredicate(format: "tags.@count == 0")) == ["Persuasion"])
            #expect(try titles(.sql("year BETWEEN ? AND ?", [.int(1960), .int(1966)])) == ["Dune", "Solaris"])
            expectError(.invalidArgument) { _ = try titles(.sql("1); DROP TABLE Novel", [])) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpsertBumpsTheVersionSoAStaleContextGetsAConflict(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let stale = stack.newBackgroundContext()
        let id = try stale.performAndWait {
            let book = try stale.insertBook("Dune", year: 1965, isbn: "1")
            try stale.save()
            return book.objectID
        }
        let worker = stack.newBackgroundContext()
        worker.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
        let result = try worker.performAndWait {
            try worker.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "Dune (new)", "isbn": "1", "year": 2000]]))
        }
        #expect(result.count == 1)
        try stale.performAndWait { () throws in
            let book = try stale.existingObject(with: id)
            try book.setValue(Int32(1966), forKey: "year")
            expectError(.mergeConflict) { try stale.save() }
            // Merged, the context sees the upsert's values.
            try stale.refresh(book, mergeChanges: false)
            #expect(try book.value(forKey: "title", as: String.self) == "Dune (new)")
            #expect(try book.value(forKey: "year", as: Int32?.self) == 2000)
        }
    }

    /// A Shelf whose derived attributes a save computes: a folded copy of its name, its name, the
    /// number of its books, the time of its save.
    static func derivedModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Shelf",
                attributes: [
                    AttributeDescription("name", .string, isOptional: true),
                    AttributeDescription(
                        "searchName", .string, isOptional: true, derivation: .function(name: "canonical", keyPath: "name")),
                    AttributeDescription("copy", .string, isOptional: true, derivation: .keyPath("name")),
                    AttributeDescription("bookCount", .integer64, isOptional: true, derivation: .count(relationship: "books")),
                    AttributeDescription("savedAt", .date, isOptional: true, derivation: .now),
                ],
                relationships: [RelationshipDescription("books", destination: "Volume", inverse: "shelf", toMany: true)],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Volume", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("shelf", destination: "Shelf", inverse: "books")]),
        ])
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchInsertComputesDerivedAttributesAsASaveWould(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: try Self.derivedModel())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
        let before = Date()
        try context.performAndWait { () throws in
            // A shelf with two books, saved.
            let shelf = try context.insert(entityName: "Shelf")
            try shelf.setValue("Kept", forKey: "name")
            for title in ["A", "B"] {
                let volume = try context.insert(entityName: "Volume")
                try volume.setValue(title, forKey: "title")
                try volume.setRelatedObject(shelf, forKey: "shelf")
            }
            try context.save()
            #expect(try shelf.value(forKey: "bookCount", as: Int64?.self) == 2)
            context.reset()

            try context.execute(BatchInsertRequest(entityName: "Shelf", objects: [["name": "Éclair"], ["name": "Kept"]]))
            var found = try context.fetch(FetchRequest(entityName: "Shelf", predicate: AttributeKey("searchName") == "eclair"))
            #expect(found.count == 1)
            let eclair = try #require(found.first)
            #expect(try eclair.value(forKey: "copy", as: String?.self) == "Éclair")
            #expect(try eclair.value(forKey: "bookCount", as: Int64?.self) == 0)
            #expect(try eclair.value(forKey: "savedAt", as: Date?.self).map { $0 >= before } == true)
            // The upserted shelf keeps the count of the books it has.
            found = try context.fetch(FetchRequest(entityName: "Shelf", predicate: AttributeKey("name") == "Kept"))
            let kept = try #require(found.first)
            #expect(try kept.value(forKey: "bookCount", as: Int64?.self) == 2)
            #expect(try kept.value(forKey: "searchName", as: String?.self) == "kept")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anAbstractEntityAloneHasNothingToUpdate(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: Self.model())
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try Self.insert("Book", "A", in: context)
            try context.save()
            var request = BatchUpdateRequest(entityName: "Item")
            request.includesSubentities = false
            request.propertyUpdates = ["code": .constant(.string("Z"))]
            #expect(try context.execute(request).count == 0)
        }
        #expect(try Self.items(stack) == ["Book A"])
    }

    @Test(arguments: StoreKind.allCases)
    func twoRowsMatchingOneStoredObjectThroughTwoConstraints(kind: StoreKind) throws {
        let entity = EntityDescription(
            name: "Person",
            attributes: [
                AttributeDescription("email", .string, isOptional: true), AttributeDescription("phone", .string, isOptional: true),
                AttributeDescription("name", .string, isOptional: true),
            ], uniquenessConstraints: [["email"], ["phone"]])
        let (stack, directory) = try makeStack(kind, model: try ObjectModel(entities: [entity]))
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
        try context.performAndWait { () throws in
            try context.execute(BatchInsertRequest(entityName: "Person", objects: [["email": "a@x", "phone": "1", "name": "Ann"]]))
            // Each row matches the stored person through a different constraint.
            let request = BatchInsertRequest(
                entityName: "Person",
                objects: [["email": "a@x", "phone": "2", "name": "Bea"], ["email": "c@x", "phone": "1", "name": "Cy"]])
            let error = expectError(.constraintViolation) { try context.execute(request) }
            #expect(error?.message.contains("Rows 0 and 1") == true, "\(String(describing: error))")
            // Nothing was written: neither row was lost into the other.
            let people = try context.fetch(FetchRequest(entityName: "Person")).map { try $0.value(forKey: "name", as: String?.self) ?? "" }
            #expect(people == ["Ann"])
        }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func twoStacksImportingTheSameRowsAtOnceMakeOneObjectEach(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let schema = PostgresTestServer.newSchema()
        func open() throws -> PersistentStack {
            guard kind == .postgres else { return try makeFileStack(directory) }
            let stack = PersistentStack(name: "Test", model: Fixtures.model())
            stack.persistentStoreDescriptions = [try PostgresTestStore.newDescription(schema: schema)]
            try stack.loadPersistentStores()
            return stack
        }
        let stacks = [try open(), try open()]
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let stack = stacks[worker % 2]
            let context = stack.newBackgroundContext()
            context.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
            for round in 0..<5 {
                // Every worker imports the same 300 books, in its own order, with its own years.
                let rows: [[String: Any]] = (0..<300).map { (index: Int) -> [String: Any] in
                    let book = (index * (worker + 1) * 7) % 300
                    return ["title": "Book \(book)", "isbn": "isbn-\(book)", "year": worker * 100 + round]
                }
                do {
                    try context.performAndWait { () throws in try context.execute(BatchInsertRequest(entityName: "Book", objects: rows)) }
                } catch {
                    failures.withLock { $0.append("worker \(worker) round \(round): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let context = stacks[0].newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 300)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchUpdateOfTensOfThousandsOfListedObjectsIsRecorded(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            let rows: [[String: Any]] = (0..<50_000).map { ["title": "Book \($0)", "isbn": "isbn-\($0)"] }
            try context.execute(BatchInsertRequest(entityName: "Book", objects: rows))
        }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        // More values than either database binds in one statement (SQLite 32,766, PostgreSQL 65,535).
        let listed: [AttributeValue] = (0..<70_000).filter { $0 % 5 != 0 }.map { .string("isbn-\($0)") }
        let result = try context.performAndWait {
            var request = BatchUpdateRequest(entityName: "Book", predicate: .isIn(key: "isbn", listed))
            request.propertyUpdates = ["sales": .arithmetic(.add, .keyPath("sales"), .constant(.int(1)))]
            request.resultType = .objectIDs
            return try context.execute(request)
        }
        #expect(result.count == 40_000)
        #expect(Set(result.updatedObjectIDs).count == 40_000)
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        #expect(transactions.count == 1)
        #expect(transactions.first?.changes?.count == 40_000)
        try context.performAndWait { () throws in
            #expect(try context.count(for: FetchRequest(entityName: "Book", predicate: AttributeKey("sales") == Int64(1))) == 40_000)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStaleSaveUnderPropertyTrumpKeepsWhatTheBatchUpdateSet(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let stale = stack.newBackgroundContext()
        stale.mergePolicy = .mergeByPropertyObjectTrump
        let id = try stale.performAndWait {
            let book = try stale.insertBook("Dune", year: 1965)
            try stale.save()
            return book.objectID
        }
        let worker = stack.newBackgroundContext()
        try worker.performAndWait { () throws in
            var request = BatchUpdateRequest(entityName: "Book")
            request.propertyUpdates = ["inPrint": .constant(.bool(false)), "sales": .constant(.int(7))]
            #expect(try worker.execute(request).count == 1)
        }
        try stale.performAndWait { () throws in
            let book = try stale.existingObject(with: id)
            try book.setValue(Int32(1966), forKey: "year")
            try stale.save()
        }
        let reader = stack.newBackgroundContext()
        try reader.performAndWait { () throws in
            let book = try reader.existingObject(with: id)
            #expect(try book.value(forKey: "year", as: Int32?.self) == 1966)
            #expect(try book.value(forKey: "inPrint", as: Bool.self) == false)
            #expect(try book.value(forKey: "sales", as: Int64.self) == 7)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpsertsHistoryNamesTheAttributesItWrote(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump // batch insert upserts under it, as Core Data's
        try context.performAndWait { () throws in
            _ = try context.insertBook("Dune", isbn: "1")
            try context.save()
        }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        try context.performAndWait { () throws in
            try context.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "Dune II", "isbn": "1"], ["title": "Emma"]]))
        }
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        let changes = (transactions.first?.changes ?? []).map {
            "\($0.changeType) \(($0.updatedProperties ?? []).sorted().joined(separator: ","))"
        }
        #expect(changes.contains("insert "))
        let update = try #require(changes.first { $0.hasPrefix("update") })
        #expect(update.contains("title"))
        // The next save's transaction follows.
        let next = try #require(transactions.last?.token)
        try context.performAndWait { () throws in
            _ = try context.insertBook("Kim")
            try context.save()
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: next)).count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func anUnsignedNumberBeyond64BitsIsRefusedNotWrapped(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try context.insertBook("Dune")
            try context.save()
            var request = BatchUpdateRequest(entityName: "Book")
            request.propertiesToUpdate = ["sales": NSNumber(value: UInt64.max)]
            expectError(.invalidArgument) { try context.execute(request) }
            request.propertiesToUpdate = ["sales": NSNumber(value: UInt64(Int64.max))]
            #expect(try context.execute(request).count == 1)
            context.reset()
            let book = try #require(try context.fetch(FetchRequest(entityName: "Book")).first)
            #expect(try book.value(forKey: "sales", as: Int64.self) == Int64.max)
        }
    }
}
