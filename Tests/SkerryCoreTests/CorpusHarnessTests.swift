import Foundation
import Testing

@testable import SkerryCore

/// Runs every Xcode model bundle found under the folder `SKERRY_CORPUS` names (real apps' models,
/// kept outside the repository): loads each version, round-trips a populated store of each, and
/// opens a store of each earlier version with the current model, checking that every row and link
/// arrived. Writes one line per check to `SKERRY_CORPUS_REPORT` (default
/// `/tmp/skerry-corpus-report.tsv`): bundle, stage, outcome, category, detail. Skipped unless
/// `SKERRY_CORPUS` is set; `SKERRY_CORPUS_FILTER` keeps only bundles whose path contains it.
/// `SKERRY_CORPUS_STORE=postgres` runs the same checks on the PostgreSQL test server (a schema
/// per version's store; run under `scripts/postgres-server.sh run`) instead of SQLite files.
/// `SKERRY_CORPUS_PAIRS=consecutive` opens each version's store with the next version's model
/// (versions in their natural order) instead of each earlier version's with the current one.
/// Where the app has Xcode mapping models (`.xcmappingmodel`, anywhere in the bundle's repository
/// folder, the first folder under `SKERRY_CORPUS`) between versions a pair migrates through, the
/// pair migrates with a plan over those versions driven by them (stage "mapped OLD -> NEW", its
/// category the verdict: carried, typed refusal, custom policy, other);
/// `SKERRY_CORPUS_MAPPINGS=off` migrates every pair without them, as before;
/// `SKERRY_CORPUS_MAPPINGS=check` migrates those pairs without them (lightweight) and checks the
/// result against what the mapping models declare (stage "unmapped OLD -> NEW").
/// `SKERRY_CORPUS_MOVE=1` (SQLite stores, under `scripts/postgres-server.sh run`) also moves each
/// version's store into PostgreSQL and into memory with `migratePersistentStore` and compares
/// every object, value and link (stage "move VERSION -> KIND"), instead of migrating pairs.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["SKERRY_CORPUS"] != nil))
struct CorpusHarnessTests {
    @Test func corpus() throws {
        let environment = ProcessInfo.processInfo.environment
        let root = URL(fileURLWithPath: environment["SKERRY_CORPUS"]!)
        let filter = environment["SKERRY_CORPUS_FILTER"]
        let reportPath = environment["SKERRY_CORPUS_REPORT"] ?? "/tmp/skerry-corpus-report.tsv"
        var report = CorpusReport()
        let onPostgres = environment["SKERRY_CORPUS_STORE"] == "postgres"
        if onPostgres { _ = try PostgresTestServer.require() }
        for bundle in CorpusHarness.bundles(under: root)
        where filter.map({
            $0.hasPrefix("/")
                ? bundle.standardizedFileURL.path == URL(fileURLWithPath: $0).standardizedFileURL.path : bundle.path.contains($0)
        }) ?? true {
            if bundle.pathExtension == "xcmappingmodel" {
                CorpusHarness(bundle: bundle, root: root).readMapping(into: &report)
            } else {
                CorpusHarness(
                    bundle: bundle, root: root, onPostgres: onPostgres,
                    consecutivePairs: environment["SKERRY_CORPUS_PAIRS"] == "consecutive",
                    usesMappings: environment["SKERRY_CORPUS_MAPPINGS"] != "off",
                    checksLightweightAgainstMappings: environment["SKERRY_CORPUS_MAPPINGS"] == "check",
                    movesStores: environment["SKERRY_CORPUS_MOVE"] == "1"
                ).run(into: &report)
            }
        }
        let text = report.lines.map { $0.joined(separator: "\t") }.joined(separator: "\n") + "\n"
        if let handle = FileHandle(forWritingAtPath: reportPath) {
            handle.seekToEndOfFile()
            handle.write(Data(text.utf8))
            handle.closeFile()
        } else {
            _ = FileManager.default.createFile(atPath: reportPath, contents: Data(text.utf8))
        }
    }
}

struct CorpusReport {
    var lines: [[String]] = []

    mutating func add(_ bundle: String, _ stage: String, _ outcome: String, _ category: String = "", _ detail: String = "") {
        lines.append([
            bundle, stage, outcome, category, detail.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " "),
        ])
    }
}

/// A store's content, read back: per object ("Entity/pKey"), its attribute values and its
/// relationships' members.
struct CorpusSnapshot {
    struct Object {
        var values: [String: AttributeValue] = [:]
        var relationships: [String: [String]] = [:]
    }
    var objects: [String: [String: Object]] = [:] // entity -> key -> object
}

struct CorpusHarness {
    let bundle: URL
    let root: URL
    /// Whether the stores are schemas of the PostgreSQL test server rather than SQLite files.
    var onPostgres = false
    /// Whether each version's store is opened with the next version (else each earlier one's
    /// with the current version).
    var consecutivePairs = false
    /// Whether pairs with mapping models between them migrate with those.
    var usesMappings = false
    /// Whether pairs with mapping models between them migrate without them (lightweight) and are
    /// checked against what the mapping models declare (stage "unmapped OLD -> NEW").
    var checksLightweightAgainstMappings = false
    /// Whether each version's SQLite store also moves into PostgreSQL and into memory with
    /// `migratePersistentStore` (stage "move VERSION -> KIND"; CorpusHarness+Move.swift), and
    /// no pair migrates.
    var movesStores = false

    /// `.xcdatamodeld` folders, and `.xcdatamodel` folders outside any `.xcdatamodeld`.
    static func bundles(under root: URL) -> [URL] {
        var result: [URL] = []
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        for case let url as URL in walker {
            switch url.pathExtension {
            case "xcdatamodeld":
                result.append(url)
                walker.skipDescendants()
            case "xcdatamodel", "xcmappingmodel":
                result.append(url)
                walker.skipDescendants()
            default:
                continue
            }
        }
        return result.sorted { $0.path < $1.path }
    }

    /// An error message with paths, numbers and quoted names taken out: a category.
    static func category(_ error: any Error) -> String {
        guard let error = error as? SkerryError else { return "\(type(of: error))" }
        var text = error.message
        if let range = text.range(
            of: #"^/.*?(/contents|/\.xccurrentversion|\.xcdatamodeld?)(, line \d+)?(, [a-z ]+ '[^']*')*: "#, options: .regularExpression)
        {
            text.removeSubrange(range)
        }
        // The store's description and the model's hash, so that both stores' messages compare.
        text = text.replacingOccurrences(
            of: #"(SQLite store at /[^\s,:]+|PostgreSQL store \([^)]*\))"#, with: "the store", options: .regularExpression)
        text = text.replacingOccurrences(of: #"current model \([0-9a-f]+\)"#, with: "current model", options: .regularExpression)
        text = text.replacingOccurrences(of: #"/[^\s,:]+"#, with: "PATH", options: .regularExpression)
        text = text.replacingOccurrences(of: #"'[^']*'"#, with: "'…'", options: .regularExpression)
        text = text.replacingOccurrences(of: #"\d+"#, with: "N", options: .regularExpression)
        if text.count > 160 { text = String(text.prefix(160)) + "…" }
        return "\(error.code): \(text)"
    }

    var name: String {
        String(bundle.path.dropFirst(root.path.count + 1))
    }

    /// Reads a mapping model and makes its plan step (with its two versions' models, when a model
    /// bundle of the repository has them).
    func readMapping(into report: inout CorpusReport) {
        do {
            let mapping = try XcodeMappingModel(contentsOf: bundle)
            let (source, destination) = versionModels(of: mapping)
            _ = try mapping.migrationStep(from: 0, source: source, destination: destination)
            report.add(
                name, "mapping", "ok", "", "\(mapping.entityMappings.count) entity mappings\(source == nil ? ", without its models" : "")")
        } catch {
            report.add(name, "mapping", "FAIL", Self.category(error), "\(error)")
        }
    }

    func run(into report: inout CorpusReport) {
        let model: XcodeModel
        do {
            model = try XcodeModel(contentsOf: bundle)
        } catch {
            report.add(name, "open", "FAIL", Self.category(error), "\(error)")
            return
        }
        report.add(name, "open", "ok", "", "\(model.versionNames.count) versions")
        var versions: [(String, XcodeModelVersion?)] = []
        for version in model.versionNames {
            do {
                versions.append((version, try model.load(version: version)))
                report.add(name, "load \(version)", "ok")
            } catch {
                versions.append((version, nil))
                report.add(name, "load \(version)", "FAIL", Self.category(error), "\(error)")
            }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skerry-corpus-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var stores: [String: (StoreDescription, CorpusSnapshot)] = [:]
        for (number, (versionName, version)) in versions.enumerated() {
            guard let version else { continue }
            do {
                // A store per version: a file, or a schema of the PostgreSQL test server.
                let url = directory.appendingPathComponent("\(number).sqlite")
                let store = onPostgres ? try PostgresTestStore.newDescription() : StoreDescription(url: url)
                let snapshot = try populate(version.model, description: store)
                let reread = try read(version.model, description: store)
                if let difference = Self.difference(snapshot, reread, from: version, to: version) {
                    report.add(name, "roundtrip \(versionName)", "LOST", "round trip differs", difference)
                } else {
                    report.add(name, "roundtrip \(versionName)", "ok")
                    stores[versionName] = (store, snapshot)
                    if movesStores && !onPostgres { move(version.model, file: store, versionName: versionName, into: &report) }
                }
            } catch {
                report.add(name, "roundtrip \(versionName)", "FAIL", Self.category(error), "\(error)")
            }
        }
        // The move stage checks each version's store on its own.
        if movesStores { return }
        // (old version, new version) pairs: each earlier one to the current one, or each to the next.
        var pairs: [(String, XcodeModelVersion, String, XcodeModelVersion)] = []
        if consecutivePairs {
            for (old, new) in zip(versions, versions.dropFirst()) {
                if let oldVersion = old.1, let newVersion = new.1 { pairs.append((old.0, oldVersion, new.0, newVersion)) }
            }
        } else if let current = versions.first(where: { $0.0 == model.currentVersionName })?.1 {
            for case (let versionName, let version?) in versions where versionName != model.currentVersionName {
                pairs.append((versionName, version, model.currentVersionName, current))
            }
        }
        let mappings = usesMappings ? mappingModels(for: model) : []
        for (versionName, version, currentName, current) in pairs {
            guard let (store, snapshot) = stores[versionName] else { continue }
            if let chain = MappedChain(from: versionName, to: currentName, model: model, versions: versions, mappings: mappings) {
                if checksLightweightAgainstMappings {
                    migrateWithoutMappings(chain, store: store, snapshot: snapshot, into: &report)
                } else {
                    migrate(chain, store: store, snapshot: snapshot, into: &report)
                }
                continue
            }
            let stage = "migrate \(versionName) -> \(currentName)"
            do {
                let migrated = try read(current.model, description: store)
                if let difference = Self.difference(snapshot, migrated, from: version, to: current) {
                    report.add(name, stage, "LOST", "rows or links lost", difference)
                } else {
                    report.add(name, stage, "ok")
                }
            } catch {
                report.add(name, stage, "FAIL", Self.category(error), "\(error)")
            }
        }
    }

    // MARK: Populate and read

    /// A value of `type` for object `n`, attribute `a`: distinct across objects for every type
    /// but Boolean.
    static func value(_ type: AttributeType, object n: Int, attribute a: Int) -> AttributeValue {
        let k = n * 7 + a + 1
        switch type {
        case .boolean: return .bool(n % 2 == 0)
        case .integer16, .integer32, .integer64: return .int(Int64(k))
        case .float: return .double(Double(k) + 0.5)
        case .double: return .double(Double(k) + 0.25)
        case .decimal: return .decimal(Decimal(k) + Decimal(string: "0.125")!)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(k) * 86_400))
        case .string: return .string("s\(k)")
        case .binary: return .data(Data([UInt8(k % 256), 1, 2]))
        case .uuid: return .uuid(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", k))!)
        case .url: return .url(URL(string: "https://example.com/\(k)")!)
        }
    }

    /// How many objects of each entity to make: 4, more where a to-many relationship needs a
    /// minimum of members that each hold it through a to-one inverse, or a required to-one
    /// relationship needs an object of its own (a one-to-one pair): enough for the objects of
    /// every entity that has the relationship (its declaring entity's sub-entities inherit it),
    /// made by the destination, or shared by the sub-entities of an abstract one.
    static func objectCounts(_ model: ObjectModel) -> [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name, 4) })
        for _ in 0..<5 {
            var needed: [String: Int] = [:]
            for entity in model.entities where isInstantiable(entity, in: model) {
                for relationship in entity.relationships {
                    guard
                        let inverse = relationship.inverseName.flatMap({
                            model.entity(named: relationship.destinationEntityName)?.relationship(named: $0)
                        }),
                        !inverse.isToMany
                    else { continue }
                    let need =
                        relationship.isToMany
                        ? max(relationship.minCount, relationship.isOptional ? 0 : 1) : (relationship.isOptional ? 0 : 1)
                    guard need > 0 else { continue }
                    // Summed over the entities that have this relationship (a declaring entity
                    // and its sub-entities), the most over the relationships to the entity.
                    needed["\(relationship.destinationEntityName).\(inverse.name)", default: 0] += need * (counts[entity.name] ?? 4)
                }
            }
            for (key, total) in needed {
                guard let destination = model.entity(named: String(key[..<key.lastIndex(of: ".")!])) else { continue }
                // An abstract destination's objects are its sub-entities'.
                let makers =
                    isInstantiable(destination, in: model)
                    ? [destination] : model.entityAndSubentities(of: destination).filter { isInstantiable($0, in: model) }
                let share = (total + max(makers.count, 1) - 1) / max(makers.count, 1)
                for entity in makers { counts[entity.name] = min(64, max(counts[entity.name] ?? 4, share)) }
            }
        }
        return counts
    }

    /// Fills a new store with objects of every entity, every attribute set, relationships linked;
    /// returns what the store holds after the save. Each relationship pair is set from one side
    /// only (the to-one side of a one-to-many pair, the side that sorts first otherwise), so that
    /// no link steals another.
    func populate(_ model: ObjectModel, url: URL) throws -> CorpusSnapshot {
        try populate(model, description: StoreDescription(url: url))
    }

    /// ``populate(_:url:)`` for the store of `description` (a PostgreSQL store, say).
    func populate(_ model: ObjectModel, description: StoreDescription) throws -> CorpusSnapshot {
        let stack = PersistentStack(name: "Corpus", model: model)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        let counts = Self.objectCounts(model)
        return try context.performAndWait {
            var objects: [String: [EntityObject]] = [:]
            for entity in model.entities where Self.isInstantiable(entity, in: model) {
                // Values differ across a hierarchy too: a uniqueness constraint spans it.
                let offset = 64 * (model.entityAndSubentities(of: entity.rootEntity).firstIndex { $0 === entity } ?? 0)
                for n in 0..<(counts[entity.name] ?? 4) {
                    let object = try context.insert(entityName: entity.name)
                    for (a, attribute) in entity.attributes.enumerated() where Self.isStored(attribute) && attribute.derivation == nil {
                        try object.setValue(Self.value(attribute.type, object: offset + n, attribute: a), at: a)
                    }
                    objects[entity.name, default: []].append(object)
                }
            }
            for entity in model.entities {
                // Objects are numbered across their hierarchy, in the order candidates lists them,
                // so that the objects of sub-entities link to other objects than their parent's.
                let start = model.entityAndSubentities(of: entity.rootEntity).prefix { $0 !== entity }
                    .reduce(0) { $0 + (objects[$1.name]?.count ?? 0) }
                // Transient relationships too: a required one must hold an object for the save
                // to pass, as in Core Data (Xcode 3's templates mark back-references transient).
                for relationship in entity.relationships {
                    // An offset per relationship, the same in every entity that has it.
                    let r = relationship.name.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
                    let inverse = relationship.inverseName.flatMap {
                        model.entity(named: relationship.destinationEntityName)?.relationship(named: $0)
                    }
                    if let inverse {
                        if relationship.isToMany && !inverse.isToMany { continue }
                        // One side of the pair, the same for the sub-entities that inherit it.
                        let destinationRoot = model.entity(named: relationship.destinationEntityName)?.rootEntity.name ?? ""
                        // A one-to-one pair from its required side, if one is.
                        let requiredSide = !relationship.isToMany && !inverse.isToMany && relationship.isOptional != inverse.isOptional
                        if requiredSide
                            ? relationship.isOptional
                            : relationship.isToMany == inverse.isToMany
                                && "\(entity.rootEntity.name).\(relationship.name)" > "\(destinationRoot).\(inverse.name)"
                        {
                            continue
                        }
                    }
                    let candidates = Self.candidates(for: relationship, in: model, objects: objects)
                    guard !candidates.isEmpty else { continue }
                    for (index, object) in (objects[entity.name] ?? []).enumerated() {
                        let n = start + index
                        if relationship.isToMany {
                            var count = max(relationship.minCount, 2)
                            if relationship.maxCount > 0 { count = min(count, relationship.maxCount) }
                            let members = (0..<min(count, candidates.count)).map { candidates[(n + r + $0) % candidates.count] }
                            try object.setRelatedObjects(members, forKey: relationship.name)
                        } else {
                            try object.setRelatedObject(candidates[(n + r) % candidates.count], forKey: relationship.name)
                        }
                    }
                }
            }
            try context.save()
            return try Self.snapshot(model, context)
        }
    }

    /// Whether objects of `entity` can be inserted.
    static func isInstantiable(_ entity: EntityDescription, in model: ObjectModel) -> Bool {
        !entity.isAbstract
    }

    /// Whether the attribute is stored (not transient).
    static func isStored(_ attribute: AttributeDescription) -> Bool {
        !attribute.isTransient
    }

    /// The objects a relationship may hold.
    static func candidates(
        for relationship: RelationshipDescription, in model: ObjectModel,
        objects: [String: [EntityObject]]
    ) -> [EntityObject] {
        // Objects of the destination and of its sub-entities.
        guard let destination = model.entity(named: relationship.destinationEntityName) else { return [] }
        return model.entityAndSubentities(of: destination).flatMap { objects[$0.name] ?? [] }
    }

    /// Opens the store with `model` (migrating it if needed) and reads everything.
    func read(_ model: ObjectModel, url: URL) throws -> CorpusSnapshot {
        try read(model, description: StoreDescription(url: url))
    }

    /// ``read(_:url:)`` for the store of `description`.
    func read(_ model: ObjectModel, description: StoreDescription) throws -> CorpusSnapshot {
        let stack = PersistentStack(name: "Corpus", model: model)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try Self.snapshot(model, context) }
    }

    static func snapshot(_ model: ObjectModel, _ context: ObjectContext) throws -> CorpusSnapshot {
        var snapshot = CorpusSnapshot()
        for entity in model.entities {
            var objects: [String: CorpusSnapshot.Object] = [:]
            for object in try context.fetch(FetchRequest(entityName: entity.name)) where object.objectID.entityName == entity.name {
                var item = CorpusSnapshot.Object()
                for (a, attribute) in entity.attributes.enumerated() where isStored(attribute) {
                    item.values[attribute.name] = try object.value(at: a, as: AttributeValue.self)
                }
                for relationship in entity.relationships where !relationship.isTransient {
                    if relationship.isToMany {
                        let members = try object.relatedObjects(forKey: relationship.name).map(\.objectID.description)
                        item.relationships[relationship.name] = relationship.isOrdered ? members : members.sorted()
                    } else {
                        item.relationships[relationship.name] =
                            try object.relatedObject(forKey: relationship.name).map { [$0.objectID.description] } ?? []
                    }
                }
                objects[object.objectID.description] = item
            }
            snapshot.objects[entity.name] = objects
        }
        return snapshot
    }

    // MARK: Compare

    /// New name -> old name of the elements of `new` that take over elements of `old`, by
    /// Skerry's reading of Core Data's rule (SchemaMapping.match), or by name within a version.
    static func matches(
        _ new: [(name: String, renamingIdentifier: String?)], _ old: [(name: String, renamingIdentifier: String?)],
        sameVersion: Bool
    ) -> [String: String] {
        if sameVersion {
            let names = Set(old.map(\.name))
            return Dictionary(uniqueKeysWithValues: new.filter { names.contains($0.name) }.map { ($0.name, $0.name) })
        }
        return SchemaMapping.match(
            new.map { SchemaMapping.Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) },
            old.map { SchemaMapping.Element(name: $0.name, renamingIdentifier: $0.renamingIdentifier) }, explicit: [:])
    }

    static func difference(
        _ old: CorpusSnapshot, _ new: CorpusSnapshot, from source: XcodeModelVersion,
        to destination: XcodeModelVersion
    ) -> String? {
        difference(old, new, from: source.model, to: destination.model, sameVersion: source.url == destination.url)
    }

    /// What of `old` (written with `source`) is missing from or different in `new` (read with
    /// `destination`), or nil. Entities and properties are matched by renaming identifier; only
    /// what the destination can hold is compared.
    static func difference(
        _ old: CorpusSnapshot, _ new: CorpusSnapshot, from source: ObjectModel,
        to destination: ObjectModel, sameVersion: Bool, mapped: MappedChanges? = nil
    ) -> String? {
        var problems: [String] = []
        var entityMatches = matches(
            destination.entities.map { ($0.name, $0.renamingIdentifier) },
            source.entities.map { ($0.name, $0.renamingIdentifier) }, sameVersion: sameVersion)
        if let mapped {
            // The mapping models' entity mappings decide which old entity each new one takes.
            for (new, old) in mapped.entities where source.entity(named: old) != nil && destination.entity(named: new) != nil {
                for (other, taken) in entityMatches where taken == old { entityMatches[other] = nil }
                entityMatches[new] = old
            }
        }
        var entityMap: [String: String] = [:] // old -> new
        for (newName, oldName) in entityMatches { entityMap[oldName] = newName }
        func mapKey(_ key: String) -> String? {
            let parts = key.split(separator: "/")
            guard parts.count == 2, let entity = entityMap[String(parts[0])] else { return nil }
            return "\(entity)/\(parts[1])"
        }
        for oldEntity in source.entities {
            guard let newName = entityMap[oldEntity.name], let newEntity = destination.entity(named: newName) else { continue }
            let oldObjects = old.objects[oldEntity.name] ?? [:], newObjects = new.objects[newEntity.name] ?? [:]
            let isFiltered = mapped?.filtered.contains(newEntity.name) == true
            let missing = oldObjects.keys.filter { mapKey($0).map { newObjects[$0] == nil } ?? true }
            if !missing.isEmpty && !isFiltered {
                problems.append("\(oldEntity.name)->\(newEntity.name): \(missing.count) of \(oldObjects.count) rows missing")
                continue
            }
            let attributeMatches = matches(
                newEntity.storedAttributes.map { ($0.name, $0.renamingIdentifier) },
                oldEntity.storedAttributes.map { ($0.name, $0.renamingIdentifier) }, sameVersion: sameVersion)
            let relationshipMatches = matches(
                newEntity.relationships.map { ($0.name, $0.renamingIdentifier) },
                oldEntity.relationships.map { ($0.name, $0.renamingIdentifier) }, sameVersion: sameVersion)
            for (key, oldObject) in oldObjects {
                // A row a filter predicate left out is not compared.
                guard let newKey = mapKey(key), let newObject = newObjects[newKey] else { continue }
                // What the mapping model says the row gets: the old value or the constant.
                for (property, expected) in mapped?.expected ?? [:] where property.hasPrefix("\(newEntity.name).") {
                    let name = String(property.dropFirst(newEntity.name.count + 1))
                    guard let attribute = newEntity.attribute(named: name) else { continue }
                    let wanted: AttributeValue?
                    switch expected {
                    case .copied(let old):
                        guard oldEntity.attribute(named: old)?.type == attribute.type else { continue }
                        wanted = oldObject.values[old] ?? .null
                    case .constant(let value): wanted = MappingValue.convert(value, to: attribute.type)
                    }
                    let now = newObject.values[name] ?? .null
                    if let wanted, wanted != now {
                        problems.append("\(key).\(name): the mapping model gives \(wanted), the store has \(now)")
                    }
                }
                for (newName, oldName) in attributeMatches where mapped?.setProperties.contains("\(newEntity.name).\(newName)") != true {
                    guard let attribute = oldEntity.attribute(named: oldName), let newAttribute = newEntity.attribute(named: newName),
                        newAttribute.type == attribute.type
                    else { continue }
                    let was = oldObject.values[attribute.name] ?? .null, now = newObject.values[newAttribute.name] ?? .null
                    if was != now && !(was.isNull && now == newAttribute.defaultValue) {
                        problems.append("\(key).\(attribute.name): \(was) became \(now)")
                    }
                }
                for (newName, oldName) in relationshipMatches where mapped?.setProperties.contains("\(newEntity.name).\(newName)") != true {
                    guard let relationship = oldEntity.relationship(named: oldName),
                        let newRelationship = newEntity.relationship(named: newName),
                        entityMap[relationship.destinationEntityName] == newRelationship.destinationEntityName
                    else { continue }
                    // Links to rows a filter predicate left out go with them.
                    let was = (oldObject.relationships[relationship.name] ?? []).compactMap(mapKey).filter { key in
                        let entity = String(key.split(separator: "/")[0])
                        return mapped?.filtered.contains(entity) != true || new.objects[entity]?[key] != nil
                    }
                    let now = newObject.relationships[newRelationship.name] ?? []
                    if Set(was) != Set(now) {
                        problems.append("\(key).\(relationship.name): links \(was) became \(now)")
                    }
                }
            }
        }
        guard !problems.isEmpty else { return nil }
        return "\(problems.count) differences: " + problems.prefix(5).joined(separator: "; ")
    }
}
