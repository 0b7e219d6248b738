/// Links that no delete rule reaches: a relationship with no stored inverse (none declared, or a
/// transient one) that points at a deleted object. A context applies the delete rules of the
/// deleted object's own relationships, and an inverse that is not stored reads as empty, so
/// nothing there nullifies the other side; the save would leave a join row or a foreign key that
/// names a row that no longer exists (a refetch would list a deleted object). The store clears
/// them with the delete, in the save's transaction, as a batch delete does
/// (``BatchDeleteCleanup``).
///
/// Core Data leaves such a reference in place (with no inverse, it cannot find the objects that
/// point at the deleted one), and a later fault of it fails. Skerry clears it instead: a store
/// never keeps a link to a row it deleted. A required relationship is cleared too (its object then
/// fails validation at its next save until it is linked again), because the save cannot tell it
/// from one that this same save links elsewhere: the store writes deletes before updates.
extension StoreWritePlanner {
    /// The cleanup of each entity of `layout` that some relationship with no stored inverse can
    /// point at.
    static func danglingLinks(_ layout: SQLiteStoreLayout) -> [ObjectIdentifier: BatchDeleteCleanup] {
        let entities = layout.entities
        var links: [ObjectIdentifier: BatchDeleteCleanup] = [:]
        for entity in entities {
            let cleanup = BatchDeleteCleanup(deleting: [entity], among: entities, layout: layout, unlinkedOnly: true)
            if !cleanup.isEmpty { links[ObjectIdentifier(entity)] = cleanup }
        }
        return links
    }

    /// Whether deleting a row of `entity` clears links with ``danglingLinkDeletes(of:_:)``.
    package func hasDanglingLinks(_ entity: EntityDescription) -> Bool {
        danglingLinks[ObjectIdentifier(entity)] != nil
    }

    /// The statements that clear the links to the deleted row of `objectID` that no delete rule
    /// reaches: join-table rows that hold it as their target go, and foreign keys that hold it
    /// (with the order column of an ordered inverse) become NULL. The rows that held it keep their
    /// version: a context that read them before can still save them, and an update of the same
    /// save that links them elsewhere (written after the deletes) still applies. Each statement
    /// comes with the ``ClearedLinks`` it changes, for the history and change notifications (nil
    /// when they cannot be told: the statement is emitted all the same, so the link goes).
    package func danglingLinkDeletes(
        of objectID: ObjectID, _ emit: (_ sql: String, _ values: [AttributeValue], _ links: ClearedLinks?) throws -> Void
    ) throws {
        guard let cleanup = danglingLinks[ObjectIdentifier(objectID.entity)] else { return }
        let q = SQLBuilder.quote
        let key = AttributeValue.int(objectID.key)
        for join in cleanup.joinColumns {
            try emit("DELETE FROM \(q(join.table)) WHERE \(q(join.column)) = ?", [key], clearedLinks(of: join))
        }
        for foreignKey in cleanup.foreignKeys {
            let cleared = [foreignKey.column] + (foreignKey.orderColumn.map { [$0] } ?? [])
            try emit(
                "UPDATE \(q(foreignKey.table)) SET \(cleared.map { "\(q($0)) = NULL" }.joined(separator: ", ")) WHERE \(q(foreignKey.column)) = ?",
                [key], clearedLinks(of: foreignKey))
        }
    }

    /// What clearing `join` (a batch delete's, or a save's) changes: the relationship of the
    /// objects in its other column that loses the deleted objects; nil for the deleted objects'
    /// own side of a link (no relationship of an object that stays) or a name the layout does not
    /// know.
    package func clearedLinks(of join: BatchDeleteCleanup.JoinColumn) -> ClearedLinks? {
        guard !join.relationship.isEmpty else { return nil }
        return clearedLinks(join.relationship, table: join.table, column: join.column, ownerKey: join.otherColumn, family: true)
    }

    /// What clearing `foreignKey` changes: the to-one relationship of the rows that held a deleted
    /// object.
    package func clearedLinks(of foreignKey: BatchDeleteCleanup.ForeignKey) -> ClearedLinks? {
        clearedLinks(
            foreignKey.relationship, table: foreignKey.table, column: foreignKey.column, ownerKey: SQLBuilder.primaryKeyColumn,
            family: false)
    }

    /// What one statement of ``danglingLinkDeletes(of:_:)`` changes: the relationship `name` of
    /// the objects whose keys `returning` lists (with each one's entity code, when the
    /// relationship's entity has sub-entities), in the rows of `table` where `column` held the
    /// deleted key. A store reads them with the statement (`RETURNING`) or just before it.
    package struct ClearedLinks {
        /// The entity that declares the relationship.
        package let owner: EntityDescription
        package let name: String
        package let table: String
        package let column: String
        /// The columns that name the objects: their key, then their entity's code when `hasCodes`.
        package let returning: String
        package let hasCodes: Bool

        /// The entity of the object in `row` of a result of `returning`, whose second column,
        /// with `hasCodes`, is the code (an index in `layout.entities`).
        package func entity(code: Int64?, _ layout: SQLiteStoreLayout) -> EntityDescription {
            guard hasCodes, let code, layout.entities.indices.contains(Int(code)) else { return owner }
            return layout.entities[Int(code)]
        }
    }

    /// The ``ClearedLinks`` of a statement on `table`: a foreign key's rows are all of the
    /// relationship's entity (the table is its own); a join table's sources can be of every
    /// entity of the family of the topmost entity with the relationship (`family`).
    private func clearedLinks(_ relationship: String, table: String, column: String, ownerKey: String, family: Bool) -> ClearedLinks? {
        let parts = relationship.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, var owner = layout.entity(named: parts[0]) else { return nil }
        if family {
            while let parent = owner.superentity, let stored = layout.entity(named: parent.name),
                stored.relationships.contains(where: { $0.name == parts[1] })
            {
                owner = stored
            }
        }
        let q = SQLBuilder.quote
        let code = family ? layout.entityCode(owner, key: "\(q(table)).\(q(ownerKey))") : nil
        return ClearedLinks(
            owner: owner, name: parts[1], table: table, column: column,
            returning: q(ownerKey) + (code.map { ", " + $0 } ?? ""), hasCodes: code != nil)
    }
}
