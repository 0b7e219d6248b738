import Foundation

/// How the rows and links of a store written with one schema reach another: which entity,
/// attribute and relationship of the new version each element of the old one becomes, inferred
/// as Core Data's lightweight migration infers its mapping model, and what cannot be inferred.
///
/// Elements are matched by renaming identifier and name: a new element whose renaming
/// identifier names an old element (its name, or the old element's own renaming identifier)
/// takes that one first; then elements that kept their name; then equal renaming identifiers.
/// Each old element feeds at most one new element. Unmatched old elements are removed, unmatched
/// new ones added.
package struct SchemaMapping {
    /// A new entity and the old entity its rows come from.
    package struct EntityMapping {
        package let source: StoredSchema.Entity
        package let destination: EntityDescription
        /// For each attribute of `destination`, by index, the old attribute it takes its values
        /// from, or nil for a new attribute (which starts with its default value).
        package let attributes: [StoredSchema.Attribute?]
        /// For each relationship of `destination`, by index, the old relationship (of `source`)
        /// it takes its links from (those whose related objects it can hold), or nil.
        package let relationships: [StoredSchema.Relationship?]
    }

    /// The new entities whose rows come from old ones.
    package var entities: [EntityMapping] = []
    /// The new entities that start empty.
    package var newEntities: [EntityDescription] = []
    /// The old entities the new version drops, with their rows.
    package var droppedEntities: [StoredSchema.Entity] = []
    /// Changes that lightweight migration cannot infer, each a sentence.
    package var problems: [String] = []

    /// The mapping of the new entity named `name`, if its rows come from an old one.
    package func mapping(ofDestination name: String) -> EntityMapping? {
        entities.first { $0.destination.name == name }
    }

    /// The mapping whose rows come from the old entity named `name`.
    package func mapping(ofSource name: String) -> EntityMapping? {
        entities.first { $0.source.name == name }
    }

    /// Infers the mapping from `source` (the schema a store records) to `destination` (the
    /// entities the store holds in the new model).
    /// - Parameters:
    ///   - renamedAttributes: explicit renames, "Entity.newName" -> "oldName", that win over
    ///     inference (a plan step's).
    ///   - convertsValues: whether custom code converts values (a plan step's `transformRow`), so
    ///     that a changed attribute type is not a problem.
    package init(
        from source: StoredSchema, to destination: [EntityDescription], renamedAttributes: [String: String] = [:],
        renamedEntities: [String: String] = [:], renamedRelationships: [String: String] = [:], convertsValues: Bool = false
    ) {
        let entityMatches = Self.match(
            destination.map { Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
            source.entities.map { Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
            explicit: renamedEntities)
        var matchedSources = Set<String>()
        for entity in destination {
            guard let sourceName = entityMatches[entity.name], let old = source.entity(named: sourceName) else {
                newEntities.append(entity)
                continue
            }
            matchedSources.insert(sourceName)
            func explicit(_ renames: [String: String]) -> [String: String] {
                var result: [String: String] = [:]
                for (key, oldName) in renames {
                    let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
                    if parts.count == 2, parts[0] == entity.name { result[parts[1]] = oldName }
                }
                return result
            }
            let attributeMatches = Self.match(
                entity.attributes.map { Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
                old.attributes.map { Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
                explicit: explicit(renamedAttributes))
            let attributes = entity.attributes.map { attribute in attributeMatches[attribute.name].flatMap { old.attribute(named: $0) } }
            for (attribute, oldAttribute) in zip(entity.attributes, attributes) {
                guard let oldAttribute, !convertsValues, !Self.canConvert(oldAttribute.type, to: attribute.type) else { continue }
                problems.append(
                    "attribute '\(entity.name).\(attribute.name)' changed type from \(oldAttribute.type) to \(attribute.type), which lightweight migration cannot infer"
                )
            }
            let relationshipMatches = Self.match(
                entity.relationships.map { Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
                old.relationships.map { Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
                explicit: explicit(renamedRelationships))
            let relationships = entity.relationships.map { relationship in
                relationshipMatches[relationship.name].flatMap { old.relationship(named: $0) }
            }
            entities.append(EntityMapping(source: old, destination: entity, attributes: attributes, relationships: relationships))
        }
        droppedEntities = source.entities.filter { !matchedSources.contains($0.name) }
        // A relationship takes over only the links of the old one it matched whose objects it can
        // hold (related objects of an entity that is now its destination or one of its
        // sub-entities): the migration checks each link as it moves it (see
        // SQLiteStore.LinkReader), so a destination that changed keeps what still fits.
    }

    /// Whether values of `old` type carry over to `new` without custom code: the same type, or
    /// one number type to another (Core Data's inferred mappings convert between its number
    /// types: shipping apps widen integers and turn integers into decimals without a mapping
    /// model). Each value is checked to fit when copied.
    package static func canConvert(_ old: AttributeType, to new: AttributeType) -> Bool {
        old == new || (old.isNumber && new.isNumber)
    }

    /// `value` (of an attribute of type `old`) as a value of `new`, or nil when it does not fit
    /// exactly (an integer out of range, a fraction into an integer, a number other than 0 or 1
    /// into a Boolean).
    package static func convert(_ value: AttributeValue, to new: AttributeType) -> AttributeValue? {
        if value.isNull || value.fits(new) { return value }
        let exact: Decimal?
        switch value {
        case .bool(let flag): exact = flag ? 1 : 0
        case .int(let number): exact = Decimal(number)
        case .double(let number): exact = number.isFinite ? Decimal(string: "\(number)") : nil
        case .decimal(let number): exact = number
        default: return nil
        }
        guard let exact else { return nil }
        switch new {
        case .boolean:
            return exact == 0 ? .bool(false) : (exact == 1 ? .bool(true) : nil)
        case .integer16, .integer32, .integer64:
            var rounded = Decimal(), copy = exact
            NSDecimalRound(&rounded, &copy, 0, .plain)
            guard rounded == exact, let number = Int64(exactly: NSDecimalNumber(decimal: exact).int64Value),
                Decimal(number) == exact, new.integerRange.contains(number)
            else { return nil }
            return .int(number)
        case .float, .double:
            let number: Double
            switch value {
            case .int(let integer):
                guard let double = Double(exactly: integer) else { return nil }
                number = double
            default:
                number = NSDecimalNumber(decimal: exact).doubleValue
                guard Decimal(string: "\(number)") == exact else { return nil }
            }
            if new == .float && Float(exactly: number) == nil { return nil }
            return .double(number)
        case .decimal:
            return .decimal(exact)
        default:
            return nil
        }
    }

    /// An element to match: its name and renaming identifier.
    struct Element {
        let name: String
        let renamingIdentifier: String?
        var canonicalName: String { renamingIdentifier ?? name }
    }

    /// Matches new elements to old ones; returns new name -> old name.
    ///
    /// Pairs are taken best first, each element at most once: an explicit rename; a new element
    /// whose renaming identifier is the old one's renaming identifier or name (same name first);
    /// the same name; the same renaming identifier.
    static func match(_ new: [Element], _ old: [Element], explicit: [String: String]) -> [String: String] {
        var candidates: [(rank: Int, new: Int, old: Int)] = []
        for (n, element) in new.enumerated() {
            for (o, previous) in old.enumerated() {
                let rank: Int
                if explicit[element.name] == previous.name {
                    rank = 0
                } else if explicit[element.name] != nil {
                    continue
                } else if let identifier = element.renamingIdentifier, identifier == previous.canonicalName || identifier == previous.name {
                    rank = element.name == previous.name ? 1 : (identifier == previous.canonicalName ? 2 : 3)
                } else if element.name == previous.name {
                    rank = 4
                } else if element.canonicalName == previous.canonicalName {
                    rank = 5
                } else {
                    continue
                }
                candidates.append((rank, n, o))
            }
        }
        candidates.sort { ($0.rank, $0.new, $0.old) < ($1.rank, $1.new, $1.old) }
        var result: [String: String] = [:]
        var usedOld = Set<Int>()
        for candidate in candidates where result[new[candidate.new].name] == nil && !usedOld.contains(candidate.old) {
            result[new[candidate.new].name] = old[candidate.old].name
            usedOld.insert(candidate.old)
        }
        return result
    }
}
