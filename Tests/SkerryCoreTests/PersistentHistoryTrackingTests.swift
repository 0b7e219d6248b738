import Foundation
import Synchronization
import Testing

@testable import SkerryCore

/// Whether a store tracks persistent history, as several programs sharing one store see it (two
/// stacks over one SQLite file or PostgreSQL schema play two processes): once a store was opened with
/// ``PersistentHistoryTrackingKey``, a program without the option cannot write to it unrecorded, and a
/// token that does not describe the store's history expires.
@Suite struct PersistentHistoryTrackingTests {
    /// Saves a book in `stack`'s view context.
    static func save(_ stack: PersistentStack, _ title: String) throws {
        try stack.viewContext.performAndWait {
            _ = try stack.viewContext.insertBook(title)
            try stack.viewContext.save()
        }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aStoreOnceOpenedWithTheOptionStaysReadOnlyWithoutItEvenWithNoHistoryHeld(_ kind: StoreKind) throws {
        // A fresh store opened with the option, no save yet, still open (the tracking process).
        let fresh = HistoryStore(kind)
        let tracking = try fresh.stack()
        let token = tracking.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let plain = try fresh.stack(name: "Plain", tracking: false)
        try plain.viewContext.performAndWait { () throws in
            _ = try plain.viewContext.insertBook("Unrecorded")
            let error = expectError(.storeIsReadOnly) { try plain.viewContext.save() }
            #expect(error?.message.contains("PersistentHistoryTrackingKey") == true)
        }
        try Self.save(tracking, "Recorded")
        #expect(try tracking.viewContext.history(.fetchHistory(after: token)).count == 1)

        // A routine purge that happens to delete every transaction (before a moment now past)
        // leaves tracking on.
        let purged = HistoryStore(kind)
        let consumer = try purged.stack()
        try Self.save(consumer, "Dune")
        let moment = Date()
        let deleted = try consumer.viewContext.performAndWait {
            try consumer.viewContext.execute(.deleteHistory(before: moment)).count
        }
        #expect(deleted == 1)
        let other = try purged.stack(name: "Plain", tracking: false)
        try other.viewContext.performAndWait { () throws in
            _ = try other.viewContext.insertBook("Unrecorded")
            expectError(.storeIsReadOnly) { try other.viewContext.save() }
        }
    }

    /// An instance that loaded the store without the option while it recorded no history (it
    /// never had any, or tracking was turned off) stops writing once another instance turns
    /// tracking on: its saves and batch deletes fail with `.storeIsReadOnly`, the store unchanged
    /// and the context keeping its changes, so the consumers of the history miss no save.
    @Test(arguments: HistoryStore.sharedKinds)
    func anInstanceLoadedWithoutTheOptionStopsWritingOnceAnotherTurnsTrackingOn(_ kind: StoreKind) throws {
        for wasTracked in [false, true] {
            let store = HistoryStore(kind)
            if wasTracked {
                // Tracked once, then turned off: all history deleted, opened without the option.
                let earlier = try store.stack(name: "Earlier")
                try Self.save(earlier, "Dune")
                _ = try earlier.viewContext.performAndWait { try earlier.viewContext.execute(.deleteHistory(before: .distantFuture)) }
            }
            let plain = try store.stack(name: "Plain", tracking: false)
            try Self.save(plain, "Unrecorded while off")
            let tracking = try store.stack()
            let token = tracking.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
            try plain.viewContext.performAndWait { () throws in
                _ = try plain.viewContext.insertBook("Unrecorded")
                let error = expectError(.storeIsReadOnly) { try plain.viewContext.save() }
                #expect(error?.message.contains("turned persistent history on") == true)
                #expect(plain.viewContext.insertedObjects.count == 1)
                expectError(.storeIsReadOnly) { try plain.viewContext.execute(BatchDeleteRequest(entityName: "Book")) }
            }
            try Self.save(tracking, "Recorded")
            let history = try tracking.viewContext.history(.fetchHistory(after: token))
            #expect(history.count == 1)
            let titles = try tracking.viewContext.performAndWait {
                try tracking.viewContext.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title") as? String }
            }
            #expect(titles.count == (wasTracked ? 3 : 2) && !titles.contains("Unrecorded"))
        }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func deletingAllHistoryUpToNowThenOpeningWithoutTheOptionStopsTrackingUnlessSomeoneRecordedSince(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let tracking = try store.stack()
        try Self.save(tracking, "Dune")
        _ = try tracking.viewContext.performAndWait { try tracking.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        // Another process still tracking records a save after the delete: not stopped.
        try Self.save(tracking, "Emma")
        let refused = try store.stack(name: "Plain", tracking: false)
        try refused.viewContext.performAndWait { () throws in
            _ = try refused.viewContext.insertBook("Unrecorded")
            expectError(.storeIsReadOnly) { try refused.viewContext.save() }
        }
        _ = try tracking.viewContext.performAndWait { try tracking.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        let plain = try store.stack(name: "Plain", tracking: false)
        try Self.save(plain, "Solaris")
        if kind == .file {
            #expect(try rawSQL(store.url, "SELECT value FROM \"_skerry_metadata\" WHERE key = 'historyTracking'") == [["off"]])
        }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func twoInstancesLoadingAFreshStoreWithTheOptionAtOnceBothLoad(_ kind: StoreKind) throws {
        for _ in 0..<8 {
            let store = HistoryStore(kind)
            let outcomes = Mutex<[Result<PersistentStack, SkerryError>]>([])
            DispatchQueue.concurrentPerform(iterations: 3) { _ in
                let outcome = Result { () throws(SkerryError) -> PersistentStack in
                    do { return try store.stack() } catch { throw SkerryError.converting(error) }
                }
                outcomes.withLock { $0.append(outcome) }
            }
            let stacks = try outcomes.withLock { $0 }.map { try $0.get() }
            #expect(stacks.count == 3)
            try Self.save(stacks[0], "Dune")
            for stack in stacks { #expect(try stack.viewContext.history(.fetchHistory(after: .distantPast)).count == 1) }
        }
    }

    @Test func aTokenNewerThanTheStoresLastTransactionExpires() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("History.sqlite")
        let backup = directory.file("Backup/History.sqlite")
        let stack = try makeHistoryStack(url)
        try Self.save(stack, "Dune")
        let coordinator = stack.persistentStoreCoordinator
        try coordinator.replacePersistentStore(
            at: backup, destinationOptions: nil, withPersistentStoreFrom: url, sourceOptions: nil, ofType: SQLiteStoreType)
        try Self.save(stack, "Emma")
        let ahead = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        // The backup is copied back by hand: same store identifier, one transaction fewer than the token saw.
        try coordinator.destroyPersistentStore(at: url, ofType: SQLiteStoreType)
        try FileManager.default.copyItem(at: backup, to: url)
        try stack.loadPersistentStores()
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil)?.storeTokens.keys == ahead.storeTokens.keys)
        stack.viewContext.performAndWait {
            let error = expectError(.persistentHistoryTokenExpired) { _ = try stack.viewContext.execute(.fetchHistory(after: ahead)) }
            #expect(error?.message.contains("last transaction") == true)
        }

        // Restored with replacePersistentStore, the backup's history goes on after the replaced
        // store's: a save after the restore does not reuse the number the token saw.
        let restored = directory.file("Restored.sqlite")
        try coordinator.replacePersistentStore(
            at: restored, destinationOptions: nil, withPersistentStoreFrom: backup, sourceOptions: nil, ofType: SQLiteStoreType)
        let other = try makeHistoryStack(restored)
        try Self.save(other, "Emma")
        let live = try #require(other.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(live.storeTokens.values.first == ahead.storeTokens.values.first)
        try other.persistentStoreCoordinator.replacePersistentStore(
            at: restored, destinationOptions: nil, withPersistentStoreFrom: backup, sourceOptions: nil, ofType: SQLiteStoreType)
        try other.loadPersistentStores()
        try Self.save(other, "Solaris")
        let transactions = try other.viewContext.history(.fetchHistory(after: .distantPast))
        #expect(transactions.map(\.transactionNumber).last.map { $0 > live.storeTokens.values.first ?? 0 } == true)
        other.viewContext.performAndWait {
            expectError(.persistentHistoryTokenExpired) { _ = try other.viewContext.execute(.fetchHistory(after: live)) }
        }
    }

    @Test(arguments: HistoryStore.sharedKinds)
    func aTokenOfBeforeTrackingWentOffExpiresInAStoreStillTrackingOrOpenedReadOnly(_ kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let tracking = try store.stack()
        try Self.save(tracking, "Dune")
        _ = try tracking.viewContext.performAndWait { try tracking.viewContext.execute(.deleteHistory(before: .distantFuture)) }
        let token = tracking.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        // Another process turns tracking off and saves: not recorded.
        let plain = try store.stack(name: "Plain", tracking: false)
        try Self.save(plain, "Emma")
        tracking.viewContext.performAndWait {
            let error = expectError(.persistentHistoryTokenExpired) { _ = try tracking.viewContext.execute(.fetchHistory(after: token)) }
            #expect(error?.message.contains("off") == true)
        }
        // A read-only opening: SQLite stores only.
        guard kind == .file else { return }
        let reader = PersistentStack(name: "Reader", model: Fixtures.model())
        var description = StoreDescription(url: store.url)
        description.isReadOnly = true
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        reader.persistentStoreDescriptions = [description]
        try reader.loadPersistentStores()
        reader.viewContext.performAndWait {
            expectError(.persistentHistoryTokenExpired) { _ = try reader.viewContext.execute(.fetchHistory(after: token)) }
        }
    }
}
