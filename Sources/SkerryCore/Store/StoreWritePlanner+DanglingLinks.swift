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
    /// save that links them elsewhere (written after the deletes) still applies.
    package func danglingLinkDeletes(
        of objectID: ObjectID, _ emit: (_ sql: String, _ values: [AttributeValue]) throws -> Void
    ) throws {
        guard let cleanup = danglingLinks[ObjectIdentifier(objectID.entity)] else { return }
        let q = SQLBuilder.quote
        let key = AttributeValue.int(objectID.key)
        for join in cleanup.joinColumns {
            try emit("DELETE FROM \(q(join.table)) WHERE \(q(join.column)) = ?", [key])
        }
        for foreignKey in cleanup.foreignKeys {
            let cleared = [foreignKey.column] + (foreignKey.orderColumn.map { [$0] } ?? [])
            try emit(
                "UPDATE \(q(foreignKey.table)) SET \(cleared.map { "\(q($0)) = NULL" }.joined(separator: ", ")) WHERE \(q(foreignKey.column)) = ?",
                [key])
        }
    }
}
