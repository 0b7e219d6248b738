import CLibPQRaw
import Foundation

/// A bare libpq connection for the PostgreSQL benchmarks: the raw client (the same statements the
/// Skerry store sends, with the same protocol choices — prepared statements, binary parameters and
/// results, pipeline mode for bulk writes) and the untimed setup of every implementation.
final class PGConnection {
    let handle: OpaquePointer

    init(_ connectionString: String) {
        guard let handle = PQconnectdb(connectionString) else { preconditionFailure("libpq could not allocate a connection") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            preconditionFailure("cannot connect to PostgreSQL: \(message)")
        }
        self.handle = handle
        PQsetNoticeProcessor(handle, { _, _ in }, nil) // DROP ... IF EXISTS notices
    }

    deinit { PQfinish(handle) }

    /// Fails the run with the server's message when `result` is not a success.
    @discardableResult
    func checked(_ result: OpaquePointer?, _ what: String) -> PGResult {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = result.map { String(cString: PQresultErrorMessage($0)) } ?? String(cString: PQerrorMessage(handle))
            PQclear(result)
            fatal("PostgreSQL: \(message) (\(what))")
        }
        return PGResult(result!)
    }

    /// Runs SQL text (any number of statements, no parameters).
    func exec(_ sql: String) {
        checked(PQexec(handle, sql), sql)
    }

    /// Prepares `sql` (`$n` placeholders) under `name`, with the parameters' types given.
    func prepare(_ name: String, _ sql: String, types: [UInt32]) {
        checked(PQprepare(handle, name, sql, Int32(types.count), types), sql)
    }

    /// Prepares `sql` (no parameters) under `name` and runs it in the same round trip, as the
    /// store runs a statement without parameters the first time: pipeline mode, Parse then
    /// Bind/Execute, one Sync.
    @discardableResult
    func prepareAndExecute(_ name: String, _ sql: String) -> PGResult {
        precondition(PQenterPipelineMode(handle) == 1)
        let sent =
            PQsendPrepare(handle, name, sql, 0, nil) == 1 && PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 1) == 1
            && PQpipelineSync(handle) == 1
        precondition(sent, String(cString: PQerrorMessage(handle)))
        // Each answer is followed by a NULL result; the Sync's answer comes last.
        checked(PQgetResult(handle), sql)
        while let extra = PQgetResult(handle) { PQclear(extra) }
        let result = checked(PQgetResult(handle), sql)
        while let extra = PQgetResult(handle) { PQclear(extra) }
        let sync = PQgetResult(handle)
        precondition(PQresultStatus(sync) == PGRES_PIPELINE_SYNC)
        PQclear(sync)
        precondition(PQexitPipelineMode(handle) == 1)
        return result
    }

    /// Runs a prepared statement, binary parameters and results.
    @discardableResult
    func execute(_ name: String, _ parameters: inout PGParameters) -> PGResult {
        let result = parameters.withPointers { count, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 1)
        }
        return checked(result, name)
    }

    /// Sends a prepared statement in pipeline mode (the answer is read by ``readPipelined(_:)``).
    func send(_ name: String, _ parameters: inout PGParameters) {
        let sent = parameters.withPointers { count, values, lengths, formats in
            PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
        }
        precondition(sent == 1, String(cString: PQerrorMessage(handle)))
    }

    /// Runs `body`, which sends statements with ``send(_:_:)``, in pipeline mode, reading the
    /// answers every `batch` statements (as the store does) and calling `onResult` with each.
    /// `body` calls its argument after each statement it sent.
    func pipeline(batch: Int = 512, onResult: @escaping (PGResult) -> Void, _ body: (_ sent: () -> Void) -> Void) {
        precondition(PQenterPipelineMode(handle) == 1)
        var pending = 0
        func read() {
            let requested = PQsendFlushRequest(handle), flushed = PQflush(handle)
            precondition(
                requested == 1 && flushed == 0, "pipeline flush (\(requested), \(flushed)): \(String(cString: PQerrorMessage(handle)))")
            for _ in 0..<pending {
                let result = checked(PQgetResult(handle), "pipelined statement")
                while let extra = PQgetResult(handle) { PQclear(extra) }
                onResult(result)
            }
            pending = 0
        }
        body {
            pending += 1
            if pending >= batch { read() }
        }
        read()
        precondition(PQpipelineSync(handle) == 1)
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        precondition(PQexitPipelineMode(handle) == 1)
    }

    /// The settings a connection string gives (`host`, `port`, `user`, `dbname`...), read by libpq.
    static func settings(of connectionString: String) -> [String: String] {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &message) else {
            let text = message.map { String(cString: $0) } ?? "out of memory"
            PQfreemem(message)
            preconditionFailure("not a libpq connection string: \(text)")
        }
        defer { PQconninfoFree(options) }
        var settings: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { settings[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return settings
    }

    /// `DROP SCHEMA ... CASCADE` and `CREATE SCHEMA`: a fresh, empty namespace for one run.
    func recreateSchema(_ schema: String) {
        exec("DROP SCHEMA IF EXISTS \(schema) CASCADE; CREATE SCHEMA \(schema)")
    }

    func scalar(_ sql: String) -> Int64 {
        let result = checked(PQexecParams(handle, sql, 0, nil, nil, nil, nil, 0), sql)
        return Int64(String(cString: PQgetvalue(result.handle, 0, 0))) ?? 0
    }

    /// The server's version, as `SHOW server_version` prints it.
    var serverVersion: String {
        let result = checked(PQexec(handle, "SHOW server_version"), "SHOW server_version")
        return String(cString: PQgetvalue(result.handle, 0, 0))
    }
}

/// Stops the run with `message` on standard error (an optimized build prints no precondition message).
func fatal(_ message: String) -> Never {
    FileHandle.standardError.write(Data("skerry-bench: \(message)\n".utf8))
    exit(3)
}

/// A result, cleared when released; binary columns read by position.
final class PGResult {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var rowCount: Int32 { PQntuples(handle) }
    var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    @inline(__always) func int64(_ row: Int32, _ column: Int32) -> Int64 {
        Int64(bigEndian: UnsafeRawPointer(PQgetvalue(handle, row, column)!).loadUnaligned(as: Int64.self))
    }
    @inline(__always) func double(_ row: Int32, _ column: Int32) -> Double {
        Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(PQgetvalue(handle, row, column)!).loadUnaligned(as: UInt64.self)))
    }
    @inline(__always) func bool(_ row: Int32, _ column: Int32) -> Bool {
        PQgetvalue(handle, row, column)!.pointee != 0
    }
    @inline(__always) func string(_ row: Int32, _ column: Int32) -> String {
        let bytes = UnsafeRawPointer(PQgetvalue(handle, row, column)!).assumingMemoryBound(to: UInt8.self)
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(PQgetlength(handle, row, column))), as: UTF8.self)
    }
    /// A `timestamptz` (microseconds since 2000-01-01) as a `Date`.
    @inline(__always) func date(_ row: Int32, _ column: Int32) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(int64(row, column)) / 1_000_000 - PGType.epochOffset)
    }
}

/// Type OIDs and the `timestamptz` epoch.
enum PGType {
    static let bool: UInt32 = 16, int8: UInt32 = 20, int4: UInt32 = 23, text: UInt32 = 25
    static let float8: UInt32 = 701, timestamptz: UInt32 = 1184, int8Array: UInt32 = 1016
    /// Seconds from 2000-01-01 (PostgreSQL's epoch) to 2001-01-01 (Foundation's reference date).
    static let epochOffset: Double = 31_622_400
}

/// Parameters of one statement in binary format, in one reusable byte buffer.
struct PGParameters {
    private var bytes: [UInt8] = []
    private var offsets: [Int] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []

    init() {}

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        formats.removeAll(keepingCapacity: true)
    }

    private mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T, format: Int32 = 1) {
        offsets.append(bytes.count)
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        lengths.append(Int32(MemoryLayout<T>.size))
        formats.append(format)
    }

    mutating func append(_ value: Int64) { appendBigEndian(value) }
    mutating func append(_ value: Int32) { appendBigEndian(value) }
    mutating func append(_ value: Double) { appendBigEndian(value.bitPattern) }
    mutating func append(_ value: Bool) { appendBigEndian(UInt8(value ? 1 : 0)) }
    mutating func append(_ value: Date) {
        appendBigEndian(Int64(((value.timeIntervalSinceReferenceDate + PGType.epochOffset) * 1_000_000).rounded()))
    }
    mutating func append(_ value: String) {
        offsets.append(bytes.count)
        bytes.append(contentsOf: value.utf8)
        lengths.append(Int32(bytes.count - offsets.last!))
        formats.append(1)
    }
    /// A value in text format (the store binds its `{1,2,3}` key arrays so).
    mutating func appendText(_ value: String) {
        append(value)
        formats[formats.count - 1] = 0
        bytes.append(0) // text-format values are NUL-terminated C strings
    }

    func withPointers<R>(_ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
        guard !offsets.isEmpty else { return body(0, nil, nil, nil) }
        return bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers = offsets.map { Optional(base + $0) }
            return pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(Int32(offsets.count), values.baseAddress!, lengths.baseAddress!, formats.baseAddress!)
                    }
                }
            }
        }
    }
}

/// The libpq version the benchmarks link (the system's, as the store's).
public var libpqVersion: String {
    let version = PQlibVersion()
    return "\(version / 10_000).\(version % 10_000)"
}
