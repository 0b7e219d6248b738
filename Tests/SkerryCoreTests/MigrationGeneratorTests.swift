import Foundation
import Testing

@testable import SkerryCore

/// Random models, and random sequences of changes that Core Data's lightweight migration infers
/// (with data that fits): a store populated at the first version is opened with each later
/// version directly, and every row and link of every surviving entity must have arrived.
/// Bounded: a fixed set of seeds, a handful of small entities and versions each.
@Suite struct MigrationGeneratorTests {
    struct Attribute {
        var name: String
        var type: AttributeType
        var isOptional = true
        var defaultValue: AttributeValue = .null
        var renamingIdentifier: String?
    }

    struct Relationship {
        var name: String
        var destination: String
        var inverse: String?
        var isToMany: Bool
        var isOrdered = false
        var renamingIdentifier: String?
    }

    struct Entity {
        var name: String
        var renamingIdentifier: String?
        var attributes: [Attribute]
        var relationships: [Relationship] = []
        /// The superentity's name; the entity inherits its properties.
        var parent: String?
        var isAbstract = false
    }

    /// A model being changed, one version at a time.
    struct Spec {
        var entities: [Entity]
        var counter = 0
        var log: [String] = []

        mutating func fresh(_ prefix: String) -> String {
            counter += 1
            return "\(prefix)\(counter)"
        }

        func model() throws -> ObjectModel {
            var built: [String: EntityDescription] = [:]
            func build(_ entity: Entity) -> EntityDescription {
                if let done = built[entity.name] { return done }
                let parent = entity.parent.flatMap { name in entities.first { $0.name == name } }.map(build)
                let description = EntityDescription(
                    name: entity.name,
                    attributes: entity.attributes.map {
                        AttributeDescription(
                            $0.name, $0.type, isOptional: $0.isOptional,
                            defaultValue: $0.defaultValue.isNull ? nil : $0.defaultValue,
                            renamingIdentifier: $0.renamingIdentifier)
                    },
                    relationships: entity.relationships.map {
                        RelationshipDescription(
                            $0.name, destination: $0.destination, inverse: $0.inverse, toMany: $0.isToMany,
                            ordered: $0.isOrdered, renamingIdentifier: $0.renamingIdentifier)
                    },
                    renamingIdentifier: entity.renamingIdentifier, superentity: parent, isAbstract: entity.isAbstract)
                built[entity.name] = description
                return description
            }
            return try ObjectModel(entities: entities.map(build))
        }

        /// `name` and its superentities' names, nearest first.
        func lineage(_ name: String) -> [String] {
            var result = [name]
            while let parent = entities.first(where: { $0.name == result.last })?.parent, !result.contains(parent) { result.append(parent) }
            return result
        }

        static let types: [AttributeType] = [
            .string, .integer16, .integer32, .integer64, .double, .boolean, .date, .decimal, .binary, .uuid,
        ]

        static func random(_ g: inout SplitMix64) -> Spec {
            var spec = Spec(entities: [])
            for _ in 0..<(2 + Int(g.next() % 3)) {
                let name = spec.fresh("E")
                var attributes: [Attribute] = []
                for _ in 0..<(1 + Int(g.next() % 3)) {
                    attributes.append(Attribute(name: spec.fresh("a"), type: types[Int(g.next() % UInt64(types.count))]))
                }
                spec.entities.append(Entity(name: name, attributes: attributes))
            }
            // Some entities inherit from an earlier one; a parent is sometimes abstract.
            for k in spec.entities.indices.dropFirst() where g.next() % 3 == 0 {
                let parent = Int(g.next() % UInt64(k))
                spec.entities[k].parent = spec.entities[parent].name
                if g.next() % 3 == 0 { spec.entities[parent].isAbstract = true }
                spec.log.append("\(spec.entities[k].name) inherits from \(spec.entities[parent].name)")
            }
            for _ in 0..<(1 + Int(g.next() % 4)) { spec.addRelationship(&g) }
            return spec
        }

        /// A relationship between two entities: without inverse, one-to-many, many-to-many or
        /// one-to-one.
        mutating func addRelationship(_ g: inout SplitMix64) {
            let source = Int(g.next() % UInt64(entities.count)), target = Int(g.next() % UInt64(entities.count))
            let name = fresh("r"), destination = entities[target].name
            let kind = g.next() % 4
            if kind == 0 || source == target {
                entities[source].relationships.append(
                    Relationship(
                        name: name, destination: destination, isToMany: g.next() % 2 == 0,
                        isOrdered: false))
                log.append("add \(entities[source].name).\(name)")
                return
            }
            let inverse = fresh("r")
            let (toMany, inverseToMany): (Bool, Bool) = kind == 1 ? (true, false) : (kind == 2 ? (true, true) : (false, false))
            entities[source].relationships.append(
                Relationship(
                    name: name, destination: destination, inverse: inverse, isToMany: toMany,
                    isOrdered: toMany && g.next() % 3 == 0))
            entities[target].relationships.append(
                Relationship(
                    name: inverse, destination: entities[source].name, inverse: name,
                    isToMany: inverseToMany))
            log.append("add pair \(entities[source].name).\(name)")
        }

        /// One random change that lightweight migration infers and the data always fits.
        mutating func change(_ g: inout SplitMix64) {
            let e = Int(g.next() % UInt64(entities.count))
            switch g.next() % 14 {
            case 0:
                let type = Self.types[Int(g.next() % UInt64(Self.types.count))]
                let withDefault = type == .string || type == .integer32
                entities[e].attributes.append(
                    Attribute(
                        name: fresh("a"), type: type, isOptional: !withDefault,
                        defaultValue: type == .string ? .string("d") : (type == .integer32 ? .int(7) : .null)))
                log.append("add attribute to \(entities[e].name)")
            case 1 where entities[e].attributes.count > 1:
                let removed = entities[e].attributes.remove(at: Int(g.next() % UInt64(entities[e].attributes.count)))
                log.append("remove \(entities[e].name).\(removed.name)")
            case 2:
                let a = Int(g.next() % UInt64(entities[e].attributes.count))
                let old = entities[e].attributes[a]
                entities[e].attributes[a].renamingIdentifier = old.renamingIdentifier ?? old.name
                entities[e].attributes[a].name = fresh("a")
                log.append("rename \(entities[e].name).\(old.name)")
            case 3:
                let old = entities[e].name, new = fresh("E")
                entities[e].renamingIdentifier = entities[e].renamingIdentifier ?? old
                entities[e].name = new
                for i in entities.indices {
                    for r in entities[i].relationships.indices where entities[i].relationships[r].destination == old {
                        entities[i].relationships[r].destination = new
                    }
                    if entities[i].parent == old { entities[i].parent = new }
                }
                log.append("rename entity \(old)")
            case 4:
                if let a = entities[e].attributes.firstIndex(where: { $0.type == .string && $0.isOptional }) {
                    entities[e].attributes[a].isOptional = false
                    entities[e].attributes[a].defaultValue = .string("filled")
                    log.append("make \(entities[e].name).\(entities[e].attributes[a].name) required with a default")
                }
            case 5:
                if let a = entities[e].attributes.firstIndex(where: { $0.type == .integer16 || $0.type == .integer32 }) {
                    entities[e].attributes[a].type = .integer64
                    log.append("widen \(entities[e].name).\(entities[e].attributes[a].name)")
                }
            case 6 where entities.count < 5:
                entities.append(Entity(name: fresh("E"), attributes: [Attribute(name: fresh("a"), type: .string)]))
                log.append("add entity")
            case 7 where entities.count > 2 && !entities.contains(where: { $0.parent == entities[e].name }):
                let removed = entities.remove(at: e).name
                for i in entities.indices {
                    let gone = entities[i].relationships.filter { $0.destination == removed }.map(\.name)
                    entities[i].relationships.removeAll { gone.contains($0.name) }
                }
                log.append("remove entity \(removed)")
            case 8:
                addRelationship(&g)
            case 9 where !entities[e].relationships.isEmpty:
                let r = Int(g.next() % UInt64(entities[e].relationships.count))
                let relationship = entities[e].relationships[r]
                if relationship.isToMany {
                    entities[e].relationships[r].isOrdered.toggle() // ordered <-> unordered
                    log.append("toggle order of \(entities[e].name).\(relationship.name)")
                } else if let inverse = relationship.inverse,
                    let d = entities.firstIndex(where: { $0.name == relationship.destination }),
                    let back = entities[d].relationships.firstIndex(where: { $0.name == inverse })
                {
                    // to-one -> to-many: one-to-many becomes many-to-many, one-to-one becomes one-to-many.
                    entities[e].relationships[r].isToMany = true
                    log.append(
                        "make \(entities[e].name).\(relationship.name) to-many (inverse \(entities[d].relationships[back].isToMany ? "to-many" : "to-one"))"
                    )
                } else {
                    entities[e].relationships[r].isToMany = true
                    log.append("make \(entities[e].name).\(relationship.name) to-many")
                }
            case 10 where !entities[e].relationships.isEmpty:
                let r = Int(g.next() % UInt64(entities[e].relationships.count))
                let relationship = entities[e].relationships[r]
                if relationship.inverse == nil, let d = entities.firstIndex(where: { $0.name == relationship.destination }), d != e {
                    // An inverse added: to-many always holds the existing links.
                    let inverse = fresh("r")
                    entities[e].relationships[r].inverse = inverse
                    entities[d].relationships.append(
                        Relationship(
                            name: inverse, destination: entities[e].name, inverse: relationship.name,
                            isToMany: true))
                    log.append("add inverse to \(entities[e].name).\(relationship.name)")
                } else {
                    let old = relationship.name, new = fresh("r")
                    entities[e].relationships[r].renamingIdentifier = relationship.renamingIdentifier ?? old
                    entities[e].relationships[r].name = new
                    if let inverse = relationship.inverse, let d = entities.firstIndex(where: { $0.name == relationship.destination }),
                        let back = entities[d].relationships.firstIndex(where: { $0.name == inverse })
                    {
                        entities[d].relationships[back].inverse = new
                    }
                    log.append("rename \(entities[e].name).\(old)")
                }
            case 11 where entities.count < 6:
                entities.append(
                    Entity(name: fresh("E"), attributes: [Attribute(name: fresh("a"), type: .integer32)], parent: entities[e].name))
                log.append("add sub-entity of \(entities[e].name)")
            case 12 where entities[e].parent == nil && entities.count < 6:
                let parent = fresh("E")
                entities.append(
                    Entity(name: parent, attributes: [Attribute(name: fresh("a"), type: .string)], isAbstract: g.next() % 2 == 0))
                entities[e].parent = parent
                log.append("give \(entities[e].name) the new parent \(parent)")
            case 13 where entities[e].parent != nil:
                // Out of its hierarchy, taking copies of what it inherited (relationships without
                // inverse only), when nothing points at its superentities (whose relationships
                // could no longer hold its objects).
                let ancestors = Array(lineage(entities[e].name).dropFirst())
                let inherited = ancestors.reversed().compactMap { name in entities.first { $0.name == name } }
                guard
                    !entities.contains(where: { $0.relationships.contains { ancestors.contains($0.destination) } }),
                    !inherited.contains(where: { $0.relationships.contains { $0.inverse != nil } })
                else { break }
                entities[e].attributes = inherited.flatMap(\.attributes) + entities[e].attributes
                entities[e].relationships = inherited.flatMap(\.relationships) + entities[e].relationships
                entities[e].parent = nil
                log.append("take \(entities[e].name) out of its hierarchy")
            default:
                break
            }
        }
    }

    @Test(arguments: HierarchyConstraintTests.lastingKinds, Array(UInt64(1)...24))
    func randomLightweightChangesCarryEveryRowAndLink(kind: StoreKind, seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        var spec = Spec.random(&g)
        var versions = [(try spec.model(), spec.log)]
        for _ in 0..<3 {
            for _ in 0..<(1 + Int(g.next() % 3)) { spec.change(&g) }
            versions.append((try spec.model(), spec.log))
        }
        let directory = TemporaryDirectory()
        let harness = CorpusHarness(bundle: directory.url, root: directory.url)
        for (index, (model, log)) in versions.enumerated().dropFirst() {
            // A new store for each version: a file, or a schema of the PostgreSQL test server.
            let description =
                kind == .postgres
                ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("v\(index).sqlite"))
            let before = try harness.populate(versions[0].0, description: description)
            let after = try harness.read(model, description: description)
            let difference = CorpusHarness.difference(before, after, from: versions[0].0, to: model, sameVersion: false)
            #expect(difference == nil, "\(kind) seed \(seed), version 0 -> \(index) after: \(log.joined(separator: "; "))")
            if ProcessInfo.processInfo.environment["SKERRY_GENERATOR_LOG"] != nil {
                print(
                    "seed \(seed) v\(index): \(log.joined(separator: "; ")) -> \(before.objects.values.map(\.count).reduce(0, +)) objects")
            }
        }
    }
}
