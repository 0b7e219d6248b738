import Foundation
import Testing

@testable import SkerryCore

// The persistent-history processing of a Core Data app that shares its store with another
// process (an extension, a second instance), written as apps write it after Apple's "Consuming
// relevant store changes" sample, CoreDataPlus (NSManagedObjectContext+History.swift) and
// ProtonDrive (PersistentHistoryFetcher, PersistentHistoryMerger, PersistentHistoryCleaner):
// fetch the history after the last token, skip one's own transactions by author, merge the
// others into the view context, keep the token on disk, delete the history everyone has seen.
// Ported with the names page's renames; the port's other changes are marked "Port:".

/// The app's history processor, one per process.
final class HistoryProcessor: @unchecked Sendable {
    // `@unchecked Sendable`: `lastToken` and `mergedTransactions` are only used inside
    // `context.performAndWait` blocks of one context, which run one at a time.
    let container: PersistentStack
    let author: String
    let tokenFile: URL
    private let context: ObjectContext
    private var lastToken: PersistentHistoryToken?
    /// What the processor merged so far, by author (for the test).
    private(set) var mergedTransactions: [String] = []

    init(container: PersistentStack, author: String, tokenFile: URL) {
        self.container = container
        self.author = author
        self.tokenFile = tokenFile
        context = container.newBackgroundContext()
        // Port: Core Data apps archive the token with NSKeyedArchiver; Skerry's is Codable.
        if let data = try? Data(contentsOf: tokenFile) {
            lastToken = try? JSONDecoder().decode(PersistentHistoryToken.self, from: data)
        }
    }

    // doc: history-processing
    /// Merges what other authors saved since the last run into the view context.
    func processPersistentHistory() throws {
        try context.performAndWait {
            let transactions: [PersistentHistoryTransaction]
            do {
                let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
                let result = try context.execute(request)
                transactions = result.result as? [PersistentHistoryTransaction] ?? []
            } catch let error as SkerryError where error.code == .persistentHistoryTokenExpired {
                // The history after the token was deleted: start again from what is left.
                lastToken = nil
                transactions = try context.execute(.fetchHistory(after: lastToken)).transactions
            }
            guard let last = transactions.last else { return }
            let others = transactions.filter { $0.author != author }
            let viewContext = container.viewContext
            viewContext.performAndWait {
                for transaction in others {
                    viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
                }
            }
            mergedTransactions += others.compactMap(\.author)
            lastToken = last.token
            try JSONEncoder().encode(last.token).write(to: tokenFile)
        }
    }
    // doc: end

    /// The transactions of other authors since the last token, filtered by the request as in
    /// Apple's sample ("Consuming relevant store changes").
    func otherAuthorsTransactions() throws -> [PersistentHistoryTransaction] {
        try context.performAndWait {
            // Port: requests are values: `var`, and `try` for the predicate.
            var historyFetchRequest = PersistentHistoryTransaction.fetchRequest!
            historyFetchRequest.predicate = try FetchPredicate(format: "author != %@", author)
            var request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
            request.fetchRequest = historyFetchRequest
            let result = try context.execute(request)
            return result.result as? [PersistentHistoryTransaction] ?? []
        }
    }

    /// Deletes the history this process has merged (ProtonDrive's cleaner deletes before the
    /// oldest timestamp every target merged; with one reader, that is its last token).
    func purgeMergedHistory() throws {
        try context.performAndWait {
            let deleteHistoryRequest = PersistentHistoryChangeRequest.deleteHistory(before: lastToken)
            try context.execute(deleteHistoryRequest)
        }
    }
}

extension Collection where Element == PersistentHistoryTransaction {
    /// Merges the current collection of history transactions into the given managed object context
    /// (ProtonDrive's `Collection+ NSPersistentHistoryTransaction.swift`).
    func merge(into context: ObjectContext) {
        forEach { transaction in
            guard let userInfo = transaction.objectIDNotification().userInfo else { return }
            ObjectContext.mergeChanges(fromRemoteContextSave: userInfo, into: [context])
        }
    }
}

@Suite struct HistoryProcessingPortTests {
    /// A container of the app or of the other process over the shared store (a SQLite file, or a
    /// PostgreSQL schema that instances of a service share), set up as the apps do.
    static func container(_ store: HistoryStore, name: String, author: String) throws -> PersistentStack {
        let container = PersistentStack(name: name, managedObjectModel: Fixtures.model())
        if store.kind == .file {
            container.persistentStoreDescriptions[0].url = store.url
        } else {
            container.persistentStoreDescriptions = [try store.description(tracking: false)]
        }
        container.persistentStoreDescriptions[0].setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        container.persistentStoreDescriptions[0].setOption(
            true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
        try container.loadPersistentStores()
        container.viewContext.transactionAuthor = author
        return container
    }

    static func title(_ context: ObjectContext, _ id: ObjectID) throws -> String? {
        try context.performAndWait { try context.existingObject(with: id).value(forKey: "title") as? String }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func theAppMergesWhatAnotherProcessSavedSkipsItsOwnAndKeepsItsTokenAcrossLaunches(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let tokenFile = store.directory.file("lastToken.json")
        let app = try Self.container(store, name: "App", author: "app")
        let other = try Self.container(store, name: "Extension", author: "extension")

        // The app saves a book and shows it.
        let view = app.viewContext
        let dune = try view.performAndWait {
            let dune = try view.insertBook("Dune")
            try view.save()
            return dune.objectID
        }
        #expect(try Self.title(view, dune) == "Dune")
        let list = app.newBackgroundContext() // another context of the app showing it
        #expect(try Self.title(list, dune) == "Dune")

        // The other process changes it, adds one and batch-deletes another it added before.
        let duneThere = try other.objectID(forURIRepresentation: dune.uriRepresentation())
        let worker = other.newBackgroundContext()
        worker.transactionAuthor = "extension"
        let emma = try worker.performAndWait {
            _ = try worker.insertBook("Dracula")
            try worker.save()
            try worker.existingObject(with: duneThere).setValue("Dune Messiah", forKey: "title")
            let emma = try worker.insertBook("Emma")
            try worker.save()
            var request = FetchRequest(entityName: "Book")
            request.predicate = try FetchPredicate(format: "title == %@", "Dracula")
            try worker.execute(BatchDeleteRequest(fetchRequest: request))
            return emma.objectID
        }
        #expect(try Self.title(view, dune) == "Dune") // not merged yet: another stack saved it

        let processor = HistoryProcessor(container: app, author: "app", tokenFile: tokenFile)
        #expect(try processor.otherAuthorsTransactions().map(\.author) == ["extension", "extension", "extension"])
        try processor.processPersistentHistory()
        #expect(processor.mergedTransactions == ["extension", "extension", "extension"])
        #expect(try Self.title(view, dune) == "Dune Messiah")
        let emmaHere = try app.objectID(forURIRepresentation: emma.uriRepresentation())
        #expect(try Self.title(view, emmaHere) == "Emma")
        // ProtonDrive's merge, through the notification's userInfo.
        #expect(try Self.title(list, dune) == "Dune")
        try view.history(.fetchHistory(after: nil as PersistentHistoryToken?)).merge(into: list)
        #expect(try Self.title(list, dune) == "Dune Messiah")

        // Nothing new: nothing merged. The next launch starts from the token on disk.
        try processor.processPersistentHistory()
        #expect(processor.mergedTransactions.count == 3)
        try worker.performAndWait {
            try worker.existingObject(with: duneThere).setValue("Children of Dune", forKey: "title")
            try worker.save()
        }
        let relaunched = HistoryProcessor(container: app, author: "app", tokenFile: tokenFile)
        try relaunched.processPersistentHistory()
        #expect(relaunched.mergedTransactions == ["extension"])
        #expect(try Self.title(view, dune) == "Children of Dune")

        // Purging what was merged keeps the last transaction; the history goes on from there.
        try relaunched.purgeMergedHistory()
        let left = try view.history(.fetchHistory(after: .distantPast))
        #expect(left.count == 1)
        try worker.performAndWait {
            try worker.existingObject(with: duneThere).setValue("Dune", forKey: "title")
            try worker.save()
        }
        try relaunched.processPersistentHistory()
        #expect(try Self.title(view, dune) == "Dune")
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aReaderWhoseHistoryWasPurgedStartsOverFromWhatIsLeft(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let app = try Self.container(store, name: "App", author: "app")
        let other = try Self.container(store, name: "Extension", author: "extension")
        let worker = other.viewContext
        func save(_ title: String) throws {
            try worker.performAndWait {
                _ = try worker.insertBook(title)
                try worker.save()
            }
        }
        // Two readers of the history: one falls behind.
        let current = HistoryProcessor(container: app, author: "app", tokenFile: store.directory.file("current.json"))
        let behind = HistoryProcessor(container: app, author: "app", tokenFile: store.directory.file("behind.json"))
        try save("Dune")
        try behind.processPersistentHistory()
        try save("Emma")
        try save("Solaris")
        try current.processPersistentHistory()
        #expect(current.mergedTransactions.count == 3)
        try current.purgeMergedHistory() // deletes Dune's and Emma's transactions

        // The reader behind gets Core Data's token-expired error, and starts over from what is left.
        try behind.processPersistentHistory()
        #expect(behind.mergedTransactions.count == 1 + 1)
        try save("Ulysses")
        try behind.processPersistentHistory()
        #expect(behind.mergedTransactions.count == 3)
    }
}
