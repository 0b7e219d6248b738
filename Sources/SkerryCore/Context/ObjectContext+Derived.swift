import Foundation

extension ObjectContext {
    /// Computes the derived attributes of the objects a save writes (Core Data computes them when
    /// the object is saved): key paths, counts and aggregates of to-many relationships, text
    /// functions, the time of the save.
    func computeDerivedAttributes(_ objects: [EntityObject]) throws(SkerryError) {
        let now = Date()
        for object in objects where !object.entity.derivedAttributeIndexes.isEmpty {
            for index in object.entity.derivedAttributeIndexes {
                let attribute = object.entity.attributes[index]
                guard let derivation = attribute.derivation else { continue }
                let computed = try Self.derivedValue(derivation, of: object, now: now)
                let value = try Self.storedDerivedValue(computed, attribute, derivation, object.entity, now: now, objectID: object.objectID)
                if try object.value(at: index, as: AttributeValue.self) != value { try object.setValue(value, at: index) }
            }
        }
    }

    /// `computed`, the value of `attribute`'s `derivation`, as the attribute holds it.
    private static func storedDerivedValue(
        _ computed: AttributeValue, _ attribute: AttributeDescription, _ derivation: AttributeDerivation, _ entity: EntityDescription,
        now: Date, objectID: ObjectID?
    ) throws(SkerryError) -> AttributeValue {
        var computed = computed
        if derivation == .now, attribute.type != .date {
            // A number attribute holds the date as Core Data's SQLite store keeps one.
            computed = .double(now.timeIntervalSinceReferenceDate)
        }
        guard let value = SchemaMapping.convert(computed, to: attribute.type) else {
            throw SkerryError(
                .wrongValueType,
                "The derived attribute '\(entity.name).\(attribute.name)' (\(derivation)) computed \(computed), which is not a \(attribute.type).",
                entityName: entity.name, key: attribute.name, objectID: objectID)
        }
        return value
    }

    /// Computes the derived attributes of `values`, a new object of `entity` that has no related
    /// objects (a row of a batch insert), as a save computes them for such an object: key paths
    /// and text functions of its own attributes, nil through a relationship, a count of 0, a sum
    /// of 0 and no minimum, maximum or average, the time `now`.
    static func computeDerivedAttributes(_ values: inout [AttributeValue], of entity: EntityDescription, now: Date) throws(SkerryError) {
        func own(_ path: String) -> AttributeValue {
            guard !path.contains("."), let index = entity.attributeIndex(named: path) else { return .null }
            return values[index]
        }
        for index in entity.derivedAttributeIndexes {
            let attribute = entity.attributes[index]
            guard let derivation = attribute.derivation else { continue }
            let computed: AttributeValue
            switch derivation {
            case .now: computed = .date(now)
            case .keyPath(let path): computed = own(path)
            case .function(let name, let path):
                guard case .string(let text) = own(path) else {
                    computed = .null
                    break
                }
                computed = .string(AttributeDerivation.apply(name, to: text))
            case .count: computed = .int(0)
            case .aggregate(let function, _, _): computed = function == "sum" ? .decimal(0) : .null
            }
            values[index] = try storedDerivedValue(computed, attribute, derivation, entity, now: now, objectID: nil)
        }
    }

    private static func derivedValue(_ derivation: AttributeDerivation, of object: EntityObject, now: Date) throws(SkerryError)
        -> AttributeValue
    {
        switch derivation {
        case .now:
            return .date(now)
        case .keyPath(let path):
            return try value(atKeyPath: path, of: object)
        case .function(let name, let path):
            guard case .string(let text) = try value(atKeyPath: path, of: object) else { return .null }
            return .string(AttributeDerivation.apply(name, to: text))
        case .count(let relationship):
            return .int(Int64(try object.relatedObjects(forKey: relationship).count))
        case .aggregate(let function, let relationship, let attribute):
            var numbers: [Decimal] = []
            for member in try object.relatedObjects(forKey: relationship) {
                switch try member.value(forKey: attribute, as: AttributeValue.self) {
                case .int(let number): numbers.append(Decimal(number))
                case .double(let number): numbers.append(Decimal(number))
                case .decimal(let number): numbers.append(number)
                case .bool(let flag): numbers.append(flag ? 1 : 0)
                default: continue
                }
            }
            switch function {
            case "sum": return .decimal(numbers.reduce(0, +))
            case "min": return numbers.min().map(AttributeValue.decimal) ?? .null
            case "max": return numbers.max().map(AttributeValue.decimal) ?? .null
            default: return numbers.isEmpty ? .null : .decimal(numbers.reduce(0, +) / Decimal(numbers.count))
            }
        }
    }

    /// The attribute value at `path`, through to-one relationships; nil where one is empty.
    private static func value(atKeyPath path: String, of object: EntityObject) throws(SkerryError) -> AttributeValue {
        var current = object
        let parts = path.split(separator: ".").map(String.init)
        for part in parts.dropLast() {
            guard let next = try current.relatedObject(forKey: part) else { return .null }
            current = next
        }
        return try current.value(forKey: parts.last ?? path, as: AttributeValue.self)
    }
}
