import Foundation

/// Key-value coding as Core Data code writes it: `object.value(forKey: "title") as? String`,
/// `object.setValue(nil, forKey: "year")`, for attributes and relationships alike.
///
/// The typed forms (``value(forKey:as:)``, ``setValue(_:forKey:)``) remain the fast ones; these
/// take and return `Any?` as NSManagedObject's do, and throw a ``SkerryError`` where Core Data
/// would raise an Objective-C exception (an unknown key, a value of the wrong type).
extension EntityObject {
    /// The value of an attribute or relationship, as NSManagedObject's `value(forKey:)` returns it:
    /// nil when the attribute has no value; numbers and Booleans as `NSNumber` (so `as? Int`,
    /// `as? Int32`, `as? Double`, `as? Bool` and `as? NSNumber` all work, as with Core Data);
    /// decimals as `NSDecimalNumber` (`as? Decimal` works); strings, dates, data, UUIDs and URLs
    /// as `String`, `Date`, `Data`, `UUID` and `URL`; a to-one relationship's object
    /// (``EntityObject``) or nil; a to-many relationship's objects as `Set<EntityObject>`, an
    /// ordered one's as `[EntityObject]`.
    ///
    /// ```swift
    /// let title = try book.value(forKey: "title") as? String
    /// ```
    /// - Throws: ``SkerryError/Code/unknownAttribute`` when the entity has no property named
    ///   `key`; as ``value(forKey:as:)`` otherwise.
    public func value(forKey key: String) throws(SkerryError) -> Any? {
        if let index = entity.attributeIndex(named: key) {
            return Self.boxed(try value(at: index, as: AttributeValue.self), type: entity.attributes[index].type)
        }
        if let relationship = entity.relationship(named: key) {
            if !relationship.isToMany { return try relatedObject(forKey: key) }
            let members = try relatedObjects(forKey: key)
            return relationship.isOrdered ? members : Set(members)
        }
        throw SkerryError(
            .unknownAttribute, "Entity '\(entity.name)' has no attribute or relationship '\(key)'.",
            entityName: entity.name, key: key)
    }

    /// Sets an attribute or relationship from a value of any type, as NSManagedObject's
    /// `setValue(_:forKey:)` does: nil clears it (an attribute's value, a to-one relationship's
    /// object, a to-many relationship's members); numbers may come as any integer or floating-point
    /// type or as `NSNumber`, decimals as `Decimal` or `NSDecimalNumber`; a to-one relationship takes
    /// an ``EntityObject``, a to-many one a `Set` or an `Array` of them.
    ///
    /// ```swift
    /// try book.setValue(nil, forKey: "year")
    /// ```
    /// - Throws: ``SkerryError/Code/unknownAttribute`` when the entity has no property named
    ///   `key`; ``SkerryError/Code/wrongValueType`` when `value` cannot be stored there (a string
    ///   for a number, a number out of range, an object for an attribute); as
    ///   ``setValue(_:forKey:)`` and ``setRelatedObject(_:forKey:)`` otherwise.
    public func setValue(_ value: Any?, forKey key: String) throws(SkerryError) {
        if let index = entity.attributeIndex(named: key) {
            let attribute = entity.attributes[index]
            guard let converted = Self.attributeValue(value, for: attribute.type) else {
                throw SkerryError(
                    .wrongValueType,
                    "Cannot store a value of type \(value.map { "\(type(of: $0))" } ?? "nil") in '\(entity.name).\(key)', which is \(attribute.type).",
                    entityName: entity.name, key: key, objectID: objectID)
            }
            try setValue(converted, at: index)
            return
        }
        guard let relationship = entity.relationship(named: key) else {
            throw SkerryError(
                .unknownAttribute, "Entity '\(entity.name)' has no attribute or relationship '\(key)'.",
                entityName: entity.name, key: key)
        }
        if !relationship.isToMany {
            switch value {
            case nil: try setRelatedObject(nil, forKey: key)
            case let object as EntityObject: try setRelatedObject(object, forKey: key)
            default: throw relationshipValueError(value, key)
            }
            return
        }
        switch value {
        case nil: try setRelatedObjects([], forKey: key)
        case let objects as [EntityObject]: try setRelatedObjects(objects, forKey: key)
        case let objects as Set<EntityObject>: try setRelatedObjects(Array(objects), forKey: key)
        default: throw relationshipValueError(value, key)
        }
    }

    private func relationshipValueError(_ value: Any?, _ key: String) -> SkerryError {
        SkerryError(
            .wrongValueType,
            "Cannot set the relationship '\(entity.name).\(key)' to a value of type \(value.map { "\(type(of: $0))" } ?? "nil").",
            entityName: entity.name, key: key, objectID: objectID)
    }

    /// A stored value in the form Core Data's key-value coding returns.
    static func boxed(_ value: AttributeValue, type: AttributeType) -> Any? {
        switch value {
        case .null: return nil
        case .bool(let bool): return NSNumber(value: bool)
        case .int(let int):
            return type == .boolean ? NSNumber(value: int != 0) : NSNumber(value: int)
        case .double(let double): return type == .float ? NSNumber(value: Float(double)) : NSNumber(value: double)
        case .decimal(let decimal): return NSDecimalNumber(decimal: decimal)
        case .date(let date): return date
        case .string(let string): return string
        case .data(let data): return data
        case .uuid(let uuid): return uuid
        case .url(let url): return url
        }
    }

    /// `value` as a stored value of an attribute of `type`, or nil when it cannot be one: a
    /// number converts to any numeric type that holds it exactly (range and NaN checks are
    /// ``setValue(_:at:)``'s), an `NSNumber` as Foundation converts it.
    static func attributeValue(_ value: Any?, for type: AttributeType) -> AttributeValue? {
        guard let value else { return .null }
        if let stored = value as? AttributeValue { return stored }
        if Swift.type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return numberValue(number, for: type)
        }
        switch type {
        case .integer16, .integer32, .integer64:
            if let integer = value as? any BinaryInteger { return Int64(exactly: integer).map { .int($0) } }
            if let floating = value as? any BinaryFloatingPoint { return Int64(exactly: floating).map { .int($0) } }
        case .float, .double:
            if let floating = value as? any BinaryFloatingPoint { return .double(Double(floating)) }
            if let integer = value as? any BinaryInteger { return .double(Double(integer)) }
        case .decimal:
            if let integer = value as? any BinaryInteger { return Int64(exactly: integer).map { .decimal(Decimal($0)) } }
            if let floating = value as? any BinaryFloatingPoint { return .decimal(Decimal(Double(floating))) }
        default:
            break
        }
        if let convertible = value as? any AttributeValueConvertible {
            let converted = convertible.attributeValue
            return converted.fits(type) ? converted : nil
        }
        return nil
    }

    /// An `NSNumber` (what Core Data code passes for every number and Boolean) for `type`.
    private static func numberValue(_ number: NSNumber, for type: AttributeType) -> AttributeValue? {
        switch type {
        case .boolean: return (number as? Bool).map { .bool($0) }
        case .integer16, .integer32, .integer64: return (number as? Int64).map { .int($0) }
        case .float, .double: return .double(number.doubleValue)
        case .decimal: return .decimal(number.decimalValue)
        default: return nil
        }
    }
}
