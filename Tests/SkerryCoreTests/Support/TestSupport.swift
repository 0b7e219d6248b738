import Foundation
import SkerryPostgres
// Every file of this target sees the shared test kit without importing it.
@_exported import SkerryTestSupport
import Testing

@testable import SkerryCore

enum Fixtures {
    /// An entity with an attribute of every type, optional and required, and a uniqueness constraint.
    static func bookEntity(extraAttributes: [AttributeDescription] = []) -> EntityDescription {
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("title", .string),
                AttributeDescription("year", .integer32, isOptional: true),
                AttributeDescription("pages", .integer16, isOptional: true),
                AttributeDescription("sales", .integer64, defaultValue: Int64(0)),
                AttributeDescription("rating", .double, isOptional: true),
                AttributeDescription("weight", .float, isOptional: true),
                AttributeDescription("price", .decimal, isOptional: true),
                AttributeDescription("published", .date, isOptional: true),
                AttributeDescription("inPrint", .boolean, defaultValue: true),
                AttributeDescription("cover", .binary, isOptional: true),
                AttributeDescription("isbn", .string, isOptional: true),
                AttributeDescription("uuid", .uuid, isOptional: true),
                AttributeDescription("link", .url, isOptional: true),
            ] + extraAttributes, uniquenessConstraints: [["isbn"]], indexes: [IndexDescription(["year"])])
    }

    static func authorEntity() -> EntityDescription {
        EntityDescription(
            name: "Author",
            attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("born", .integer64, isOptional: true),
            ])
    }

    static func model() -> ObjectModel {
        try! ObjectModel(entities: [bookEntity(), authorEntity()])
    }
}

/// A stack over a SQLite file in `directory`.
func makeFileStack(
    _ directory: TemporaryDirectory, model: ObjectModel = Fixtures.model(),
    name: String = "Test"
) throws -> PersistentStack {
    let stack = PersistentStack(name: name, model: model)
    stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("\(name).sqlite"))]
    try stack.loadPersistentStores()
    return stack
}

/// A stack over an in-memory store.
func makeMemoryStack(model: ObjectModel = Fixtures.model()) throws -> PersistentStack {
    let stack = PersistentStack(name: "Memory", model: model)
    stack.persistentStoreDescriptions = [.inMemory()]
    try stack.loadPersistentStores()
    return stack
}

/// Both kinds of store, for tests that must hold on each.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case file, memory, postgres
    var testDescription: String { rawValue }

    /// Every kind the tests can run on here: the PostgreSQL kind only when a test server was
    /// started (`scripts/postgres-server.sh run swift test`, which sets `SKERRY_TEST_POSTGRES`).
    static var allCases: [StoreKind] {
        PostgresTestServer.isAvailable ? [.file, .memory, .postgres] : [.file, .memory]
    }
}

/// The PostgreSQL test server's stores (SkerryTestSupport's PostgresTestServer), as the core
/// suites open them: four connections, a schema of their own.
enum PostgresTestStore {
    /// A description of a store in `schema` (a new, empty one by default) of the test server.
    static func newDescription(schema: String = PostgresTestServer.newSchema(), propagatesChanges: Bool = false) throws
        -> StoreDescription
    {
        try PostgresTestServer.description(schema: schema, maximumConnections: 4, propagatesChanges: propagatesChanges)
    }
}

/// A stack of `kind`, with the temporary folder it lives in (nil for memory). Keep the folder
/// alive as long as the stack.
func makeStack(_ kind: StoreKind, model: ObjectModel = Fixtures.model()) throws -> (PersistentStack, TemporaryDirectory?) {
    switch kind {
    case .file:
        let directory = TemporaryDirectory()
        return (try makeFileStack(directory, model: model), directory)
    case .memory:
        return (try makeMemoryStack(model: model), nil)
    case .postgres:
        return (try PostgresTestServer.stack(model, PostgresTestServer.newSchema(), maximumConnections: 4), nil)
    }
}

extension ObjectContext {
    /// Inserts a Book with a title and optional fields.
    @discardableResult
    func insertBook(_ title: String, year: Int32? = nil, isbn: String? = nil) throws -> EntityObject {
        let book = try insert(entityName: "Book")
        try book.setValue(title, forKey: "title")
        try book.setValue(year, forKey: "year")
        try book.setValue(isbn, forKey: "isbn")
        return book
    }
}

/// Runs SQL on a separate raw connection to a store file, to look at or tamper with what is on
/// disk. Returns every row as text ("NULL" for NULL).
@discardableResult
func rawSQL(_ url: URL, _ sql: String) throws -> [[String]] {
    let connection = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: 5)
    let statement = try connection.cachedStatement(sql)
    var rows: [[String]] = []
    while try statement.step() {
        let count = Int(sqlite3ColumnCount(statement))
        rows.append((0..<count).map { statement.isNull(at: Int32($0)) ? "NULL" : statement.text(at: Int32($0)) })
    }
    return rows
}

/// Opens a connection pool the way a store does: connections first, then the file's journal mode.
func openPool(location: DatabaseLocation, settings: ConnectionSettings) throws -> ConnectionPool {
    let pool = try ConnectionPool(location: location, settings: settings)
    try pool.applyJournalMode()
    return pool
}
