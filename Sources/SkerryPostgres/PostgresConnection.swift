import CLibPQ
import Foundation
import SkerryCore

/// A prepared statement of one connection: its server-side name and the parameter types the
/// server inferred (values are encoded for them).
final class PostgresStatement {
    let name: String
    let sql: String
    let parameterTypes: [UInt32]

    init(name: String, sql: String, parameterTypes: [UInt32]) {
        self.name = name
        self.sql = sql
        self.parameterTypes = parameterTypes
    }
}

/// One PostgreSQL connection through libpq, with its cache of prepared statements.
///
/// Synchronous, like the SQLite binding: a context's queue blocks on the round trip. Not
/// thread-safe and deliberately not `Sendable`: it is reached only through
/// ``PostgresConnectionPool``, inside the closure that received it.
///
/// Every value is bound as a parameter of a prepared statement, in PostgreSQL's binary format
/// where the client knows it; results come back in binary format.
final class PostgresConnection {
    /// The `PGconn*` handle.
    let handle: OpaquePointer
    /// The statements prepared on this connection, by SQL text.
    private var statements: [String: PostgresStatement] = [:]
    private var statementCounter = 0
    /// Beyond this many prepared statements the cache is emptied (and the server's statements
    /// deallocated), so that one-off SQL cannot grow it without bound.
    static let statementCacheLimit = 256

    /// The most parameters a statement may have. The server takes 65,535, but libpq (before
    /// version 17) treats the description of a statement with more than about 7,500 parameters as
    /// a lost connection; a statement with more is refused before it is sent. (The stores bind a
    /// long list as one parameter.)
    static let maximumParameters = 7_000
    /// Where executions are counted (nil: not counted).
    let counters: StoreCounters?
    /// The times the client waited for the server's answers (round trips) on this connection:
    /// what tests count to show that a write costs the waits it should.
    var waits = 0
    /// Whether results are read in place when libpq's layout allows (``PostgresResultLayout``);
    /// false reads every result of this connection through libpq's calls (the tests run the
    /// store's reads both ways).
    var readsResultsInPlace = true
    /// Raw SQL conditions already checked on this connection (entity name, NUL, condition).
    var checkedConditions: Set<String> = []
    /// The buffer every execution's parameters are encoded into (libpq copies them before it
    /// returns), reused so that a statement's parameters cost no allocation.
    private var parameters: EncodedParameters? = EncodedParameters(capacity: 16)
    /// The statement used last: a bulk write sends one statement many times, and comparing its
    /// SQL with the same string is cheaper than hashing it for the cache.
    private var lastStatement: PostgresStatement?

    /// Opens a connection.
    /// - Parameters:
    ///   - connectionString: a libpq connection string, as `key=value` pairs
    ///     (`host=db.example port=5432 dbname=app sslmode=verify-full`) or a URI
    ///     (`postgresql://app@db.example/app?sslmode=require`). Unset parameters come from the
    ///     `PG*` environment variables and libpq's defaults, as for `psql`.
    ///   - counters: where executions are counted.
    /// - Throws: ``PostgresError`` with ``SQLState/unableToConnect`` when the string is malformed
    ///   or the server cannot be reached, or the server's own error (a wrong password is
    ///   `28P01`, a missing database `3D000`).
    init(connectionString: String, counters: StoreCounters? = nil) throws(PostgresError) {
        try PostgresConnectionString.validate(connectionString)
        guard let connection = PQconnectdb(connectionString) else {
            throw PostgresError(sqlState: .unableToConnect, message: "libpq could not allocate a connection.")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.clientMessage(connection)
            PQfinish(connection)
            throw PostgresError(sqlState: Self.connectFailureState(message), message: message)
        }
        handle = connection
        self.counters = counters
        PQsetNoticeProcessor(handle, { _, _ in }, nil) // NOTICEs (IF EXISTS skips) are not errors
    }

    deinit { PQfinish(handle) }

    /// libpq's last message for `connection`, without its trailing newline.
    static func clientMessage(_ connection: OpaquePointer) -> String {
        String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The code of a failed connection attempt. libpq reports the server's refusal as text only;
    /// the common refusals get PostgreSQL's codes so that they can be matched.
    private static func connectFailureState(_ message: String) -> SQLState {
        if message.contains("password authentication failed") { return .invalidPassword }
        if message.contains("does not exist") && message.contains("database") { return .invalidCatalogName }
        if message.contains("no pg_hba.conf entry") || (message.contains("role") && message.contains("does not exist")) {
            return .invalidAuthorizationSpecification
        }
        if message.contains("the database system is starting up") || message.contains("shutting down") { return .cannotConnectNow }
        return .unableToConnect
    }

    /// Whether the connection is still usable.
    var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether the connection can serve another caller: usable, outside any transaction, and out
    /// of pipeline mode (a pipeline whose Sync or exit failed leaves it in; no synchronous
    /// statement runs there).
    var isReusable: Bool { isHealthy && !isInTransaction && PQpipelineStatus(handle) == PQ_PIPELINE_OFF }

    /// Whether a transaction is open (or failed and not yet rolled back).
    var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Whether TLS protects the connection.
    var usesTLS: Bool { PQsslInUse(handle) != 0 }

    /// The server's version number (for example 150018 for 15.18).
    var serverVersion: Int { Int(PQserverVersion(handle)) }

    // MARK: Errors

    /// The error of a failed result (or of the connection, when there is no result).
    func error(_ result: OpaquePointer?, sql: String?) -> PostgresError {
        guard let result, let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) else {
            let message = Self.clientMessage(handle)
            return PostgresError(
                sqlState: isHealthy ? .internalError : .connectionFailure,
                message: message.isEmpty ? "The connection failed." : message, sql: sql)
        }
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        return PostgresError(
            sqlState: SQLState(rawValue: String(cString: code)),
            message: field("M") ?? "",
            detail: field("D"), hint: field("H"), sql: sql,
            severity: field("V") ?? field("S"),
            constraint: field("n"), table: field("t"), column: field("c"))
    }

    /// Takes ownership of `result` if it succeeded, or throws its error (freeing it).
    func checked(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
        let status = PQresultStatus(result)
        guard let result, status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_SINGLE_TUPLE else {
            let error = error(result, sql: sql)
            PQclear(result)
            throw error
        }
        return PostgresResult(result, readsInPlace: readsResultsInPlace)
    }

    // MARK: Statements

    /// Runs SQL without parameters (DDL, transaction control; several statements allowed).
    func execute(_ sql: String) throws(PostgresError) {
        let start = counters?.traceStart
        waits += 1
        let result = try checked(PQexec(handle, sql), sql: sql)
        record(result, sql, start)
    }

    /// Counts one execution (and traces it, when statements are traced).
    func record(_ result: PostgresResult, _ sql: String, _ start: ContinuousClock.Instant?) {
        record(result.handle, sql, start)
    }

    /// Counts the execution whose result is `handle` (and traces it, when statements are traced).
    func record(_ handle: OpaquePointer, _ sql: String, _ start: ContinuousClock.Instant?) {
        guard let counters else { return }
        // A SELECT's command tag carries its row count too: those rows were read, not written.
        let isSelect = PQcmdStatus(handle).map { strncmp($0, "SELECT", 6) == 0 } ?? false
        let written = isSelect ? 0 : PostgresResult.affectedRows(handle), read = isSelect ? Int(PQntuples(handle)) : 0
        counters.record(rowsRead: read, rowsWritten: written)
        if let start { counters.traceFinished(sql, start: start, rowsRead: read, rowsWritten: written) }
    }

    /// The prepared statement for `sql`, preparing it on first use (one round trip, which also
    /// learns the parameter types the server inferred). `?` marks parameters, as in SQLite; they
    /// are numbered for PostgreSQL when the statement is prepared.
    ///
    /// A statement with more parameters than the stores keep prepared
    /// (`SQLBuilder.keepsPrepared(parameterCount:)`: a long `IN` list) is prepared as the
    /// connection's unnamed statement, which the next one replaces: run it before preparing
    /// another. `named` keeps any statement, for callers that refer to it by name in SQL.
    func statement(_ sql: String, named: Bool = false) throws(PostgresError) -> PostgresStatement {
        if let statement = cachedStatement(sql) { return statement }
        return try prepare(sql, named: named, running: false).statement
    }

    /// Prepares `sql` and, in the same round trip (``roundTrip(_:sql:_:)``: Parse, then Describe or
    /// Bind/Execute), learns the parameter types the server inferred, or, when the statement has
    /// no parameters and `running`, runs it. The statement is cached once the server prepared it,
    /// even when running it failed.
    /// - Returns: the statement, and its execution's result when it ran.
    private func prepare(_ sql: String, named: Bool, running: Bool) throws(PostgresError) -> (
        statement: PostgresStatement, result: PostgresResult?
    ) {
        let (text, parameterCount, _) = PostgresSQL.scanParameters(sql)
        try Self.checkParameterCount(parameterCount, sql: sql)
        let kept = named || SQLBuilder.keepsPrepared(parameterCount: parameterCount)
        if kept && statements.count >= Self.statementCacheLimit { try clearStatementCache() }
        let name = kept ? newStatementName() : ""
        // A parameter is written `$n`: text without a `$` has none, so nothing to describe, and
        // it can run at once.
        let describes = text.utf8.contains(UInt8(ascii: "$"))
        let runs = running && !describes
        let (answers, failure) = roundTrip(1 + (describes ? 1 : 0) + (runs ? 1 : 0), sql: sql) { handle in
            PQsendPrepare(handle, name, text, 0, nil) == 1
                && (!describes || PQsendDescribePrepared(handle, name) == 1)
                && (!runs || PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 1) == 1)
        }
        guard !answers.isEmpty else { throw failure ?? error(nil, sql: sql) } // not prepared
        var types: [UInt32] = []
        if describes {
            guard answers.count > 1 else { throw failure ?? error(nil, sql: sql) } // not described: prepared again next time
            types = (0..<PQnparams(answers[1].handle)).map { PQparamtype(answers[1].handle, $0) }
        }
        let statement = PostgresStatement(name: name, sql: sql, parameterTypes: types)
        if kept {
            statements[sql] = statement
            lastStatement = statement
        }
        if let failure { throw failure }
        return (statement, runs ? answers.last : nil)
    }

    /// A new statement for `sql` when it can be prepared inside a pipeline, its Parse sent with
    /// the statements around it (no round trip of its own): it has no parameters (nothing to
    /// learn from the server before it runs) and the cache has room. It is cached at once, before
    /// the server prepared it; ``forgetUnprepared(_:)`` drops it if the Parse failed or was
    /// skipped. Nil: prepare it with ``statement(_:named:)``.
    /// - Returns: the statement and the text to prepare (parameters numbered for PostgreSQL).
    func statementToPrepareInPipeline(_ sql: String) -> (statement: PostgresStatement, text: String)? {
        guard !sql.utf8.contains(UInt8(ascii: "?")), !sql.utf8.contains(UInt8(ascii: "$")),
            statements.count < Self.statementCacheLimit
        else { return nil }
        let statement = PostgresStatement(name: newStatementName(), sql: sql, parameterTypes: [])
        statements[sql] = statement
        lastStatement = statement
        return (statement, sql)
    }

    /// Throws `program_limit_exceeded` (54000) when a statement has more than
    /// ``maximumParameters`` parameters.
    private static func checkParameterCount(_ parameterCount: Int, sql: String) throws(PostgresError) {
        guard parameterCount > maximumParameters else { return }
        throw PostgresError(
            sqlState: "54000", // program_limit_exceeded
            message:
                "The statement has \(parameterCount) parameters; the PostgreSQL store takes at most \(maximumParameters) in one statement.",
            sql: sql)
    }

    /// The name and text (parameters numbered for PostgreSQL) of a statement for `sql` to prepare
    /// and describe inside a pipeline (``PostgresPipeline``), and whether the cache keeps it (as
    /// ``statement(_:named:)`` would: a statement with a long `IN` list is the connection's
    /// unnamed one). Nil when the cache is full: its emptying (`DEALLOCATE ALL`) cannot run in a
    /// pipeline, so ``statement(_:named:)`` prepares it. ``describedInPipeline(_:)`` makes the
    /// statement once the server described it.
    /// - Throws: when `sql` has more parameters than ``maximumParameters``.
    func statementToDescribeInPipeline(_ sql: String) throws(PostgresError) -> (name: String, text: String, kept: Bool)? {
        let (text, parameterCount, _) = PostgresSQL.scanParameters(sql)
        try Self.checkParameterCount(parameterCount, sql: sql)
        let kept = SQLBuilder.keepsPrepared(parameterCount: parameterCount)
        if kept && statements.count >= Self.statementCacheLimit { return nil }
        return (kept ? newStatementName() : "", text, kept)
    }

    /// The statement a pipeline prepared and described (``statementToDescribeInPipeline(_:)``),
    /// with the parameter types the server inferred; cached when `kept`.
    func describedInPipeline(
        _ sql: String, name: String, parameterTypes: [UInt32], kept: Bool
    ) -> PostgresStatement {
        let statement = PostgresStatement(name: name, sql: sql, parameterTypes: parameterTypes)
        if kept {
            statements[sql] = statement
            lastStatement = statement
        }
        return statement
    }

    /// Drops `statement` from the cache: its Parse (``statementToPrepareInPipeline(_:)``) did not
    /// run, so the server does not have it.
    func forgetUnprepared(_ statement: PostgresStatement) {
        if statements[statement.sql] === statement { statements[statement.sql] = nil }
        if lastStatement === statement { lastStatement = nil }
    }

    /// Prepares `sql` now (one round trip), before a pipeline that will run it, unless it is
    /// prepared already or a pipeline prepares it without waiting
    /// (``statementToPrepareInPipeline(_:)``). A pipeline that meets it unprepared also prepares it
    /// in one round trip (answered with the statements sent before it), but inside the pipeline's
    /// transaction, after its locks: preparing ahead keeps that wait out of the transaction. A
    /// statement the cache would not keep is left to the pipeline.
    func prepareAhead(_ sql: String) throws(PostgresError) {
        try prepareAhead(CollectionOfOne(sql))
    }

    /// Prepares now, in one round trip (each one's Parse and Describe, then one synchronization
    /// point), every statement of `sqls` that preparing it alone ahead would prepare: the
    /// statements of the pipelines a write is about to send.
    func prepareAhead(_ sqls: some Sequence<String>) throws(PostgresError) {
        var plans: [(sql: String, text: String)] = []
        for sql in sqls where cachedStatement(sql) == nil && !plans.contains(where: { $0.sql == sql }) {
            guard sql.utf8.contains(UInt8(ascii: "?")) || sql.utf8.contains(UInt8(ascii: "$")) else { continue }
            let (text, parameterCount, _) = PostgresSQL.scanParameters(sql)
            // Too many parameters: the pipeline reports it.
            guard parameterCount <= Self.maximumParameters, SQLBuilder.keepsPrepared(parameterCount: parameterCount) else { continue }
            plans.append((sql, text))
        }
        // One alone, or more than the cache has room for (emptying it is an exchange of its own).
        if plans.count < 2 || statements.count + plans.count > Self.statementCacheLimit {
            for plan in plans { _ = try statement(plan.sql) }
            return
        }
        let names = plans.map { _ in newStatementName() }
        let (answers, failure) = roundTrip(plans.count * 2, sql: plans[0].sql) { handle in
            zip(plans, names).allSatisfy { plan, name in
                PQsendPrepare(handle, name, plan.text, 0, nil) == 1 && PQsendDescribePrepared(handle, name) == 1
            }
        }
        // Each statement answers its Parse, then its Describe, up to the first failure.
        let described = answers.count / 2
        for index in 0..<described {
            let description = answers[2 * index + 1].handle
            let types = (0..<PQnparams(description)).map { PQparamtype(description, $0) }
            let statement = PostgresStatement(name: names[index], sql: plans[index].sql, parameterTypes: types)
            statements[statement.sql] = statement
            lastStatement = statement
        }
        if let failure {
            // The error of the first statement not described (the round trip names the first).
            throw PostgresError(
                sqlState: failure.sqlState, message: failure.message, detail: failure.detail, hint: failure.hint,
                sql: plans[min(described, plans.count - 1)].sql, severity: failure.severity, constraint: failure.constraint,
                table: failure.table, column: failure.column)
        }
    }

    /// A statement name this connection has not used.
    func newStatementName() -> String {
        statementCounter += 1
        return "skerry_\(statementCounter)"
    }

    /// The prepared statement for `sql` if this connection already has it.
    func cachedStatement(_ sql: String) -> PostgresStatement? {
        if let lastStatement, lastStatement.sql == sql { return lastStatement }
        lastStatement = statements[sql]
        return lastStatement
    }

    /// Deallocates every prepared statement of the connection.
    func clearStatementCache() throws(PostgresError) {
        statements.removeAll()
        lastStatement = nil
        try execute("DEALLOCATE ALL")
    }

    /// Calls `encode` to write `statement`'s parameters one by one straight into the connection's
    /// buffer (no array of values), then `body` with their count and libpq's arrays of values,
    /// lengths and formats, valid only during the call.
    /// - Returns: what `body` returned, or the error: a ``PostgresError`` when the count is not
    ///   the statement's or a value cannot be sent as its parameter's type, or what `encode` threw.
    func withParameters<T>(
        for statement: PostgresStatement, _ encode: (inout ParameterWriter) throws -> Void,
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) -> Result<T, any Error> {
        var writer = ParameterWriter(statement: statement, encoded: takeParameters())
        let result: Result<T, any Error>
        do {
            try encode(&writer)
            result = .success(try writer.finish(body))
        } catch {
            result = .failure(error)
        }
        parameters = writer.release()
        return result
    }

    /// The connection's parameter buffer, emptied, moved out (not copied) for one execution and
    /// put back after it; a new one if it is out (never: an execution does not start another).
    private func takeParameters() -> EncodedParameters {
        var encoded = parameters.take() ?? EncodedParameters()
        encoded.removeAll()
        return encoded
    }

    /// Runs `sql` as a prepared statement with `bindings` and returns its rows.
    @discardableResult
    func query(_ sql: String, _ bindings: [AttributeValue] = []) throws(PostgresError) -> PostgresResult {
        do {
            return try query(sql, runsUnprepared: bindings.isEmpty) { writer in
                for value in bindings { try writer.append(value) }
            }
        } catch let error as PostgresError {
            throw error
        } catch {
            // Not reached: appending values and running the statement throw PostgresErrors only.
            throw PostgresError(sqlState: .internalError, message: "\(error)", sql: sql)
        }
    }

    /// Runs `sql` as a prepared statement with the parameters `encode` writes (straight into the
    /// connection's buffer: no array of values) and returns its rows.
    /// - Throws: ``PostgresError``, or what `encode` throws.
    @discardableResult
    func query(_ sql: String, encode: (inout ParameterWriter) throws -> Void) throws -> PostgresResult {
        try query(sql, runsUnprepared: false, encode)
    }

    /// Runs `sql` as a prepared statement with the parameters `encode` writes. When
    /// `runsUnprepared` and the statement, not prepared yet, has no parameters, it is prepared
    /// and run in one round trip (`encode` is not called).
    private func query(
        _ sql: String, runsUnprepared: Bool, mayPrepareAgain: Bool = true, _ encode: (inout ParameterWriter) throws -> Void
    ) throws -> PostgresResult {
        let start = counters?.traceStart
        let statement: PostgresStatement
        if let cached = cachedStatement(sql) {
            statement = cached
        } else {
            let prepared = try prepare(sql, named: false, running: runsUnprepared)
            if let result = prepared.result {
                record(result, sql, start)
                return result
            }
            statement = prepared.statement
        }
        let handle = handle
        waits += 1
        let raw = try withParameters(for: statement, encode) { count, values, lengths, formats in
            statement.name.withCString { PQexecPrepared(handle, $0, count, values, lengths, formats, 1) }
        }.get()
        let result: PostgresResult
        do {
            result = try checked(raw, sql: sql)
        } catch {
            // Prepared before the types of its result's columns changed (a column altered by hand
            // or by another instance's migration), the statement is refused from then on: it is
            // prepared anew, once, outside a transaction (inside one, the refusal ended it).
            guard mayPrepareAgain, Self.isStalePlan(error), !isInTransaction else { throw error }
            try forget(statement)
            return try query(sql, runsUnprepared: runsUnprepared, mayPrepareAgain: false, encode)
        }
        record(result, sql, start)
        return result
    }

    /// Whether `error` is the server's refusal to run a prepared statement whose result's column
    /// types changed since it was prepared.
    static func isStalePlan(_ error: PostgresError) -> Bool {
        error.sqlState.rawValue == "0A000" && error.message.contains("cached plan must not change result type")
    }

    /// Drops `statement` from the cache and deallocates it on the server.
    private func forget(_ statement: PostgresStatement) throws(PostgresError) {
        statements[statement.sql] = nil
        if lastStatement === statement { lastStatement = nil }
        if !statement.name.isEmpty { try execute("DEALLOCATE \(SQLBuilder.quote(statement.name))") }
    }

    /// Runs a query that returns one integer and returns it; nil when it returns no row or NULL.
    func scalarInt64(_ sql: String, _ bindings: [AttributeValue] = []) throws(PostgresError) -> Int64? {
        let result = try query(sql, bindings)
        guard result.rowCount > 0, !result.isNull(0, 0) else { return nil }
        return result.int64(0, 0)
    }

    // MARK: Transactions

    /// The isolation level of the store's write transactions.
    static let writeIsolation = "READ COMMITTED"

    /// The statement that begins a write transaction, for a caller that sends it in a pipeline
    /// (with the write's statements: no round trip of its own).
    static let beginWriteSQL = "BEGIN ISOLATION LEVEL \(writeIsolation)"

    /// Runs `body` in a transaction, committing if it returns and rolling back if it throws, so
    /// that a failure leaves the database exactly as it was.
    /// - Parameter isolation: The transaction's isolation level and access mode. READ COMMITTED
    ///   whatever the server's or the connection string's `default_transaction_isolation`: the
    ///   store's writes read what another instance committed while they waited for a lock (the
    ///   history tracking check, optimistic locking's version checks).
    func transaction<T>(isolation: String = PostgresConnection.writeIsolation, _ body: () throws -> T) throws -> T {
        try execute("BEGIN ISOLATION LEVEL \(isolation)")
        return try transactionBegunInPipeline(body)
    }

    /// Rolls back the transaction a failed piece of work left open, when the connection is healthy
    /// and still in it. A failed rollback leaves the connection unhealthy or out of the
    /// transaction; the pool discards an unhealthy connection, and the work's error is the one
    /// to report, so the rollback's own is not thrown.
    func rollBackAfterFailure() {
        if isHealthy && isInTransaction { try? execute("ROLLBACK") }
    }

    /// Runs `body` in a write transaction that `body` begins itself, by sending ``beginWriteSQL``
    /// first in its pipeline (so that the `BEGIN` costs no round trip of its own), committing if
    /// it returns and rolling back if it throws (once the `BEGIN` ran: a failure before it leaves
    /// no transaction to roll back).
    func transactionBegunInPipeline<T>(_ body: () throws -> T) throws -> T {
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollBackAfterFailure()
            throw error
        }
    }
}
