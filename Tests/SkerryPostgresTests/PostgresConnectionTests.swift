import CLibPQ
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// The libpq binding against a real server: connection strings, TLS, typed errors, prepared
/// statements, values of every attribute type in native columns, pipelines and the pool.
@Suite(.postgres) struct PostgresConnectionTests {
    // MARK: Connection strings and TLS

    @Test func connectsWithKeyValueAndURIConnectionStrings() throws {
        let keyValue = try PostgresConnection(connectionString: PostgresTestServer.require())
        #expect(keyValue.serverVersion >= 100_000)
        let uri = try #require(PostgresTestServer.tcpURI)
        let overTCP = try PostgresConnection(connectionString: uri + "?application_name=skerry-tests&sslmode=disable")
        #expect(try overTCP.query("SELECT current_setting('application_name')").text(0, 0) == "skerry-tests")
        #expect(!overTCP.usesTLS)
    }

    @Test func sslmodeRequireUsesTLSAndVerifyFullRejectsAnUntrustedCertificate() throws {
        let uri = try #require(PostgresTestServer.tcpURI)
        let tls = try PostgresConnection(connectionString: uri + "?sslmode=require")
        #expect(tls.usesTLS)
        #expect(try tls.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").value(0, 0, as: .boolean) == .bool(true))

        // The test server's certificate is self-signed: verifying it against the system's roots fails.
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(connectionString: uri + "?sslmode=verify-full&sslrootcert=system")
        }
        #expect(error?.sqlState == .unableToConnect)
        #expect(error?.message.contains("certificate") == true, "\(error?.message ?? "")")
    }

    /// A store in a schema of its own keeps the connection string's own `options` (here a
    /// statement timeout, in a URI and in key=value pairs) next to the search path it adds: libpq
    /// keeps a keyword's last value, and the store's `options` replaced the user's.
    @Test func aStoreInASchemaKeepsTheConnectionStringsOwnOptions() throws {
        let uri = try #require(PostgresTestServer.tcpURI)
        let pairs = try PostgresTestServer.require()
        for connectionString in [
            uri + "?sslmode=disable&options=-c%20statement_timeout%3D4321", pairs + " options='-c statement_timeout=4321'",
        ] {
            let schema = PostgresTestServer.newSchema()
            let stack = PersistentStack(
                name: "Options",
                model: try ObjectModel(entities: [
                    EntityDescription(name: "Item", attributes: [AttributeDescription("code", .string, isOptional: true)])
                ]))
            stack.persistentStoreDescriptions = [.postgres(connectionString, maximumConnections: 1, schema: schema)]
            try stack.loadPersistentStores()
            let store = try #require(stack.persistentStoreCoordinator.loadedStores.first as? PostgresStore)
            let settings = try store.pool.withConnection { connection in
                try ["statement_timeout", "search_path"].map {
                    try connection.query("SELECT current_setting($1)", [.string($0)]).text(0, 0)
                }
            }
            #expect(settings == ["4321ms", "\"\(schema)\""], "\(connectionString)")
        }
    }

    @Test func malformedConnectionStringsAreTypedErrors() {
        for string in ["host=localhost port", "nonsense_keyword=1", "postgresql://[::1"] {
            let error = #expect(throws: PostgresError.self) { try PostgresConnection(connectionString: string) }
            #expect(error?.sqlState == .unableToConnect, "\(string)")
            #expect(error?.message.hasPrefix("Invalid PostgreSQL connection string") == true, "\(string): \(error?.message ?? "")")
        }
    }

    @Test func unreachableServerAndMissingDatabaseAreTypedErrors() throws {
        let refused = #expect(throws: PostgresError.self) {
            try PostgresConnection(connectionString: "host=127.0.0.1 port=1 connect_timeout=5 user=skerry")
        }
        #expect(refused?.sqlState == .unableToConnect)
        #expect(refused?.isConnectionError == true)

        let missing = #expect(throws: PostgresError.self) {
            try PostgresConnection(connectionString: PostgresTestServer.require() + " dbname=no_such_database_here")
        }
        #expect(missing?.sqlState == .invalidCatalogName, "\(missing?.message ?? "")")
    }

    @Test func passwordsNeverAppearInRedactedConnectionStrings() {
        let redacted = PostgresConnectionString.redacted("host=db.example user=app password='s3cret word' sslmode=verify-full")
        #expect(redacted == "host=db.example password=*** sslmode=verify-full user=app")
        #expect(PostgresConnectionString.redacted("postgresql://app:s3cret@db.example/app").contains("s3cret") == false)
        #expect(PostgresConnectionString.redacted("host=") == "host=''")
        #expect(PostgresConnectionString.redacted("host=a b") == "<invalid connection string>")
    }

    // MARK: Typed errors

    @Test func serverErrorsCarrySQLStateMessageAndSQL() throws {
        let connection = try PostgresTestServer.connect()
        let syntax = #expect(throws: PostgresError.self) { try connection.query("SELEC 1") }
        #expect(syntax?.sqlState == .syntaxError)
        #expect(syntax?.sqlState.class == .syntaxErrorOrAccessRuleViolation)
        #expect(syntax?.sql == "SELEC 1")
        #expect(syntax?.message.contains("syntax error") == true)
        #expect(syntax?.severity == "ERROR")

        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY, name text CONSTRAINT t_name UNIQUE)")
        try connection.query("INSERT INTO t VALUES ($1, $2)", [.int(1), .string("a")])
        let unique = #expect(throws: PostgresError.self) { try connection.query("INSERT INTO t VALUES ($1, $2)", [.int(2), .string("a")]) }
        #expect(unique?.isUniqueViolation == true)
        #expect(unique?.constraint == "t_name")
        #expect(unique?.table == "t")
        #expect(unique?.detail?.contains("(name)=(a)") == true)
        // Pattern-matchable like any Equatable code.
        switch unique?.sqlState {
        case .uniqueViolation?: break
        default: Issue.record("expected a unique violation, got \(String(describing: unique))")
        }
        #expect("\(unique!)".contains("23505"))

        let missing = #expect(throws: PostgresError.self) { try connection.query("SELECT * FROM no_such_table") }
        #expect(missing?.sqlState == .undefinedTable)
    }

    @Test func aFailedTransactionRollsBackAndTheConnectionStaysUsable() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY)")
        #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.query("INSERT INTO t VALUES ($1)", [.int(1)])
                try connection.query("INSERT INTO t VALUES ($1)", [.int(1)])
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
    }

    // MARK: Values

    /// Every attribute type through the native column type the store uses for it, with edge values.
    @Test func everyAttributeTypeRoundTripsThroughItsNativeColumn() throws {
        let connection = try PostgresTestServer.connect()
        let cases: [(column: String, type: AttributeType, values: [AttributeValue])] = [
            ("boolean", .boolean, [.bool(true), .bool(false)]),
            ("smallint", .integer16, [.int(Int64(Int16.min)), .int(Int64(Int16.max)), .int(0)]),
            ("integer", .integer32, [.int(Int64(Int32.min)), .int(Int64(Int32.max))]),
            ("bigint", .integer64, [.int(.min), .int(.max), .int(-1)]),
            (
                "double precision", .double,
                [
                    .double(0.1), .double(-1e300), .double(.infinity), .double(-.infinity),
                    .double(.leastNonzeroMagnitude), .double(-0.0),
                ]
            ),
            ("double precision", .float, [.double(Double(Float(0.1)))]),
            (
                "numeric", .decimal,
                [
                    .decimal(Decimal(string: "12345678901234567890.0123456789")!), .decimal(Decimal(string: "-0.00001")!),
                    .decimal(0), .decimal(Decimal(string: "10000")!), .decimal(Decimal(string: "-99990000.5")!),
                ]
            ),
            (
                "timestamptz", .date,
                [
                    .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -1_000_000_000.25)),
                    .date(Date(timeIntervalSinceReferenceDate: 790_000_000.123456)),
                ]
            ),
            ("text", .string, [.string(""), .string("Ünïcödé ✓ \u{1F600}"), .string(String(repeating: "x", count: 100_000))]),
            ("text", .url, [.url(URL(string: "https://example.com/a?b=c#d")!)]),
            ("bytea", .binary, [.data(Data()), .data(Data([0, 1, 2, 255, 0])), .data(Data(repeating: 7, count: 1 << 20))]),
            ("uuid", .uuid, [.uuid(UUID()), .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!)]),
        ]
        for (index, (column, type, values)) in cases.enumerated() {
            let table = "v\(index)"
            try connection.execute("CREATE TEMPORARY TABLE \(table) (id bigint, v \(column))")
            for (row, value) in (values + [.null]).enumerated() {
                try connection.query("INSERT INTO \(table) VALUES ($1, $2)", [.int(Int64(row)), value])
            }
            let result = try connection.query("SELECT v FROM \(table) ORDER BY id")
            #expect(Int(result.rowCount) == values.count + 1)
            for (row, value) in (values + [.null]).enumerated() {
                let read = result.value(Int32(row), 0, as: type)
                if case .date(let written) = value, case .date(let stored)? = read {
                    // timestamptz keeps microseconds: a date comes back within half of one.
                    #expect(
                        abs(written.timeIntervalSince(stored)) <= 0.000_000_5 + 1e-9 * abs(written.timeIntervalSinceReferenceDate),
                        "wrote \(written.timeIntervalSinceReferenceDate), read \(stored.timeIntervalSinceReferenceDate)")
                } else {
                    #expect(read == value, "\(column) as \(type): wrote \(value), read \(String(describing: read))")
                }
            }
        }
        // NaN is a double like any other (PostgreSQL stores it); identity is by bit pattern.
        #expect(try connection.query("SELECT $1::float8", [.double(.nan)]).value(0, 0, as: .double)?.isNaNDouble == true)
    }

    @Test func valuesTheColumnCannotHoldAreTypedErrors() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (small smallint, name text)")
        let range = #expect(throws: PostgresError.self) { try connection.query("INSERT INTO t (small) VALUES ($1)", [.int(70_000)]) }
        #expect(range?.sqlState == .numericValueOutOfRange)
        // PostgreSQL's text cannot hold NUL characters.
        let nul = #expect(throws: PostgresError.self) { try connection.query("INSERT INTO t (name) VALUES ($1)", [.string("a\u{0}b")]) }
        #expect(nul?.sqlState.class == .dataException || nul?.sqlState == .invalidParameterValue, "\(String(describing: nul))")
        let count = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::int8", []) }
        #expect(count?.message.contains("1 parameters; 0 were given") == true)
        // A column read as a type it cannot hold decodes to nil, never to a wrong value.
        try connection.query("INSERT INTO t (name) VALUES ($1)", [.string("not a number")])
        let result = try connection.query("SELECT name FROM t WHERE name IS NOT NULL")
        #expect(result.value(0, 0, as: .integer64) == nil)
        #expect(result.value(0, 0, as: .string) == .string("not a number"))
    }

    // MARK: Statements and pipelines

    @Test func statementsArePreparedOnceAndTheCacheIsBounded() throws {
        let connection = try PostgresTestServer.connect()
        for value in 0..<5 { _ = try connection.query("SELECT $1::int8 + 1", [.int(Int64(value))]) }
        #expect(
            try connection.scalarInt64(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = $1",
                [.string("SELECT $1::int8 + 1")]) == 1)
        for value in 0...PostgresConnection.statementCacheLimit {
            _ = try connection.query("SELECT \(value)::int8")
        }
        let prepared = try #require(try connection.scalarInt64("SELECT count(*) FROM pg_prepared_statements"))
        #expect(prepared <= Int64(PostgresConnection.statementCacheLimit) + 1)
    }

    /// A statement without parameters is prepared and run together the first time (one round
    /// trip): it runs once, stays prepared when running it fails, and a failure inside a
    /// transaction aborts the transaction as any failed statement does.
    @Test func aStatementWithoutParametersRunsOnceWhenFirstPreparedAndStaysPreparedWhenItFails() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY)")
        let inserted = try connection.query("INSERT INTO t SELECT g FROM generate_series(1, 3) AS g RETURNING id")
        #expect((0..<inserted.rowCount).map { inserted.int64($0, 0) } == [1, 2, 3])
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 3)
        for _ in 0..<2 {
            let duplicate = #expect(throws: PostgresError.self) { try connection.query("INSERT INTO t VALUES (1)") }
            #expect(duplicate?.sqlState == .uniqueViolation)
            #expect(duplicate?.sql == "INSERT INTO t VALUES (1)")
            let syntax = #expect(throws: PostgresError.self) { try connection.query("INSERT INTO t VALUE (1)") }
            #expect(syntax?.sqlState == .syntaxError)
        }
        #expect(
            try connection.scalarInt64(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE $1", [.string("INSERT INTO t VALUE%")]) == 1)
        #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.query("INSERT INTO t SELECT g FROM generate_series(4, 5) AS g")
                try connection.query("INSERT INTO t VALUES (2)")
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 3)
    }

    @Test func pipelinedStatementsRunInOrderAndReportEveryResult() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY, name text)")
        let count = PostgresPipeline.batchSize * 3 + 7
        var affected = 0
        try connection.transaction {
            try connection.pipeline { pipeline in
                for id in 0..<count {
                    try pipeline.send("INSERT INTO t VALUES ($1, $2)", [.int(Int64(id)), .string("n\(id)")]) { affected += $0.affectedRows }
                }
            }
        }
        #expect(affected == count)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == Int64(count))
        // A statement that returns rows, in a pipeline, after statements that prepare mid-way.
        var names: [String] = []
        try connection.pipeline { pipeline in
            try pipeline.send("UPDATE t SET name = $1 WHERE id = $2", [.string("first"), .int(0)])
            try pipeline.send("SELECT name FROM t WHERE id = $1", [.int(0)]) { names.append($0.text(0, 0)) }
        }
        #expect(names == ["first"])
    }

    @Test func aFailingStatementInAPipelineReportsItsErrorAndTheTransactionRollsBack() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.pipeline { pipeline in
                    for id in [1, 2, 3, 2, 4, 5] { try pipeline.send("INSERT INTO t VALUES ($1)", [.int(Int64(id))]) }
                }
            }
        }
        #expect(error?.sqlState == .uniqueViolation)
        #expect(error?.sql == "INSERT INTO t VALUES ($1)")
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
        try connection.pipeline { pipeline in try pipeline.send("INSERT INTO t VALUES ($1)", [.int(9)]) }
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 1)
    }

    /// A statement with parameters first met in the middle of a pipeline is prepared and
    /// described there: its Parse and Describe go after the statements sent before it and one
    /// wait answers them all (leaving the pipeline and then preparing took two); the pipeline
    /// and its transaction go on. A statement the cache does not keep (too many parameters) too.
    @Test func aStatementFirstMetInAPipelineIsPreparedInOneWaitAndThePipelineGoesOn() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY, name text)")
        let many = (1...SQLBuilder.preparedParameterLimit + 1).map { _ in "?" }.joined(separator: ", ")
        var names: [String] = []
        var counted: Int64?
        let waits = try connection.transaction { () throws -> Int in
            let before = connection.waits
            try connection.pipeline { pipeline in
                try pipeline.send("INSERT INTO t VALUES (1, 'a'), (2, 'b')", []) // no parameters: prepared with no wait
                try pipeline.send("UPDATE t SET name = ? WHERE id = ?", [.string("first"), .int(1)]) // a wait
                try pipeline.send("SELECT name FROM t WHERE id = ?", [.int(1)]) { names.append($0.text(0, 0)) } // a wait
                let keys: [AttributeValue] = (0...SQLBuilder.preparedParameterLimit).map { .int(Int64($0)) }
                try pipeline.send("SELECT count(*) FROM t WHERE id IN (\(many))", keys) { counted = $0.int64(0, 0) } // a wait, not kept
            } // the last wait
            #expect(connection.isInTransaction)
            return connection.waits - before
        }
        #expect(waits == 4)
        #expect(names == ["first"])
        #expect(counted == 2)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t WHERE name = 'first'") == 1)
        #expect(try connection.scalarInt64("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'UPDATE t SET%'") == 1)
    }

    /// A statement with more parameters than the store sends in one is refused before it reaches
    /// the server, with `program_limit_exceeded` (54000) and its SQL, alone or in the middle of a
    /// pipeline (where the statements before it ran); the connection serves the next statement.
    @Test func aStatementWithTooManyParametersIsATypedErrorAloneAndInAPipeline() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY)")
        let limit = PostgresConnection.maximumParameters
        let sql = "SELECT count(*) FROM t WHERE id IN (\((0...limit).map { _ in "?" }.joined(separator: ", ")))"
        let keys: [AttributeValue] = (0...limit).map { .int(Int64($0)) }
        let alone = #expect(throws: PostgresError.self) { _ = try connection.query(sql, keys) }
        #expect(alone?.sqlState == "54000")
        #expect(alone?.sql == sql)
        #expect(alone?.message.contains("\(limit + 1) parameters") == true)
        let piped = #expect(throws: PostgresError.self) {
            try connection.pipeline { pipeline in
                try pipeline.send("INSERT INTO t VALUES (1)", [])
                try pipeline.send("INSERT INTO t VALUES (?)", [.int(2)])
                try pipeline.send(sql, keys)
            }
        }
        #expect(piped?.sqlState == "54000")
        #expect(connection.isReusable)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 2)
    }

    /// A statement refused before it reaches the server (more parameters than the store sends, a
    /// value its writer cannot write) after an earlier statement of the pipeline failed there
    /// reports that earlier failure, the first, at its position (a save names the object it failed
    /// for, and retries a deadlock); with no earlier failure, its own error at its own position.
    /// Either way the pipeline is left at once: the transaction rolls back and the connection
    /// serves the next statement.
    @Test func aStatementRefusedBeforeItIsSentDoesNotHideAnEarlierFailure() throws {
        struct Unwritable: Error {}
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY)")
        let limit = PostgresConnection.maximumParameters
        let tooMany = "SELECT count(*) FROM t WHERE id IN (\((0...limit).map { _ in "?" }.joined(separator: ", ")))"
        let keys: [AttributeValue] = (0...limit).map { .int(Int64($0)) }
        _ = try connection.statement("INSERT INTO t VALUES (?)") // prepared: its writer runs in the pipeline
        let refusals: [(name: String, send: (PostgresPipeline) throws -> Void, isOwnError: (any Error) -> Bool)] = [
            ("too many parameters", { try $0.send(tooMany, keys) }, { ($0 as? PostgresError)?.sqlState == "54000" }),
            ("unwritable value", { try $0.send("INSERT INTO t VALUES (?)") { _ in throw Unwritable() } }, { $0 is Unwritable }),
        ]
        for refusal in refusals {
            for failsBefore in [true, false] {
                let pipeline = PostgresPipeline(connection)
                var reported: (any Error)?
                do {
                    try connection.transaction {
                        try pipeline.send("INSERT INTO t VALUES (1)", [])
                        try pipeline.send(failsBefore ? "INSERT INTO t VALUES (1)" : "INSERT INTO t VALUES (2)", [])
                        try pipeline.send("INSERT INTO t VALUES (3)", [])
                        try refusal.send(pipeline)
                    }
                } catch {
                    reported = error
                }
                if failsBefore {
                    #expect((reported as? PostgresError)?.sqlState == .uniqueViolation, "\(refusal.name): \(String(describing: reported))")
                    #expect(pipeline.failedStatement == 1, "\(refusal.name)")
                } else {
                    #expect(reported.map(refusal.isOwnError) == true, "\(refusal.name): \(String(describing: reported))")
                    #expect(pipeline.failedStatement == 3, "\(refusal.name)")
                }
                #expect(connection.isReusable, "\(refusal.name)")
                #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0, "\(refusal.name)")
            }
        }
    }

    /// A statement that fails to prepare in the middle of a pipeline reports its own error (the
    /// statements before it ran), and one met after a failure the error of the statement that
    /// failed (the server skipped its preparation, so it is prepared again next time); either way
    /// the transaction rolls back and the connection serves the next pipeline.
    @Test func aStatementPreparedInAFailedPipelineReportsTheFirstErrorAndTheConnectionGoesOn() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY)")
        let syntax = #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.pipeline { pipeline in
                    try pipeline.send("INSERT INTO t VALUES (1)", [])
                    try pipeline.send("INSERT INTO t VALUE (?)", [.int(2)])
                }
            }
        }
        #expect(syntax?.sqlState == .syntaxError)
        #expect(syntax?.sql == "INSERT INTO t VALUE (?)")
        let duplicate = #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.pipeline { pipeline in
                    try pipeline.send("INSERT INTO t VALUES (3)", [])
                    try pipeline.send("INSERT INTO t VALUES (3)", [])
                    try pipeline.send("INSERT INTO t SELECT ? + 10", [.int(4)])
                }
            }
        }
        #expect(duplicate?.sqlState == .uniqueViolation)
        #expect(duplicate?.sql == "INSERT INTO t VALUES (3)")
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
        try connection.transaction {
            try connection.pipeline { pipeline in
                try pipeline.send("INSERT INTO t VALUES (1)", [])
                try pipeline.send("INSERT INTO t SELECT ? + 10", [.int(4)])
            }
        }
        let ids = try connection.query("SELECT id FROM t ORDER BY id")
        #expect((0..<ids.rowCount).map { ids.int64($0, 0) } == [1, 14])
    }

    @Test func pipelinedStatementsWrittenInPlaceReportTheOnesThatChangedNoRow() throws {
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE TEMPORARY TABLE t (id bigint PRIMARY KEY, version bigint NOT NULL)")
        try connection.execute("INSERT INTO t SELECT g, 1 FROM generate_series(1, 600) g")
        // More than a batch of version-checked updates; every third one expects a version the row does not have.
        let pipeline = PostgresPipeline(connection)
        for id in 1...600 {
            try pipeline.send("UPDATE t SET version = version + 1 WHERE id = ? AND version = ?", expectingRows: true) { writer in
                try writer.append(.int(Int64(id)))
                try writer.append(.int(id % 3 == 0 ? 7 : 1))
            }
        }
        // Keys bound as one bigint[], negative and past the rows too: exactly the rows named go.
        try pipeline.send("DELETE FROM t WHERE id = ANY(?::bigint[])") { try $0.append(keys: [-5, 1, 2, 300, 600, 601, Int64.max]) }
        try pipeline.finish()
        #expect(pipeline.unchanged == (1...600).filter { $0 % 3 == 0 }.map { $0 - 1 }) // positions, from 0
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 596)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t WHERE id IN (1, 2, 300, 600)") == 0)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t WHERE version = 2") == 398)

        // A writer that writes too few or too many values is refused before anything is sent.
        let update = try connection.statement("UPDATE t SET version = version + 1 WHERE id = ? AND version = ?")
        for values: [AttributeValue] in [[.int(3)], [.int(3), .int(2), .int(3)]] {
            let error = #expect(throws: PostgresError.self) {
                let writeValues: (inout ParameterWriter) throws -> Void = { for value in values { try $0.append(value) } }
                _ = try connection.withParameters(for: update, writeValues) { _, _, _, _ in 0 }.get()
            }
            #expect(error?.sqlState == .protocolViolation)
        }
        #expect(try connection.scalarInt64("SELECT version FROM t WHERE id = 3") == 1)
    }

    // MARK: Pool

    @Test func thePoolNeverOpensMoreThanItsMaximumAndServesEveryCaller() throws {
        let pool = PostgresConnectionPool(connectionString: try PostgresTestServer.require(), maximumConnections: 3)
        let marker = "pool-\(UUID().uuidString)"
        let done = Locked(0), peak = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 24) { _ in
            do {
                try pool.withConnection { connection in
                    try connection.execute("SET application_name = '\(marker)'")
                    let open =
                        try connection.scalarInt64("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [.string(marker)])
                        ?? 0
                    peak.update { $0 = max($0, Int(open)) }
                    try connection.execute("SELECT pg_sleep(0.01)")
                }
                done.update { $0 += 1 }
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect(done.value == 24)
        #expect(peak.value <= 3)
        #expect(pool.openConnections <= 3)
    }

    /// A pipeline whose Sync could not be queued (libpq out of memory) leaves the connection healthy
    /// but in pipeline mode, where no synchronous statement runs: the pool does not hand it out again.
    @Test func aConnectionLeftInPipelineModeIsNotReused() throws {
        let pool = PostgresConnectionPool(connectionString: try PostgresTestServer.require(), maximumConnections: 1)
        let first = try pool.withConnection { connection in
            let pid = try connection.scalarInt64("SELECT pg_backend_pid()")
            #expect(PQenterPipelineMode(connection.handle) == 1)
            #expect(connection.isHealthy)
            return pid
        }
        let second = try pool.withConnection { try $0.scalarInt64("SELECT pg_backend_pid()") }
        #expect(second != nil && second != first)
    }

    @Test func aBrokenConnectionIsReplacedOnTheNextUse() throws {
        let pool = PostgresConnectionPool(connectionString: try PostgresTestServer.require(), maximumConnections: 1)
        let first = try pool.withConnection { try $0.scalarInt64("SELECT pg_backend_pid()") }
        // Another session terminates this connection's backend, as a server restart would.
        let admin = try PostgresTestServer.connect()
        _ = try admin.query("SELECT pg_terminate_backend($1::int4)", [.int(first ?? 0)])
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { try $0.scalarInt64("SELECT 1") }
        }
        #expect(error?.isConnectionError == true, "\(String(describing: error))")
        let second = try pool.withConnection { try $0.scalarInt64("SELECT pg_backend_pid()") }
        #expect(second != nil && second != first)
    }
}

extension AttributeValue {
    var isNaNDouble: Bool {
        if case .double(let v) = self { return v.isNaN }
        return false
    }
}
