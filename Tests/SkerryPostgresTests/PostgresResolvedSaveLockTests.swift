import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A save under a resolving merge policy resolves its conflicts inside its transaction, holding
/// the rows its first attempt locked. When the resolved write changes rows the first attempt did
/// not lock (an insert become an update of the row with its unique value), it does not lock them
/// out of order while holding the others, which could deadlock with a save that holds one of
/// them and waits for the rows this save holds.
@Suite(.postgres) struct PostgresResolvedSaveLockTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription("title", .string), AttributeDescription("year", .integer32, isOptional: true),
                    AttributeDescription("isbn", .string, isOptional: true),
                ],
                uniquenessConstraints: [["isbn"]])
        ])
    }

    /// Row X (isbn "X", the lower key) and Dune are saved. A stale context changes Dune and
    /// inserts a book with isbn "X": its first attempt locks Dune, finds X's value taken and goes
    /// back to its savepoint, its resolved write updates X and Dune. Meanwhile another session
    /// locks X (once the first attempt went back) and, a moment later, Dune. Locking X while
    /// holding Dune would wait for that session while it waits for Dune: a deadlock, broken by
    /// the server after `deadlock_timeout` by failing the save (begun again). The save lets Dune
    /// go and begins again, locking X and Dune in order: it waits, and commits, with no deadlock.
    @Test func aResolvedWriteNeedingNewRowsDoesNotLockThemOutOfOrder() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(try Self.model(), schema, name: "Saver", maximumConnections: 2)
        let store = try #require(stack.persistentStoreCoordinator.loadedStores.first as? PostgresStore)
        let setup = stack.newBackgroundContext()
        let (xKey, duneID) = try setup.performAndWait {
            let x = try setup.insert(entityName: "Book")
            try x.setValue("Old", forKey: "title")
            try x.setValue("X", forKey: "isbn")
            try setup.save()
            let dune = try setup.insert(entityName: "Book")
            try dune.setValue("Dune", forKey: "title")
            try setup.save()
            return (x.objectID.key, dune.objectID)
        }
        #expect(xKey < duneID.key)

        let holder = Session(try PostgresTestServer.connect())
        let lockSQL = "SELECT 1 FROM \"\(schema)\".\"Book\" WHERE \"_pk\" = ? FOR UPDATE"
        let holderDone = DispatchGroup()
        let holderError = Locked<String?>(nil)
        let interposed = Locked(false)
        let observation = stack.addEventObserver(statements: .all) { event in
            guard case .statement(let trace) = event, trace.sql.hasPrefix("ROLLBACK TO SAVEPOINT") else { return }
            guard !interposed.value else { return }
            interposed.set(true)
            do {
                try holder.connection.execute("BEGIN")
                _ = try holder.connection.query(lockSQL, [.int(xKey)])
            } catch {
                holderError.set("\(error)")
                return
            }
            // Once the save waits for X (or a moment later), the session asks for Dune.
            DispatchQueue.global().async(group: holderDone) {
                Thread.sleep(forTimeInterval: 0.3)
                do {
                    _ = try holder.connection.query(lockSQL, [.int(duneID.key)])
                    try holder.connection.execute("COMMIT")
                } catch {
                    holderError.set("\(error)")
                    try? holder.connection.execute("ROLLBACK")
                }
            }
        }
        defer { observation.cancel() }

        let stale = stack.newBackgroundContext()
        stale.automaticallyMergesChangesFromParent = false
        stale.mergePolicy = .mergeByPropertyObjectTrump
        try stale.performAndWait {
            try stale.existingObject(with: duneID).setValue(Int32(1965), forKey: "year")
            let book = try stale.insert(entityName: "Book")
            try book.setValue("New", forKey: "title")
            try book.setValue("X", forKey: "isbn")
            try stale.save()
        }
        holderDone.wait()

        #expect(interposed.value)
        #expect(holderError.value == nil, "the other session failed: \(holderError.value ?? "")")
        #expect(store.writesRetried.load(ordering: .relaxed) == 0, "the save was begun again after a deadlock")
        let reader = stack.newBackgroundContext()
        let rows = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])).map {
                "\(try $0.value(forKey: "title", as: String.self))|\(try $0.value(forKey: "year", as: Int32?.self).map(String.init) ?? "nil")|\(try $0.value(forKey: "isbn", as: String?.self) ?? "nil")"
            }
        }
        #expect(rows == ["Dune|1965|nil", "New|nil|X"])
    }

    /// The row an insert is resolved into (its unique value's) changes in another instance just
    /// after the save's first attempt went back to its savepoint, before the save locked it: the
    /// save begins again, locks it, finds the new version and resolves it too (two resolutions),
    /// and writes the insert's values over it.
    @Test func theRowAnInsertIsResolvedIntoMayChangeBeforeItIsLocked() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(try Self.model(), schema, name: "Saver", maximumConnections: 2)
        let other = try PostgresTestServer.stack(try Self.model(), schema, name: "Other", maximumConnections: 2)
        let store = try #require(stack.persistentStoreCoordinator.loadedStores.first as? PostgresStore)
        let setup = stack.newBackgroundContext()
        let (xKey, duneID) = try setup.performAndWait {
            let x = try setup.insert(entityName: "Book")
            try x.setValue("Old", forKey: "title")
            try x.setValue("X", forKey: "isbn")
            let dune = try setup.insert(entityName: "Book")
            try dune.setValue("Dune", forKey: "title")
            try setup.save()
            return (x.objectID.key, dune.objectID)
        }
        let resolutions = Locked(0), interposed = Locked(false), otherError = Locked<String?>(nil)
        let observation = stack.addEventObserver(statements: .all) { event in
            switch event {
            case .conflictsResolved: resolutions.update { $0 += 1 }
            case .statement(let trace) where trace.sql.hasPrefix("ROLLBACK TO SAVEPOINT") && !interposed.value:
                interposed.set(true)
                let context = other.newBackgroundContext()
                context.performAndWait {
                    do {
                        let x = try context.fetch(FetchRequest(entityName: "Book")).first { $0.objectID.key == xKey }
                        try x?.setValue(Int32(1999), forKey: "year")
                        try x?.setValue("Other", forKey: "title")
                        try context.save()
                    } catch {
                        otherError.set("\(error)")
                    }
                }
            default: break
            }
        }
        defer { observation.cancel() }
        let stale = stack.newBackgroundContext()
        stale.mergePolicy = .mergeByPropertyObjectTrump
        try stale.performAndWait {
            try stale.existingObject(with: duneID).setValue(Int32(1965), forKey: "year")
            let book = try stale.insert(entityName: "Book")
            try book.setValue("New", forKey: "title")
            try book.setValue(Int32(2001), forKey: "year")
            try book.setValue("X", forKey: "isbn")
            try stale.save()
            #expect(book.objectID.key == xKey)
        }
        #expect(interposed.value)
        #expect(otherError.value == nil)
        #expect(resolutions.value == 2)
        #expect(store.writesRetried.load(ordering: .relaxed) == 0)
        let reader = stack.newBackgroundContext()
        let rows = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])).map {
                "\(try $0.value(forKey: "title", as: String.self))|\(try $0.value(forKey: "year", as: Int32?.self).map(String.init) ?? "nil")"
            }
        }
        #expect(rows == ["Dune|1965", "New|2001"])
    }

    /// Instances upserting books by isbn (a few values, so most inserts meet a row or another
    /// instance's insert) while changing one shared book, under object trump, all at once: every
    /// save commits, none is begun again after a deadlock, and each isbn has one row.
    @Test func concurrentUpsertsUnderObjectTrumpNeitherFailNorDeadlock() throws {
        let schema = PostgresTestServer.newSchema()
        let stacks = try (0..<3).map { index in
            try PostgresTestServer.stack(try Self.model(), schema, name: "Instance\(index)", maximumConnections: 2)
        }
        let stores = try stacks.map { try #require($0.persistentStoreCoordinator.loadedStores.first as? PostgresStore) }
        let setup = stacks[0].newBackgroundContext()
        let sharedKey = try setup.performAndWait {
            let shared = try setup.insert(entityName: "Book")
            try shared.setValue("Shared", forKey: "title")
            try shared.setValue(Int32(0), forKey: "year")
            try setup.save()
            return shared.objectID.key
        }
        let failures = Locked<[String]>([])
        let done = DispatchGroup()
        for (index, stack) in stacks.enumerated() {
            DispatchQueue.global().async(group: done) {
                let context = stack.newBackgroundContext()
                context.mergePolicy = .mergeByPropertyObjectTrump
                context.performAndWait {
                    for round in 0..<15 {
                        do {
                            // The shared book, by its key in this instance's store.
                            let shared = try context.fetch(FetchRequest(entityName: "Book")).first { $0.objectID.key == sharedKey }!
                            try shared.setValue(Int32(index * 100 + round), forKey: "year")
                            for isbn in ["A", "B", "C"].shuffled().prefix(2) {
                                let book = try context.insert(entityName: "Book")
                                try book.setValue("\(isbn) by \(index)", forKey: "title")
                                try book.setValue(isbn, forKey: "isbn")
                            }
                            try context.save()
                        } catch {
                            failures.update { $0.append("instance \(index) round \(round): \(error)") }
                            context.rollback()
                        }
                    }
                }
            }
        }
        done.wait()
        #expect(failures.value.isEmpty, "\(failures.value)")
        #expect(stores.map { $0.writesRetried.load(ordering: .relaxed) } == [0, 0, 0], "a save was begun again after a deadlock")
        let reader = stacks[0].newBackgroundContext()
        let isbns = try reader.performAndWait {
            try reader.fetch(FetchRequest(entityName: "Book")).compactMap { try $0.value(forKey: "isbn", as: String?.self) }.sorted()
        }
        #expect(isbns == ["A", "B", "C"])
    }

    /// Another instance hears of a save resolved in its transaction once, with the rows of its
    /// final write: not of its first attempt's insert (under another key), undone.
    @Test func anotherInstanceHearsOnlyTheFinalWrite() throws {
        let schema = PostgresTestServer.newSchema()
        func stack() throws -> PersistentStack {
            let stack = PersistentStack(name: "Instance", model: try Self.model())
            stack.persistentStoreDescriptions = [
                .postgres(try PostgresTestServer.require(), maximumConnections: 2, schema: schema, propagatesChanges: true)
            ]
            try stack.loadPersistentStores()
            return stack
        }
        let writing = try stack(), listening = try stack()
        let heard = Locked<[StoreChanges]>([])
        let observation = listening.addDidSaveObserver { event in
            guard event.isFromOtherProcess else { return }
            heard.update { $0.append(event.changes) }
        }
        defer { observation.cancel() }
        func insert(_ context: ObjectContext, _ title: String) throws -> EntityObject {
            let book = try context.insert(entityName: "Book")
            try book.setValue(title, forKey: "title")
            return book
        }
        let setup = writing.newBackgroundContext()
        let duneID = try setup.performAndWait {
            let dune = try insert(setup, "Dune")
            try setup.save()
            return dune.objectID
        }
        let stale = writing.newBackgroundContext()
        stale.automaticallyMergesChangesFromParent = false
        stale.mergePolicy = .mergeByPropertyObjectTrump
        let dune = try stale.performAndWait { try stale.existingObject(with: duneID) }
        try setup.performAndWait {
            try setup.existingObject(with: duneID).setValue("Dune (W)", forKey: "title")
            try setup.save()
        }
        #expect(PostgresChangePropagationTests.eventually { heard.value.count == 2 })
        let addedID = try stale.performAndWait {
            try dune.setValue(Int32(1965), forKey: "year")
            let added = try insert(stale, "Added")
            try stale.save()
            return added.objectID
        }
        // A last save, heard after the resolved one.
        try setup.performAndWait {
            _ = try insert(setup, "Marker")
            try setup.save()
        }
        #expect(PostgresChangePropagationTests.eventually { heard.value.count >= 4 })
        let resolved = heard.value.dropFirst(2).map { changes in
            (Set(changes.inserted.map(\.key)), Set(changes.updated.map(\.key)))
        }
        try #require(resolved.count == 2)
        #expect(resolved[0].0 == [addedID.key])
        #expect(resolved[0].1 == [duneID.key])
    }

    /// Another session's connection, used by one thread at a time: the event observer that
    /// begins its transaction, then the block that observer starts (and the test waits for).
    final class Session: @unchecked Sendable {
        let connection: PostgresConnection
        init(_ connection: PostgresConnection) { self.connection = connection }
    }
}
