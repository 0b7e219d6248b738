import Foundation
import Testing

@testable import SkerryCore

/// Saves of the same rows by many writers at once, under merge policies that resolve conflicts:
/// a save resolves them where no other writer can change the rows again before it writes them,
/// so it succeeds however busy the rows are, as a Core Data save under such a policy does.
@Suite struct SaveContentionTests {
    /// The store kinds two stacks can share: a file, a PostgreSQL schema.
    static var sharedKinds: [StoreKind] { StoreKind.allCases.filter { $0 != .memory } }

    /// Whenever the save's transaction ends without committing (so that the rows are free),
    /// another stack on the same store changes the book again, as a writer that gets in first
    /// would. A save that rolled back its transaction to resolve its conflicts would find a new
    /// one at every attempt and give up; the save resolves them inside its transaction, where the
    /// rows stay as it read them, and writes in its second attempt.
    @Test(arguments: sharedKinds, [MergePolicy.mergeByPropertyObjectTrump, .overwrite])
    func aWriterGettingInBetweenAttemptsCannotStarveASave(kind: StoreKind, policy: MergePolicy) throws {
        let directory = TemporaryDirectory(), schema = PostgresTestServer.newSchema()
        func makeStack() throws -> PersistentStack {
            kind == .postgres
                ? try PostgresTestServer.stack(Fixtures.model(), schema, maximumConnections: 2) : try makeFileStack(directory)
        }
        let stack = try makeStack(), other = try makeStack()
        let saver = stack.newBackgroundContext()
        saver.automaticallyMergesChangesFromParent = false // it keeps the version it read
        saver.mergePolicy = policy
        let id = try saver.performAndWait {
            let book = try saver.insertBook("Dune", year: 1965)
            try saver.save()
            return book.objectID
        }
        /// Sets the only book's year from `other`, as another process would.
        @Sendable func otherWriterSetsYear(_ year: Int32) throws {
            let context = other.newBackgroundContext()
            try context.performAndWait {
                let book = try #require(try context.fetch(FetchRequest(entityName: "Book")).first)
                try book.setValue(year, forKey: "year")
                try context.save()
            }
        }
        let rollbacks = Locked(0), resolutions = Locked(0)
        let observation = stack.addEventObserver(statements: .all) { event in
            switch event {
            case .conflictsResolved: resolutions.update { $0 += 1 }
            case .statement(let trace) where trace.sql == "ROLLBACK":
                rollbacks.update { $0 += 1 }
                // Bounded, so that a save that rolls back again and again still ends the test.
                guard rollbacks.value <= 2 * ObjectContext.maximumSaveAttempts else { return }
                do { try otherWriterSetsYear(Int32(2000 + rollbacks.value)) } catch { Issue.record(error) }
            default: break
            }
        }
        defer { observation.cancel() }

        try otherWriterSetsYear(1966) // the saver's first attempt finds the book changed
        try saver.performAndWait {
            try saver.existingObject(with: id).setValue("Dune Messiah", forKey: "title")
            try saver.save()
        }

        #expect(resolutions.value == 1)
        #expect(rollbacks.value == 0)
        let reader = other.newBackgroundContext() // the only book, as another process reads it
        let (title, year) = try reader.performAndWait {
            let book = try #require(try reader.fetch(FetchRequest(entityName: "Book")).first)
            return (try book.value(forKey: "title", as: String.self), try book.value(forKey: "year", as: Int32.self))
        }
        #expect(title == "Dune Messiah")
        // The year the saver did not change: the store's under object trump, the saver's under
        // overwrite.
        #expect(year == (policy == .overwrite ? 1965 : 1966))
    }
}
