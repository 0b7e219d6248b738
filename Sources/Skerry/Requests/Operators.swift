import SkerryCore

/// The predicate does not hold.
public prefix func ! (original: Predicate) -> Predicate { Query.not(original) }
/// Both predicates hold.
public func && (left: Predicate, right: Predicate) -> Predicate { Query.and(left, right) }
/// Either predicate holds.
public func || (left: Predicate, right: Predicate) -> Predicate { Query.or(left, right) }

/// The attribute equals `value`.
public func == <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, value: Value
) -> Predicate { Query.equalTo(keyPath, value) }
/// The attribute differs from `value`.
public func != <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, value: Value
) -> Predicate { Query.notEqualTo(keyPath, value) }
/// The attribute is greater than `value`.
public func > <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, value: Value
) -> Predicate { Query.greaterThan(keyPath, value) }
/// The attribute is less than `value`.
public func < <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, value: Value
) -> Predicate { Query.lessThan(keyPath, value) }
/// The attribute is greater than or equal to `value`.
public func >= <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, value: Value
) -> Predicate { Query.greaterThanOrEqualTo(keyPath, value) }
/// The attribute is less than or equal to `value`.
public func <= <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, value: Value
) -> Predicate { Query.lessThanOrEqualTo(keyPath, value) }
/// The attribute's value is one of `values` (SQL `IN`).
public func === <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value>, values: [Value]
) -> Predicate { Query.in(keyPath, values) }

/// The optional attribute equals `value`; `== nil` tests for no value.
public func == <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, value: Value?
) -> Predicate { Query.equalTo(keyPath, value) }
/// The optional attribute differs from `value`; `!= nil` tests for a value.
public func != <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, value: Value?
) -> Predicate { Query.notEqualTo(keyPath, value) }
/// The optional attribute is greater than `value` (false when it has no value).
public func > <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, value: Value?
) -> Predicate { Query.greaterThan(keyPath, value) }
/// The optional attribute is less than `value` (false when it has no value).
public func < <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, value: Value?
) -> Predicate { Query.lessThan(keyPath, value) }
/// The optional attribute is greater than or equal to `value` (false when it has no value).
public func >= <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, value: Value?
) -> Predicate { Query.greaterThanOrEqualTo(keyPath, value) }
/// The optional attribute is less than or equal to `value` (false when it has no value).
public func <= <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, value: Value?
) -> Predicate { Query.lessThanOrEqualTo(keyPath, value) }
/// The optional attribute's value is one of `values`.
public func === <PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
    keyPath: KeyPath<PlainObject, Value?>, values: [Value?]
) -> Predicate { Query.in(keyPath, values) }
