import SkerryCore

/// A condition on a model type's attributes, built with key-path operators or ``Query``:
///
/// ```swift
/// Book.all.where(\Book.year < 1970 && Query.beginsWith(\Book.title, "du"))
/// ```
///
/// It becomes a `FetchPredicate`: compiled to SQL with bound values, and evaluated in
/// memory for unsaved changes. A key path that is not among the type's attributes, or a value that
/// cannot be encoded, makes the fetch that uses the predicate throw.
///
/// `@unchecked Sendable`: an immutable value (a `FetchPredicate` or an error, both `Sendable`).
public struct Predicate: @unchecked Sendable {
    let built: Result<FetchPredicate, SkerryError>

    init(_ built: Result<FetchPredicate, SkerryError>) { self.built = built }

    init(_ build: () throws(SkerryError) -> FetchPredicate) {
        do { built = .success(try build()) } catch { built = .failure(error) }
    }

    /// The engine predicate.
    /// - Throws: the error met while building it.
    public func fetchPredicate() throws(SkerryError) -> FetchPredicate { try built.get() }

    static func combine(_ parts: [Predicate], _ make: ([FetchPredicate]) -> FetchPredicate) -> Predicate {
        Predicate { () throws(SkerryError) in
            var predicates: [FetchPredicate] = []
            for part in parts { predicates.append(try part.fetchPredicate()) }
            return make(predicates)
        }
    }
}

extension Predicate: ExpressibleByStringLiteral {
    /// A predicate in Core Data's format language, as Sworm writes raw predicates:
    ///
    /// ```swift
    /// Book.all.where(\Book.year > 1960 && !"tags.@count == 0")
    /// ```
    ///
    /// The string is parsed at once; a malformed one makes the fetch that uses the predicate throw
    /// `SkerryError.Code.invalidPredicateFormat`. See
    /// `FetchPredicate.init(format:_:)` for the language.
    public init(stringLiteral format: String) {
        self.init(format: format)
    }

    /// A predicate in Core Data's format language with its arguments (`%@`, `%K`, `%d`…): values
    /// of the model's attribute types (enums and other ``SupportedAttributeType``s included),
    /// ``ManagedObject``s and object IDs, nil, or arrays of these.
    public init(format: String, _ arguments: Any...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// ``init(format:_:)`` with the arguments in an array.
    public init(format: String, argumentArray: [Any]) {
        self.init { () throws(SkerryError) in
            var converted: [Any] = []
            for argument in argumentArray { converted.append(try Self.formatArgument(argument)) }
            return try FetchPredicate(format: format, argumentArray: converted)
        }
    }

    /// A typed-layer value as the engine's format parser takes it.
    static func formatArgument(_ argument: Any) throws(SkerryError) -> Any {
        switch argument {
        case let object as any ManagedObjectIdentifiable: return object.objectID
        case let array as [Any]:
            var converted: [Any] = []
            for element in array { converted.append(try formatArgument(element)) }
            return converted
        case let value as any SupportedAttributeType:
            do {
                return try value.encodePrimitiveValue().attributeValue
            } catch {
                throw SkerryError(.wrongValueType, "An argument of a predicate cannot be encoded: \(error)")
            }
        default:
            return argument
        }
    }
}

/// A typed-layer object that names an engine object (``ManagedObject``).
protocol ManagedObjectIdentifiable {
    var objectID: ObjectID { get }
}

extension ManagedObject: ManagedObjectIdentifiable {}

/// The predicate builders, as Sworm's `Query`.
public enum Query {}

extension Query {
    /// The predicate does not hold.
    public static func not(_ original: Predicate) -> Predicate {
        Predicate.combine([original]) { .not($0[0]) }
    }

    /// Both predicates hold.
    public static func and(_ left: Predicate, _ right: Predicate) -> Predicate {
        Predicate.combine([left, right]) { .and($0) }
    }

    /// Either predicate holds.
    public static func or(_ left: Predicate, _ right: Predicate) -> Predicate {
        Predicate.combine([left, right]) { .or($0) }
    }

    /// A comparison of an attribute with a value (nil for a missing value of an optional one).
    static func compare<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: PartialKeyPath<PlainObject>, _ op: ComparisonOperator, _ value: Value?
    ) -> Predicate {
        Predicate { () throws(SkerryError) in
            let name = try PlainObject.attributeName(keyPath)
            return .comparison(key: name, op, try encode(value, PlainObject.self, name))
        }
    }

    static func encode<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ value: Value?, _: PlainObject.Type, _ name: String
    ) throws(SkerryError) -> AttributeValue {
        guard let value else { return .null }
        do {
            return try value.encodePrimitiveValue().attributeValue
        } catch {
            throw SkerryError(
                .wrongValueType, "A value compared with '\(PlainObject.entityName).\(name)' cannot be encoded: \(error)",
                entityName: PlainObject.entityName, key: name)
        }
    }

    /// The attribute equals `value`.
    public static func equalTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ value: Value
    ) -> Predicate { compare(keyPath, .equal, value) }
    /// The attribute differs from `value`.
    public static func notEqualTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ value: Value
    ) -> Predicate { compare(keyPath, .notEqual, value) }
    /// The attribute is greater than `value`.
    public static func greaterThan<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ value: Value
    ) -> Predicate { compare(keyPath, .greaterThan, value) }
    /// The attribute is less than `value`.
    public static func lessThan<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ value: Value
    ) -> Predicate { compare(keyPath, .lessThan, value) }
    /// The attribute is greater than or equal to `value`.
    public static func greaterThanOrEqualTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ value: Value
    ) -> Predicate { compare(keyPath, .greaterThanOrEqual, value) }
    /// The attribute is less than or equal to `value`.
    public static func lessThanOrEqualTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ value: Value
    ) -> Predicate { compare(keyPath, .lessThanOrEqual, value) }

    /// The optional attribute equals `value` (nil: has no value).
    public static func equalTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?
    ) -> Predicate { compare(keyPath, .equal, value) }
    /// The optional attribute differs from `value` (nil: has a value).
    public static func notEqualTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?
    ) -> Predicate { compare(keyPath, .notEqual, value) }
    /// The optional attribute is greater than `value` (false when it has no value).
    public static func greaterThan<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?
    ) -> Predicate { compare(keyPath, .greaterThan, value) }
    /// The optional attribute is less than `value` (false when it has no value).
    public static func lessThan<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?
    ) -> Predicate { compare(keyPath, .lessThan, value) }
    /// The optional attribute is greater than or equal to `value` (false when it has no value).
    public static func greaterThanOrEqualTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?
    ) -> Predicate { compare(keyPath, .greaterThanOrEqual, value) }
    /// The optional attribute is less than or equal to `value` (false when it has no value).
    public static func lessThanOrEqualTo<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ value: Value?
    ) -> Predicate { compare(keyPath, .lessThanOrEqual, value) }

    /// The attribute's value is one of `values`.
    public static func `in`<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value>, _ values: [Value]
    ) -> Predicate {
        oneOf(keyPath, values.map(Optional.some))
    }

    /// The optional attribute's value is one of `values`.
    public static func `in`<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: KeyPath<PlainObject, Value?>, _ values: [Value?]
    ) -> Predicate {
        oneOf(keyPath, values)
    }

    private static func oneOf<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ keyPath: PartialKeyPath<PlainObject>, _ values: [Value?]
    ) -> Predicate {
        Predicate { () throws(SkerryError) in
            let name = try PlainObject.attributeName(keyPath)
            var encoded: [AttributeValue] = []
            for value in values { encoded.append(try encode(value, PlainObject.self, name)) }
            return .isIn(key: name, encoded)
        }
    }

    private static func text<PlainObject: ManagedObjectConvertible>(
        _ keyPath: PartialKeyPath<PlainObject>, _ op: StringOperator, _ value: String, _ caseInsensitive: Bool
    ) -> Predicate {
        Predicate { () throws(SkerryError) in
            .string(
                key: try PlainObject.attributeName(keyPath), op, value,
                caseInsensitive ? [.caseInsensitive, .diacriticInsensitive] : [])
        }
    }

    /// The string attribute contains `value`; case- and diacritic-insensitive by default, as in Sworm.
    public static func contains<PlainObject: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject, String>, _ value: String, caseInsensitive: Bool = true
    ) -> Predicate {
        text(keyPath, .contains, value, caseInsensitive)
    }
    /// The optional string attribute contains `value`.
    public static func contains<PlainObject: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject, String?>, _ value: String, caseInsensitive: Bool = true
    ) -> Predicate {
        text(keyPath, .contains, value, caseInsensitive)
    }
    /// The string attribute begins with `value`.
    public static func beginsWith<PlainObject: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject, String>, _ value: String, caseInsensitive: Bool = true
    ) -> Predicate {
        text(keyPath, .beginsWith, value, caseInsensitive)
    }
    /// The optional string attribute begins with `value`.
    public static func beginsWith<PlainObject: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject, String?>, _ value: String, caseInsensitive: Bool = true
    ) -> Predicate {
        text(keyPath, .beginsWith, value, caseInsensitive)
    }
    /// The string attribute ends with `value`.
    public static func endsWith<PlainObject: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject, String>, _ value: String, caseInsensitive: Bool = true
    ) -> Predicate {
        text(keyPath, .endsWith, value, caseInsensitive)
    }
    /// The optional string attribute ends with `value`.
    public static func endsWith<PlainObject: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject, String?>, _ value: String, caseInsensitive: Bool = true
    ) -> Predicate {
        text(keyPath, .endsWith, value, caseInsensitive)
    }
}
