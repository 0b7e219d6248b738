import CLibPQ
import SkerryCore

/// Statements sent one after another without waiting for each answer (libpq's pipeline mode),
/// each answer handed to its callback in order: a bulk write costs a few round trips instead of
/// one per row.
///
/// Statements are sent in batches of at most ``batchSize``; after each batch the client reads the
/// batch's answers, so that neither side's buffers fill while the other waits (libpq's blocking
/// mode would otherwise deadlock on very large pipelines). The first failing statement throws
/// from ``send(_:_:onResult:)`` or ``finish()``: in a transaction, the caller rolls back.
final class PostgresPipeline {
    /// Statements sent before their answers are read.
    static let batchSize = 512

    private let connection: PostgresConnection
    /// The statements sent whose answers are not read yet.
    private var pending: [Pending] = []
    private var isActive = false
    /// Statements sent so far (the position of the next one).
    private var sentCount = 0
    /// Statements whose answers were read.
    private var readCount = 0
    /// The position (in sending order, from 0) of the statement that failed, once one did.
    private(set) var failedStatement: Int?
    /// The positions (in sending order) of the statements sent `expectingRows` that changed no
    /// row, in order; complete once ``finish()`` returned.
    private(set) var unchanged: [Int] = []

    private struct Pending {
        let sql: String
        /// Receives the answer; nil when only its row count (or nothing) matters.
        let onResult: ((PostgresResult) throws -> Void)?
        let expectsRows: Bool
        /// For the Parse of a statement prepared in the pipeline (not a statement of its own: it
        /// has no position), the statement it prepares.
        var prepares: PostgresStatement?
    }

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    /// Sends `sql` with `bindings`; `onResult` receives its answer, at the latest in ``finish()``.
    func send(
        _ sql: String, _ bindings: [AttributeValue],
        onResult: @escaping (PostgresResult) throws -> Void = { _ in }
    ) throws {
        try send(sql, Pending(sql: sql, onResult: onResult, expectsRows: false)) { writer in
            for value in bindings { try writer.append(value) }
        }
    }

    /// Sends `sql` with the parameters `encode` writes (straight into the connection's buffer).
    /// When `expectingRows`, a statement that changes no row is listed in ``unchanged``.
    func send(_ sql: String, expectingRows: Bool = false, encode: (inout ParameterWriter) throws -> Void) throws {
        try send(sql, Pending(sql: sql, onResult: nil, expectsRows: expectingRows), encode)
    }

    /// Sends `sql` with the parameters `encode` writes; `onResult` receives its answer (the rows
    /// it returns), at the latest in ``finish()``. When `expectingRows`, a statement that changes
    /// no row is listed in ``unchanged``.
    func send(
        _ sql: String, expectingRows: Bool, onResult: @escaping (PostgresResult) throws -> Void,
        encode: (inout ParameterWriter) throws -> Void
    ) throws {
        try send(sql, Pending(sql: sql, onResult: onResult, expectsRows: expectingRows), encode)
    }

    private func send(_ sql: String, _ entry: Pending, _ encode: (inout ParameterWriter) throws -> Void) throws {
        do {
            try queue(sql, entry, encode)
        } catch {
            // Still under way: the statement failed on this side (too many parameters, a value
            // its writer could not encode) with answers unread, one of which may be an earlier
            // statement's failure.
            guard isActive else { throw error }
            throw failure(error)
        }
    }

    private func queue(_ sql: String, _ entry: Pending, _ encode: (inout ParameterWriter) throws -> Void) throws {
        let statement: PostgresStatement
        var parse: (statement: PostgresStatement, text: String)?
        if let cached = connection.cachedStatement(sql) {
            statement = cached
        } else if let fresh = connection.statementToPrepareInPipeline(sql) {
            statement = fresh.statement // prepared by a Parse sent just before it
            parse = fresh
        } else {
            statement = try prepare(sql) // its parameters' types are learned before they are encoded
        }
        if !isActive {
            guard PQenterPipelineMode(connection.handle) == 1 else {
                if let parse { connection.forgetUnprepared(parse.statement) }
                throw connection.error(nil, sql: sql)
            }
            isActive = true
        }
        let handle = connection.handle
        if let parse {
            guard PQsendPrepare(handle, parse.statement.name, parse.text, 0, nil) == 1 else {
                connection.forgetUnprepared(parse.statement)
                throw sendFailure(sql)
            }
            pending.append(Pending(sql: sql, onResult: nil, expectsRows: false, prepares: parse.statement))
        }
        let sent = try connection.withParameters(for: statement, encode) { count, values, lengths, formats in
            // withCString: no C string copied for each statement, as the implicit conversion makes.
            statement.name.withCString { PQsendQueryPrepared(handle, $0, count, values, lengths, formats, 1) }
        }.get()
        guard sent == 1 else {
            throw sendFailure(sql)
        }
        pending.append(entry)
        sentCount += 1
        if pending.count >= Self.batchSize { try readBatch() }
    }

    /// The error of `sql`, which libpq could not queue (the statement after the ones sent so far),
    /// once the answers still due are read and the pipeline left (``failure(_:)``).
    private func sendFailure(_ sql: String) -> any Error {
        failure(connection.error(nil, sql: sql))
    }

    /// What to report when the statement after the ones sent so far failed before it reached the
    /// server with `error`: the answers still due are read and the pipeline left (the connection
    /// serves its next statement, or rolls back), and the first failure is reported, as
    /// everywhere in a pipeline: an earlier statement's, when one failed on the server (its
    /// position is then ``failedStatement``), otherwise `error` (at the position of the statement
    /// not sent). A drain that fails with no statement failing (a broken connection, which the
    /// pool then discards) leaves `error` to report.
    private func failure(_ error: any Error) -> any Error {
        let position = sentCount
        do {
            try drain()
        } catch let earlier where failedStatement != nil {
            return earlier
        } catch {
            // Nothing failed before: the statement's own error is the one to report.
        }
        failedStatement = position
        return error
    }

    /// Reads every answer still due and leaves pipeline mode.
    func finish() throws {
        try drain()
    }

    /// Prepares and describes `sql` (learning its parameters' types), in one round trip: within
    /// the pipeline under way, its Parse and Describe follow the statements sent so far and one
    /// synchronization point answers them all (where leaving the pipeline and then preparing
    /// would wait twice); the pipeline goes on after it. A synchronization point inside a
    /// transaction block keeps the transaction open; outside one it commits what came before, as
    /// leaving the pipeline would. Outside a pipeline (or when the statement cache must be
    /// emptied first), prepared on its own.
    private func prepare(_ sql: String) throws -> PostgresStatement {
        guard isActive, let plan = try connection.statementToDescribeInPipeline(sql) else {
            try drain()
            return try connection.statement(sql)
        }
        let handle = connection.handle
        guard PQsendPrepare(handle, plan.name, plan.text, 0, nil) == 1, PQsendDescribePrepared(handle, plan.name) == 1,
            PQpipelineSync(handle) == 1
        else {
            throw sendFailure(sql)
        }
        connection.waits += 1
        var firstError = readAnswers()
        // Then the Parse's answer and the Describe's (skipped by the server after an earlier failure).
        var parameterTypes: [UInt32]?
        for step in 0..<2 {
            let raw = PQgetResult(handle)
            if raw != nil { while let extra = PQgetResult(handle) { PQclear(extra) } }
            let status = PQresultStatus(raw)
            if status == PGRES_COMMAND_OK {
                if step == 1, let raw { parameterTypes = (0..<PQnparams(raw)).map { PQparamtype(raw, $0) } }
            } else if status != PGRES_PIPELINE_ABORTED, firstError == nil {
                firstError = connection.error(raw, sql: sql)
                failedStatement = sentCount
            }
            PQclear(raw)
        }
        do {
            try readSynchronization(firstError)
        } catch {
            isActive = false
            _ = PQexitPipelineMode(handle) // nothing is due: leaving cannot fail but on a broken connection, whose error is reported
            throw error
        }
        guard let parameterTypes else {
            // Not reached: a described statement answers with its parameters.
            let error = connection.error(nil, sql: sql)
            try drain()
            throw error
        }
        return connection.describedInPipeline(sql, name: plan.name, parameterTypes: parameterTypes, kept: plan.kept)
    }

    /// Reads the answers of every statement sent so far (a round trip: a flush request, then the
    /// wait for the answers).
    private func readBatch() throws {
        guard !pending.isEmpty else { return }
        guard PQsendFlushRequest(connection.handle) == 1, PQflush(connection.handle) == 0 else {
            throw connection.error(nil, sql: pending.first?.sql)
        }
        connection.waits += 1
        if let firstError = readAnswers() {
            try? drain() // the statement's error is the one to report; the drain only tidies up
            throw firstError
        }
    }

    /// Reads the answers of the pending statements, already sent and flushed, handing each to its
    /// callback; returns the first error (the statement's, or its callback's).
    private func readAnswers() -> (any Error)? {
        var firstError: (any Error)?
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        for entry in batch {
            let raw = PQgetResult(connection.handle)
            // Each statement's answer is followed by a NULL result that ends it.
            if raw != nil { while let extra = PQgetResult(connection.handle) { PQclear(extra) } }
            let status = PQresultStatus(raw)
            if let prepared = entry.prepares {
                // A Parse: its statement (the next one) failing or skipped, the server has none.
                if status != PGRES_COMMAND_OK {
                    connection.forgetUnprepared(prepared)
                    if status != PGRES_PIPELINE_ABORTED, firstError == nil {
                        firstError = connection.error(raw, sql: entry.sql)
                        failedStatement = readCount
                    }
                }
                PQclear(raw)
                continue
            }
            let position = readCount
            readCount += 1
            if status == PGRES_PIPELINE_ABORTED {
                PQclear(raw)
                continue // skipped by the server after an earlier failure
            }
            if let raw, entry.onResult == nil, status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                // Only the row count matters: read in place, no result object.
                // A pipelined statement's time is not its own (it waits behind the batch): traced with none.
                connection.record(raw, entry.sql, connection.counters?.traceStart)
                if firstError == nil, entry.expectsRows, PostgresResult.affectedRows(raw) == 0 { unchanged.append(position) }
                PQclear(raw)
                continue
            }
            do {
                let result = try connection.checked(raw, sql: entry.sql)
                connection.record(result, entry.sql, connection.counters?.traceStart)
                if firstError == nil {
                    if entry.expectsRows, result.affectedRows == 0 { unchanged.append(position) }
                    try entry.onResult?(result)
                }
            } catch {
                if firstError == nil {
                    firstError = error
                    failedStatement = position
                }
            }
        }
        return firstError
    }

    /// Sends the synchronization point, reads every pending answer and the synchronization's, and
    /// leaves pipeline mode: one round trip (the answers and the synchronization come back in one
    /// wait, not a flush request's and then the synchronization's).
    private func drain() throws {
        guard isActive else { return }
        guard PQpipelineSync(connection.handle) == 1 else {
            // libpq could not queue the Sync (out of memory, or a broken socket): no answer will
            // be read, so whether the server prepared the statements whose Parse is pending is
            // unknown. They leave the cache (a statement kept there must exist on the server;
            // one the server has and the cache forgot is only prepared again under a new name).
            for entry in pending { if let prepared = entry.prepares { connection.forgetUnprepared(prepared) } }
            pending.removeAll()
            isActive = false
            throw connection.error(nil, sql: nil)
        }
        connection.waits += 1
        let firstError = readAnswers()
        do {
            try readSynchronization(nil)
        } catch {
            isActive = false
            throw firstError ?? error
        }
        isActive = false
        guard PQexitPipelineMode(connection.handle) == 1 else {
            throw firstError ?? connection.error(nil, sql: nil)
        }
        if let firstError { throw firstError }
    }

    /// Reads up to the answer of the synchronization point sent last (the server skipped to it
    /// after a failure), then throws `firstError` if there is one, or the connection's error when
    /// it broke first.
    private func readSynchronization(_ firstError: (any Error)?) throws {
        while true {
            guard let raw = PQgetResult(connection.handle) else {
                if connection.isHealthy { continue }
                throw firstError ?? connection.error(nil, sql: nil)
            }
            let status = PQresultStatus(raw)
            PQclear(raw)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if let firstError { throw firstError }
    }
}

extension PostgresConnection {
    /// Runs `body` with a pipeline on this connection and reads every answer before returning.
    func pipeline<T>(_ body: (PostgresPipeline) throws -> T) throws -> T {
        let pipeline = PostgresPipeline(self)
        do {
            let result = try body(pipeline)
            try pipeline.finish()
            return result
        } catch {
            try? pipeline.finish() // the body's error is the one to report; this leaves pipeline mode
            throw error
        }
    }
}

extension PostgresConnection {
    /// Sends the `count` commands `send` queues (libpq's pipeline mode, so nothing leaves before
    /// the one Sync after them) and reads their answers: one round trip.
    ///
    /// Outside a transaction block the commands run in one implicit transaction. The server skips
    /// every command after a failed one.
    /// - Returns: the successful answers, in order, up to the first failure, and that failure
    ///   (nil only when all `count` commands succeeded).
    func roundTrip(
        _ count: Int, sql: String, _ send: (OpaquePointer) -> Bool
    ) -> (answers: [PostgresResult], failure: PostgresError?) {
        guard PQenterPipelineMode(handle) == 1 else { return ([], error(nil, sql: sql)) }
        var answers: [PostgresResult] = []
        var failure: PostgresError?
        let sent = send(handle)
        if PQpipelineSync(handle) == 1 {
            waits += 1
            if !sent { failure = error(nil, sql: sql) }
            // Each command's answer is followed by a NULL result that ends it; the Sync's answer
            // comes last. A command the server skipped answers PGRES_PIPELINE_ABORTED.
            while let raw = PQgetResult(handle) {
                let status = PQresultStatus(raw)
                if status == PGRES_PIPELINE_SYNC {
                    PQclear(raw)
                    break
                }
                while let extra = PQgetResult(handle) { PQclear(extra) }
                if failure == nil, status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                    answers.append(PostgresResult(raw, readsInPlace: readsResultsInPlace))
                    continue
                }
                if failure == nil, status != PGRES_PIPELINE_ABORTED { failure = error(raw, sql: sql) }
                PQclear(raw)
            }
        } else {
            failure = error(nil, sql: sql) // nothing was sent: the connection is broken
        }
        if PQexitPipelineMode(handle) != 1, failure == nil { failure = error(nil, sql: sql) }
        if answers.count < count, failure == nil { failure = error(nil, sql: sql) } // the connection ended early
        return (answers, failure)
    }
}
