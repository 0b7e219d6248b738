import Foundation
import Logging
import Skerry
import SkerryCore
import SkerryLogging
import Synchronization

/// The catalogue: a stack over one store (a SQLite file or a PostgreSQL database), and a
/// `PersistentContainer` whose every operation runs in a fresh background context that is reset
/// afterwards (`cleanUpAfterExecution`), so that no object outlives a request and memory stays
/// flat whatever the traffic.
final class Catalogue: Sendable {
    let stack: PersistentStack
    let container: PersistentContainer
    let views: ViewCounter
    private let logging: EventObservation

    /// Opens (creating or migrating) the store that `store` describes.
    init(store: StoreDescription, logger: Logger) throws {
        stack = PersistentStack(name: "Library", model: try ObjectModel(types: [Book.self]))
        stack.persistentStoreDescriptions = [store]
        logging = stack.addLogging(to: logger, slowStatementThreshold: .milliseconds(50))
        try stack.loadPersistentStores()
        let stack = stack
        container = PersistentContainer(
            managedObjectContext: { stack.newBackgroundContext() },
            logger: logger, cleanUpAfterExecution: true)
        views = ViewCounter(stack: stack, logger: logger)
    }

    deinit { logging.cancel() }

    func list(author: String?, limit: Int, offset: Int) async throws -> BookList {
        try await container.schedule { context in
            var request = Book.all.sort(\Book.title).sort(\Book.isbn)
            if let author { request = request.where(\Book.author == author) }
            let total = try context.count(of: request)
            let books = try context.fetch(request.limit(limit).offset(offset)).map { try $0.decode() }
            return BookList(books: books, total: total)
        }
    }

    func book(isbn: String) async throws -> Book? {
        let book = try await container.schedule { context in
            try context.fetchOne(Book.all.where(\Book.isbn == isbn))?.decode()
        }
        if book != nil { views.record(isbn: isbn) }
        return book
    }

    /// Adds a book. - Throws: `SkerryError` `.constraintViolation` when the ISBN is taken.
    func add(_ book: Book) async throws -> Book {
        try await container.schedule { context in
            try context.insert(book)
            return book
        }
    }

    func update(isbn: String, with changes: BookChanges) async throws -> Book? {
        try await container.schedule { context in
            guard let object = try context.fetchOne(Book.all.where(\Book.isbn == isbn)) else { return nil }
            var book = try object.decode()
            book.title = changes.title ?? book.title
            book.author = changes.author ?? book.author
            book.year = changes.year ?? book.year
            book.copies = changes.copies ?? book.copies
            object.encode(book)
            return book
        }
    }

    func remove(isbn: String) async throws -> Bool {
        try await container.schedule { context in
            guard let object = try context.fetchOne(Book.all.where(\Book.isbn == isbn)) else { return false }
            context.delete(object)
            return true
        }
    }

    func stats() async throws -> Stats {
        let count = try await container.schedule { context in try context.count(of: Book.all) }
        let statistics = stack.statistics
        return Stats(
            books: count, statementsExecuted: statistics.statementsExecuted, rowsRead: statistics.rowsRead,
            rowsWritten: statistics.rowsWritten, residentMemoryBytes: residentMemoryBytes())
    }

    /// Inserts `count` books when the catalogue is empty (`isbn-1`... `isbn-N`), in one save.
    func seed(_ count: Int) throws {
        guard count > 0 else { return }
        try container.perform { context in
            guard try context.count(of: Book.all) == 0 else { return }
            for number in 1...count {
                try context.insert(
                    Book(
                        isbn: "isbn-\(number)", title: "Title \(number)", author: "Author \(number % 50)",
                        year: 1900 + number % 120, copies: 1 + number % 3))
            }
        }
    }
}

/// Counts look-ups in memory and writes them in batches through one long-lived context: the
/// changes a service holds in flight, saved every `batch` views and on shutdown.
///
/// At most one flush is queued on the context at any time: look-ups arrive faster than a save
/// of a batch completes, and a block queued per look-up past the threshold made the queue (and
/// the service's memory) grow without bound under load.
final class ViewCounter: Sendable {
    private struct Pending {
        var counts: [String: Int] = [:]
        var views = 0
        var flushQueued = false
    }

    private let context: ObjectContext
    private let pending = Mutex(Pending())
    private let logger: Logger
    private let batch = 200

    init(stack: PersistentStack, logger: Logger) {
        context = stack.newBackgroundContext()
        // The counts win over the store; other columns changed meanwhile are kept.
        context.mergePolicy = .mergeByPropertyObjectTrump
        // It only writes: merging every request context's saves would be wasted work.
        context.automaticallyMergesChangesFromParent = false
        self.logger = logger
    }

    func record(isbn: String) {
        let due = pending.withLock { pending in
            pending.counts[isbn, default: 0] += 1
            pending.views += 1
            guard pending.views >= batch, !pending.flushQueued else { return false }
            pending.flushQueued = true
            return true
        }
        if due { context.perform { self.flushOnQueue() } }
    }

    /// Saves every pending count and waits: called on shutdown.
    func flush() throws {
        try context.performAndWait { try save(takePending()) }
    }

    /// Takes the pending counts; look-ups from now on may queue the next flush.
    private func takePending() -> [String: Int] {
        pending.withLock { pending in
            defer { pending = Pending() }
            return pending.counts
        }
    }

    private func flushOnQueue() {
        let counts = takePending()
        do {
            try save(counts)
        } catch {
            logger.error("saving view counts failed; they are lost", metadata: ["error": "\(error)", "books": "\(counts.count)"])
        }
    }

    /// On the context's queue: adds `counts` to the stored views, saves, and forgets the objects.
    private func save(_ counts: [String: Int]) throws {
        defer { context.reset() }
        guard !counts.isEmpty else { return }
        // One fetch per book rather than one `isbn IN (...)` fetch: the same statement every
        // time (each connection caches prepared statements by their SQL, and an IN list of a
        // different length each time would fill that cache with large one-off statements).
        for (isbn, count) in counts {
            let request = FetchRequest(entityName: "Book", predicate: AttributeKey("isbn") == isbn)
            guard let book = try context.fetch(request).first else { continue } // deleted meanwhile
            try book.setValue(try book.value(forKey: "views", as: Int.self) + count, forKey: "views")
        }
        do {
            try context.save()
        } catch {
            context.rollback()
            throw error
        }
    }
}

/// The process's resident memory in bytes (`VmRSS` of /proc/self/status), 0 where unavailable.
func residentMemoryBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes * 1024
}
