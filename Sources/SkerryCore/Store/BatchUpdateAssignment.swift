import Foundation

/// One attribute a batch update (``BatchUpdateRequest``) sets, checked against the model: a
/// stored attribute of the entity, and a value the store can compute into it. The stores write
/// the assignments with ``BatchUpdateStatements``.
package struct BatchUpdateAssignment: Sendable {
    /// The attribute set.
    package let attribute: AttributeDescription
    /// What it is set to.
    package let value: Value

    /// A value of an assignment, its constants already of the types they are computed in.
    package indirect enum Value: Sendable {
        case constant(AttributeValue)
        case column(AttributeDescription)
        case arithmetic(BatchUpdateExpression.ArithmeticOperator, Value, Value)
    }

    /// The assignments of `updates` on `entity`, in the order of the entity's attributes.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for no updates, a relationship, a transient
    ///   or derived attribute, a key path through relationships, an unsupported expression;
    ///   ``SkerryError/Code/unknownAttribute`` for a name the entity does not define;
    ///   ``SkerryError/Code/wrongValueType`` for a value (or another attribute) of a type that
    ///   does not fit the attribute, or arithmetic on an attribute that is not a number;
    ///   ``SkerryError/Code/missingRequiredValue`` for a nil constant of a required attribute.
    package static func assignments(_ updates: [String: BatchUpdateExpression], of entity: EntityDescription) throws(SkerryError)
        -> [BatchUpdateAssignment]
    {
        guard !updates.isEmpty else {
            throw SkerryError(
                .invalidArgument, "The batch update of '\(entity.name)' sets no attribute: set propertiesToUpdate. Nothing was updated.",
                entityName: entity.name)
        }
        var assignments: [(index: Int, assignment: BatchUpdateAssignment)] = []
        for (name, expression) in updates {
            let attribute = try target(name, of: entity)
            let value = try resolve(expression, for: attribute, of: entity)
            assignments.append((entity.attributeIndex(named: name) ?? 0, BatchUpdateAssignment(attribute: attribute, value: value)))
        }
        return assignments.sorted { $0.index < $1.index }.map(\.assignment)
    }

    /// The attribute `name` of `entity`, which a batch update can set.
    private static func target(_ name: String, of entity: EntityDescription) throws(SkerryError) -> AttributeDescription {
        let attribute = try storedAttribute(name, of: entity, role: "set")
        if attribute.derivation != nil {
            throw SkerryError(
                .invalidArgument,
                "'\(entity.name).\(name)' is a derived attribute: a save computes its value, a batch update does not set it. Nothing was updated.",
                entityName: entity.name, key: name)
        }
        return attribute
    }

    /// The stored attribute `name` of `entity`, which a batch update sets or reads (`role`).
    private static func storedAttribute(_ name: String, of entity: EntityDescription, role: String) throws(SkerryError)
        -> AttributeDescription
    {
        guard let attribute = entity.attribute(named: name) else {
            if entity.relationship(named: name) != nil {
                throw SkerryError(
                    .invalidArgument,
                    "'\(entity.name).\(name)' is a relationship: a batch update \(role == "set" ? "sets" : "reads") attributes only (as Core Data's, which cannot alter relationships). Nothing was updated.",
                    entityName: entity.name, key: name)
            }
            if name.contains(".") {
                throw SkerryError(
                    .invalidArgument,
                    "A batch update reads attributes of the object updated, not through relationships ('\(name)'). Nothing was updated.",
                    entityName: entity.name, key: name)
            }
            throw SkerryError(
                .unknownAttribute, "Entity '\(entity.name)' has no attribute '\(name)' to \(role). Nothing was updated.",
                entityName: entity.name, key: name)
        }
        if attribute.isTransient {
            throw SkerryError(
                .invalidArgument,
                "'\(entity.name).\(name)' is transient: it lives in memory only, and a batch update works in the store. Nothing was updated.",
                entityName: entity.name, key: name)
        }
        return attribute
    }

    /// `expression` as the value of `attribute`.
    private static func resolve(_ expression: BatchUpdateExpression, for attribute: AttributeDescription, of entity: EntityDescription)
        throws(SkerryError) -> Value
    {
        let name = "'\(entity.name).\(attribute.name)'"
        switch expression {
        case .constant(let value):
            guard let converted = convert(value, to: attribute.type), !converted.isNaN else {
                throw SkerryError(
                    .wrongValueType,
                    "A batch update cannot set \(name), which is \(attribute.type), to \(value). Nothing was updated.",
                    entityName: entity.name, key: attribute.name)
            }
            if converted.isNull && !attribute.isOptional {
                throw SkerryError(
                    .missingRequiredValue, "A batch update cannot clear \(name): the attribute is required. Nothing was updated.",
                    entityName: entity.name, key: attribute.name)
            }
            return .constant(converted)
        case .keyPath(let path):
            let source = try storedAttribute(path, of: entity, role: "read")
            guard converts(source.type, to: attribute.type) else {
                throw SkerryError(
                    .wrongValueType,
                    "A batch update cannot set \(name), which is \(attribute.type), to '\(path)', which is \(source.type). Nothing was updated.",
                    entityName: entity.name, key: attribute.name)
            }
            return .column(source)
        case .arithmetic:
            guard attribute.type.isInteger || attribute.type == .double || attribute.type == .float else {
                throw SkerryError(
                    .wrongValueType,
                    "A batch update computes arithmetic for integer, float and double attributes; \(name) is \(attribute.type). Nothing was updated.",
                    entityName: entity.name, key: attribute.name)
            }
            return try operand(expression, in: attribute, of: entity)
        case .unsupported(let what):
            throw SkerryError(
                .invalidArgument, "A batch update cannot compute \(what) for \(name). Nothing was updated.",
                entityName: entity.name, key: attribute.name)
        }
    }

    /// `expression` as an operand of arithmetic computed for `attribute` (a number): integers for
    /// an integer attribute, doubles for a floating-point one.
    private static func operand(_ expression: BatchUpdateExpression, in attribute: AttributeDescription, of entity: EntityDescription)
        throws(SkerryError) -> Value
    {
        let integer = attribute.type.isInteger
        func wrongType(_ what: String) -> SkerryError {
            SkerryError(
                .wrongValueType,
                "A batch update cannot compute '\(entity.name).\(attribute.name)', which is \(attribute.type), with \(what). Nothing was updated.",
                entityName: entity.name, key: attribute.name)
        }
        switch expression {
        case .constant(let value):
            guard let number = convert(value, to: integer ? .integer64 : .double), !number.isNull, !number.isNaN else {
                throw wrongType("\(value)")
            }
            return .constant(number)
        case .keyPath(let path):
            let source = try storedAttribute(path, of: entity, role: "read")
            guard source.type.isInteger || (!integer && (source.type == .double || source.type == .float)) else {
                throw wrongType("'\(path)', which is \(source.type)")
            }
            return .column(source)
        case .arithmetic(let op, let left, let right):
            return .arithmetic(op, try operand(left, in: attribute, of: entity), try operand(right, in: attribute, of: entity))
        case .unsupported(let what):
            throw SkerryError(
                .invalidArgument, "A batch update cannot compute \(what) for '\(entity.name).\(attribute.name)'. Nothing was updated.",
                entityName: entity.name, key: attribute.name)
        }
    }

    /// `value` as a value of `type`, or nil when it is not one: an integer fits Boolean (0 or 1),
    /// floating-point and decimal attributes, a whole floating-point number integer ones.
    static func convert(_ value: AttributeValue, to type: AttributeType) -> AttributeValue? {
        var converted = value
        switch (value, type) {
        case (.int(let number), .boolean):
            guard number == 0 || number == 1 else { return nil }
            converted = .bool(number == 1)
        case (.int(let number), .float), (.int(let number), .double): converted = .double(Double(number))
        case (.int(let number), .decimal): converted = .decimal(Decimal(number))
        case (.double(let number), .integer16), (.double(let number), .integer32), (.double(let number), .integer64):
            guard let exact = Int64(exactly: number) else { return nil }
            converted = .int(exact)
        case (.double(let number), .decimal): converted = .decimal(Decimal(number))
        default: break
        }
        return converted.fits(type) ? converted : nil
    }

    /// Whether a value of `source`'s type is a value of `target`'s without loss, in both stores'
    /// columns: the same type, an integer of a narrower width, an integer or `float` as a `double`.
    static func converts(_ source: AttributeType, to target: AttributeType) -> Bool {
        if source == target { return true }
        if source.isInteger && target.isInteger {
            return target.integerRange.lowerBound <= source.integerRange.lowerBound
                && source.integerRange.upperBound <= target.integerRange.upperBound
        }
        return target == .double && (source.isInteger || source == .float)
    }
}
