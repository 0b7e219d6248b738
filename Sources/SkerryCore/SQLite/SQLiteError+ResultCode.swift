import CSQLite

extension SQLiteError {
    /// A SQLite result code, primary or extended, with names for the ones applications handle.
    ///
    /// A code is a `catch` pattern for any error that carries a SQLite error (a ``SQLiteError``, or
    /// a ``SkerryError`` whose ``SkerryError/sqlite`` is set). A primary code matches every extended
    /// code of its kind; an extended code matches itself only:
    ///
    /// ```swift
    /// do { try context.save() }
    /// catch SQLiteError.ResultCode.busy { ... }            // SQLITE_BUSY and its extended codes
    /// catch SQLiteError.ResultCode.readOnly { ... }
    /// ```
    public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code, as SQLite defines it.
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The primary code of this code (itself, for a primary code).
        public var primaryResultCode: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }
        /// Whether this is an extended code.
        public var isExtended: Bool { rawValue & ~0xFF != 0 }

        public static let error = ResultCode(rawValue: SQLITE_ERROR)
        public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
        public static let permission = ResultCode(rawValue: SQLITE_PERM)
        public static let abort = ResultCode(rawValue: SQLITE_ABORT)
        public static let busy = ResultCode(rawValue: SQLITE_BUSY)
        public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
        public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
        public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
        public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
        public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
        public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
        public static let full = ResultCode(rawValue: SQLITE_FULL)
        public static let cannotOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
        public static let `protocol` = ResultCode(rawValue: SQLITE_PROTOCOL)
        public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
        public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
        public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
        public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
        public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
        public static let authorization = ResultCode(rawValue: SQLITE_AUTH)
        public static let range = ResultCode(rawValue: SQLITE_RANGE)
        public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)

        // Extended codes (C macros that Swift does not import: the primary code | n << 8).
        public static let busySnapshot = ResultCode(rawValue: SQLITE_BUSY | (2 << 8))
        public static let busyTimeout = ResultCode(rawValue: SQLITE_BUSY | (3 << 8))
        public static let readOnlyDatabaseMoved = ResultCode(rawValue: SQLITE_READONLY | (4 << 8))
        public static let constraintCheck = ResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
        public static let constraintForeignKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
        public static let constraintNotNull = ResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
        public static let constraintPrimaryKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
        public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
        public static let authorizationUser = ResultCode(rawValue: SQLITE_AUTH | (1 << 8))

        public var description: String {
            let name = String(cString: sqlite3_errstr(rawValue))
            return isExtended ? "\(name) (extended code \(rawValue))" : "\(name) (\(rawValue))"
        }

        /// Whether `code` (a primary or extended code) is of this kind: equal to it, or, for a
        /// primary pattern, an extended code of it.
        public func matches(_ code: ResultCode) -> Bool {
            isExtended ? self == code : self == code.primaryResultCode
        }

        /// Matches a ``SQLiteError``, or a ``SkerryError`` that carries one, whose code is of this
        /// kind (see ``matches(_:)``).
        public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
            let sqlite = (error as? SQLiteError) ?? (error as? SkerryError)?.sqlite
            guard let sqlite else { return false }
            return pattern.matches(sqlite.code)
        }
    }

    /// The error's extended result code, by name where it has one (primary codes are ``resultCode``).
    public var code: ResultCode { ResultCode(rawValue: extendedResultCode) }
}
