/// The aggregate functions of ``FetchPredicate/aggregate(_:keyPath:_:_:)``.
public enum AggregateFunction: String, Sendable, Hashable {
    /// The number of members (`@count`).
    case count
    /// The sum of the members' values (`@sum`).
    case sum
    /// The mean of the members' values (`@avg`).
    case average = "avg"
    /// The smallest of the members' values (`@min`).
    case min
    /// The largest of the members' values (`@max`).
    case max
}

/// The comparison operators of a predicate.
public enum ComparisonOperator: String, Sendable, Hashable {
    case equal = "=="
    case notEqual = "!="
    case lessThan = "<"
    case lessThanOrEqual = "<="
    case greaterThan = ">"
    case greaterThanOrEqual = ">="
}

/// A condition on an entity's attributes, used to filter fetches and batch deletes.
///
/// A predicate is built in Swift, most easily with ``AttributeKey``'s operators:
///
/// ```swift
/// let recent = AttributeKey("year") >= 1960 && AttributeKey("title").beginsWith("d", options: .caseInsensitive)
/// ```
///
/// or parsed from Core Data's predicate format language with ``init(format:_:)``.
///
/// Keys may be key paths through relationships: through to-one ones (`"author.name"`, nil when a
/// step is empty), and through to-many ones, where the condition holds when it holds for some
/// related object (`"tags.label"`, Core Data's implicit ANY). ``RelationshipKey`` builds
/// conditions on the members of to-many relationships.
///
/// It compiles to SQL whose values are all bound parameters, and it evaluates in memory with the
/// same answers, so that a fetch that includes a context's unsaved changes returns what the same
/// fetch would return after a save. Comparisons follow SQLite's rules: a comparison with a nil
/// attribute value is false (except `== nil` and `!= value`, which are nil-safe), strings compare by
/// their UTF-8 bytes, and numbers of different widths compare by value.
public indirect enum FetchPredicate: Sendable, Hashable {
    /// Always true or always false.
    case constant(Bool)
    /// `key op value`. With `.null`, `==` and `!=` test for nil; other operators are false.
    case comparison(key: String, ComparisonOperator, AttributeValue)
    /// The attribute's value is one of `values` (SQL `IN`).
    case isIn(key: String, [AttributeValue])
    /// `lower <= value <= upper`.
    case between(key: String, AttributeValue, AttributeValue)
    /// A string attribute begins with, ends with, contains or is LIKE a pattern.
    case string(key: String, StringOperator, String, StringComparisonOptions)
    /// All of the predicates hold (true when empty).
    case and([FetchPredicate])
    /// Any of the predicates holds (false when empty).
    case or([FetchPredicate])
    /// The predicate does not hold.
    case not(FetchPredicate)
    /// Some object related through `relationship` (a relationship, or a key path of them) matches
    /// `predicate` (Core Data's `ANY`).
    case any(relationship: String, FetchPredicate)
    /// Every object related through `relationship` (a relationship, or a key path of them) matches
    /// `predicate` (Core Data's `ALL`); true when there are none.
    case all(relationship: String, FetchPredicate)
    /// The number of members of a to-many relationship (possibly reached through to-one ones,
    /// `"author.books"`) compared with `count` (`@count`).
    case count(relationship: String, ComparisonOperator, Int)
    /// An SQL condition on the entity's columns (its attributes, by name), with a `?` for each of
    /// `values`, which are always bound as parameters, never spliced into the text. The escape hatch
    /// for what the other cases cannot say. For unsaved objects SQLite evaluates it over the
    /// objects' values (with the columns' types), so the answer stays the store's.
    ///
    /// The condition must be exactly one SQL expression that reads only the entity's attribute
    /// columns: text that closes a parenthesis it did not open, holds a `;`, names parameters
    /// other than `?`, or reads another table or column (checked by SQLite's authorizer) is
    /// refused with ``SkerryError/Code/invalidArgument``. A trailing `--` comment is allowed.
    case sql(String, [AttributeValue])
    /// `function` over the members of a to-many relationship, compared with `value` (Core Data's
    /// `@count`, `@sum`, `@avg`, `@min`, `@max`). `keyPath` leads through the to-many
    /// relationship (possibly after to-one ones) and, except for `.count`, on to an attribute of
    /// the members: `.aggregate(.sum, keyPath: "books.pages", .greaterThan, 500)` is Core Data's
    /// `books.@sum.pages > 500`. Members' nil values are skipped; `.sum` of no values is 0,
    /// `.average`, `.min` and `.max` of none are nil (and compare false, except `== nil`).
    case aggregate(AggregateFunction, keyPath: String, ComparisonOperator, AttributeValue)
    /// The number of members of a to-many relationship for which `predicate` holds (keys in it
    /// are the members'), compared with `count`: Core Data's
    /// `SUBQUERY(relationship, $x, predicate).@count`.
    case countMatching(relationship: String, FetchPredicate, ComparisonOperator, Int)
    /// The object itself (`keyPath` empty, Core Data's `SELF`), or the object reached through
    /// `keyPath`'s relationships, is one of `objectIDs`: `SELF == %@`, `author IN %@`,
    /// `ANY books == %@`.
    case isObject(keyPath: String, in: [ObjectID])
    /// A predicate parsed from a format with `$VARIABLE`s, waiting for
    /// ``withSubstitutionVariables(_:)``. A fetch with it throws
    /// ``SkerryError/Code/invalidPredicateFormat``, naming the variables without values.
    case unsubstituted(PredicateTemplate)

    /// How deeply predicates may nest (`NOT`, `ANY`, `ALL`, subqueries, parentheses, the steps of a
    /// key path). Deeper predicates, parsed or built in code, are refused with
    /// ``SkerryError/Code/invalidPredicateFormat`` or ``SkerryError/Code/invalidArgument``, so
    /// that no input can exhaust the stack. `AND`s and `OR`s joined with `&&` and `||` do not
    /// nest: `a && b && c` is one `.and` of three.
    public static let maximumDepth = 100

    /// Both predicates hold. Joins into an existing `.and` rather than nesting, so that a predicate
    /// built in a loop stays flat.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.and(let left), .and(let right)): return .and(left + right)
        case (.and(let left), _): return .and(left + [rhs])
        case (_, .and(let right)): return .and([lhs] + right)
        default: return .and([lhs, rhs])
        }
    }

    /// Either predicate holds. Joins into an existing `.or` rather than nesting.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.or(let left), .or(let right)): return .or(left + right)
        case (.or(let left), _): return .or(left + [rhs])
        case (_, .or(let right)): return .or([lhs] + right)
        default: return .or([lhs, rhs])
        }
    }

    /// The predicate does not hold.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate {
        .not(predicate)
    }
}

/// An attribute named in a predicate or sort, with operators that build ``FetchPredicate``s.
///
/// ```swift
/// AttributeKey("year") < 1970
/// AttributeKey("isbn").isIn(["a", "b"])
/// AttributeKey("subtitle").isNil
/// ```
public struct AttributeKey: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The attribute's name.
    public let name: String

    /// Names an attribute.
    public init(_ name: String) { self.name = name }

    /// Names an attribute with a string literal.
    public init(stringLiteral value: String) { self.name = value }

    /// The attribute has no value.
    public var isNil: FetchPredicate { .comparison(key: name, .equal, .null) }
    /// The attribute has a value.
    public var isNotNil: FetchPredicate { .comparison(key: name, .notEqual, .null) }

    /// The attribute's value is one of `values`.
    public func isIn<V: AttributeValueConvertible>(_ values: some Sequence<V>) -> FetchPredicate {
        .isIn(key: name, values.map(\.attributeValue))
    }

    /// The attribute's value lies in `range` (both ends included).
    public func between<V: AttributeValueConvertible & Comparable>(_ range: ClosedRange<V>) -> FetchPredicate {
        .between(key: name, range.lowerBound.attributeValue, range.upperBound.attributeValue)
    }

    /// The string attribute begins with `prefix`.
    public func beginsWith(_ prefix: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .string(key: name, .beginsWith, prefix, options)
    }

    /// The string attribute ends with `suffix`.
    public func endsWith(_ suffix: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .string(key: name, .endsWith, suffix, options)
    }

    /// The string attribute contains `text`.
    public func contains(_ text: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .string(key: name, .contains, text, options)
    }

    /// The string attribute matches `pattern`, where `*` matches any run of characters and `?` one.
    public func like(_ pattern: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .string(key: name, .like, pattern, options)
    }

    /// The attribute equals `value` (a nil optional tests for nil).
    public static func == (key: AttributeKey, value: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(key: key.name, .equal, value.attributeValue)
    }
    /// The attribute differs from `value` (a nil optional tests for a value).
    public static func != (key: AttributeKey, value: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(key: key.name, .notEqual, value.attributeValue)
    }
    /// The attribute is less than `value`.
    public static func < (key: AttributeKey, value: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(key: key.name, .lessThan, value.attributeValue)
    }
    /// The attribute is less than or equal to `value`.
    public static func <= (key: AttributeKey, value: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(key: key.name, .lessThanOrEqual, value.attributeValue)
    }
    /// The attribute is greater than `value`.
    public static func > (key: AttributeKey, value: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(key: key.name, .greaterThan, value.attributeValue)
    }
    /// The attribute is greater than or equal to `value`.
    public static func >= (key: AttributeKey, value: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(key: key.name, .greaterThanOrEqual, value.attributeValue)
    }
}

/// A to-many relationship named in a predicate, with the conditions on its members:
///
/// ```swift
/// RelationshipKey("books").any(AttributeKey("year") < 1970)
/// RelationshipKey("books").all(AttributeKey("inPrint") == true)
/// RelationshipKey("books").count >= 2
/// ```
public struct RelationshipKey: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The relationship's name (or a key path through to-one relationships ending in it).
    public let name: String

    /// Names a relationship.
    public init(_ name: String) { self.name = name }

    /// Names a relationship with a string literal.
    public init(stringLiteral value: String) { self.name = value }

    /// Some member matches `predicate`.
    public func any(_ predicate: FetchPredicate) -> FetchPredicate { .any(relationship: name, predicate) }
    /// Every member matches `predicate` (true when there are none).
    public func all(_ predicate: FetchPredicate) -> FetchPredicate { .all(relationship: name, predicate) }
    /// The number of members, to compare with an integer.
    public var count: RelationshipCount { RelationshipCount(name: name) }
}

/// The number of members of a to-many relationship, compared with an integer to make a predicate.
public struct RelationshipCount: Sendable, Hashable {
    let name: String

    /// The count equals `value`.
    public static func == (lhs: RelationshipCount, value: Int) -> FetchPredicate { .count(relationship: lhs.name, .equal, value) }
    /// The count differs from `value`.
    public static func != (lhs: RelationshipCount, value: Int) -> FetchPredicate { .count(relationship: lhs.name, .notEqual, value) }
    /// The count is less than `value`.
    public static func < (lhs: RelationshipCount, value: Int) -> FetchPredicate { .count(relationship: lhs.name, .lessThan, value) }
    /// The count is at most `value`.
    public static func <= (lhs: RelationshipCount, value: Int) -> FetchPredicate { .count(relationship: lhs.name, .lessThanOrEqual, value) }
    /// The count is greater than `value`.
    public static func > (lhs: RelationshipCount, value: Int) -> FetchPredicate { .count(relationship: lhs.name, .greaterThan, value) }
    /// The count is at least `value`.
    public static func >= (lhs: RelationshipCount, value: Int) -> FetchPredicate {
        .count(relationship: lhs.name, .greaterThanOrEqual, value)
    }
}

/// One key of a sort: an attribute and a direction.
///
/// Sorting follows SQLite's order, in the store and in memory alike: nil first when ascending
/// (last when descending), strings by UTF-8 bytes, data and UUIDs by bytes. Objects that tie on
/// every key keep the store's insertion order; unsaved objects come after saved ones.
public struct SortKey: Sendable, Hashable {
    /// The attribute to sort on.
    public let key: String
    /// Whether smaller values come first.
    public let ascending: Bool

    /// Sorts on `key`.
    /// - Parameters:
    ///   - key: an attribute name.
    ///   - ascending: true for smallest first (the default).
    public init(_ key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}
