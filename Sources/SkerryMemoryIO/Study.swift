import Foundation
import Skerry
import SkerryCore
import SkerryPostgres

/// The parameters of a run.
struct StudyOptions {
    var objects = 100_000
    var performs = 4_000
    var workingSet = 2_000
    var output: URL?
    var variant: String?
    var store: URL?
    /// A PostgreSQL connection string: the study runs on a PostgreSQL store there instead of a
    /// SQLite file.
    var postgres: String?
    /// The PostgreSQL schema the study's tables go in.
    var schema = "skerry_memory_io"
    /// Whether the run moves a SQLite store into PostgreSQL (`--move`) instead.
    var move = false

    /// Where the study's store is: the PostgreSQL store when a connection string was given,
    /// otherwise the SQLite file `file`.
    func storeDescription(file: URL) -> StoreDescription {
        guard let postgres else { return StoreDescription(url: file) }
        return .postgres(postgres, schema: schema)
    }
}

/// One perform's measurements.
struct Sample {
    let perform: Int
    let residentBytes: Int
    let rowsRead: Int
    let statements: Int
    let seconds: Double
}

/// Fills the store with `objects` books by `objects / 20` authors (at least one), after emptying
/// it (a PostgreSQL schema may hold an earlier run's rows; a SQLite file is new).
func populate(_ store: StoreDescription, objects: Int, progress: (Int, Int) -> Void) throws {
    let stack = try studyStack(store)
    let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
    try container.perform { context in
        _ = try context.batchDelete(Book.all)
        _ = try context.batchDelete(Author.all)
    }
    let authors = max(1, objects / 20)
    let summary = String(repeating: "A story of sand, spice and empire. ", count: 4)
    let batch = 50
    for start in stride(from: 0, to: authors, by: batch) {
        try container.perform { context in
            for index in start..<min(start + batch, authors) {
                let author = try context.insert(Author(name: authorName(index)))
                for book in 0..<(objects / authors) {
                    let object = try context.insert(
                        Book(title: "Book \(index)-\(book)", year: 1900 + book, pages: 100 + book, summary: summary))
                    try object.relate(\.author, to: author)
                }
            }
        }
        progress(min(start + batch, authors), authors)
    }
}

/// Runs the K performs of one variant and returns a sample per perform.
func runVariant(cleanUp: Bool, store: StoreDescription, performs: Int, workingSet: Int, progress: (Int, Int) -> Void) throws -> [Sample] {
    let stack = try studyStack(store)
    let context = stack.newBackgroundContext()
    let container = PersistentContainer(managedObjectContext: { context }, cleanUpAfterExecution: cleanUp)
    var samples: [Sample] = []
    samples.reserveCapacity(performs)
    for perform in 0..<performs {
        let before = stack.statistics
        let start = DispatchTime.now().uptimeNanoseconds
        // The working set: one author per perform, in turn, reached by a fetch, and their books
        // reached through the relationship.
        let name = authorName(perform % workingSet)
        let pages = try container.perform { context in
            guard let author = try context.fetchOne(Author.all.where(\Author.name == name)) else { return 0 }
            var pages = 0
            for book in author.books { pages += try book.decode(\.pages) }
            return pages
        }
        precondition(pages > 0, "the working set reached no book")
        let delta = stack.statistics.since(before)
        samples.append(
            Sample(
                perform: perform, residentBytes: ProcessMemory.resident, rowsRead: delta.rowsRead,
                statements: delta.statementsExecuted,
                seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9))
        progress(perform + 1, performs)
    }
    return samples
}
