import Foundation

@testable import SkerryCore

/// What the mapping models of a chain of versions change beyond what names say: the entities
/// they fill from another entity (new name -> the old one's, across the chain) and the
/// properties they set with an expression ("Entity.property" in the last version), which the
/// comparison leaves to the mapping.
struct MappedChanges {
    var entities: [String: String] = [:]
    var setProperties: Set<String> = []
    /// The entities (in the last version) whose rows an entity mapping's source filter
    /// predicate picks: rows it leaves out, and links to them, are not missing.
    var filtered: Set<String> = []
    /// For a chain of one mapping model, the values it declares: "Entity.attribute" (new) -> a
    /// copy of an old attribute of the row ($source.other) or a constant; checked row by row.
    var expected: [String: Expected] = [:]

    enum Expected {
        case copied(String)
        case constant(AttributeValue)
    }
}

/// A pair of versions whose migration goes through at least one of the app's mapping models:
/// the versions from the old one to the new one, in order, and the mapping models between them.
struct MappedChain {
    let versions: [XcodeModelVersion]
    let mappings: [XcodeMappingModel]
    let stage: String

    /// The chain from `old` to `new` (natural order), or nil when no mapping model lies on it,
    /// the new version comes first, or a version on it did not load.
    init?(
        from old: String, to new: String, model: XcodeModel, versions: [(String, XcodeModelVersion?)],
        mappings: [XcodeMappingModel]
    ) {
        guard let start = versions.firstIndex(where: { $0.0 == old }), let end = versions.firstIndex(where: { $0.0 == new }),
            start < end
        else { return nil }
        let names = versions[start...end].map(\.0)
        var used: [XcodeMappingModel] = []
        for (from, to) in zip(names, names.dropFirst()) {
            if let mapping = mappings.first(where: { $0.sourceVersionName == from && $0.destinationVersionName == to }) {
                used.append(mapping)
            }
        }
        let loaded = versions[start...end].compactMap(\.1)
        guard !used.isEmpty, loaded.count == names.count else { return nil }
        self.versions = loaded
        self.mappings = used
        self.stage = "mapped \(old) -> \(new)"
    }

    /// The entities and properties the chain's mappings decide (see ``MappedChanges``).
    var changes: MappedChanges {
        var changes = MappedChanges()
        guard let last = versions.last?.model else { return changes }
        for entity in last.entities {
            var name = entity.name
            for version in versions.indices.dropFirst().reversed() {
                let mapping = mappings.first { $0.destinationVersionName == versions[version].name }
                // Only the mappings whose rows keep their keys: another mapping of the same
                // source entity makes new objects, which the comparison leaves to it.
                let keeping = mapping?.keyKeepingMappings(destination: versions[version].model) ?? []
                if let entityMapping = mapping?.entityMappings.first(where: { $0.destinationEntityName == name }) {
                    if entityMapping.sourceFilterPredicate != nil { changes.filtered.insert(entity.name) }
                    if let source = entityMapping.sourceEntityName, keeping.contains(entityMapping.name) { name = source }
                }
            }
            if name != entity.name { changes.entities[entity.name] = name }
        }
        if mappings.count == 1 && versions.count == 2 {
            for entityMapping in mappings[0].entityMappings where entityMapping.sourceEntityName != nil {
                guard let destination = entityMapping.destinationEntityName else { continue }
                for property in entityMapping.attributeMappings {
                    switch property.valueExpression {
                    case .keyPath(let path)? where !path.contains("."):
                        changes.expected["\(destination).\(property.name)"] = .copied(path)
                    case .constant(let value)?:
                        changes.expected["\(destination).\(property.name)"] = .constant(value)
                    default: continue
                    }
                }
            }
        }
        for mapping in mappings {
            for entityMapping in mapping.entityMappings {
                guard let destination = entityMapping.destinationEntityName else { continue }
                for property in entityMapping.attributeMappings + entityMapping.relationshipMappings where property.valueExpression != nil {
                    changes.setProperties.insert("\(destination).\(property.name)")
                }
            }
        }
        return changes
    }
}

extension CorpusHarness {
    /// The repository folder of the bundle: the first folder under the corpus root.
    var repositoryFolder: URL {
        guard let first = name.split(separator: "/").first else { return root }
        return root.appendingPathComponent(String(first))
    }

    /// The readable mapping models in the bundle's repository folder that map one version of
    /// `model` to another (by version names, and by the model bundle's name where their paths
    /// give one).
    func mappingModels(for model: XcodeModel) -> [XcodeMappingModel] {
        guard let walker = FileManager.default.enumerator(at: repositoryFolder, includingPropertiesForKeys: nil) else { return [] }
        var found: [XcodeMappingModel] = []
        for case let url as URL in walker where url.pathExtension == "xcmappingmodel" {
            walker.skipDescendants()
            // Unreadable ones are reported by their own stage ("mapping"), not here.
            guard let mapping = try? XcodeMappingModel(contentsOf: url),
                let source = mapping.sourceVersionName, let destination = mapping.destinationVersionName,
                model.versionNames.contains(source), model.versionNames.contains(destination)
            else { continue }
            let packages = [mapping.sourceModelPath, mapping.destinationModelPath].compactMap { path in
                path?.split(separator: "/").first { $0.hasSuffix(".xcdatamodeld") }.map(String.init)
            }
            if bundle.pathExtension == "xcdatamodeld" && packages.contains(where: { $0 != bundle.lastPathComponent }) { continue }
            found.append(mapping)
        }
        return found.sorted { $0.url.path < $1.url.path }
    }

    /// The models of the two versions `mapping` maps, from the first model bundle of the
    /// repository folder that has both (nil, nil when none has).
    func versionModels(of mapping: XcodeMappingModel) -> (ObjectModel?, ObjectModel?) {
        guard let source = mapping.sourceVersionName, let destination = mapping.destinationVersionName else { return (nil, nil) }
        for url in Self.bundles(under: repositoryFolder) where url.pathExtension == "xcdatamodeld" {
            // A bundle that cannot be read has its own stage ("open") in the report.
            guard let model = try? XcodeModel(contentsOf: url), model.versionNames.contains(source),
                model.versionNames.contains(destination),
                let old = try? model.load(version: source), let new = try? model.load(version: destination)
            else { continue }
            return (old.model, new.model)
        }
        return (nil, nil)
    }

    /// Migrates the store of the chain's first version with a plan its mapping models drive, and
    /// reports the verdict: carried (every row and link the mappings keep), typed refusal (a
    /// `SkerryError` saying what cannot be carried), custom policy (the app's
    /// `NSEntityMigrationPolicy` code), other.
    func migrate(_ chain: MappedChain, store: StoreDescription, snapshot: CorpusSnapshot, into report: inout CorpusReport) {
        let mappings = chain.mappings.map(\.url.lastPathComponent).joined(separator: ", ")
        do {
            let plan = try MigrationPlan(xcodeVersions: chain.versions, mappingModels: chain.mappings)
            var description = store
            description.migrationPlan = plan
            let current = chain.versions[chain.versions.count - 1]
            let migrated = try read(current.model, description: description)
            if let difference = Self.difference(
                snapshot, migrated, from: chain.versions[0].model, to: current.model, sameVersion: false, mapped: chain.changes)
            {
                report.add(name, chain.stage, "LOST", "other: rows or links lost", "\(mappings): \(difference)")
            } else {
                report.add(name, chain.stage, "ok", "carried", mappings)
            }
        } catch let error as SkerryError where error.message.contains("custom migration policy class") {
            report.add(name, chain.stage, "FAIL", "custom policy", "\(mappings): \(error)")
        } catch let error as SkerryError {
            report.add(name, chain.stage, "FAIL", "typed refusal: \(Self.category(error))", "\(mappings): \(error)")
        } catch {
            report.add(name, chain.stage, "FAIL", "other: \(Self.category(error))", "\(mappings): \(error)")
        }
    }

    /// Migrates the store of the chain's first version without its mapping models (a lightweight
    /// migration) and checks it against what they declare: the rows and links they keep, the
    /// values they copy or set. Categories as ``migrate(_:store:snapshot:into:)``'s, with
    /// "lightweight loses" for a store that lacks what the mapping models declare.
    func migrateWithoutMappings(_ chain: MappedChain, store: StoreDescription, snapshot: CorpusSnapshot, into report: inout CorpusReport) {
        let stage = "unmapped" + chain.stage.dropFirst("mapped".count)
        do {
            let current = chain.versions[chain.versions.count - 1]
            let migrated = try read(current.model, description: store)
            if let difference = Self.difference(
                snapshot, migrated, from: chain.versions[0].model, to: current.model, sameVersion: false, mapped: chain.changes)
            {
                report.add(name, stage, "LOST", "lightweight loses", difference)
            } else {
                report.add(name, stage, "ok", "carried")
            }
        } catch let error as SkerryError {
            report.add(name, stage, "FAIL", "typed refusal: \(Self.category(error))", "\(error)")
        } catch {
            report.add(name, stage, "FAIL", "other: \(Self.category(error))", "\(error)")
        }
    }
}
