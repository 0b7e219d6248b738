/// An error reported by a PostgreSQL server or by libpq, with the statement that caused it.
///
/// ``sqlState`` is PostgreSQL's five-character error code (`23505` for a unique violation);
/// match it against the named codes of ``SQLState``:
///
/// ```swift
/// catch let error as PostgresError where error.sqlState == .uniqueViolation { ... }
/// catch let error as PostgresError where error.sqlState.class == .integrityConstraintViolation { ... }
/// ```
///
/// Errors that happen before the server answers (a host that cannot be reached, a malformed
/// connection string, a TLS handshake that fails) carry the codes PostgreSQL's own clients use
/// for them: ``SQLState/unableToConnect`` (08001) and ``SQLState/connectionFailure`` (08006).
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// PostgreSQL's error code (`SQLSTATE`).
    public let sqlState: SQLState
    /// The primary message, for people.
    public let message: String
    /// The server's optional detail message.
    public let detail: String?
    /// The server's optional hint.
    public let hint: String?
    /// The SQL that failed, when the error came from a statement.
    public let sql: String?
    /// The severity, untranslated: `ERROR`, `FATAL` or `PANIC` (nil for client-side errors).
    public let severity: String?
    /// The constraint concerned, for constraint violations.
    public let constraint: String?
    /// The table concerned, where the server names one.
    public let table: String?
    /// The column concerned, where the server names one.
    public let column: String?

    /// Creates an error from its parts.
    /// - Parameters:
    ///   - sqlState: the error code.
    ///   - message: the primary message.
    ///   - sql: the statement that failed, if any.
    public init(
        sqlState: SQLState, message: String, detail: String? = nil, hint: String? = nil, sql: String? = nil,
        severity: String? = nil, constraint: String? = nil, table: String? = nil, column: String? = nil
    ) {
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.sql = sql
        self.severity = severity
        self.constraint = constraint
        self.table = table
        self.column = column
    }

    /// Whether the error is a unique or primary-key violation (`23505`).
    public var isUniqueViolation: Bool { sqlState == .uniqueViolation }

    /// Whether the connection is unusable after this error (the class `08`, and server shutdowns).
    public var isConnectionError: Bool {
        sqlState.class == .connectionException || sqlState.class == .operatorIntervention || severity == "FATAL" || severity == "PANIC"
    }

    public var description: String {
        var text = "PostgreSQL error \(sqlState.rawValue): \(message)"
        if let detail { text += " (\(detail))" }
        if let hint { text += " Hint: \(hint)" }
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}

/// A PostgreSQL error code: five characters, the first two naming its class.
///
/// The named codes are PostgreSQL's own (Appendix A of its manual); any other code compares by
/// its raw value.
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The five characters, for example `"23505"`.
    public let rawValue: String

    /// A code from its five characters.
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The class: the code's first two characters followed by `000`.
    public var `class`: SQLState { SQLState(rawValue: String(rawValue.prefix(2)) + "000") }

    public var description: String { rawValue }

    // Classes.
    /// Class 08: connection exceptions.
    public static let connectionException: SQLState = "08000"
    /// Class 22: data exceptions (values out of range, invalid text representations).
    public static let dataException: SQLState = "22000"
    /// Class 23: integrity constraint violations.
    public static let integrityConstraintViolation: SQLState = "23000"
    /// Class 40: transaction rollbacks (serialization failures, deadlocks).
    public static let transactionRollback: SQLState = "40000"
    /// Class 42: syntax errors and access rule violations.
    public static let syntaxErrorOrAccessRuleViolation: SQLState = "42000"
    /// Class 57: operator intervention (shutdowns, cancelled queries).
    public static let operatorIntervention: SQLState = "57000"

    // Codes.
    /// The client could not establish a connection (libpq's failures before the server answers).
    public static let unableToConnect: SQLState = "08001"
    /// The connection was lost or broke.
    public static let connectionFailure: SQLState = "08006"
    /// A protocol violation (an answer the client did not expect).
    public static let protocolViolation: SQLState = "08P01"
    public static let numericValueOutOfRange: SQLState = "22003"
    public static let invalidTextRepresentation: SQLState = "22P02"
    public static let stringDataRightTruncation: SQLState = "22001"
    public static let invalidParameterValue: SQLState = "22023"
    public static let notNullViolation: SQLState = "23502"
    public static let foreignKeyViolation: SQLState = "23503"
    public static let uniqueViolation: SQLState = "23505"
    public static let checkViolation: SQLState = "23514"
    public static let readOnlySQLTransaction: SQLState = "25006"
    /// A statement was sent in a transaction that an earlier error aborted.
    public static let inFailedSQLTransaction: SQLState = "25P02"
    public static let invalidAuthorizationSpecification: SQLState = "28000"
    public static let invalidPassword: SQLState = "28P01"
    public static let serializationFailure: SQLState = "40001"
    public static let deadlockDetected: SQLState = "40P01"
    public static let syntaxError: SQLState = "42601"
    public static let insufficientPrivilege: SQLState = "42501"
    public static let undefinedColumn: SQLState = "42703"
    public static let undefinedFunction: SQLState = "42883"
    public static let undefinedTable: SQLState = "42P01"
    public static let duplicateTable: SQLState = "42P07"
    public static let lockNotAvailable: SQLState = "55P03"
    public static let queryCanceled: SQLState = "57014"
    public static let adminShutdown: SQLState = "57P01"
    public static let cannotConnectNow: SQLState = "57P03"
    /// A database named in the connection string does not exist.
    public static let invalidCatalogName: SQLState = "3D000"
    /// A client-side failure with no code of its own (libpq's internal errors).
    public static let internalError: SQLState = "XX000"
}
