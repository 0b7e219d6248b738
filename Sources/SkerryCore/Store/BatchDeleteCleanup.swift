/// What a batch delete changes besides the deleted rows, so that no row of the store refers to a
/// deleted object afterwards. Shared by the stores of this package; computed from the layout.
///
/// As Core Data's `NSBatchDeleteRequest`, a batch delete works in the store only: it applies no
/// delete rule (no cascade, no deny) and no validation. Like Core Data's, it does clear what
/// points at the deleted rows: their join-table rows go, and a to-one relationship holding one of
/// them becomes nil (with the order it had in an ordered to-many inverse). A required to-one
/// relationship cannot become nil: the delete is refused (Core Data fails such a batch delete
/// too, "mandatory OTO nullify inverse").
package struct BatchDeleteCleanup: Sendable {
    /// A join table, and its column that holds the deleted objects' keys.
    package struct JoinColumn: Sendable, Hashable {
        package let table: String
        package let column: String
        /// The table's other column: the keys of the objects whose relationship (`relationship`,
        /// "Entity.name", declared in that entity) loses the deleted objects (empty: none does, the
        /// deleted objects' own relationship having no stored inverse).
        package var otherColumn = ""
        package var relationship = ""
    }

    /// A foreign-key column that can hold a deleted object's key.
    package struct ForeignKey: Sendable, Hashable {
        /// The table (the entity that has the to-one relationship) and its column.
        package let table: String
        package let column: String
        /// The order column of the ordered to-many inverse, in the same table, cleared with it.
        package let orderColumn: String?
        /// The relationship, "Entity.name", for messages.
        package let relationship: String
        /// Whether the relationship is required (it cannot become nil).
        package let isRequired: Bool

        /// The relationship's name, without its entity's.
        package var relationshipName: String {
            relationship.split(separator: ".").last.map(String.init) ?? relationship
        }
    }

    /// A foreign-key column of the deleted rows themselves whose relationship has a stored
    /// inverse: the objects it names stay, and lose the deleted objects from that inverse (a
    /// to-many relationship read from this column, or the other side of a one-to-one). Nothing
    /// is cleared for it (the column goes with its row), but the history and the change
    /// notifications name those objects, as they name the objects whose join-table rows go.
    package struct HeldKey: Sendable, Hashable {
        /// The deleted rows' table (a member of the delete) and its column.
        package let table: String
        package let column: String
        /// The relationship's destination, and the name of its inverse there.
        package let destination: String
        package let inverse: String
    }

    /// Join-table rows to delete: where `column` holds a deleted key.
    package let joinColumns: [JoinColumn]
    /// Foreign keys to clear: where `column` holds a deleted key.
    package let foreignKeys: [ForeignKey]
    /// The deleted rows' own foreign keys that name objects that lose them (empty with
    /// `unlinkedOnly`).
    package let heldKeys: [HeldKey]

    /// Whether the deleted rows can have nothing to clear (a delete of their rows is all).
    package var isEmpty: Bool { joinColumns.isEmpty && foreignKeys.isEmpty }

    /// What deleting rows of `members` (an entity, with its sub-entities when the delete includes
    /// them) must clear in the tables of `entities` (the store's entities), as `layout` keeps them.
    ///
    /// With `unlinkedOnly`, only what points at the deleted rows through a relationship with no
    /// stored inverse (none declared, or a transient one): what a context's save clears besides
    /// the delete rules, which reach the other relationships from the deleted object's side (see
    /// `StoreWritePlanner.danglingLinkDeletes(of:_:)`).
    package init(
        deleting members: [EntityDescription], among entities: [EntityDescription], layout: SQLiteStoreLayout,
        unlinkedOnly: Bool = false
    ) {
        var joinColumns: [JoinColumn] = []
        var foreignKeys: [ForeignKey] = []
        var heldKeys: [HeldKey] = []
        var seenJoins: Set<JoinColumn> = []
        var seenKeys: Set<String> = []
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // A relationship whose destination is `name` can hold an object of a member when the member
        // is of that entity (a relationship to a parent entity holds its sub-entities' objects).
        func reachesMember(_ destination: String) -> Bool {
            members.contains { $0.isKind(ofEntityNamed: destination) }
        }
        for entity in entities {
            let isMember = !unlinkedOnly && members.contains { $0 === entity }
            for (index, relationship) in entity.relationships.enumerated() {
                if unlinkedOnly, Self.hasStoredInverse(relationship, byName) { continue }
                if isMember, case .foreignKey(let column)? = layout.storage(entity, index),
                    let inverse = relationship.inverseName, Self.hasStoredInverse(relationship, byName)
                {
                    heldKeys.append(
                        HeldKey(table: entity.name, column: column, destination: relationship.destinationEntityName, inverse: inverse))
                }
                switch layout.storage(entity, index) {
                case .joinTable(let table, let sourceColumn, let targetColumn, _)?:
                    // The deleted objects as the source of the link, and as its target.
                    if isMember, seenJoins.insert(JoinColumn(table: table, column: sourceColumn)).inserted {
                        var own = JoinColumn(table: table, column: sourceColumn)
                        if let inverse = relationship.inverseName, Self.hasStoredInverse(relationship, byName) {
                            // The objects at the other end lose the deleted ones from the inverse
                            // (kept in this table too; for a relationship that is its own inverse,
                            // the relationship itself).
                            own.otherColumn = targetColumn
                            own.relationship = "\(relationship.destinationEntityName).\(inverse)"
                        }
                        joinColumns.append(own)
                    }
                    if reachesMember(relationship.destinationEntityName),
                        seenJoins.insert(JoinColumn(table: table, column: targetColumn)).inserted
                    {
                        joinColumns.append(
                            JoinColumn(
                                table: table, column: targetColumn, otherColumn: sourceColumn,
                                relationship: "\(entity.name).\(relationship.name)"))
                    }
                case .foreignKey(let column)? where reachesMember(relationship.destinationEntityName):
                    guard seenKeys.insert(entity.name + "\0" + column).inserted else { continue }
                    var orderColumn: String?
                    if let inverseName = relationship.inverseName,
                        let destination = byName[relationship.destinationEntityName],
                        let inverse = destination.relationships.firstIndex(where: { $0.name == inverseName }),
                        case .inverseForeignKey(_, _, let order?)? = layout.storage(destination, inverse)
                    {
                        orderColumn = order
                    }
                    foreignKeys.append(
                        ForeignKey(
                            table: entity.name, column: column, orderColumn: orderColumn,
                            relationship: "\(entity.name).\(relationship.name)", isRequired: !relationship.isOptional))
                default:
                    // An inverse foreign key lives in the destination's table: the other side's
                    // `.foreignKey` case clears it. A transient relationship is not stored. (nil: an
                    // entity the layout was not made from; unreachable for the store's entities.)
                    break
                }
            }
        }
        self.joinColumns = joinColumns
        self.foreignKeys = foreignKeys
        self.heldKeys = heldKeys
    }

    /// Whether `relationship` has an inverse that the store keeps (declared, found in its
    /// destination among `byName`, and not transient).
    static func hasStoredInverse(_ relationship: RelationshipDescription, _ byName: [String: EntityDescription]) -> Bool {
        guard let inverseName = relationship.inverseName,
            let inverse = byName[relationship.destinationEntityName]?.relationships.first(where: { $0.name == inverseName })
        else { return false }
        return !inverse.isTransient
    }

    /// The error refusing a batch delete: `count` rows kept hold deleted objects in `foreignKey`,
    /// a required relationship.
    package static func requiredRelationshipError(_ foreignKey: ForeignKey, count: Int, deleting entity: EntityDescription)
        -> SkerryError
    {
        let name = foreignKey.relationshipName
        return SkerryError(
            .relationshipViolation,
            "The batch delete of \(entity.name) objects was refused: \(count) \(foreignKey.table) object(s) that stay hold deleted objects in '\(foreignKey.relationship)', a required relationship that cannot become nil. Nothing was deleted; delete or relink those objects first, or delete with a context, which applies delete rules.",
            entityName: foreignKey.table, key: name)
    }
}
