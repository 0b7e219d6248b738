/// Writes the rows of a batch insert to their store: one ``ObjectStore/write(_:resolving:then:)``,
/// so that the rows get keys from the store's own sequence, versions, persistent history and
/// change notices exactly as a save's inserts do, in one transaction (nothing is written when
/// anything fails). A row that collides with a stored object through a uniqueness constraint
/// goes to the context's merge policy, inside the same transaction (the store keeps the rows it
/// found from changing until the commit), as Core Data's batch insert does: under
/// `.mergeByPropertyObjectTrump` and `.overwrite` it updates that object, under
/// `.mergeByPropertyStoreTrump` and `.rollback` the object stays as it is, and under `.error`
/// the batch insert fails.
///
/// A class: the store's resolver, which escapes, updates what the rows become.
final class BatchInsertWriter {
    /// What a row became: a new object, a stored one it updated, or a stored one it left as it
    /// was (the merge policy kept the store's values).
    struct Target {
        enum Fate { case inserted, updated, kept }
        let objectID: ObjectID
        let fate: Fate
    }

    private let entity: EntityDescription
    private let model: ObjectModel
    private let store: any ObjectStore
    private let rows: [[AttributeValue]]
    private let liveRows: [Int]
    /// The temporary ID of each live row's insert, by row.
    private var temporaryIDs: [ObjectID?]
    private let policy: MergePolicy
    /// The stored object each row updates instead of inserting, by row.
    private var existing: [Int: RowSnapshot] = [:]
    /// The stored object each row becomes without writing it (the policy keeps the store's
    /// values), by row.
    private var adopted: [Int: ObjectID] = [:]
    /// For the write being run: the row of each insert, by position.
    private var insertRows: [Int] = []
    private var attempts = 0

    /// How often the conflicts of one batch insert are resolved before it gives up (each round
    /// turns the inserts that collided into updates; rows found changed again are read again).
    private static let maximumAttempts = 8

    init(
        entity: EntityDescription, model: ObjectModel, store: any ObjectStore, rows: [[AttributeValue]], liveRows: [Int],
        policy: MergePolicy
    ) {
        self.entity = entity
        self.model = model
        self.policy = policy
        self.store = store
        self.rows = rows
        self.liveRows = liveRows
        temporaryIDs = [ObjectID?](repeating: nil, count: rows.count)
        let space = store.identity.space(for: entity, temporary: true)
        for row in liveRows { temporaryIDs[row] = ObjectID.temporary(in: space) }
    }

    /// Runs the write; returns what each live row became, by row (nil for rows folded into a
    /// later one).
    func run() throws(SkerryError) -> [Target?] {
        var targets = [Target?](repeating: nil, count: rows.count)
        guard !liveRows.isEmpty else { return targets }
        try findMatchesInTheHierarchy()
        let keys: [Int64]
        do {
            let resolver: StoreWriteResolver = { [self] found in try resolve(found) }
            keys = try store.write(makeWrite(), resolving: resolver, then: { finish in try finish?.run() }).insertedKeys
        } catch {
            throw SkerryError.converting(error)
        }
        guard keys.count == insertRows.count else {
            throw SkerryError(
                .invalidArgument,
                "The store gave \(keys.count) keys for the \(insertRows.count) rows of the batch insert into '\(entity.name)'.",
                entityName: entity.name)
        }
        for (row, key) in zip(insertRows, keys) {
            targets[row] = Target(objectID: ObjectID(store: store.identity, entity: entity, primaryKey: key), fate: .inserted)
        }
        for (row, stored) in existing { targets[row] = Target(objectID: stored.objectID, fate: .updated) }
        for (row, objectID) in adopted { targets[row] = Target(objectID: objectID, fate: .kept) }
        return targets
    }

    /// Finds the stored objects of other entities of the hierarchy that rows match under a
    /// constraint a superentity declares (or one the entity declares and its sub-entities
    /// inherit), before the write: the stores report such a collision as an error rather than as
    /// a conflict to resolve. Read with the rows' constrained values, a few hundred rows a query.
    private func findMatchesInTheHierarchy() throws(SkerryError) {
        for names in entity.uniquenessConstraints {
            var declaring = entity
            while let parent = declaring.superentity, parent.uniquenessConstraints.contains(names) { declaring = parent }
            guard declaring !== entity || !model.subentities(of: entity).isEmpty else { continue }
            let indexes = names.compactMap { entity.attributeIndex(named: $0) }
            guard indexes.count == names.count else { continue }
            var rowOfKey: [[AttributeValue]: Int] = [:]
            for row in liveRows where existing[row] == nil && adopted[row] == nil {
                let key = indexes.map { rows[row][$0] }
                if !key.contains(where: \.isNull) { rowOfKey[key] = row }
            }
            let keys = Array(rowOfKey.keys)
            var start = 0
            while start < keys.count {
                let chunk = keys[start..<min(start + 200, keys.count)]
                start += chunk.count
                let predicate: FetchPredicate =
                    names.count == 1
                    ? .isIn(key: names[0], chunk.map { $0[0] })
                    : .or(chunk.map { key in .and(zip(names, key).map { .comparison(key: $0, .equal, $1) }) })
                let query = StoreQuery(entity: declaring, predicate: try predicate.resolved(for: declaring, in: model), sortKeys: [])
                for stored in try store.fetchRows(query) where stored.objectID.entity !== entity {
                    let storedEntity = stored.objectID.entity
                    let key = names.map { name in storedEntity.attributeIndex(named: name).map { stored.values[$0] } ?? .null }
                    if let row = rowOfKey[key], existing[row] == nil, adopted[row] == nil { try match(row, stored, constraint: names) }
                }
            }
        }
    }

    /// Applies the merge policy to `row`, whose values of `constraint` are those of the stored
    /// object `stored`: the row updates it, leaves it as it is, or the batch insert fails.
    private func match(_ row: Int, _ stored: RowSnapshot, constraint: [String]) throws(SkerryError) {
        switch policy {
        case .mergeByPropertyObjectTrump, .overwrite:
            if let other = existing.first(where: { $0.key != row && $0.value.objectID == stored.objectID })?.key {
                // Two rows would both become this object (through different constraints): one
                // of them would be lost.
                throw SkerryError(
                    .constraintViolation,
                    "Rows \(min(other, row)) and \(max(other, row)) of the batch insert into '\(entity.name)' both match the stored object \(stored.objectID) through its uniqueness constraints (\(constraint.joined(separator: ", ")) for row \(row)). Nothing was inserted.",
                    entityName: entity.name, key: constraint.joined(separator: ","), objectID: stored.objectID)
            }
            existing[row] = stored
        case .mergeByPropertyStoreTrump, .rollback:
            adopted[row] = stored.objectID
        case .error:
            throw SkerryError(
                .constraintViolation,
                "Row \(row) of the batch insert into '\(entity.name)' has the values of the uniqueness constraint (\(constraint.joined(separator: ", "))) of the stored object \(stored.objectID). Nothing was inserted; under the merge policy .mergeByPropertyObjectTrump the row updates that object, as Core Data's batch insert does under NSMergeByPropertyObjectTrumpMergePolicy.",
                entityName: entity.name, key: constraint.joined(separator: ","), objectID: stored.objectID)
        }
    }

    /// The write of every live row: an insert, or an update of the stored object it matched
    /// (every stored attribute, guarded by the version read).
    private func makeWrite() -> StoreWrite {
        var write = StoreWrite()
        insertRows = []
        insertRows.reserveCapacity(liveRows.count - existing.count - adopted.count)
        write.inserts.reserveCapacity(liveRows.count - existing.count - adopted.count)
        let noRelationships = entity.relationships.map { $0.isToMany ? RelationshipValue.toMany([]) : .toOne(nil) }
        for row in liveRows where adopted[row] == nil {
            if let stored = existing[row] {
                let values = rows[row]
                // By name: the stored object may be of another entity of the hierarchy (a
                // constraint inherited from a common superentity), whose attributes sit elsewhere.
                let target = stored.objectID.entity
                let changes = target.storedAttributes.indices.compactMap { index -> (index: Int, value: AttributeValue)? in
                    // A derived value of the stored object's relationships, which the row does not set, stays.
                    if let derivation = target.attributes[index].derivation, Self.readsRelationships(derivation) { return nil }
                    if target === entity { return (index, values[index]) }
                    guard let own = entity.attributeIndex(named: target.attributes[index].name), own < entity.storedAttributeCount
                    else { return nil }
                    return (index, values[own])
                }
                write.updates.append(
                    RowUpdate(objectID: stored.objectID, expectedVersion: stored.version, changes: changes, relationshipChanges: []))
            } else {
                write.inserts.append(RowInsert(objectID: temporaryIDs[row]!, values: rows[row], relationships: noRelationships))
                insertRows.append(row)
            }
        }
        return write
    }

    /// Whether `derivation` reads the object's relationships (a count, an aggregate, a key path
    /// through a relationship), which a batch insert does not set.
    private static func readsRelationships(_ derivation: AttributeDerivation) -> Bool {
        switch derivation {
        case .now: false
        case .keyPath(let path), .function(_, let path): path.contains(".")
        case .count, .aggregate: true
        }
    }

    /// Turns the inserts that collided with stored objects into updates of them, and takes the
    /// new versions of updated objects that changed meanwhile (an object gone is inserted again).
    private func resolve(_ found: StoreWriteConflicts) throws(SkerryError) -> StoreWrite {
        attempts += 1
        if attempts > Self.maximumAttempts {
            throw SkerryError(
                .mergeConflict,
                "The objects the batch insert into '\(entity.name)' updates kept changing in the store; it gave up after \(attempts - 1) attempts. Nothing was inserted.",
                entityName: entity.name)
        }
        for conflict in found.uniquenessConflicts {
            let row = insertRows[conflict.insertIndex]
            switch conflict.existing {
            case .row(let stored):
                try match(row, stored, constraint: conflict.constraint)
            case .insert(let index):
                // Rows matching each other were folded before the write; the store found a match
                // they do not show (a constraint over values compared otherwise by the store).
                throw SkerryError(
                    .constraintViolation,
                    "Rows \(insertRows[index]) and \(row) of the batch insert into '\(entity.name)' violate the uniqueness constraint (\(conflict.constraint.joined(separator: ", "))). Nothing was inserted.",
                    entityName: entity.name, key: conflict.constraint.joined(separator: ","))
            }
        }
        if !found.versionConflicts.isEmpty {
            let rowOf = Dictionary(existing.map { ($0.value.objectID, $0.key) }, uniquingKeysWith: { first, _ in first })
            for (objectID, stored) in found.versionConflicts {
                guard let row = rowOf[objectID] else { continue }
                existing[row] = stored
            }
        }
        return makeWrite()
    }
}
