import Foundation
import SkerryPostgres
import Testing

@testable import SkerryCore

/// A stack whose store records persistent history, over `url` (an in-memory store for nil).
func makeHistoryStack(_ url: URL?, model: ObjectModel = Fixtures.model(), name: String = "History") throws -> PersistentStack {
    let stack = PersistentStack(name: name, model: model)
    var description = url.map { StoreDescription(url: $0) } ?? .inMemory()
    description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
    stack.persistentStoreDescriptions = [description]
    try stack.loadPersistentStores()
    return stack
}

/// Where a history test's store lives: a SQLite file, an in-memory store (one stack only) or a
/// schema of the PostgreSQL test server. Stacks made by ``stack(name:model:tracking:)`` open the
/// same store, as several processes would.
struct HistoryStore {
    let kind: StoreKind
    let directory = TemporaryDirectory()
    let schema = PostgresTestServer.newSchema()

    init(_ kind: StoreKind) {
        self.kind = kind
    }

    /// The kinds one store can be opened by several stacks of: a file, and PostgreSQL when a test
    /// server runs.
    static var sharedKinds: [StoreKind] { StoreKind.allCases.filter { $0 != .memory } }

    /// The SQLite file of a `.file` store.
    var url: URL { directory.file("History.sqlite") }

    func description(tracking: Bool = true) throws -> StoreDescription {
        var description: StoreDescription
        switch kind {
        case .file: description = StoreDescription(url: url)
        case .memory: description = .inMemory()
        case .postgres: description = try PostgresTestStore.newDescription(schema: schema)
        }
        if tracking { description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey) }
        return description
    }

    /// A stack over the store, with the history option (or without it).
    func stack(
        name: String = "History", model: ObjectModel = Fixtures.model(), tracking: Bool = true, plan: MigrationPlan? = nil
    ) throws -> PersistentStack {
        let stack = PersistentStack(name: name, model: model)
        var description = try description(tracking: tracking)
        description.migrationPlan = plan
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }
}

extension ObjectContext {
    /// The transactions a history request returns, as Core Data code reads them.
    func history(_ request: PersistentHistoryChangeRequest) throws -> [PersistentHistoryTransaction] {
        try performAndWait { try execute(request).result as? [PersistentHistoryTransaction] ?? [] }
    }
}

/// Persistent history (``PersistentHistoryTrackingKey``) in SQLite, in-memory and PostgreSQL
/// stores: what saves and batch deletes record, fetching it after a token or a date, merging it,
/// deleting it.
@Suite struct PersistentHistoryTests {
    @Test(arguments: StoreKind.allCases)
    func eachSaveIsRecordedAsOneTransactionWithItsChangesInCommitOrder(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        context.transactionAuthor = "importer"
        let (dune, emma) = try context.performAndWait {
            let dune = try context.insertBook("Dune"), emma = try context.insertBook("Emma")
            try context.save()
            try dune.setValue("Dune Messiah", forKey: "title")
            try dune.setValue(Int32(1969), forKey: "year")
            try context.save()
            try context.delete(emma)
            try context.save()
            return (dune.objectID, emma.objectID)
        }

        let transactions = try stack.viewContext.history(.fetchHistory(after: nil as PersistentHistoryToken?))
        try #require(transactions.count == 3)
        #expect(transactions.map(\.author) == ["importer", "importer", "importer"])
        #expect(transactions.map(\.contextName) == ["background", "background", "background"])
        #expect(transactions.map(\.transactionNumber) == transactions.map(\.transactionNumber).sorted())
        #expect(Set(transactions.map(\.transactionNumber)).count == 3)
        #expect(transactions[0].processID == String(ProcessInfo.processInfo.processIdentifier))
        let inserted = try #require(transactions[0].changes)
        #expect(Set(inserted.map(\.changedObjectID)) == [dune, emma])
        #expect(inserted.allSatisfy { $0.changeType == .insert && $0.updatedProperties == nil })
        let updated = try #require(transactions[1].changes)
        #expect(updated.map(\.changedObjectID) == [dune])
        #expect(updated.first?.changeType == .update)
        #expect(updated.first?.updatedProperties == ["title", "year"])
        let deleted = try #require(transactions[2].changes)
        #expect(deleted.map(\.changedObjectID) == [emma])
        #expect(deleted.first?.changeType == .delete)

        // After a token: only the later transactions; after a date: by timestamp.
        let later = try stack.viewContext.history(.fetchHistory(after: transactions[0].token))
        #expect(later.map(\.transactionNumber) == transactions.dropFirst().map(\.transactionNumber))
        #expect(try stack.viewContext.history(.fetchHistory(after: transactions[2])).isEmpty)
        #expect(try stack.viewContext.history(.fetchHistory(after: .distantPast)).count == 3)
        #expect(try stack.viewContext.history(.fetchHistory(after: .distantFuture)).isEmpty)

        // The other result types, as Core Data reports them.
        try stack.viewContext.performAndWait {
            var request = PersistentHistoryChangeRequest.fetchHistory(after: .distantPast)
            request.resultType = .count
            #expect(try stack.viewContext.execute(request).result as? Int == 3)
            request.resultType = .changesOnly
            #expect((try stack.viewContext.execute(request).result as? [PersistentHistoryChange])?.count == 4)
            request.resultType = .objectIDs
            let objectIDs = try #require(try stack.viewContext.execute(request).result as? [ObjectID])
            #expect(objectIDs.count == 2 && Set(objectIDs) == [dune, emma])
            request.resultType = .transactionsOnly
            let bare = try #require(try stack.viewContext.execute(request).result as? [PersistentHistoryTransaction])
            #expect(bare.count == 3 && bare.allSatisfy { $0.changes == nil })
            request.resultType = .statusOnly
            #expect(try stack.viewContext.execute(request).result as? Bool == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedSaveRecordsNothingAndAStoreWithoutTheOptionHasNoHistory(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try context.insertBook("Dune", isbn: "1")
            try context.save()
            _ = try context.insertBook("Dune again", isbn: "1")
            expectError(.constraintViolation) { try context.save() }
        }
        #expect(try stack.viewContext.history(.fetchHistory(after: .distantPast)).count == 1)

        let plainStore = HistoryStore(kind)
        let plain = try plainStore.stack(name: "Plain", tracking: false)
        try plain.viewContext.performAndWait {
            _ = try plain.viewContext.insertBook("Emma")
            try plain.viewContext.save()
            expectError(.invalidArgument) { _ = try plain.viewContext.execute(.fetchHistory(after: .distantPast)) }
        }
        if kind == .file {
            let tables = try rawSQL(plainStore.url, "SELECT name FROM sqlite_master WHERE name LIKE '%history%'")
            #expect(tables.isEmpty)
        }
        #expect(plain.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteIsRecordedWithItsContextsAuthor(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack()
        let context = stack.newBackgroundContext()
        context.transactionAuthor = "cleaner"
        let ids = try context.performAndWait {
            let books = try ["Dune", "Emma", "Dracula"].map { try context.insertBook($0) }
            try context.save()
            var request = FetchRequest(entityName: "Book")
            request.predicate = try FetchPredicate(format: "title BEGINSWITH %@", "D")
            _ = try context.execute(BatchDeleteRequest(fetchRequest: request))
            return books.map(\.objectID)
        }
        let transactions = try stack.viewContext.history(.fetchHistory(after: .distantPast))
        try #require(transactions.count == 2)
        #expect(transactions[1].author == "cleaner")
        #expect(transactions[1].changes?.allSatisfy { $0.changeType == .delete } == true)
        #expect(Set(transactions[1].changes?.map(\.changedObjectID) ?? []) == [ids[0], ids[2]])
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteRecordsTheRowsWhoseLinksToTheDeletedObjectsItCleared(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack(model: GraphFixtures.model())
        let writer = stack.newBackgroundContext()
        let (gibson, neuromancer) = try writer.performAndWait {
            let gibson = try writer.insertNamed("Author", "Gibson")
            let neuromancer = try writer.insertNamed("Book", "Neuromancer")
            try gibson.setRelatedObjects([neuromancer], forKey: "books")
            try writer.save()
            return (gibson.objectID, neuromancer.objectID)
        }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        // A consumer holds the book with its author.
        let consumer = stack.newBackgroundContext()
        try consumer.performAndWait { () throws in
            #expect(try consumer.existingObject(with: neuromancer).relatedObject(forKey: "author")?.objectID == gibson)
        }
        _ = try writer.performAndWait { try writer.execute(BatchDeleteRequest(entityName: "Author")) }
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        try #require(transactions.count == 1)
        let changes = transactions[0].changes ?? []
        #expect(changes.map(\.changeType) == [.delete, .update])
        #expect(changes.last?.changedObjectID == neuromancer)
        #expect(changes.last?.updatedProperties == ["author"])
        try consumer.performAndWait { () throws in
            consumer.mergeChanges(fromContextDidSave: transactions[0].objectIDNotification())
            #expect(try consumer.existingObject(with: neuromancer).relatedObject(forKey: "author") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theCurrentTokenDeletingHistoryAndExpiredTokens(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack()
        let coordinator = stack.persistentStoreCoordinator
        let start = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for title in ["Dune", "Emma", "Solaris"] {
                _ = try context.insertBook(title)
                try context.save()
            }
        }
        let all = try stack.viewContext.history(.fetchHistory(after: start))
        try #require(all.count == 3)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: coordinator.persistentStores) == all[2].token)

        // A token survives being archived and read back.
        let archived = try JSONEncoder().encode(all[0].token)
        let token = try JSONDecoder().decode(PersistentHistoryToken.self, from: archived)
        #expect(try stack.viewContext.history(.fetchHistory(after: token)).count == 2)

        // Deleting before the last transaction keeps it; tokens older than what was deleted expire.
        let deleted = try stack.viewContext.performAndWait {
            var request = PersistentHistoryChangeRequest.deleteHistory(before: all[2])
            request.resultType = .count
            return try stack.viewContext.execute(request).result as? Int
        }
        #expect(deleted == 2)
        #expect(try stack.viewContext.history(.fetchHistory(after: .distantPast)).map(\.transactionNumber) == [all[2].transactionNumber])
        #expect(try stack.viewContext.history(.fetchHistory(after: all[1].token)).count == 1)
        stack.viewContext.performAndWait {
            expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: start)) }
            expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: all[0].token)) }
        }

        // A token of another store names none of this stack's stores.
        let other = try makeHistoryStack(nil)
        let foreign = try #require(other.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        stack.viewContext.performAndWait {
            let error = expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: foreign)) }
            #expect(error?.message.contains("names none of the stores") == true)
        }

        // Everything, as apps delete it.
        try stack.viewContext.performAndWait { _ = try stack.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        #expect(try stack.viewContext.history(.fetchHistory(after: nil as PersistentHistoryToken?)).isEmpty)
        #expect(try stack.viewContext.history(.fetchHistory(after: all[2].token)).isEmpty)
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aTransactionMergedIntoAnotherStacksContextBringsItUpToDate(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let app = try store.stack(name: "App")
        let other = try store.stack(name: "Extension")
        let view = app.viewContext
        let (dune, emma) = try view.performAndWait {
            let dune = try view.insertBook("Dune"), emma = try view.insertBook("Emma")
            try view.save()
            return (dune.objectID, emma.objectID)
        }
        let token = try #require(app.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let worker = other.newBackgroundContext()
        // Another process names the objects by their URIs.
        let (duneThere, emmaThere) = (
            try other.objectID(forURIRepresentation: dune.uriRepresentation()),
            try other.objectID(forURIRepresentation: emma.uriRepresentation())
        )
        try worker.performAndWait {
            try worker.existingObject(with: duneThere).setValue("Dune Messiah", forKey: "title")
            try worker.delete(try worker.existingObject(with: emmaThere))
            try worker.save()
        }
        // The app's context still holds what it read.
        #expect(try view.performAndWait { try view.existingObject(with: dune).value(forKey: "title", as: String.self) } == "Dune")
        let transactions = try view.history(.fetchHistory(after: token))
        try #require(transactions.count == 1)
        try view.performAndWait { () throws in
            view.mergeChanges(fromContextDidSave: transactions[0].objectIDNotification())
            #expect(try view.existingObject(with: dune).value(forKey: "title", as: String.self) == "Dune Messiah")
            #expect(view.registeredObject(for: emma) == nil)
        }
        // The notification's userInfo merges too (ProtonDrive's way).
        let userInfo = try #require(transactions[0].objectIDNotification().userInfo)
        #expect(userInfo[DeletedObjectsKey] as? Set<ObjectID> == [emma])
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aStoreWithHistoryOpenedWithoutTheOptionIsReadOnlyUntilItsHistoryIsDeleted(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        do {
            let stack = try store.stack()
            try stack.viewContext.performAndWait {
                _ = try stack.viewContext.insertBook("Dune")
                try stack.viewContext.save()
            }
        }
        do {
            let stack = try store.stack(name: "Plain", tracking: false)
            try stack.viewContext.performAndWait {
                #expect(try stack.viewContext.count(for: FetchRequest(entityName: "Book")) == 1)
                _ = try stack.viewContext.insertBook("Emma")
                let error = expectError(.storeIsReadOnly) { try stack.viewContext.save() }
                #expect(error?.message.contains("PersistentHistoryTrackingKey") == true)
            }
        }
        do {
            let stack = try store.stack()
            try stack.viewContext.performAndWait { _ = try stack.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        }
        let stack = try store.stack(name: "Plain", tracking: false)
        try stack.viewContext.performAndWait {
            _ = try stack.viewContext.insertBook("Emma")
            try stack.viewContext.save()
            #expect(try stack.viewContext.count(for: FetchRequest(entityName: "Book")) == 2)
        }
        if kind == .file { #expect(try rawSQL(store.url, "SELECT count(*) FROM \"_skerry_history_transactions\"") == [["0"]]) }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func turningHistoryBackOnExpiresTheTokensOfBefore(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        var token: PersistentHistoryToken?
        do {
            let stack = try store.stack()
            try stack.viewContext.performAndWait {
                _ = try stack.viewContext.insertBook("Dune")
                try stack.viewContext.save()
                _ = try stack.viewContext.execute(.deleteHistory(before: .distantFuture))
            }
            token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        }
        do {
            // Off: this save is not recorded.
            let stack = try store.stack(tracking: false)
            try stack.viewContext.performAndWait {
                _ = try stack.viewContext.insertBook("Emma")
                try stack.viewContext.save()
            }
        }
        let stack = try store.stack()
        try stack.viewContext.performAndWait {
            expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: token)) }
            _ = try stack.viewContext.insertBook("Solaris")
            try stack.viewContext.save()
        }
        let now = try stack.viewContext.history(.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(now.count == 1)
        #expect(try stack.viewContext.history(.fetchHistory(after: now[0].token)).isEmpty)
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aSaveToTwoStoresRecordsATransactionInEachAndTheirTokensCoverBoth(_ kind: StoreKind) throws {
        let booksStore = HistoryStore(kind), authorsStore = HistoryStore(kind)
        let stack = PersistentStack(name: "Two", model: Fixtures.model())
        var books = try booksStore.description()
        books.entityNames = ["Book"]
        var authors = try authorsStore.description()
        authors.entityNames = ["Author"]
        stack.persistentStoreDescriptions = [books, authors]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try context.insertBook("Dune")
            try context.insert(entityName: "Author").setValue("Frank Herbert", forKey: "name")
            try context.save()
        }
        let both = try stack.viewContext.history(.fetchHistory(after: .distantPast))
        try #require(both.count == 2)
        #expect(Set(both.map(\.storeID)).count == 2)
        #expect(Set(both.compactMap(\.changes?.first?.changedObjectID.entityName)) == ["Book", "Author"])
        // The last transaction's token covers both stores: nothing after it.
        #expect(try stack.viewContext.history(.fetchHistory(after: both[1].token)).isEmpty)
        #expect(both[1].token == stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))

        try context.performAndWait {
            try context.insert(entityName: "Author").setValue("Ursula K. Le Guin", forKey: "name")
            try context.save()
        }
        let later = try stack.viewContext.history(.fetchHistory(after: both[1].token))
        #expect(later.map { $0.changes?.first?.changedObjectID.entityName } == ["Author"])
        let bookStore = try #require(stack.persistentStoreCoordinator.persistentStores.first { $0.entityNames == ["Book"] })
        let bookToken = try #require(stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: [bookStore]))
        // A token of the book store alone: every transaction of the author store comes again.
        #expect(try stack.viewContext.history(.fetchHistory(after: bookToken)).count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aFetchRequestFiltersTheTransactionsByTheirPredicate(_ kind: StoreKind) throws {
        let store = HistoryStore(kind) // keeps the folder
        let stack = try store.stack()
        for author in ["app", "extension", nil] {
            let context = stack.newBackgroundContext()
            context.transactionAuthor = author
            try context.performAndWait {
                _ = try context.insertBook("Dune")
                try context.save()
            }
        }
        let view = stack.viewContext
        func authors(_ format: String, _ arguments: Any...) throws -> [String?] {
            var filter = try #require(PersistentHistoryTransaction.fetchRequest)
            filter.predicate = try FetchPredicate(format: format, argumentArray: arguments)
            var request = PersistentHistoryChangeRequest.fetchHistory(after: .distantPast)
            request.fetchRequest = filter
            return try view.history(request).map(\.author)
        }
        #expect(try authors("author == %@", "extension") == ["extension"])
        #expect(try authors("author != %@", "app") == ["extension", nil])
        #expect(try authors("author == nil") == [nil])
        #expect(try authors("contextName == %@ AND transactionNumber > 1", "background") == ["extension", nil])
        #expect(try authors("timestamp > %@", Date.distantFuture).isEmpty)

        try view.performAndWait {
            var request = PersistentHistoryChangeRequest.fetchHistory(after: .distantPast)
            request.fetchRequest = FetchRequest(entityName: "Book")
            expectError(.invalidArgument) { _ = try view.execute(request) }
            request.fetchRequest = PersistentHistoryTransaction.fetchRequest
            request.fetchRequest?.sortKeys = [SortKey("timestamp")]
            expectError(.invalidArgument) { _ = try view.execute(request) }
            request.fetchRequest?.sortKeys = []
            request.fetchRequest?.predicate = try FetchPredicate(format: "title == %@", "Dune")
            expectError(.unknownAttribute) { _ = try view.execute(request) }
        }
    }
}
