import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Many writers changing one object graph at once, each with its own context: the graph stays
/// consistent whatever interleaving happens.
@Suite struct GraphConcurrencyTests {
    static let workers = 8
    static let iterations = 25

    /// What the writers did, as far as their successful saves say.
    struct Outcome: Sendable {
        var saves = 0
        /// Failed saves and operations, by error code (conflicts are expected; other codes are not).
        var failures: [String: Int] = [:]
        /// Keys of the books inserted and deleted by successful saves.
        var insertedBooks: Set<Int64> = []
        var deletedBooks: Set<Int64> = []
    }

    /// A small deterministic random generator (SplitMix64).
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        init(worker: Int, step: Int) { state = UInt64(worker &* 7919 &+ step &* 104_729 &+ 1) }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Authors, tags and books to start from; returns the seeded books' keys.
    private static func seed(_ store: GraphHarness) throws -> Set<Int64> {
        let context = store.stack.newBackgroundContext()
        return try context.performAndWait {
            let authors = try (0..<4).map { try context.insertNamed("Author", "author \($0)") }
            let tags = try (0..<6).map { try context.insertNamed("Tag", "tag \($0)") }
            for index in 0..<12 {
                let book = try context.insertNamed("Book", "seed \(index)")
                try book.setRelatedObject(authors[index % authors.count], forKey: "author")
                try book.addRelatedObject(tags[index % tags.count], forKey: "tags")
            }
            let changes = try context.save()
            return Set(changes.inserted.filter { $0.entityName == "Book" }.map(\.key))
        }
    }

    // MARK: One iteration of a writer

    /// Inserts a book (sometimes an author too), moves a book to another author, toggles a tag
    /// and sometimes deletes a book. Returns false after a failure (recorded; the context is set
    /// back to the store's state).
    static func change(_ context: ObjectContext, worker: Int, step: Int, outcome: Locked<Outcome>) -> Bool {
        var random = Generator(worker: worker, step: step)
        do {
            let authors = try context.fetch(FetchRequest(entityName: "Author"))
            let books = try context.fetch(FetchRequest(entityName: "Book"))
            let tags = try context.fetch(FetchRequest(entityName: "Tag"))

            // Insert.
            var author = authors.randomElement(using: &random)
            if author == nil || step % 6 == 0 {
                author = try context.insertNamed("Author", "w\(worker) author \(step)")
            }
            let book = try context.insertNamed("Book", "w\(worker) book \(step)")
            if Bool.random(using: &random) {
                try book.setRelatedObject(author, forKey: "author")
            } else if let author {
                try author.addRelatedObject(book, forKey: "books")
            }
            if let tag = tags.randomElement(using: &random) {
                try book.addRelatedObject(tag, forKey: "tags")
            }

            // Move a book, from either side.
            if let moved = books.randomElement(using: &random), let target = authors.randomElement(using: &random) {
                if Bool.random(using: &random) {
                    try moved.setRelatedObject(target, forKey: "author")
                } else {
                    try target.addRelatedObject(moved, forKey: "books")
                }
            }

            // Toggle a tag, from either side.
            if let tagged = books.randomElement(using: &random), let tag = tags.randomElement(using: &random) {
                let has = try tagged.relatedObjects(forKey: "tags").contains { $0 === tag }
                switch (has, Bool.random(using: &random)) {
                case (true, true): try tagged.removeRelatedObject(tag, forKey: "tags")
                case (true, false): try tag.removeRelatedObject(tagged, forKey: "books")
                case (false, true): try tagged.addRelatedObject(tag, forKey: "tags")
                case (false, false): try tag.addRelatedObject(tagged, forKey: "books")
                }
            }

            // Delete a book now and then.
            if step % 3 == 2, let victim = books.randomElement(using: &random), !victim.isDeleted {
                try context.delete(victim)
            }
            return true
        } catch {
            recover(context, from: error, outcome: outcome)
            return false
        }
    }

    /// Saves; a failure is recorded and the context set back to the store's state.
    static func save(_ context: ObjectContext, outcome: Locked<Outcome>) {
        do {
            let changes = try context.save()
            outcome.update {
                $0.saves += 1
                $0.insertedBooks.formUnion(changes.inserted.filter { $0.entityName == "Book" }.map(\.key))
                $0.deletedBooks.formUnion(changes.deleted.filter { $0.entityName == "Book" }.map(\.key))
            }
        } catch {
            recover(context, from: error, outcome: outcome)
        }
    }

    private static func recover(_ context: ObjectContext, from error: any Error, outcome: Locked<Outcome>) {
        let code = (error as? SkerryError)?.code.description ?? "\(error)"
        outcome.update { $0.failures[code, default: 0] += 1 }
        context.rollback()
        if let error = error as? SkerryError, error.code == .mergeConflict {
            // The conflicting objects take the store's state.
            for objectID in error.conflicts.map(\.objectID) + error.objectIDs {
                if let object = context.registeredObject(for: objectID) {
                    try? context.refresh(object, mergeChanges: false)
                }
            }
        } else {
            context.reset()
        }
    }

    // MARK: Checking the result

    /// Checks the graph in a fresh context and against the store's tables.
    private static func checkConsistency(_ store: GraphHarness, seeded: Set<Int64>, _ outcome: Outcome) throws {
        #expect(outcome.saves > 0)
        let unexpected = outcome.failures.filter { $0.key != SkerryError.Code.mergeConflict.description }
        #expect(unexpected.isEmpty, "unexpected failures: \(unexpected)")

        let context = try store.reopened()
        try context.performAndWait {
            let authors = try context.fetch(FetchRequest(entityName: "Author"))
            let books = try context.fetch(FetchRequest(entityName: "Book"))
            let tags = try context.fetch(FetchRequest(entityName: "Tag"))
            var memberships = 0

            for book in books {
                if let author = try book.relatedObject(forKey: "author") {
                    #expect(!author.isDeleted)
                    #expect(authors.contains { $0 === author }, "\(book.label)'s author \(author.objectID) is not an existing author")
                    #expect(
                        try author.relatedObjects(forKey: "books").contains { $0 === book },
                        "\(author.label).books lacks \(book.label)")
                }
                for tag in try book.relatedObjects(forKey: "tags") {
                    memberships += 1
                    #expect(tags.contains { $0 === tag }, "\(book.label) has a tag \(tag.objectID) that does not exist")
                    #expect(
                        try tag.relatedObjects(forKey: "books").contains { $0 === book },
                        "\(tag.label).books lacks \(book.label)")
                }
            }
            for author in authors {
                for book in try author.relatedObjects(forKey: "books") {
                    #expect(books.contains { $0 === book }, "\(author.label) has a book \(book.objectID) that does not exist")
                    #expect(try book.relatedObject(forKey: "author") === author, "\(book.label).author is not \(author.label)")
                }
            }
            for tag in tags {
                for book in try tag.relatedObjects(forKey: "books") {
                    #expect(books.contains { $0 === book }, "\(tag.label) has a book \(book.objectID) that does not exist")
                    #expect(
                        try book.relatedObjects(forKey: "tags").contains { $0 === tag },
                        "\(book.label).tags lacks \(tag.label)")
                }
            }

            // What the successful saves did is what the store holds.
            let expected = seeded.union(outcome.insertedBooks).subtracting(outcome.deletedBooks)
            #expect(Set(books.map(\.objectID.key)) == expected)
            #expect(try store.scalar("SELECT count(*) FROM \"Book\"") == books.count)
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == books.count)
            #expect(try store.scalar("SELECT count(*) FROM \"Author\"") == authors.count)
            #expect(try store.scalar("SELECT count(*) FROM \"_Book_tags\"") == memberships)
        }
        // No row points at a row that does not exist.
        #expect(
            try store.scalar(
                """
                SELECT count(*) FROM \"_Book_tags\" WHERE source NOT IN (SELECT _pk FROM \"Book\") OR target NOT IN (SELECT _pk FROM \"Tag\")
                """) == 0)
        #expect(
            try store.scalar("SELECT count(*) FROM \"Book\" WHERE author IS NOT NULL AND author NOT IN (SELECT _pk FROM \"Author\")") == 0)
    }

    // MARK: Tests

    @Test(arguments: StoreKind.allCases)
    func threadsChangingTheGraphLeaveItConsistent(kind: StoreKind) throws {
        let store = try GraphHarness(kind)
        let seeded = try Self.seed(store)
        let outcome = Locked(Outcome())
        DispatchQueue.concurrentPerform(iterations: Self.workers) { worker in
            let context = store.stack.newBackgroundContext()
            for step in 0..<Self.iterations {
                // Changed in one block and saved in the next: other writers' saves may be merged
                // in between, into objects with pending changes.
                let changed = context.performAndWait {
                    Self.change(context, worker: worker, step: step, outcome: outcome)
                }
                if changed {
                    context.performAndWait { Self.save(context, outcome: outcome) }
                }
            }
        }
        try Self.checkConsistency(store, seeded: seeded, outcome.value)
    }

    @Test(arguments: StoreKind.allCases)
    func tasksChangingTheGraphLeaveItConsistent(kind: StoreKind) async throws {
        let store = try GraphHarness(kind)
        let seeded = try Self.seed(store)
        let outcome = Locked(Outcome())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<Self.workers {
                group.addTask {
                    let context = store.stack.newBackgroundContext()
                    for step in 0..<Self.iterations {
                        await context.perform {
                            if Self.change(context, worker: worker + 100, step: step, outcome: outcome) {
                                Self.save(context, outcome: outcome)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try Self.checkConsistency(store, seeded: seeded, outcome.value)
    }
}
