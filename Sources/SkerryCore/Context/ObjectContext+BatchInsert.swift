import Foundation

extension ObjectContext {
    /// Runs a batch insert: writes the request's objects to the store that holds its entity in
    /// one transaction, without registering objects in this context (Core Data's
    /// `execute(_:)` of an `NSBatchInsertRequest`). This context is not changed: merge
    /// `result.changes` into it (and into other live contexts) to see the objects.
    ///
    /// The rows get keys from the store's own sequence (a later insert never gets one of them),
    /// versions for optimistic locking, persistent history (an insert per object, an update per
    /// object a uniqueness constraint matched) when the store records it, and reach other
    /// processes as a save does. A row that matches an object already stored through a uniqueness
    /// constraint updates it (see ``BatchInsertRequest``).
    /// - Parameter request: the objects to insert.
    /// - Returns: what the request's ``BatchInsertRequest/resultType`` asks for.
    /// - Throws: ``SkerryError/Code/unknownEntity``; ``SkerryError/Code/invalidArgument`` for an
    ///   abstract entity or a key naming a relationship; ``SkerryError/Code/unknownAttribute`` for
    ///   a key that names no attribute; ``SkerryError/Code/wrongValueType`` for a value that does
    ///   not fit its attribute; ``SkerryError/Code/missingRequiredValue`` for a required attribute
    ///   left without a value (each naming the attribute and the row's index; nothing is written);
    ///   the store's errors (nothing is written).
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws(SkerryError) -> BatchInsertResult {
        checkConfinement()
        let entity = try coordinator.entity(named: request.entityName)
        guard !entity.isAbstract else {
            throw SkerryError(
                .invalidArgument, "A batch insert cannot insert objects of the abstract entity '\(entity.name)'.",
                entityName: entity.name)
        }
        let store = try coordinator.store(for: entity)
        let rows = try batchInsertRows(request, entity)
        let policy = mergePolicy
        let (finalRow, liveRows) = try BatchInsertRows.foldMatching(rows, entity, policy: policy)
        let writer = BatchInsertWriter(
            entity: entity, model: coordinator.model, store: store, rows: rows, liveRows: liveRows, policy: policy)
        let targets = try withHistoryAuthor(of: CollectionOfOne(store)) { () throws(SkerryError) in try writer.run() }

        let wantsIDs = request.resultType == .objectIDs
        var objectIDs: [ObjectID] = []
        var changes = StoreChanges()
        if wantsIDs {
            var seen = Set<ObjectID>()
            objectIDs.reserveCapacity(liveRows.count)
            for row in rows.indices {
                let objectID = targets[finalRow[row]]!.objectID
                if seen.insert(objectID).inserted { objectIDs.append(objectID) }
            }
            for row in liveRows {
                let target = targets[row]!
                switch target.fate {
                case .inserted: changes.inserted.insert(target.objectID)
                case .updated: changes.updated.insert(target.objectID)
                case .kept: break
                }
            }
        }
        let written = liveRows.count { targets[$0]!.fate != .kept }
        return BatchInsertResult(objectIDs: objectIDs, count: written, resultType: request.resultType, changes: changes)
    }

    /// Every row of `request`, as values of `entity`'s attributes (defaults where a row gives none),
    /// checked: only attributes, values that fit, every required attribute with a value.
    private func batchInsertRows(_ request: BatchInsertRequest, _ entity: EntityDescription) throws(SkerryError) -> [[AttributeValue]] {
        let defaults = entity.attributes.map(\.defaultValue)
        var rows: [[AttributeValue]] = []
        if let objects = request.objectsToInsert {
            rows.reserveCapacity(objects.count)
            for (index, object) in objects.enumerated() {
                rows.append(try BatchInsertRows.values(object, entity, defaults, row: index))
            }
        } else if let handler = request.dictionaryHandler {
            while true {
                let dictionary = NSMutableDictionary()
                if handler(dictionary) { break }
                var pairs: [(String, Any)] = []
                for (key, value) in dictionary {
                    guard let name = key as? String else {
                        throw SkerryError(
                            .unknownAttribute,
                            "Row \(rows.count) of the batch insert into '\(entity.name)' has a key \(key) that is not a string.",
                            entityName: entity.name)
                    }
                    pairs.append((name, value))
                }
                rows.append(try BatchInsertRows.values(pairs, entity, defaults, row: rows.count))
            }
        } else if let handler = request.managedObjectHandler {
            rows = try objectHandlerRows(handler, entity)
        }
        for (index, values) in rows.enumerated() { try BatchInsertRows.checkRequired(values, entity, row: index) }
        if !entity.derivedAttributeIndexes.isEmpty {
            // Computed as a save computes them (a row given a value for one gets the computed one).
            let now = Date()
            for row in rows.indices { try Self.computeDerivedAttributes(&rows[row], of: entity, now: now) }
        }
        return rows
    }

    /// The rows a `managedObjectHandler` gives: each object it fills, in a scratch context of its
    /// own (never saved), read back and forgotten.
    private func objectHandlerRows(_ handler: (EntityObject) -> Bool, _ entity: EntityDescription) throws(SkerryError) -> [[AttributeValue]]
    {
        let scratch = ObjectContext(coordinator: coordinator, name: "batch insert of \(entity.name)")
        let result: Result<[[AttributeValue]], SkerryError> = scratch.performAndWait {
            var rows: [[AttributeValue]] = []
            do throws(SkerryError) {
                while true {
                    let object = try scratch.insert(entity)
                    if handler(object) { break }
                    rows.append(object.values)
                    // Forget the objects as the rows go, so that a large import holds values only.
                    if rows.count % 1_000 == 0 { scratch.reset() }
                }
            } catch {
                scratch.reset()
                return .failure(error)
            }
            scratch.reset()
            return .success(rows)
        }
        return try result.get()
    }
}

/// Reading and checking the rows of a batch insert.
enum BatchInsertRows {
    /// The values of `entity`'s attributes one row gives, defaults for the rest.
    static func values(
        _ object: [String: Any], _ entity: EntityDescription, _ defaults: [AttributeValue], row: Int
    ) throws(SkerryError) -> [AttributeValue] {
        var values = defaults
        for (key, value) in object { try set(key, value, in: &values, entity, row: row) }
        return values
    }

    /// The values of `entity`'s attributes one row gives as pairs, defaults for the rest.
    static func values(
        _ pairs: [(String, Any)], _ entity: EntityDescription, _ defaults: [AttributeValue], row: Int
    ) throws(SkerryError) -> [AttributeValue] {
        var values = defaults
        for (key, value) in pairs { try set(key, value, in: &values, entity, row: row) }
        return values
    }

    /// Sets the attribute named `key` among `values` to `value`, converted as
    /// `EntityObject.setValue(_:forKey:)` converts it, and checked as `setValue(_:at:)` checks it.
    private static func set(
        _ key: String, _ value: Any, in values: inout [AttributeValue], _ entity: EntityDescription, row: Int
    ) throws(SkerryError) {
        guard let index = entity.attributeIndex(named: key) else {
            if entity.relationship(named: key) != nil {
                throw SkerryError(
                    .invalidArgument,
                    "Row \(row) of the batch insert into '\(entity.name)' sets the relationship '\(key)': a batch insert sets attributes only.",
                    entityName: entity.name, key: key)
            }
            throw SkerryError(
                .unknownAttribute,
                "Row \(row) of the batch insert into '\(entity.name)' has the key '\(key)', which is no attribute of the entity.",
                entityName: entity.name, key: key)
        }
        let type = entity.attributes[index].type
        let converted = commonValue(value, for: type) ?? (value is NSNull ? .null : EntityObject.attributeValue(value, for: type))
        guard let converted, converted.fits(type), !converted.isNaN else {
            throw SkerryError(
                .wrongValueType,
                "Row \(row) of the batch insert into '\(entity.name)': cannot store a value of type \(Swift.type(of: value)) (\(value)) in '\(key)', which is \(type).",
                entityName: entity.name, key: key)
        }
        values[index] = converted
    }

    /// `value` converted without the protocol casts of `EntityObject.attributeValue(_:for:)` when
    /// it is the form JSON decoding gives for the attribute's type (a `String` for a string, an
    /// `Int` for an integer, a `Double` for a floating-point number, a `Bool` for a Boolean; the
    /// casts also take an `NSNumber` or `NSString`, to the same value as the general path); nil
    /// otherwise, for the general path. Two thirds of a large import's time went to those casts.
    @inline(__always)
    private static func commonValue(_ value: Any, for type: AttributeType) -> AttributeValue? {
        switch type {
        case .string: if let string = value as? String { return .string(string) }
        case .integer16, .integer32, .integer64: if let integer = value as? Int { return .int(Int64(integer)) }
        case .double, .float: if let double = value as? Double { return .double(double) }
        case .boolean: if let bool = value as? Bool { return .bool(bool) }
        default: break
        }
        return nil
    }

    /// Throws unless every required stored attribute of the row has a value.
    static func checkRequired(_ values: [AttributeValue], _ entity: EntityDescription, row: Int) throws(SkerryError) {
        for (index, attribute) in entity.storedAttributes.enumerated() where !attribute.isOptional && attribute.derivation == nil {
            if case .null = values[index] {
                throw SkerryError(
                    .missingRequiredValue,
                    "Row \(row) of the batch insert into '\(entity.name)' gives no value for the required attribute '\(attribute.name)', which has no default. Nothing was inserted.",
                    entityName: entity.name, key: attribute.name)
            }
        }
    }

    /// Folds rows that match each other through a uniqueness constraint (every constrained value
    /// given), as a save folds two inserts with the same constrained values under `policy`: under
    /// `.mergeByPropertyObjectTrump` and `.overwrite` the later row wins, under
    /// `.mergeByPropertyStoreTrump` and `.rollback` the first; under `.error` such rows throw
    /// ``SkerryError/Code/constraintViolation``. Returns, for each row, the row whose values are
    /// written for it, and the rows written, in order.
    static func foldMatching(_ rows: [[AttributeValue]], _ entity: EntityDescription, policy: MergePolicy) throws(SkerryError)
        -> (finalRow: [Int], liveRows: [Int])
    {
        var finalRow = Array(rows.indices)
        guard !entity.uniquenessConstraints.isEmpty else { return (finalRow, finalRow) }
        let laterWins = policy == .mergeByPropertyObjectTrump || policy == .overwrite
        let constraints = entity.uniquenessConstraints.map { names in names.compactMap { entity.attributeIndex(named: $0) } }
        var replaced = [Bool](repeating: false, count: rows.count)
        for (names, indexes) in zip(entity.uniquenessConstraints, constraints) where !indexes.isEmpty {
            var kept: [[AttributeValue]: Int] = [:]
            for row in rows.indices where !replaced[row] {
                let key = indexes.map { rows[row][$0] }
                if key.contains(where: { if case .null = $0 { true } else { false } }) { continue }
                guard let earlier = kept[key] else {
                    kept[key] = row
                    continue
                }
                if policy == .error {
                    throw SkerryError(
                        .constraintViolation,
                        "Rows \(earlier) and \(row) of the batch insert into '\(entity.name)' have the same values of the uniqueness constraint (\(names.joined(separator: ", "))). Nothing was inserted; under the merge policy .mergeByPropertyObjectTrump the later row wins.",
                        entityName: entity.name, key: names.joined(separator: ","))
                }
                let (loser, winner) = laterWins ? (earlier, row) : (row, earlier)
                replaced[loser] = true
                finalRow[loser] = winner
                kept[key] = winner
            }
        }
        // Follow chains (a row replaced by one replaced in turn through another constraint).
        if laterWins {
            for row in finalRow.indices.reversed() where finalRow[row] != row { finalRow[row] = finalRow[finalRow[row]] }
        } else {
            for row in finalRow.indices where finalRow[row] != row { finalRow[row] = finalRow[finalRow[row]] }
        }
        return (finalRow, rows.indices.filter { !replaced[$0] })
    }
}
