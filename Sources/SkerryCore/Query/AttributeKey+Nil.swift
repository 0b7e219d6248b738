/// `== nil` and `!= nil`, as Core Data predicates write them (`year == nil`): the literal has no
/// type of its own to pick an `AttributeValueConvertible` with, so it gets its own overloads.
extension AttributeKey {
    /// The attribute has no value (the same as ``isNil``).
    public static func == (key: AttributeKey, _: _OptionalNilComparisonType) -> FetchPredicate {
        key.isNil
    }

    /// The attribute has a value (the same as ``isNotNil``).
    public static func != (key: AttributeKey, _: _OptionalNilComparisonType) -> FetchPredicate {
        key.isNotNil
    }
}
