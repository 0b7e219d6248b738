/// What a batch delete records of the objects that its deleted rows name in their own foreign
/// keys (an author named by a deleted book's `author` column): the column goes with its row, so
/// nothing is cleared, but the object loses the deleted one from the inverse (the author's
/// `books`), which the history and the change notifications report as an update naming that
/// relationship, as they report the objects whose join-table rows or foreign keys a batch
/// delete clears (``BatchDeleteCleanup``). The stores read the keys with the deleted rows (the
/// `SELECT` before SQLite's `DELETE`, PostgreSQL's `RETURNING`).
extension StoreWritePlanner {
    /// How a batch delete reads, with the deleted rows of `member`, the objects that lose them
    /// through the rows' own foreign keys (``BatchDeleteCleanup/heldKeys``).
    package func heldKeyReading(_ member: EntityDescription, _ cleanup: BatchDeleteCleanup) -> HeldKeyReading {
        let q = SQLBuilder.quote
        var expressions: [String] = []
        var keys: [HeldKeyReading.Key] = []
        for held in cleanup.heldKeys where held.table == member.name {
            guard let destination = layout.entity(named: held.destination) else { continue }
            let column = "\(q(member.name)).\(q(held.column))"
            let code = layout.entityCode(destination, key: column)
            expressions += [column] + (code.map { [$0] } ?? [])
            keys.append(HeldKeyReading.Key(destination: destination, inverse: held.inverse, hasCode: code != nil))
        }
        return HeldKeyReading(expressions: expressions, keys: keys, layout: layout)
    }

    /// The objects that the deleted rows of one table name in their own foreign keys, read with
    /// the rows (``heldKeyReading(_:_:)``): each loses the deleted object from the inverse.
    package struct HeldKeyReading: Sendable {
        fileprivate struct Key: Sendable {
            let destination: EntityDescription
            let inverse: String
            let hasCode: Bool
        }

        /// What to select (or return) with each deleted row: each foreign key, followed by the
        /// code of its object's entity when the destination has sub-entities.
        package let expressions: [String]
        fileprivate let keys: [Key]
        fileprivate let layout: SQLiteStoreLayout

        /// The updates of the objects one deleted row names (one per foreign key that holds one,
        /// naming the inverse), given the value of each of ``expressions`` (nil for NULL).
        package func updates(_ value: (_ expression: Int) -> Int64?) -> [HistoryEntry] {
            var updates: [HistoryEntry] = []
            var expression = 0
            for key in keys {
                let held = value(expression)
                let code = key.hasCode ? value(expression + 1) : nil
                expression += key.hasCode ? 2 : 1
                guard let held else { continue }
                let entity = code.flatMap { layout.entity(code: $0) } ?? key.destination
                updates.append(HistoryEntry(type: .update, entity: entity, key: held, properties: [key.inverse]))
            }
            return updates
        }
    }
}
