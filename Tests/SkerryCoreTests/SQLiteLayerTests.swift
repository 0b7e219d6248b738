import Foundation
import Testing

@testable import SkerryCore

/// The SQLite layer: connections, statements, errors, value binding, pools, locking.
@Suite struct SQLiteLayerTests {

    // MARK: Helpers

    /// The SQLite store of a loaded stack (the first one).
    private func sqliteStore(_ stack: PersistentStack) throws -> SQLiteStore {
        try #require(stack.coordinator.loadedStores.first as? SQLiteStore)
    }

    /// The first column of the first row of `sql`, run on the pool's writer connection.
    private func writerScalar(_ pool: ConnectionPool, _ sql: String) throws -> String {
        try pool.write { connection in
            let statement = try connection.cachedStatement(sql)
            defer { statement.reset() }
            guard try statement.step() else { return "<no row>" }
            return statement.text(at: 0)
        }
    }

    /// `count(*)` of `table`, read on a reader connection of the pool.
    private func readerCount(_ pool: ConnectionPool, _ table: String) throws -> Int64 {
        try pool.read { connection in
            let statement = try connection.cachedStatement("SELECT count(*) FROM \(table)")
            defer { statement.reset() }
            _ = try statement.step()
            return statement.int64(at: 0)
        }
    }

    private func settings(busyTimeout: TimeInterval) -> ConnectionSettings {
        var settings = ConnectionSettings()
        settings.busyTimeout = busyTimeout
        return settings
    }

    // MARK: Journal and synchronous modes

    @Test func fileStoreIsInWALModeByDefault() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let url = directory.file("Test.sqlite")

        // The journal mode is recorded in the file: a separate connection sees it too.
        #expect(try rawSQL(url, "PRAGMA journal_mode") == [["wal"]])
        let pool = try sqliteStore(stack).pool
        #expect(try writerScalar(pool, "PRAGMA journal_mode") == "wal")
        #expect(try writerScalar(pool, "PRAGMA synchronous") == "1") // NORMAL

        // A save goes through the write-ahead log.
        try stack.viewContext.performAndWait {
            try stack.viewContext.insertBook("Dune")
            try stack.viewContext.save()
        }
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
    }

    @Test func journalAndSynchronousModesAreConfigurable() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Delete.sqlite")
        var description = StoreDescription(url: url)
        description.journalMode = .delete
        description.synchronous = .full
        let stack = PersistentStack(name: "Delete", model: Fixtures.model())
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()

        let pool = try sqliteStore(stack).pool
        #expect(try writerScalar(pool, "PRAGMA journal_mode") == "delete")
        #expect(try writerScalar(pool, "PRAGMA synchronous") == "2") // FULL
        #expect(try rawSQL(url, "PRAGMA journal_mode") == [["delete"]])

        try stack.viewContext.performAndWait {
            try stack.viewContext.insertBook("Dune")
            try stack.viewContext.save()
        }
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        #expect(try rawSQL(url, "SELECT title FROM Book") == [["Dune"]])
    }

    @Test(arguments: [(JournalMode.truncate, "truncate"), (.persist, "persist"), (.memory, "memory"), (.wal, "wal")])
    func everyJournalModeIsApplied(mode: JournalMode, expected: String) throws {
        let directory = TemporaryDirectory()
        var settings = ConnectionSettings()
        settings.journalMode = mode
        let pool = try openPool(location: .file(directory.file("j.sqlite").path), settings: settings)
        #expect(try writerScalar(pool, "PRAGMA journal_mode") == expected)
    }

    @Test(arguments: [(SynchronousMode.off, "0"), (.normal, "1"), (.full, "2"), (.extra, "3")])
    func everySynchronousModeIsApplied(mode: SynchronousMode, expected: String) throws {
        let directory = TemporaryDirectory()
        var settings = ConnectionSettings()
        settings.synchronous = mode
        let pool = try openPool(location: .file(directory.file("s.sqlite").path), settings: settings)
        #expect(try writerScalar(pool, "PRAGMA synchronous") == expected)
    }

    // MARK: Statement cache

    @Test func cachedStatementIsReused() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        let first = try connection.cachedStatement("SELECT ?")
        let second = try connection.cachedStatement("SELECT ?")
        #expect(first === second)
        let other = try connection.cachedStatement("SELECT ? + 1")
        #expect(other !== first)
        #expect(try connection.cachedStatement("SELECT ? + 1") === other)
    }

    @Test func cachedStatementComesBackResetWithBindingsCleared() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        let statement = try connection.cachedStatement("SELECT ?")
        try statement.bind(.int(42), at: 1)
        #expect(try statement.step())
        #expect(statement.int64(at: 0) == 42)

        // Taken again mid-iteration: it starts over, with no value bound.
        let again = try connection.cachedStatement("SELECT ?")
        #expect(again === statement)
        #expect(try again.step())
        #expect(again.isNull(at: 0))
        #expect(try !again.step())
    }

    // MARK: Errors

    @Test func preparingBadSQLReportsCodesMessageAndSQL() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        let sql = "SELEC 1 FROM nowhere"
        let error = try #require(throws: SQLiteError.self) { try connection.cachedStatement(sql) }
        #expect(error.resultCode == 1) // SQLITE_ERROR
        #expect(error.extendedResultCode == 1)
        #expect(error.message.contains("syntax error"))
        #expect(error.sql == sql)
        #expect(!error.isUniqueConstraintViolation)
        #expect(error.description.contains(sql))

        let missing = try #require(throws: SQLiteError.self) { try connection.cachedStatement("SELECT * FROM nope") }
        #expect(missing.message.contains("no such table: nope"))
        #expect(missing.sql == "SELECT * FROM nope")
    }

    @Test func executeErrorCarriesSQL() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        let error = try #require(throws: SQLiteError.self) { try connection.execute("CREATE TABLE (x)") }
        #expect(error.resultCode == 1)
        #expect(error.sql == "CREATE TABLE (x)")
        #expect(error.message.contains("syntax error"))
    }

    @Test func uniqueViolationHasExtendedCode2067() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        try connection.execute("CREATE TABLE t (x INTEGER UNIQUE)")
        let sql = "INSERT INTO t (x) VALUES (?)"
        try connection.cachedStatement(sql).run([.int(1)])
        let error = try #require(throws: SQLiteError.self) { try connection.cachedStatement(sql).run([.int(1)]) }
        #expect(error.resultCode == 19) // SQLITE_CONSTRAINT
        #expect(error.extendedResultCode == 2067) // SQLITE_CONSTRAINT_UNIQUE
        #expect(error.isUniqueConstraintViolation)
        #expect(error.message.contains("UNIQUE constraint failed: t.x"))
        #expect(error.sql == sql)

        // The statement is usable again after the failure.
        try connection.cachedStatement(sql).run([.int(2)])
        let count = try connection.cachedStatement("SELECT count(*) FROM t")
        _ = try count.step()
        #expect(count.int64(at: 0) == 2)
    }

    @Test func primaryKeyViolationIsAUniqueViolationButNotNullIsNot() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try connection.cachedStatement("INSERT INTO t VALUES (?, ?)").run([.int(1), .string("a")])

        let duplicate = try #require(throws: SQLiteError.self) {
            try connection.cachedStatement("INSERT INTO t VALUES (?, ?)").run([.int(1), .string("b")])
        }
        #expect(duplicate.extendedResultCode == 1555) // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(duplicate.isUniqueConstraintViolation)

        let notNull = try #require(throws: SQLiteError.self) {
            try connection.cachedStatement("INSERT INTO t VALUES (?, ?)").run([.int(2), .null])
        }
        #expect(notNull.resultCode == 19)
        #expect(notNull.extendedResultCode == 1299) // SQLITE_CONSTRAINT_NOTNULL
        #expect(!notNull.isUniqueConstraintViolation)
    }

    @Test func errorDerivesPrimaryCodeFromExtendedCode() {
        let error = SQLiteError(extendedResultCode: 2067, message: "m", sql: "INSERT")
        #expect(error.resultCode == 19)
        #expect(error.description.contains("2067"))
        #expect(error.description.contains("INSERT"))
        #expect(SQLiteError(extendedResultCode: 5, message: "busy").sql == nil)
    }

    @Test func openingAFolderAsDatabaseFails() throws {
        let directory = TemporaryDirectory()
        let error = try #require(throws: SQLiteError.self) {
            try SQLiteConnection(path: directory.url.path, readOnly: false, busyTimeout: 1)
        }
        #expect(error.resultCode == 14) // SQLITE_CANTOPEN
        #expect(error.message.contains(directory.url.path))
    }

    // MARK: Binding and reading values

    static let roundTripCases: [(AttributeValue, AttributeType)] = {
        let manyDigits = Decimal(string: "12345678901234567890.123456789012345678")!
        return [
            (.null, .string), (.null, .integer64), (.null, .binary), (.null, .uuid), (.null, .date),
            (.bool(true), .boolean), (.bool(false), .boolean),
            (.int(0), .integer64), (.int(Int64.min), .integer64), (.int(Int64.max), .integer64),
            (.int(-1), .integer64),
            (.int(Int64(Int16.min)), .integer16), (.int(Int64(Int16.max)), .integer16),
            (.int(Int64(Int32.min)), .integer32), (.int(Int64(Int32.max)), .integer32),
            (.double(0), .double), (.double(.pi), .double), (.double(-1.5e-300), .double),
            (.double(.greatestFiniteMagnitude), .double), (.double(.leastNonzeroMagnitude), .double),
            (.double(.infinity), .double), (.double(-.infinity), .double),
            (.double(Double(Float(0.1))), .float), (.double(1e15 + 0.5), .double),
            (.decimal(manyDigits), .decimal), (.decimal(-manyDigits), .decimal),
            (.decimal(Decimal(string: "0.000000000000000000000000000001")!), .decimal),
            (.decimal(0), .decimal), (.decimal(Decimal(string: "42")!), .decimal),
            (.date(Date(timeIntervalSince1970: 0)), .date),
            (.date(Date(timeIntervalSince1970: 1_700_000_000.123456)), .date),
            (.date(Date(timeIntervalSince1970: -1_000_000_000.5)), .date),
            (.date(Date(timeIntervalSinceReferenceDate: 0)), .date),
            (.string(""), .string), (.string("a\u{0}b\u{0}"), .string), (.string("\u{0}"), .string),
            (.string("👩‍👩‍👧‍👦 🇫🇷 ✓ ü 日本"), .string), (.string("e\u{301}"), .string),
            (.string("42"), .string), (.string("1.5"), .string), (.string("'; DROP TABLE v; --"), .string),
            (.string(String(repeating: "xyz", count: 100_000)), .string),
            (.data(Data()), .binary), (.data(Data([0, 0, 0])), .binary),
            (.data(Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })), .binary),
            (.uuid(UUID()), .uuid), (.uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!), .uuid),
            (.uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!), .uuid),
            (.url(URL(string: "https://example.com/a%20b?q=1&r=%C3%BC#frag")!), .url),
            (.url(URL(fileURLWithPath: "/tmp/some folder/file.txt")), .url),
            (.url(URL(string: "mailto:someone@example.com")!), .url),
        ]
    }()

    /// Exact equality, stricter than `==` where `==` is lenient (canonically equivalent strings).
    private func identical(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
        case (.date(let x), .date(let y)):
            return x.timeIntervalSince1970.bitPattern == y.timeIntervalSince1970.bitPattern
        default: return a == b
        }
    }

    @Test(arguments: roundTripCases)
    func valueBindsAndReadsBackUnchanged(value: AttributeValue, type: AttributeType) throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        try connection.execute("CREATE TABLE v (x \(SQLiteStore.columnType(type)))")
        try connection.cachedStatement("INSERT INTO v (x) VALUES (?)").run([value])

        let select = try connection.cachedStatement("SELECT x FROM v")
        #expect(try select.step())
        let read = try #require(select.value(at: 0, as: type))
        #expect(identical(read, value), "wrote \(value), read \(read)")
        #expect(try !select.step())

        // Bound as a parameter of a comparison, the value finds its own row.
        if !value.isNull {
            let find = try connection.cachedStatement("SELECT count(*) FROM v WHERE x = ?")
            try find.bind([value])
            _ = try find.step()
            #expect(find.int64(at: 0) == 1)
        }
    }

    @Test func emptyStringAndEmptyDataAreNotNull() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        try connection.execute("CREATE TABLE v (s TEXT, b BLOB)")
        try connection.cachedStatement("INSERT INTO v VALUES (?, ?)").run([.string(""), .data(Data())])
        let select = try connection.cachedStatement("SELECT typeof(s), typeof(b), length(s), length(b) FROM v")
        #expect(try select.step())
        #expect(select.text(at: 0) == "text")
        #expect(select.text(at: 1) == "blob")
        #expect(select.int64(at: 2) == 0)
        #expect(select.int64(at: 3) == 0)
    }

    @Test func embeddedNULIsStoredInFull() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        try connection.execute("CREATE TABLE v (s TEXT)")
        try connection.cachedStatement("INSERT INTO v VALUES (?)").run([.string("ab\u{0}cd")])
        let select = try connection.cachedStatement("SELECT length(CAST(s AS BLOB)) FROM v")
        #expect(try select.step())
        #expect(select.int64(at: 0) == 5)
    }

    @Test func valuesOfTheWrongStoredFormDoNotDecode() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        let select = try connection.cachedStatement("SELECT 'text', 70000, x'0102', 'not a number', 1.5")
        #expect(try select.step())
        #expect(select.value(at: 0, as: .integer64) == nil)
        #expect(select.value(at: 1, as: .integer16) == nil) // out of range
        #expect(select.value(at: 1, as: .integer32) == .int(70000))
        #expect(select.value(at: 2, as: .uuid) == nil) // not 16 bytes
        #expect(select.value(at: 3, as: .decimal) == nil)
        #expect(select.value(at: 4, as: .string) == nil)
        #expect(select.value(at: 4, as: .double) == .double(1.5))
    }

    /// Every attribute type through a whole stack: saved by one context, read by a fresh one,
    /// and read again after the file store is reopened.
    @Test(arguments: [StoreKind.file, .memory])
    func everyAttributeTypeRoundTripsThroughAStack(kind: StoreKind) throws {
        let uuid = UUID()
        let price = Decimal(string: "-98765432109876543210.0123456789")!
        let published = Date(timeIntervalSince1970: 1_234_567_890.25)
        let cover = Data([0, 255, 0, 1, 2, 0])
        let link = URL(string: "https://example.com/path?x=%20y#top")!
        let title = "Tit\u{0}le 📚"

        func check(_ context: ObjectContext) throws {
            try context.performAndWait {
                let books = try context.fetch(FetchRequest(entityName: "Book"))
                #expect(books.count == 1)
                let book = try #require(books.first)
                #expect(try book.value(forKey: "title", as: String.self) == title)
                #expect(try book.value(forKey: "year", as: Int32?.self) == Int32.min)
                #expect(try book.value(forKey: "pages", as: Int16?.self) == Int16.max)
                #expect(try book.value(forKey: "sales", as: Int64.self) == Int64.min)
                #expect(try book.value(forKey: "rating", as: Double?.self) == -.infinity)
                #expect(try book.value(forKey: "weight", as: Float?.self) == Float(0.1))
                #expect(try book.value(forKey: "price", as: Decimal?.self) == price)
                #expect(try book.value(forKey: "published", as: Date?.self) == published)
                #expect(try book.value(forKey: "inPrint", as: Bool.self) == false)
                #expect(try book.value(forKey: "cover", as: Data?.self) == cover)
                #expect(try book.value(forKey: "isbn", as: String?.self) == "")
                #expect(try book.value(forKey: "uuid", as: UUID?.self) == uuid)
                #expect(try book.value(forKey: "link", as: URL?.self) == link)
            }
        }

        let directory = TemporaryDirectory()
        do {
            let stack: PersistentStack
            switch kind {
            case .file: stack = try makeFileStack(directory)
            case .memory: stack = try makeMemoryStack()
            case .postgres: return // not among this test's arguments: the SQLite layer only
            }
            let writer = stack.newBackgroundContext()
            try writer.performAndWait {
                let book = try writer.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(Int32.min, forKey: "year")
                try book.setValue(Int16.max, forKey: "pages")
                try book.setValue(Int64.min, forKey: "sales")
                try book.setValue(-Double.infinity, forKey: "rating")
                try book.setValue(Float(0.1), forKey: "weight")
                try book.setValue(price, forKey: "price")
                try book.setValue(published, forKey: "published")
                try book.setValue(false, forKey: "inPrint")
                try book.setValue(cover, forKey: "cover")
                try book.setValue("", forKey: "isbn")
                try book.setValue(uuid, forKey: "uuid")
                try book.setValue(link, forKey: "link")
                try writer.save()
            }
            try check(stack.newBackgroundContext())
        }
        if kind == .file {
            let reopened = PersistentStack(name: "Test", model: Fixtures.model())
            reopened.persistentStoreDescriptions = [StoreDescription(url: directory.file("Test.sqlite"))]
            try reopened.loadPersistentStores()
            try check(reopened.newBackgroundContext())
        }
    }

    /// A date with sub-second precision that a user saves must compare equal after a fetch.
    @Test(arguments: [
        Date(timeIntervalSinceReferenceDate: 0.1),
        Date(timeIntervalSinceReferenceDate: 700_000_000.123456),
        Date(timeIntervalSince1970: 1_700_000_000.1),
    ])
    func datesReadBackEqual(date: Date) throws {
        let (stack, directory) = try makeStack(.file)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("Dated")
            try book.setValue(date, forKey: "published")
            try context.save()
        }
        let fresh = stack.newBackgroundContext()
        let read = try fresh.performAndWait {
            try fresh.fetch(FetchRequest(entityName: "Book")).first?.value(forKey: "published", as: Date?.self)
        }
        #expect(
            read == date, "saved \(date.timeIntervalSinceReferenceDate), read \(String(describing: read?.timeIntervalSinceReferenceDate))")
    }

    // MARK: Locking

    /// Another program's connection (a pool of its own) holding the write lock of the file at
    /// `path` in an open transaction, on a thread of its own, until ``release()``: the tests say
    /// when it lets go, so that no wait of theirs depends on how fast the machine is.
    private final class WriteLockHolder: Sendable {
        private let letGo = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
        /// Whether the holder committed; a writer that waited for it finds it true when done.
        let committed = Locked(false)

        /// Takes the lock with `begin` (by default inserting a row, x = 100, into `t`) and
        /// returns once it holds it.
        init(_ path: String, begin: String = "BEGIN IMMEDIATE; INSERT INTO t (x) VALUES (100)") throws {
            let holder = try openPool(location: .file(path), settings: ConnectionSettings())
            let taken = DispatchSemaphore(value: 0)
            let letGo = letGo, released = released, committed = committed
            Thread {
                defer { released.signal() }
                do {
                    try holder.write { connection in
                        try connection.execute(begin)
                        taken.signal()
                        // A guard against hanging only: the tests let go long before.
                        _ = letGo.wait(timeout: .now() + 120)
                        committed.set(true) // before the COMMIT: no writer gets the lock earlier
                        try connection.execute("COMMIT")
                    }
                } catch {
                    Issue.record("the lock holder failed: \(error)")
                    taken.signal()
                }
            }.start()
            taken.wait()
        }

        /// Commits, and returns once the holder's connection let go of the lock.
        func release() {
            letGo.signal()
            released.wait()
        }
    }

    /// Runs `write` on a thread of its own while `holder` holds the lock, and lets the holder go
    /// once the write has begun and had a quarter of a second to reach the lock. Returns the
    /// write's error (nil: it succeeded), whether it found the holder's commit done when it
    /// finished, and how long it took: at least that quarter of a second when it waited, since
    /// the holder does not let go sooner.
    private func writeWhileHeld(
        by holder: WriteLockHolder, _ write: @escaping @Sendable () throws -> Void
    ) throws -> (error: String?, afterCommit: Bool, waited: TimeInterval) {
        let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let outcome = Locked<(error: String?, afterCommit: Bool, waited: TimeInterval)?>(nil)
        Thread {
            let start = Date()
            started.signal()
            var failure: String?
            do { try write() } catch { failure = "\(error)" }
            outcome.set((failure, holder.committed.value, Date().timeIntervalSince(start)))
            finished.signal()
        }.start()
        started.wait()
        Thread.sleep(forTimeInterval: 0.25)
        holder.release()
        // The write proceeds when the lock is free, not when its busy timeout (30 s) runs out.
        try #require(finished.wait(timeout: .now() + 15) == .success, "the write did not finish after the lock was released")
        return try #require(outcome.value)
    }

    @Test func busyTimeoutMakesASecondWriterWait() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("busy.sqlite").path
        let waiting = try openPool(location: .file(path), settings: settings(busyTimeout: 30))
        try waiting.write { try $0.execute("CREATE TABLE t (x INTEGER)") }

        let holder = try WriteLockHolder(path)
        let outcome = try writeWhileHeld(by: holder) {
            try waiting.write { connection in
                try connection.writeTransaction {
                    try connection.cachedStatement("INSERT INTO t (x) VALUES (?)").run([.int(1)])
                }
            }
        }
        #expect(outcome.error == nil, "the second writer should have waited for the lock: \(outcome.error ?? "")")
        #expect(outcome.afterCommit)
        #expect(outcome.waited >= 0.2, "the second writer should have waited for the lock, waited \(outcome.waited) s")
        #expect(try readerCount(waiting, "t") == 2)
    }

    @Test func withoutBusyTimeoutASecondWriterFailsAtOnce() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("busy.sqlite").path
        let impatient = try openPool(location: .file(path), settings: settings(busyTimeout: 0))
        try impatient.write { try $0.execute("CREATE TABLE t (x INTEGER)") }

        // Held until the attempt is over, however long the machine takes to get there.
        let holder = try WriteLockHolder(path)
        let start = Date()
        let error = #expect(throws: SQLiteError.self) {
            try impatient.write { try $0.execute("BEGIN IMMEDIATE") }
        }
        let waited = Date().timeIntervalSince(start)
        holder.release()
        #expect(error?.resultCode == 5) // SQLITE_BUSY
        // At once: a busy timeout would have it wait (the default is 5 s) before failing.
        #expect(waited < 1, "waited \(waited) s")
        // Counted through a pool that waits: the holder's pool may still be closing its connection
        // (closing the last one checkpoints the WAL under a lock), and `impatient` would fail at once.
        let patient = try openPool(location: .file(path), settings: settings(busyTimeout: 2))
        #expect(try readerCount(patient, "t") == 1)
    }

    @Test func stackSaveWaitsForALockHeldByAnotherConnection() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shared.sqlite")
        var description = StoreDescription(url: url)
        description.busyTimeout = 30
        let stack = PersistentStack(name: "Shared", model: Fixtures.model())
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()

        // Another program's connection holds the write lock until the save has begun.
        let holder = try WriteLockHolder(url.path, begin: "BEGIN IMMEDIATE")
        let context = stack.newBackgroundContext()
        let outcome = try writeWhileHeld(by: holder) {
            try context.performAndWait {
                try context.insertBook("Patience")
                try context.save()
            }
        }
        #expect(outcome.error == nil, "the save should have waited for the lock: \(outcome.error ?? "")")
        #expect(outcome.afterCommit)
        #expect(outcome.waited >= 0.2, "the save should have waited for the lock, waited \(outcome.waited) s")
        #expect(try rawSQL(url, "SELECT title FROM Book") == [["Patience"]])
    }

    @Test func readersProceedWhileAWriteTransactionIsOpen() throws {
        let directory = TemporaryDirectory()
        let pool = try openPool(
            location: .file(directory.file("wal.sqlite").path),
            settings: settings(busyTimeout: 10))
        try pool.write { connection in
            try connection.execute("CREATE TABLE t (x INTEGER)")
            try connection.cachedStatement("INSERT INTO t (x) VALUES (?)").run([.int(1)])
        }

        let (during, elapsed) = try pool.write { connection in
            try connection.writeTransaction {
                try connection.cachedStatement("INSERT INTO t (x) VALUES (?)").run([.int(2)])
                let start = Date()
                // Reads on reader connections see the last commit, without waiting for this one.
                let counts = try (0..<3).map { _ in try readerCount(pool, "t") }
                return (counts, Date().timeIntervalSince(start))
            }
        }
        #expect(during == [1, 1, 1])
        // A reader that waited for the writer would wait out its busy timeout (10 s) and fail; the
        // bound tells that apart from a slow or loaded machine.
        #expect(elapsed < 5, "the reads took \(elapsed) s")
        #expect(try readerCount(pool, "t") == 2)
    }

    @Test func contextFetchesWhileAnotherConnectionHoldsAnOpenWriteTransaction() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Test.sqlite")
        var description = StoreDescription(url: url)
        description.busyTimeout = 10
        let stack = PersistentStack(name: "Test", model: Fixtures.model())
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Committed")
            try context.save()
        }

        let other = try openPool(location: .file(url.path), settings: settings(busyTimeout: 1))
        let titles = try other.write { connection in
            try connection.writeTransaction {
                try connection.execute("INSERT INTO Book (_version, title, sales, inPrint) VALUES (1, 'Uncommitted', 0, 1)")
                let start = Date()
                let reader = stack.newBackgroundContext()
                let titles = try reader.performAndWait {
                    try reader.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }
                }
                // A fetch waiting for the writer would wait out its busy timeout (10 s) and fail;
                // the bound tells that apart from a slow or loaded machine.
                #expect(Date().timeIntervalSince(start) < 5)
                return titles
            }
        }
        #expect(titles == ["Committed"])
        let after = stack.newBackgroundContext()
        let count = try after.performAndWait { try after.count(for: FetchRequest(entityName: "Book")) }
        #expect(count == 2)
    }

    /// Reads on a reader connection must start from the latest commit each time, whatever
    /// statement ran on that connection before.
    @Test func countAndFetchSeeChangesSavedByAnotherContext() throws {
        let (stack, directory) = try makeStack(.file)
        _ = directory
        let reader = stack.newBackgroundContext()
        let writer = stack.newBackgroundContext()
        let request = FetchRequest(entityName: "Book")

        #expect(try reader.performAndWait { try reader.count(for: request) } == 0)
        try writer.performAndWait {
            try writer.insertBook("One")
            try writer.save()
        }
        #expect(try reader.performAndWait { try reader.count(for: request) } == 1)
        try writer.performAndWait {
            try writer.insertBook("Two")
            try writer.save()
        }
        let titles = try reader.performAndWait {
            try reader.fetch(request).map { try $0.value(forKey: "title", as: String.self) }
        }
        #expect(titles.sorted() == ["One", "Two"])
    }

    @Test func readTransactionSeesOneSnapshot() throws {
        let directory = TemporaryDirectory()
        let pool = try openPool(
            location: .file(directory.file("snap.sqlite").path),
            settings: settings(busyTimeout: 1))
        try pool.write { connection in
            try connection.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
        }
        let counts = try pool.read { reader in
            func count() throws -> Int64 {
                let statement = try reader.cachedStatement("SELECT count(*) FROM t")
                defer { statement.reset() }
                _ = try statement.step()
                return statement.int64(at: 0)
            }
            let before = try count()
            try pool.write { try $0.execute("INSERT INTO t VALUES (2)") }
            return (before, try count())
        }
        #expect(counts.0 == 1)
        #expect(counts.1 == 1)
        #expect(try readerCount(pool, "t") == 2)
    }

    @Test func inMemoryPoolsAreSeparateDatabases() throws {
        let a = try openPool(location: .memory, settings: ConnectionSettings())
        let b = try openPool(location: .memory, settings: ConnectionSettings())
        try a.write { try $0.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
        #expect(try readerCount(a, "t") == 1)
        #expect(throws: SQLiteError.self) { try readerCount(b, "t") }
    }

    @Test func failedWriteTransactionRollsBack() throws {
        let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: 1)
        try connection.execute("CREATE TABLE t (x INTEGER UNIQUE)")
        #expect(throws: SQLiteError.self) {
            try connection.writeTransaction {
                try connection.cachedStatement("INSERT INTO t VALUES (?)").run([.int(1)])
                try connection.cachedStatement("INSERT INTO t VALUES (?)").run([.int(1)])
            }
        }
        #expect(!connection.isInTransaction)
        let count = try connection.cachedStatement("SELECT count(*) FROM t")
        _ = try count.step()
        #expect(count.int64(at: 0) == 0)
    }
}
