import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Saves that change some of the same rows at once: the server never has to end one of them to
/// break a deadlock, whatever order their statements come in; the loser of a race gets the typed
/// conflict the SQLite store gives.
@Suite(.postgres) struct PostgresConcurrentSaveTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Author", attributes: [AttributeDescription("name", .string)]),
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string)]),
        ])
    }

    /// Runs `sql` on `connection` until it answers a non-zero count, or fails the test after a
    /// generous bound (a guard against hanging, not a measurement).
    static func waitUntil(_ connection: PostgresConnection, _ sql: String, _ bindings: [AttributeValue]) throws {
        for _ in 0..<600 {
            if try connection.scalarInt64(sql, bindings) ?? 0 > 0 { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("timed out waiting for: \(sql)")
        throw CancellationError()
    }

    /// One save deletes two books and renames their author; another renames the author and
    /// retitles one of those books. Statement by statement, the first would hold a book and wait
    /// for the author while the second holds the author and waits for the book: a deadlock,
    /// which the server breaks by failing one save with 40P01 (a `.database` error). The store
    /// locks every row a save changes first, in one order, so the second save waits for the
    /// first, then finds its book deleted: a merge conflict, with nothing of it kept.
    @Test func savesChangingTheSameRowsInOppositeOrdersEndInACommitAndAConflict() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(Self.model(), schema, name: "Concurrent", maximumConnections: 4)
        let seeding = stack.newBackgroundContext()
        let (author, first, second) = try seeding.performAndWait {
            let author = try seeding.insert(entityName: "Author")
            try author.setValue("Ann", forKey: "name")
            let books = try (0..<2).map { index in
                let book = try seeding.insert(entityName: "Book")
                try book.setValue("Book \(index)", forKey: "title")
                return book
            }
            try seeding.save()
            return (author.objectID, books[0].objectID, books[1].objectID)
        }

        let outcome = try Self.raceTwoSaves(
            stack, schema, holding: second,
            first: { context in
                try context.delete(context.existingObject(with: first))
                try context.delete(context.existingObject(with: second))
                try context.existingObject(with: author).setValue("Ann Smith", forKey: "name")
            },
            second: { context in
                try context.existingObject(with: author).setValue("A. Smith", forKey: "name")
                try context.existingObject(with: first).setValue("Retitled", forKey: "title")
            })
        try Self.expectFirstCommittedAndSecondConflicted(outcome)
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let authors = try reader.fetch(FetchRequest(entityName: "Author"))
            #expect(try authors.map { try $0.value(forKey: "name") as? String } == ["Ann Smith"])
            #expect(try reader.count(for: FetchRequest(entityName: "Book")) == 0)
        }
    }

    /// Two saves that only update rows, changing the same two books in opposite orders in their
    /// contexts: a save that only updates sends no locking statement (its updates go in key order
    /// and lock their rows in that order themselves), so the second waits for the first instead of
    /// deadlocking, then finds the versions it read gone: a merge conflict, nothing of it kept.
    @Test func savesThatOnlyUpdateTheSameRowsWaitForEachOtherAndConflict() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(Self.model(), schema, name: "ConcurrentUpdates", maximumConnections: 4)
        let seeding = stack.newBackgroundContext()
        let (first, second) = try seeding.performAndWait {
            let books = try (0..<2).map { index in
                let book = try seeding.insert(entityName: "Book")
                try book.setValue("Book \(index)", forKey: "title")
                return book
            }
            try seeding.save()
            return (books[0].objectID, books[1].objectID)
        }

        func retitle(_ titles: [(ObjectID, String)]) -> @Sendable (ObjectContext) throws -> Void {
            { context in for (id, title) in titles { try context.existingObject(with: id).setValue(title, forKey: "title") } }
        }
        let outcome = try Self.raceTwoSaves(
            stack, schema, holding: second,
            first: retitle([(first, "First A"), (second, "Second A")]),
            second: retitle([(second, "Second B"), (first, "First B")]))
        try Self.expectFirstCommittedAndSecondConflicted(outcome)
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let books = try reader.fetch(FetchRequest(entityName: "Book"))
            #expect(Set(try books.map { try $0.value(forKey: "title") as? String }) == ["First A", "Second A"])
        }
    }

    /// Runs two saves on `stack` at once, in a set order: another session holds the book `held`
    /// (a row of `schema`), so that the first save stops part-way at it; the second starts once
    /// the first waits and runs until it waits for the first; then the holder lets go. Returns
    /// each save's error (nil: it committed), keyed 1 and 2.
    static func raceTwoSaves(
        _ stack: PersistentStack, _ schema: String, holding held: ObjectID,
        first: @escaping @Sendable (ObjectContext) throws -> Void, second: @escaping @Sendable (ObjectContext) throws -> Void
    ) throws -> [Int: SkerryError?] {
        let holder = try PostgresTestServer.connect()
        let holderPID = try #require(try holder.scalarInt64("SELECT pg_backend_pid()"))
        try holder.execute("BEGIN")
        try holder.query("SELECT 1 FROM \"\(schema)\".\"Book\" WHERE _pk = ? FOR UPDATE", [.int(held.key)])
        let watcher = try PostgresTestServer.connect()
        let blockedBy = "SELECT count(*) FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))"

        let results = Locked<[Int: SkerryError?]>([:])
        let done = DispatchGroup()
        func save(_ number: Int, _ change: @escaping @Sendable (ObjectContext) throws -> Void) {
            let context = stack.newBackgroundContext()
            DispatchQueue.global().async(group: done) {
                let failure: SkerryError? = context.performAndWait {
                    do {
                        try change(context)
                        try context.save()
                        return nil
                    } catch {
                        return error as? SkerryError ?? SkerryError(.database, "\(error)")
                    }
                }
                results.update { $0[number] = failure }
            }
        }

        save(1, first)
        try waitUntil(watcher, blockedBy, [.int(holderPID)])
        let firstPID = try #require(
            try watcher.scalarInt64("SELECT pid FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))", [.int(holderPID)]))
        save(2, second)
        try waitUntil(watcher, blockedBy, [.int(firstPID)])
        try holder.execute("ROLLBACK")
        done.wait()
        return results.value
    }

    /// Expects, of ``raceTwoSaves(_:_:holding:first:second:)``'s outcome, that the first save
    /// committed and the second failed with a merge conflict.
    static func expectFirstCommittedAndSecondConflicted(_ outcome: [Int: SkerryError?]) throws {
        #expect(outcome.count == 2)
        let firstFailure = try #require(outcome[1], "the first save did not finish")
        #expect(firstFailure == nil, "the first save failed: \(String(describing: firstFailure))")
        let conflict = try #require(outcome[2] ?? nil, "the second save committed")
        #expect(conflict.code == .mergeConflict, "\(conflict)")
    }

    /// A save that updates rows with unique values locks every row it changes first, as saves
    /// with join-table or order changes do: writing a unique value can wait for another save's
    /// uncommitted equal value, and a save holding some rows while it waits for a value could
    /// wait for a save that waits for one of those rows (one sets Item 1's code to "x" and
    /// retitles Item 2; the other retitles Item 2 and sets Item 3's code to "x": a deadlock
    /// without the locking statement). A save that only updates rows without unique values sends
    /// no locking statement (the previous test).
    @Test func savesThatUpdateUniqueValuesLockTheirRowsFirst() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Item",
                attributes: [AttributeDescription("code", .string, isOptional: true), AttributeDescription("title", .string)],
                uniquenessConstraints: [["code"]]),
            EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)]),
        ])
        let stack = try PostgresTestServer.stack(model, PostgresTestServer.newSchema())
        let statements = Locked<[String]>([])
        let observation = stack.addEventObserver(statements: .all) { event in
            if case .statement(let trace) = event { statements.update { $0.append(trace.sql) } }
        }
        defer { observation.cancel() }
        let context = stack.newBackgroundContext()
        func lockingStatementsOfASave(_ change: () throws -> Void) throws -> [String] {
            statements.set([])
            try context.performAndWait {
                try change()
                try context.save()
            }
            return statements.value.filter { $0.contains("FOR UPDATE") }
        }
        let (items, notes) = try context.performAndWait {
            let items = try (1...3).map { index in
                let item = try context.insert(entityName: "Item")
                try item.setValue("Item \(index)", forKey: "title")
                return item
            }
            let notes = try (1...2).map { index in
                let note = try context.insert(entityName: "Note")
                try note.setValue("Note \(index)", forKey: "text")
                return note
            }
            try context.save()
            return (items.map(\.objectID), notes.map(\.objectID))
        }

        let unique = try lockingStatementsOfASave {
            try context.existingObject(with: items[0]).setValue("x", forKey: "code")
            try context.existingObject(with: items[1]).setValue("Item 2, retitled", forKey: "title")
        }
        #expect(unique.count == 1, "a save writing unique values sent \(unique)")
        let plain = try lockingStatementsOfASave {
            for id in notes { try context.existingObject(with: id).setValue("retold", forKey: "text") }
        }
        #expect(plain.isEmpty, "a save without unique values sent \(plain)")
    }
}
