import Foundation

/// An update that runs in the store without loading objects, as Core Data's
/// `NSBatchUpdateRequest` does: it sets attributes of every object of an entity that matches a
/// predicate, with one `UPDATE` statement per table, in one transaction.
///
/// ```swift
/// var request = BatchUpdateRequest(entityName: "Message", predicate: AttributeKey("isRead") == false)
/// request.propertyUpdates = ["isRead": .constant(.bool(true))]
/// request.resultType = .objectIDs
/// let result = try context.execute(request)
/// context.mergeChanges(result.changes)
/// ```
///
/// As Core Data's, it works in the store only: objects already in contexts keep their values until
/// the returned IDs are merged into them (``ObjectContext/mergeChanges(_:)``,
/// ``ObjectContext/mergeChanges(fromRemoteContextSave:into:)``) or they are refreshed; no
/// validation runs beyond the value checks below, and derived attributes are not computed again.
/// Each updated row's version changes, so that a context that still holds an updated object as it
/// was read, and changes it, gets a conflict when it saves.
public struct BatchUpdateRequest: Sendable, Hashable {
    /// What a batch update reports.
    public enum ResultType: Sendable, Hashable {
        /// Only whether the update succeeded (Core Data's `.statusOnlyResultType`, the default):
        /// no IDs to merge.
        case statusOnly
        /// The updated objects' IDs, to merge into live contexts (Core Data's
        /// `.updatedObjectIDsResultType`).
        case objectIDs
        /// Only how many objects were updated (Core Data's `.updatedObjectsCountResultType`).
        case count
    }

    /// The entity to update.
    public var entityName: String
    /// Which objects to update; nil for all.
    public var predicate: FetchPredicate?
    /// The attributes to set, by name, and what to set each to. Core Data code sets
    /// ``propertiesToUpdate`` instead, which reads and writes the same updates.
    public var propertyUpdates: [String: BatchUpdateExpression]
    /// Whether the objects of the entity's sub-entities are updated too (true by default, as in
    /// Core Data); false updates the entity's own objects only.
    public var includesSubentities: Bool = true
    /// What the result reports: ``ResultType/statusOnly`` by default, as in Core Data.
    public var resultType: ResultType = .statusOnly

    /// Creates a batch update.
    /// - Parameters:
    ///   - entityName: the entity to update.
    ///   - predicate: which objects; nil for all of them.
    ///   - propertyUpdates: the attributes to set, by name.
    public init(entityName: String, predicate: FetchPredicate? = nil, propertyUpdates: [String: BatchUpdateExpression] = [:]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertyUpdates = propertyUpdates
    }

    /// A batch update of `entity`'s objects: Core Data's `NSBatchUpdateRequest(entity:)`.
    /// - Parameter entity: the entity to update.
    public init(entity: EntityDescription) {
        self.init(entityName: entity.name)
    }
}

/// What a batch update sets an attribute to: a constant, another attribute's value in the same
/// row, or sums, differences and products of these (Core Data's `NSExpression` values of
/// `propertiesToUpdate`, spelled the same with ``init(forConstantValue:)``,
/// ``init(forKeyPath:)`` and ``init(forFunction:arguments:)``).
///
/// The store computes the value of each row from the row's values before the update (every
/// attribute the update sets included), as SQL does.
public indirect enum BatchUpdateExpression: Sendable, Hashable {
    /// A value, converted to the attribute's type when the request runs (an integer fits a
    /// floating-point or decimal attribute; ``AttributeValue/null`` clears an optional attribute).
    case constant(AttributeValue)
    /// The value of another attribute of the same object (not through relationships), of the
    /// same type or of one that converts without loss (a narrower integer, an integer or `float`
    /// into a `double` attribute).
    case keyPath(String)
    /// The sum, difference or product of two expressions, for integer, `float` and `double`
    /// attributes.
    case arithmetic(ArithmeticOperator, BatchUpdateExpression, BatchUpdateExpression)
    /// An expression the store cannot compute (an `NSExpression` function other than the three
    /// of ``ArithmeticOperator``, a constant of no attribute type), with what it was: running a
    /// request that holds one throws ``SkerryError/Code/invalidArgument`` and updates nothing.
    case unsupported(String)

    /// The arithmetic a batch update computes.
    public enum ArithmeticOperator: String, Sendable, Hashable {
        /// `a + b` (`NSExpression` function `add:to:`).
        case add = "+"
        /// `a - b` (`NSExpression` function `from:subtract:`).
        case subtract = "-"
        /// `a * b` (`NSExpression` function `multiply:by:`).
        case multiply = "*"
    }

    /// A constant of any value Core Data's `propertiesToUpdate` takes: Core Data's
    /// `NSExpression(forConstantValue:)`.
    /// - Parameter value: a number (any integer or floating-point type, `NSNumber`, `Decimal`), a
    ///   Boolean, a string, a date, data, a UUID, a URL, an ``AttributeValue``, or nil (or
    ///   `NSNull`) to clear the attribute. Anything else makes an ``unsupported(_:)`` expression.
    public init(forConstantValue value: Any?) {
        self = Self.constantOrUnsupported(value)
    }

    /// Another attribute's value: Core Data's `NSExpression(forKeyPath:)`.
    /// - Parameter keyPath: an attribute of the entity updated.
    public init(forKeyPath keyPath: String) {
        self = .keyPath(keyPath)
    }

    /// Arithmetic: Core Data's `NSExpression(forFunction:arguments:)` with `add:to:`,
    /// `from:subtract:` or `multiply:by:` and two arguments. Any other function, or another number
    /// of arguments, makes an ``unsupported(_:)`` expression.
    /// - Parameters:
    ///   - name: the function's name.
    ///   - arguments: its two arguments: expressions, or constants (made into expressions as
    ///     ``init(forConstantValue:)`` makes them).
    public init(forFunction name: String, arguments: [Any]) {
        let operators: [String: ArithmeticOperator] = ["add:to:": .add, "from:subtract:": .subtract, "multiply:by:": .multiply]
        guard let op = operators[name], arguments.count == 2 else {
            self = .unsupported("the function '\(name)' with \(arguments.count) argument(s)")
            return
        }
        func operand(_ argument: Any) -> BatchUpdateExpression {
            argument as? BatchUpdateExpression ?? Self.constantOrUnsupported(argument)
        }
        self = .arithmetic(op, operand(arguments[0]), operand(arguments[1]))
    }

    /// `value` as a constant, or an ``unsupported(_:)`` expression when it has no attribute type.
    static func constantOrUnsupported(_ value: Any?) -> BatchUpdateExpression {
        guard let value, !(value is NSNull) else { return .constant(.null) }
        if let expression = value as? BatchUpdateExpression { return expression }
        if let stored = value as? AttributeValue { return .constant(stored) }
        if Swift.type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            if let decimal = number as? NSDecimalNumber { return .constant(.decimal(decimal.decimalValue)) }
            // A Boolean NSNumber is an integer 0 or 1 here: it fits Boolean and integer attributes.
            switch String(cString: number.objCType) {
            case "f", "d": return .constant(.double(number.doubleValue))
            case "Q", "L":
                // An unsigned number beyond Int64.max: int64Value would wrap it to a negative one.
                guard let exact = Int64(exactly: number.uint64Value) else {
                    return .unsupported("the integer \(number.uint64Value), beyond 64 bits")
                }
                return .constant(.int(exact))
            default: return .constant(.int(number.int64Value))
            }
        }
        switch value {
        case let bool as Bool: return .constant(.bool(bool))
        case let integer as any BinaryInteger:
            guard let exact = Int64(exactly: integer) else { return .unsupported("the integer \(integer), beyond 64 bits") }
            return .constant(.int(exact))
        case let floating as any BinaryFloatingPoint: return .constant(.double(Double(floating)))
        case let decimal as Decimal: return .constant(.decimal(decimal))
        case let string as String: return .constant(.string(string))
        case let date as Date: return .constant(.date(date))
        case let data as Data: return .constant(.data(data))
        case let uuid as UUID: return .constant(.uuid(uuid))
        case let url as URL: return .constant(.url(url))
        case let convertible as any AttributeValueConvertible: return .constant(convertible.attributeValue)
        default: return .unsupported("a value of type \(Swift.type(of: value))")
        }
    }
}

/// What a batch update did.
public struct BatchUpdateResult: Sendable {
    /// The IDs of the updated objects (empty unless the request asked for
    /// ``BatchUpdateRequest/ResultType/objectIDs``).
    public let updatedObjectIDs: [ObjectID]
    /// How many objects were updated.
    public let count: Int
    /// What the request asked to report.
    public let resultType: BatchUpdateRequest.ResultType
    /// The update as store changes, ready for ``ObjectContext/mergeChanges(_:)``: the updated
    /// objects (none unless the request asked for ``BatchUpdateRequest/ResultType/objectIDs``).
    public var changes: StoreChanges { StoreChanges(updated: Set(updatedObjectIDs)) }
}
