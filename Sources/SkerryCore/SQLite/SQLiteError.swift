import CSQLite

/// An error reported by SQLite, with the statement that caused it.
///
/// `resultCode` is SQLite's primary result code (for example `SQLITE_CONSTRAINT`, 19) and
/// `extendedResultCode` the extended one (for example `SQLITE_CONSTRAINT_UNIQUE`, 2067).
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's primary result code (the low 8 bits of the extended code).
    public let resultCode: Int32
    /// SQLite's extended result code.
    public let extendedResultCode: Int32
    /// SQLite's message for the error.
    public let message: String
    /// The SQL that failed, when the error came from a statement.
    public let sql: String?

    /// Creates an error from its parts.
    /// - Parameters:
    ///   - extendedResultCode: SQLite's extended result code; the primary code is derived from it.
    ///   - message: the message SQLite gave.
    ///   - sql: the statement that failed, if any.
    public init(extendedResultCode: Int32, message: String, sql: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.resultCode = extendedResultCode & 0xFF
        self.message = message
        self.sql = sql
    }

    /// Whether the error is a UNIQUE or PRIMARY KEY constraint failure (including a uniqueness
    /// constraint of an entity hierarchy, which triggers keep across its tables).
    public var isUniqueConstraintViolation: Bool {
        // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY and SQLITE_CONSTRAINT_TRIGGER:
        // macros Swift does not import.
        extendedResultCode == SQLITE_CONSTRAINT | (8 << 8) || extendedResultCode == SQLITE_CONSTRAINT | (6 << 8)
            || (extendedResultCode == SQLITE_CONSTRAINT | (7 << 8) && message.hasPrefix("UNIQUE constraint failed"))
    }

    public var description: String {
        var text = "SQLite error \(resultCode) (extended \(extendedResultCode)): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
