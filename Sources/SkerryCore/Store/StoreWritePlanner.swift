/// Turns a save (``StoreWrite``) into the statements of both stores of this package, in a
/// dialect: which rows and columns each insert, update and delete writes, where each
/// relationship's change goes (a foreign-key column, an order column, join-table rows), which
/// keys a hierarchy shares, and how a uniqueness collision is looked up. The stores differ in
/// how they run the statements (SQLite one by one, looking at each answer; PostgreSQL in a
/// pipeline, looking at the answers at the end) and in how they allocate keys.
package struct StoreWritePlanner: Sendable {
    /// Where each entity's relationships are kept, and the SQL of its rows.
    package let layout: SQLiteStoreLayout
    package let dialect: SQLDialect
    /// What a delete of each entity's rows clears besides its own join rows (see
    /// ``danglingLinkDeletes(of:_:)``), for the entities that have something to clear.
    let danglingLinks: [ObjectIdentifier: BatchDeleteCleanup]
    /// The order columns of join tables that an ordered side keeps, as "table.column": a write of
    /// the other side must leave them as they are (see ``memberStatements(_:_:_:)``).
    let joinOrderColumns: Set<String>

    package init(layout: SQLiteStoreLayout, dialect: SQLDialect) {
        self.layout = layout
        self.dialect = dialect
        danglingLinks = Self.danglingLinks(layout)
        var orderColumns: Set<String> = []
        for entity in layout.entities {
            for index in entity.relationships.indices {
                if case .joinTable(let table, _, _, let orderColumn?)? = layout.storage(entity, index) {
                    orderColumns.insert(table + "." + orderColumn)
                }
            }
        }
        joinOrderColumns = orderColumns
    }

    // MARK: Keys

    /// The entity whose sequence gives `entity`'s keys: its topmost ancestor among `entities` (a
    /// store's entities), so that keys are unique in a hierarchy.
    package static func keyRoot(_ entity: EntityDescription, among entities: [EntityDescription]) -> EntityDescription {
        var root = entity
        while let parent = root.superentity, entities.contains(where: { $0 === parent }) { root = parent }
        return root
    }

    /// The resolver of a write whose inserts got `keys`: temporary IDs need resolving only where
    /// something points at an object of the save.
    package static func keyResolver(_ changes: StoreWrite, keys: [Int64]) -> StoreKeyResolver {
        let pointsAtObjects =
            changes.updates.contains { !$0.relationshipChanges.isEmpty }
            || changes.inserts.contains { insert in insert.relationships.contains { !$0.objectIDs.isEmpty } }
        return StoreKeyResolver(
            allocated: pointsAtObjects ? Dictionary(uniqueKeysWithValues: zip(changes.inserts.map(\.objectID), keys)) : [:],
            aliases: changes.aliases)
    }

    // MARK: To-many members

    /// The members of a to-many relationship that a store keeps on the side of `source` (a join
    /// table's owner, or the order column of an ordered relationship whose inverse is to-one),
    /// written in full once the rows exist.
    package struct MembersWrite {
        package let source: ObjectID
        package let relationship: Int
        package let storage: RelationshipStorage
        package let members: [ObjectID]
    }

    /// The to-many relationship writes a store keeps for `source` among `relationships`.
    package static func membersWrites(
        _ source: ObjectID, _ entityLayout: SQLiteEntityLayout,
        _ relationships: some Sequence<(index: Int, value: RelationshipValue)>
    ) -> [MembersWrite] {
        relationships.compactMap { index, value in
            guard case .toMany(let members) = value, entityLayout.storage[index].isWrittenBySource else { return nil }
            return MembersWrite(source: source, relationship: index, storage: entityLayout.storage[index], members: members.ids)
        }
    }

    /// The to-many relationship writes a store keeps for an inserted row.
    package static func membersWrites(of insert: RowInsert, _ entityLayout: SQLiteEntityLayout) -> [MembersWrite] {
        guard !entityLayout.storage.isEmpty else { return [] }
        return membersWrites(
            insert.objectID, entityLayout,
            insert.relationships.enumerated().lazy.map { (index: $0.offset, value: $0.element) }
                .filter { !$0.value.objectIDs.isEmpty })
    }

    /// Whether `storage` is a join table whose rows both of its sides write: the side that does
    /// not own it is ordered (its order is the `target_order` column, which only its own list can
    /// tell), so a row (s, t) is written by a save of `s`'s list and by one of `t`'s (see
    /// ``memberStatements(_:_:_:)``). A store with several writers locks the members of such a
    /// write (the other ends of its rows) as well as its source, so that any two saves writing
    /// one row hold the locks of both of its objects, taken in one order.
    package func isWrittenByBothSides(_ storage: RelationshipStorage) -> Bool {
        guard case .joinTable(let table, _, _, _) = storage else { return false }
        return joinOrderColumns.contains(table + ".target_order")
    }

    /// The statements that write `write`'s members, in full, for the side that stores them: a
    /// join table's rows of the source replaced (with their order), or each member's order
    /// column set in its own table (the destination's, or a sub-entity's). Members that resolve
    /// to no key are left out.
    ///
    /// A join table whose two sides are both written (the other side is ordered: its order is
    /// in the same rows) is written by each side without touching the other's order: the rows of
    /// the source that no longer hold a member go, and each member's row is inserted or, when it
    /// is there, only this side's order set. Either side may be written first in a save (both
    /// sides of a changed link are in it, with the same members), and an object whose list did
    /// not change keeps its order in the rows that the other side rewrites.
    package func memberStatements(
        _ write: MembersWrite, _ resolve: StoreKeyResolver,
        _ emit: (_ sql: String, _ values: [AttributeValue]) throws -> Void
    ) throws {
        let q = SQLBuilder.quote
        guard case .int(let source) = try resolve.key(write.source, of: write.source, write.relationship) else { return }
        var members: [AttributeValue] = []
        members.reserveCapacity(write.members.count)
        for member in write.members { members.append(try resolve.key(member, of: write.source, write.relationship)) }
        switch write.storage {
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn)
        where joinOrderColumns.contains(table + "." + (sourceColumn == "source" ? "target_order" : "source_order")):
            let kept = members.compactMap { member -> Int64? in
                if case .int(let key) = member { return key }
                return nil
            }
            if kept.isEmpty {
                try emit("DELETE FROM \(q(table)) WHERE \(q(sourceColumn)) = ?", [.int(source)])
            } else {
                try emit(
                    "DELETE FROM \(q(table)) WHERE \(q(sourceColumn)) = ? AND NOT (\(dialect.inKeys(targetColumn)))",
                    [.int(source), dialect.keyList(kept)])
            }
            let upsert = dialect.upsert(
                into: table, columns: [sourceColumn, targetColumn] + (orderColumn.map { [$0] } ?? []),
                conflictColumns: ["source", "target"], updatedColumns: orderColumn.map { [$0] } ?? [])
            for (position, member) in members.enumerated() where !member.isNull {
                try emit(upsert, [.int(source), member] + (orderColumn == nil ? [] : [.int(Int64(position))]))
            }
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn):
            try emit("DELETE FROM \(q(table)) WHERE \(q(sourceColumn)) = ?", [.int(source)])
            let insert = dialect.replacingInsert(
                into: table, columns: [sourceColumn, targetColumn] + (orderColumn.map { [$0] } ?? []),
                conflictColumns: ["source", "target"], updatedColumns: orderColumn.map { [$0] } ?? [])
            for (position, member) in members.enumerated() where !member.isNull {
                try emit(insert, [.int(source), member] + (orderColumn == nil ? [] : [.int(Int64(position))]))
            }
        case .inverseForeignKey(_, _, let orderColumn?):
            for (position, member) in members.enumerated() where !member.isNull {
                try emit(
                    "UPDATE \(q(write.members[position].entity.name)) SET \(q(orderColumn)) = ? WHERE \(q(SQLBuilder.primaryKeyColumn)) = ?",
                    [.int(Int64(position)), member])
            }
        default:
            return
        }
    }

    // MARK: Rows

    /// The statements that remove the join-table rows a deleted row of `objectID` takes part in
    /// (on the side that owns each join table, and both sides of a relationship that is its own
    /// inverse, which keeps both directions of each link).
    package func joinRowDeletes(of objectID: ObjectID, _ emit: (_ sql: String, _ values: [AttributeValue]) throws -> Void) throws {
        let q = SQLBuilder.quote
        let entity = objectID.entity
        for (index, storage) in try layout.of(entity).storage.enumerated() {
            guard case .joinTable(let table, let source, let target, _) = storage else { continue }
            let relationship = entity.relationships[index]
            let isSymmetric = relationship.inverseName == relationship.name
            try emit(
                "DELETE FROM \(q(table)) WHERE \(q(source)) = ?\(isSymmetric ? " OR \(q(target)) = ?" : "")",
                isSymmetric ? [.int(objectID.key), .int(objectID.key)] : [.int(objectID.key)])
        }
    }

    /// What determines an update's SQL: the entity and the columns it changes.
    package struct UpdateShape: Equatable {
        package let entity: EntityDescription
        package let attributes: [Int]
        package let relationships: [Int]

        package static func == (a: Self, b: Self) -> Bool {
            a.entity === b.entity && a.attributes == b.attributes && a.relationships == b.relationships
        }

        /// `UPDATE … SET _version = _version + 1, <changed columns> WHERE _pk = ? AND _version = ?`.
        package var sql: String {
            SQLBuilder.update(
                entity,
                changedColumns: attributes.map { entity.attributes[$0].name } + relationships.map { entity.relationships[$0].name })
        }
    }

    /// The shape of `update` and the values its statement binds (changed attributes, changed
    /// foreign keys, then key and expected version). Transient attributes live in memory only,
    /// and relationships kept elsewhere (members, the other side's column) are not in the row:
    /// neither is written here.
    package func plan(_ update: RowUpdate, _ resolve: StoreKeyResolver) throws -> (shape: UpdateShape, values: [AttributeValue]) {
        let entity = update.objectID.entity
        let entityLayout = try layout.of(entity)
        let changes = update.changes.filter { $0.index < entity.storedAttributeCount }
        let foreignKeyChanges = update.relationshipChanges.filter {
            if case .foreignKey = entityLayout.storage[$0.index] { return true }
            return false
        }
        var values = changes.map(\.value)
        values.reserveCapacity(changes.count + foreignKeyChanges.count + 2)
        for change in foreignKeyChanges {
            values.append(try resolve.key(change.value.objectIDs.first, of: update.objectID, change.index))
        }
        values += [.int(update.objectID.key), .int(update.expectedVersion)]
        return (UpdateShape(entity: entity, attributes: changes.map(\.index), relationships: foreignKeyChanges.map(\.index)), values)
    }

    /// The foreign-key values of an inserted row, in the order of `entityLayout.insertRow`.
    package func foreignKeys(
        of insert: RowInsert, _ entityLayout: SQLiteEntityLayout, _ resolve: StoreKeyResolver
    ) throws(SkerryError) -> [AttributeValue] {
        var foreignKeys: [AttributeValue] = []
        foreignKeys.reserveCapacity(entityLayout.foreignKeyIndexes.count)
        for relationship in entityLayout.foreignKeyIndexes {
            foreignKeys.append(try resolve.key(insert.relationships[relationship].objectIDs.first, of: insert.objectID, relationship))
        }
        return foreignKeys
    }

    /// The queries that find the row an insert of `values` into `entity` collides with, one per
    /// uniqueness constraint of the entity, each reading `entityLayout.selectRows`. A nil value
    /// never collides (NULLs are distinct in unique indexes), so constraints with one are left out.
    package func collisionQueries(
        _ entity: EntityDescription, _ values: [AttributeValue]
    ) throws(SkerryError) -> [(constraint: [String], sql: String, values: [AttributeValue])] {
        let entityLayout = try layout.of(entity)
        return entity.uniquenessConstraints.compactMap { constraint in
            let bound = constraint.compactMap { entity.attributeIndex(named: $0) }.map { values[$0] }
            guard !bound.contains(where: \.isNull) else { return nil }
            let condition = constraint.map { "\(SQLBuilder.quote($0)) = ?" }.joined(separator: " AND ")
            return (constraint, entityLayout.selectRows + " WHERE " + condition, bound)
        }
    }

    /// The entities whose tables a batch delete of `entity` deletes from: the entity's and, unless
    /// told otherwise, its sub-entities' (as Core Data's batch delete of a fetch that includes
    /// sub-entities).
    package func batchDeleteTables(_ entity: EntityDescription, includesSubentities: Bool) -> [EntityDescription] {
        includesSubentities ? layout.family(entity) ?? [entity] : [entity]
    }
}
