/// The one error type of the engine's public API.
///
/// ``code`` is stable across releases and meant for `switch`/`catch` patterns; ``message`` is for
/// people. The optional fields name what the error is about where that is known.
///
/// ```swift
/// do { try context.save() }
/// catch SkerryError.Code.missingRequiredValue { ... }           // a code matches any error
/// catch SQLiteError.ResultCode.busy { ... }                      // so does a SQLite result code
/// catch let error as SkerryError where error.code == .mergeConflict { ... }
/// ```
public struct SkerryError: Error, Sendable, CustomStringConvertible {
    /// The kind of error. Raw values are stable and never reused.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// An entity name that the model does not define.
        public static let unknownEntity = Code(rawValue: 1)
        /// An attribute or property name that the entity does not define.
        public static let unknownAttribute = Code(rawValue: 2)
        /// A value of the wrong type for an attribute, or out of its range.
        public static let wrongValueType = Code(rawValue: 3)
        /// A required attribute has no value at save time.
        public static let missingRequiredValue = Code(rawValue: 4)
        /// A uniqueness constraint would be violated.
        public static let constraintViolation = Code(rawValue: 5)
        /// A store could not be opened or created.
        public static let storeLoadFailed = Code(rawValue: 6)
        /// The store was written with a model that cannot be migrated to this one automatically.
        public static let modelMismatch = Code(rawValue: 7)
        /// SQLite reported an error; ``SkerryError/sqlite`` has the details.
        public static let sqlite = Code(rawValue: 8)
        /// The model itself is invalid (duplicate names, missing destinations, bad identifiers).
        public static let invalidModel = Code(rawValue: 9)
        /// No object with that ID exists in the store.
        public static let objectNotFound = Code(rawValue: 10)
        /// An object was used with a context it does not belong to, or after it was invalidated.
        public static let objectNotInContext = Code(rawValue: 11)
        /// The row changed in the store since the context read it (optimistic locking).
        public static let mergeConflict = Code(rawValue: 12)
        /// No store is loaded that can hold the entity.
        public static let noStore = Code(rawValue: 13)
        /// An argument is out of its documented range.
        public static let invalidArgument = Code(rawValue: 14)
        /// A value read from the store does not have the form its attribute's type requires.
        public static let undecodableValue = Code(rawValue: 15)
        /// A relationship's delete rule (deny) or member count limits would be violated.
        public static let relationshipViolation = Code(rawValue: 16)
        /// A migration would not carry every row and relationship link the new model can hold
        /// (for example several related objects where the new model keeps one); nothing was
        /// changed. The message names the entity or relationship and the counts.
        public static let migrationWouldLoseData = Code(rawValue: 18)
        /// A predicate format string is malformed, uses what Skerry does not support, or its
        /// arguments or variables do not fit; ``SkerryError/predicateSyntax`` says where.
        public static let invalidPredicateFormat = Code(rawValue: 17)
        /// An error from outside the engine (thrown by a closure the engine ran, such as a
        /// migration step or the work of a perform); ``SkerryError/underlyingError`` holds it.
        public static let underlyingError = Code(rawValue: 19)
        /// A write was asked of a store opened read-only (``StoreDescription/isReadOnly``).
        public static let storeIsReadOnly = Code(rawValue: 20)
        /// A database other than SQLite (PostgreSQL) reported an error; ``SkerryError/underlyingError``
        /// holds it (a `PostgresError` of `SkerryPostgres`).
        public static let database = Code(rawValue: 21)
        /// An object URI or ID string that names no object of this stack: malformed, or naming a
        /// store the stack has not loaded, an entity that store does not hold, or a temporary ID.
        public static let unknownObjectURI = Code(rawValue: 22)
        /// A persistent history token older than the history the store still holds (deleted
        /// since, or cleared by a migration), or naming none of the stack's stores that record
        /// history: Core Data's `NSPersistentHistoryTokenExpiredError`. Fetch all history again
        /// and take a new token.
        public static let persistentHistoryTokenExpired = Code(rawValue: 23)

        public var description: String {
            switch self {
            case .unknownEntity: return "unknownEntity"
            case .unknownAttribute: return "unknownAttribute"
            case .wrongValueType: return "wrongValueType"
            case .missingRequiredValue: return "missingRequiredValue"
            case .constraintViolation: return "constraintViolation"
            case .storeLoadFailed: return "storeLoadFailed"
            case .modelMismatch: return "modelMismatch"
            case .sqlite: return "sqlite"
            case .invalidModel: return "invalidModel"
            case .objectNotFound: return "objectNotFound"
            case .objectNotInContext: return "objectNotInContext"
            case .mergeConflict: return "mergeConflict"
            case .noStore: return "noStore"
            case .invalidArgument: return "invalidArgument"
            case .undecodableValue: return "undecodableValue"
            case .relationshipViolation: return "relationshipViolation"
            case .migrationWouldLoseData: return "migrationWouldLoseData"
            case .invalidPredicateFormat: return "invalidPredicateFormat"
            case .underlyingError: return "underlyingError"
            case .storeIsReadOnly: return "storeIsReadOnly"
            case .database: return "database"
            case .unknownObjectURI: return "unknownObjectURI"
            case .persistentHistoryTokenExpired: return "persistentHistoryTokenExpired"
            default: return "code \(rawValue)"
            }
        }
    }

    /// What kind of error this is.
    public let code: Code
    /// A sentence that says what went wrong.
    public let message: String
    /// The entity concerned, where one is.
    public var entityName: String?
    /// The attribute, property or constraint concerned, where one is.
    public var key: String?
    /// The objects concerned (for a merge conflict, every conflicting object).
    public var objectIDs: [ObjectID]
    /// The first object concerned, where there is one.
    public var objectID: ObjectID? { objectIDs.first }
    /// The SQLite error underneath, for ``Code/sqlite`` and for store failures.
    public var sqlite: SQLiteError?
    /// The error this one reports, when it came from elsewhere: a SQLite error (also in
    /// ``sqlite``), a PostgreSQL error (``Code/database``; `SkerryPostgres` reads it as
    /// `error.postgres`), or an error of a closure the engine ran (``Code/underlyingError``).
    public var underlyingError: (any Error)?
    /// For ``Code/mergeConflict`` and ``Code/constraintViolation`` raised by a save: every
    /// conflict, with the object's, the cached and the stored values.
    public var conflicts: [SaveConflict] = []
    /// For ``Code/invalidPredicateFormat`` found in the text: where, what was expected, what was found.
    public var predicateSyntax: PredicateSyntaxError?

    /// Creates an error.
    /// - Parameters:
    ///   - code: the kind of error.
    ///   - message: a sentence for people.
    ///   - entityName: the entity concerned.
    ///   - key: the attribute, property or constraint concerned.
    ///   - objectID: the object concerned.
    ///   - objectIDs: further objects concerned.
    ///   - sqlite: the SQLite error underneath (also kept as ``underlyingError``).
    public init(
        _ code: Code, _ message: String, entityName: String? = nil, key: String? = nil,
        objectID: ObjectID? = nil, objectIDs: [ObjectID] = [], sqlite: SQLiteError? = nil
    ) {
        self.code = code
        self.message = message
        self.entityName = entityName
        self.key = key
        self.objectIDs = (objectID.map { [$0] } ?? []) + objectIDs
        self.sqlite = sqlite
        self.underlyingError = sqlite
    }

    public var description: String {
        var text = "SkerryError.\(code): \(message)"
        if let sqlite {
            text += " [\(sqlite)]"
        } else if let underlyingError {
            text += " [\(underlyingError)]"
        }
        return text
    }

    /// Converts any error thrown inside the engine to a ``SkerryError``: a ``SkerryError`` as it
    /// is, a SQLite error wrapped (``Code/sqlite``, or ``Code/constraintViolation``), anything else
    /// as ``Code/underlyingError`` with the error kept in ``underlyingError``.
    package static func converting(_ error: any Error, entityName: String? = nil) -> SkerryError {
        switch error {
        case let error as SkerryError: return error
        case let error as SQLiteError: return .wrapping(error, entityName: entityName)
        default:
            var wrapped = SkerryError(.underlyingError, "\(error)", entityName: entityName)
            wrapped.underlyingError = error
            return wrapped
        }
    }

    /// Wraps a SQLite error, turning unique-constraint failures into ``Code/constraintViolation``.
    static func wrapping(_ error: SQLiteError, entityName: String? = nil) -> SkerryError {
        var wrapped: SkerryError
        if error.isUniqueConstraintViolation {
            wrapped = SkerryError(
                .constraintViolation, "A uniqueness constraint failed: \(error.message)",
                entityName: entityName, sqlite: error)
        } else {
            wrapped = SkerryError(.sqlite, error.message, entityName: entityName, sqlite: error)
        }
        return wrapped
    }
}

extension SkerryError.Code {
    /// Matches any error that is a ``SkerryError`` with this code, so that a code can be a `catch`
    /// pattern: `catch SkerryError.Code.constraintViolation { ... }`.
    public static func ~= (code: SkerryError.Code, error: any Error) -> Bool {
        (error as? SkerryError)?.code == code
    }
}
