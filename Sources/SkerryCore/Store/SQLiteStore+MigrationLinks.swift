import Foundation

/// How a migration step moves relationship links. A relationship is handled once per pair, for
/// its whole hierarchy: the links of a relationship declared by an entity with sub-entities are
/// those of the entity's rows and of every sub-entity's rows (each in its own table), and they
/// may point at any entity of the destination's hierarchy. Links are read where the old layout
/// kept them (in every table of a hierarchy), each end identified by its old entity, written
/// where the new layout keeps them (in the table of the row that holds the column), and checked
/// there afterwards.
extension SQLiteStore {
    /// A link of a relationship during a migration: the keys (in the new store) of the two
    /// objects.
    struct MigrationLink: Hashable {
        let source: Int64
        let target: Int64
    }

    /// The links of one relationship of the new version, gathered from the old store, with the
    /// new entity of each end.
    struct LinkSet {
        var links: [MigrationLink: (sourcePosition: Int64?, targetPosition: Int64?)] = [:]
        /// The new entity of each source key, and of each target key.
        var sourceEntities: [Int64: String] = [:]
        var targetEntities: [Int64: String] = [:]

        mutating func add(
            _ link: MigrationLink, from source: String, to target: String, sourcePosition: Int64?, targetPosition: Int64?
        ) {
            let old = links[link]
            links[link] = (sourcePosition ?? old?.sourcePosition, targetPosition ?? old?.targetPosition)
            sourceEntities[link.source] = source
            targetEntities[link.target] = target
        }

        /// The targets of each source, in order (old positions first, then by key).
        func targetsBySource() -> [Int64: [Int64]] {
            var result: [Int64: [(Int64, Int64)]] = [:]
            for (link, positions) in links { result[link.source, default: []].append((positions.sourcePosition ?? .max, link.target)) }
            return result.mapValues { $0.sorted { $0 < $1 }.map(\.1) }
        }

        /// The sources of each target, in order.
        func sourcesByTarget() -> [Int64: [Int64]] {
            var result: [Int64: [(Int64, Int64)]] = [:]
            for (link, positions) in links { result[link.target, default: []].append((positions.targetPosition ?? .max, link.source)) }
            return result.mapValues { $0.sorted { $0 < $1 }.map(\.1) }
        }
    }

    /// What the new tables get besides attribute values: foreign-key and order columns by table,
    /// column and row key; join table rows.
    struct LinkColumns {
        var values: [String: [String: [Int64: Int64]]] = [:]
        var joinRows: [String: [[String: Int64]]] = [:]
    }

    /// A relationship of the new version with every entity that has it: the entity that declares
    /// it and its sub-entities (which inherit it), each with the relationship's index there.
    struct LinkGroup {
        /// "DeclaringEntity.name".
        let name: String
        var members: [(entity: EntityDescription, index: Int)]
        var relationship: RelationshipDescription { members[0].entity.relationships[members[0].index] }
    }

    /// The stored relationships of `entities`, grouped by declaring entity, in the entities'
    /// order.
    static func linkGroups(_ entities: [EntityDescription]) -> [LinkGroup] {
        var groups: [LinkGroup] = [], positions: [String: Int] = [:]
        for entity in entities {
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
                let name = groupName(relationship.name, of: entity)
                if let position = positions[name] {
                    groups[position].members.append((entity, index))
                } else {
                    positions[name] = groups.count
                    groups.append(LinkGroup(name: name, members: [(entity, index)]))
                }
            }
        }
        return groups
    }

    private static func groupName(_ relationship: String, of entity: EntityDescription) -> String {
        "\(RelationshipLayout.declaringEntity(ofRelationship: relationship, in: entity).name).\(relationship)"
    }

    /// Whether the links of `group` are gathered and written from its side: each pair once, from
    /// the side that keeps the most (the to-many side of a one-to-many pair, for its order;
    /// otherwise the side whose "DeclaringEntity.name" sorts first, the side that holds the
    /// column, as ``RelationshipLayout`` decides).
    static func isMigratedFromThisSide(_ group: LinkGroup, in entities: [EntityDescription]) -> Bool {
        let relationship = group.relationship
        guard let inverse = storedInverse(of: relationship, in: entities),
            let destination = entities.first(where: { $0.name == relationship.destinationEntityName })
        else {
            return true
        }
        if relationship.isToMany != inverse.isToMany { return relationship.isToMany }
        return group.name <= groupName(inverse.name, of: destination)
    }

    /// The inverse of `relationship` among `entities` when it is stored; nil when it has none,
    /// or a transient one (a relationship whose inverse is transient is stored alone, as
    /// ``RelationshipLayout`` decides).
    static func storedInverse(of relationship: RelationshipDescription, in entities: [EntityDescription]) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName,
            let inverse = entities.first(where: { $0.name == relationship.destinationEntityName })?.relationship(named: inverseName),
            !inverse.isTransient
        else { return nil }
        return inverse
    }

    /// What a step knows while it gathers links: the old store, the mapping, the rows' keys.
    struct LinkReader {
        let connection: SQLiteConnection
        let mapping: SchemaMapping
        let keys: MigrationKeys
        let retired: [String: String]
        let sourceLayout: RelationshipLayout
        /// The new entity each old entity became, by old name.
        let became: [String: String]
        /// Links already read, by the SQL that read them (the members of a hierarchy share them).
        private var cache: [String: [(Int64, Int64, Int64?)]] = [:]
        /// Old entities and their sub-entities, by old name.
        private var families: [String: [String]] = [:]

        init(
            connection: SQLiteConnection, mapping: SchemaMapping, keys: MigrationKeys, retired: [String: String],
            sourceLayout: RelationshipLayout
        ) {
            self.connection = connection
            self.mapping = mapping
            self.keys = keys
            self.retired = retired
            self.sourceLayout = sourceLayout
            self.became = Dictionary(
                mapping.entities.map { ($0.source.name, $0.destination.name) }, uniquingKeysWith: { first, _ in first })
        }

        /// The new entity of the row whose old key is `key`, among the rows of `entity` (an old
        /// entity) and its sub-entities (keys are unique in a hierarchy), as (old entity, new
        /// entity), if the step keeps the row.
        mutating func owner(of key: Int64, among entity: String) -> (old: String, new: String)? {
            if families[entity] == nil { families[entity] = sourceLayout.entityAndSubentities(entity) }
            guard let old = families[entity]!.first(where: { keys.old[$0]?.contains(key) == true }), let new = became[old] else {
                return nil
            }
            return (old, new)
        }

        /// The links `group` (a relationship of the new version) takes from the old store: those
        /// of the old relationship each member matched, and those of the old relationship its
        /// inverse matched (read from the other side), between objects that both still exist
        /// and that the new relationship can hold.
        mutating func gather(_ group: LinkGroup, groups: [LinkGroup], in entities: [EntityDescription]) throws -> LinkSet {
            var set = LinkSet()
            let relationship = group.relationship
            let destination = entities.first { $0.name == relationship.destinationEntityName }
            let targets = Set(entities.filter { entity in destination.map { entity.isKind(of: $0) } ?? false }.map(\.name))
            let sources = Set(group.members.map(\.entity.name))
            for (entity, index) in group.members {
                guard let entityMapping = mapping.mapping(ofDestination: entity.name), let old = entityMapping.relationships[index]
                else { continue }
                let holder = entityMapping.source.name
                for (source, target, position) in try read(old, of: holder) where keys.old[holder]?.contains(source) == true {
                    guard let owner = owner(of: target, among: old.destination), targets.contains(owner.new) else { continue }
                    set.add(
                        MigrationLink(source: keys.newKey(holder, source), target: keys.newKey(owner.old, target)),
                        from: entity.name, to: owner.new, sourcePosition: position, targetPosition: nil)
                }
            }
            guard let inverseName = relationship.inverseName, let destination,
                let inverseGroup = groups.first(where: { $0.name == groupName(inverseName, of: destination) })
            else { return set }
            for (entity, index) in inverseGroup.members where targets.contains(entity.name) {
                guard let entityMapping = mapping.mapping(ofDestination: entity.name), let old = entityMapping.relationships[index]
                else { continue }
                let holder = entityMapping.source.name
                for (source, target, position) in try read(old, of: holder) where keys.old[holder]?.contains(source) == true {
                    guard let owner = owner(of: target, among: old.destination), sources.contains(owner.new) else { continue }
                    set.add(
                        MigrationLink(source: keys.newKey(owner.old, target), target: keys.newKey(holder, source)),
                        from: owner.new, to: entity.name, sourcePosition: nil, targetPosition: position)
                }
            }
            return set
        }

        /// The links of an old relationship as (object, related object, the related object's
        /// position in the object's list when the relationship is ordered), read where the old
        /// layout kept them: the holder's table, every table of the destination's hierarchy (an
        /// inverse foreign key), or the join table. Links of other entities of a hierarchy may
        /// come too; the caller keeps those of the holder's rows.
        mutating func read(_ relationship: StoredSchema.Relationship, of entity: String) throws -> [(Int64, Int64, Int64?)] {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            let retired = self.retired
            let table = { (name: String) in q(retired[name] ?? name) }
            let sql: String
            switch sourceLayout.storage[entity]?[relationship.name] {
            case .foreignKey(let column)?:
                sql = "SELECT \(pk), \(q(column)), NULL FROM \(table(entity)) WHERE \(q(column)) IS NOT NULL"
            case .inverseForeignKey(let destination, let column, let orderColumn)?:
                sql = sourceLayout.entityAndSubentities(destination).map {
                    "SELECT \(q(column)), \(pk), \(orderColumn.map(q) ?? "NULL") FROM \(table($0)) WHERE \(q(column)) IS NOT NULL"
                }.joined(separator: " UNION ALL ")
            case .joinTable(let joinTable, let sourceColumn, let targetColumn, let orderColumn)?:
                sql = "SELECT \(q(sourceColumn)), \(q(targetColumn)), \(orderColumn.map(q) ?? "NULL") FROM \(table(joinTable))"
            case nil, .transient?:
                return []
            }
            if let links = cache[sql] { return links }
            let statement = try connection.cachedStatement(sql)
            defer { statement.reset() }
            var links: [(Int64, Int64, Int64?)] = []
            while try statement.step() {
                links.append((statement.int64(at: 0), statement.int64(at: 1), statement.isNull(at: 2) ? nil : statement.int64(at: 2)))
            }
            cache[sql] = links
            return links
        }
    }

    /// Puts the links of `group` where the new layout keeps them: a foreign key in the table of
    /// the row that holds it (the source's entity, or the target's for an inverse key); a
    /// to-one side that would hold several objects is a ``SkerryError/Code/migrationWouldLoseData``
    /// error: the old data does not fit the new model.
    static func place(
        _ links: LinkSet, of group: LinkGroup, in entities: [EntityDescription],
        layout: RelationshipLayout, into columns: inout LinkColumns, number: Int
    ) throws {
        let relationship = group.relationship, name = group.name
        func doesNotFit(_ side: String, _ holders: [Int64: [Int64]], of holder: String) -> SkerryError {
            let crowded = holders.filter { $0.value.count > 1 }
            return SkerryError(
                .migrationWouldLoseData,
                "Step \(number): \(side) is to-one in the new model, but \(crowded.count) object(s) of '\(holder)' hold several objects in it (up to \(crowded.values.map(\.count).max() ?? 0), \(links.links.count) links in all); a to-one relationship can keep only one of them.",
                entityName: group.members[0].entity.name, key: relationship.name)
        }
        let inverse = storedInverse(of: relationship, in: entities)
        let inverseName = inverse.map { "'\(relationship.destinationEntityName).\($0.name)'" }
        let inverseIsToOne = inverse.map { !$0.isToMany } ?? false
        switch layout.storage[group.members[0].entity.name]?[relationship.name] {
        case .foreignKey(let column)?:
            let targets = links.targetsBySource()
            if targets.values.contains(where: { $0.count > 1 }) {
                throw doesNotFit("the relationship '\(name)'", targets, of: String(name.prefix { $0 != "." }))
            }
            let sources = links.sourcesByTarget()
            if inverseIsToOne, sources.values.contains(where: { $0.count > 1 }) {
                throw doesNotFit("the inverse \(inverseName ?? "") of '\(name)'", sources, of: relationship.destinationEntityName)
            }
            for (source, list) in targets {
                let table = links.sourceEntities[source] ?? group.members[0].entity.name
                columns.values[table, default: [:]][column, default: [:]][source] = list[0]
            }
        case .inverseForeignKey(_, let column, let orderColumn)?:
            let sources = links.sourcesByTarget()
            if sources.values.contains(where: { $0.count > 1 }) {
                throw doesNotFit("the inverse \(inverseName ?? "") of '\(name)'", sources, of: relationship.destinationEntityName)
            }
            for (target, list) in sources {
                let table = links.targetEntities[target] ?? relationship.destinationEntityName
                columns.values[table, default: [:]][column, default: [:]][target] = list[0]
            }
            if let orderColumn {
                for (_, list) in links.targetsBySource() {
                    for (position, target) in list.enumerated() {
                        let table = links.targetEntities[target] ?? relationship.destinationEntityName
                        columns.values[table, default: [:]][orderColumn, default: [:]][target] = Int64(position)
                    }
                }
            }
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn)?:
            var rows: [MigrationLink: [String: Int64]] = [:]
            for (source, list) in links.targetsBySource() {
                for (position, target) in list.enumerated() {
                    var row = [sourceColumn: source, targetColumn: target]
                    if let orderColumn { row[orderColumn] = Int64(position) }
                    rows[MigrationLink(source: source, target: target)] = row
                }
            }
            if inverse != nil {
                let inverseOrder = targetColumn + "_order"
                for (target, list) in links.sourcesByTarget() {
                    for (position, source) in list.enumerated() {
                        rows[MigrationLink(source: source, target: target)]?[inverseOrder] = Int64(position)
                    }
                }
            }
            columns.joinRows[table, default: []] += rows.keys.sorted { ($0.source, $0.target) < ($1.source, $1.target) }.map { rows[$0]! }
        case nil, .transient?:
            break
        }
    }

    /// Checks, on the migrated tables, that every link of `expected` is there (in every table
    /// that holds the relationship's column, for a hierarchy), and in its place in its object's
    /// list for an ordered relationship; a link a step's `transformRow` changed is the step's
    /// business. Otherwise a ``SkerryError/Code/migrationWouldLoseData`` error names the
    /// relationship and the counts.
    static func verifyLinks(
        _ expected: [(group: LinkGroup, links: LinkSet)], customized: Set<String>,
        layout: RelationshipLayout, _ connection: SQLiteConnection
    ) throws {
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        /// The links the SQL finds, with the position it reads for each (nil without order).
        func found(_ sql: String) throws -> [MigrationLink: Int64?] {
            let statement = try connection.cachedStatement(sql)
            defer { statement.reset() }
            var result: [MigrationLink: Int64?] = [:]
            while try statement.step() {
                result[MigrationLink(source: statement.int64(at: 0), target: statement.int64(at: 1))] =
                    statement.isNull(at: 2) ? nil : statement.int64(at: 2)
            }
            return result
        }
        for (group, links) in expected {
            let sql: String, isOrdered: Bool
            switch layout.storage[group.members[0].entity.name]?[group.relationship.name] {
            case .foreignKey(let column)?:
                let tables = group.members.map(\.entity.name)
                if tables.contains(where: { customized.contains("\($0).\(column)") }) { continue }
                sql = tables.map { "SELECT \(pk), \(q(column)), NULL FROM \(q($0)) WHERE \(q(column)) IS NOT NULL" }
                    .joined(separator: " UNION ALL ")
                isOrdered = false
            case .inverseForeignKey(let table, let column, let orderColumn)?:
                let tables = layout.entityAndSubentities(table)
                if tables.contains(where: { customized.contains("\($0).\(column)") }) { continue }
                sql = tables.map {
                    "SELECT \(q(column)), \(pk), \(orderColumn.map(q) ?? "NULL") FROM \(q($0)) WHERE \(q(column)) IS NOT NULL"
                }.joined(separator: " UNION ALL ")
                isOrdered = orderColumn != nil
            case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn)?:
                sql = "SELECT \(q(sourceColumn)), \(q(targetColumn)), \(orderColumn.map(q) ?? "NULL") FROM \(q(table))"
                isOrdered = orderColumn != nil
            case nil, .transient?:
                continue
            }
            let stored = try found(sql)
            let missing = links.links.keys.filter { stored[$0] == nil }
            guard missing.isEmpty else {
                throw SkerryError(
                    .migrationWouldLoseData,
                    "\(missing.count) of the \(links.links.count) links of the relationship '\(group.name)' are missing after the migration.",
                    entityName: group.members[0].entity.name, key: group.relationship.name)
            }
            guard isOrdered else { continue }
            // An ordered relationship keeps each object's list in the order the links were placed.
            var misplaced = 0
            for (source, targets) in links.targetsBySource() {
                for (position, target) in targets.enumerated()
                where stored[MigrationLink(source: source, target: target)] != .some(Int64(position)) {
                    misplaced += 1
                }
            }
            guard misplaced == 0 else {
                throw SkerryError(
                    .migrationWouldLoseData,
                    "\(misplaced) of the \(links.links.count) links of the ordered relationship '\(group.name)' are out of place after the migration.",
                    entityName: group.members[0].entity.name, key: group.relationship.name)
            }
        }
    }
}
