import Foundation

/// Reads one `.xcdatamodel` version's `contents` file into an ``XcodeModelVersion``.
///
/// Three passes: the XML is read into a tree; each entity element is read on its own (types,
/// defaults, relationship options); then the entities are checked against each other (names,
/// inheritance, destinations, inverses) and flattened into an ``ObjectModel``.
struct XcodeModelParser {
    /// The version's name.
    let versionName: String
    /// The version's `.xcdatamodel` folder.
    let folder: URL
    /// Registered value transformer names and their storage types.
    let transformers: [String: AttributeType]

    /// The `contents` file, or in a version last saved by Xcode 3, its `elements` file.
    private var file: URL {
        let contents = folder.appendingPathComponent("contents"), elements = folder.appendingPathComponent("elements")
        return !FileManager.default.fileExists(atPath: contents.path) && FileManager.default.fileExists(atPath: elements.path)
            ? elements : contents
    }

    // MARK: Read entities

    /// An entity as the file declares it, before inheritance is applied.
    private struct Entity {
        let name: String
        let parentName: String?
        let isAbstract: Bool
        let elementID: String?
        let versionHashModifier: String?
        let line: Int
        /// The class named in the model (`representedClassName`), Core Data's `managedObjectClassName`.
        var representedClassName: String?
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var constraints: [[String]] = []
        var indexes: [IndexDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
    }

    /// An attribute as declared.
    private struct Attribute {
        let description: AttributeDescription
        let elementID: String?
        let versionHashModifier: String?
        let line: Int
    }

    /// A relationship as declared.
    private struct Relationship {
        let description: RelationshipDescription
        let inverseEntity: String?
        let elementID: String?
        let versionHashModifier: String?
        let line: Int
        var name: String { description.name }
    }

    /// An entity with its inherited properties, ancestors' first.
    private struct FlatEntity {
        let entity: Entity
        /// Each attribute, with the entity that declares it.
        var attributes: [(declaredIn: String, attribute: Attribute)] = []
        /// Each relationship, with the entity that declares it.
        var relationships: [(declaredIn: String, relationship: Relationship)] = []
        var constraints: [[String]] = []
        var indexes: [IndexDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
    }

    /// Reads, checks and converts the version.
    func parse() throws(SkerryError) -> XcodeModelVersion {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw XcodeModel.failure("\(folder.path): the model version folder does not exist.")
        }
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw XcodeModel.failure(
                "\(file.path): the model version has no 'contents' file (nor the 'elements' file of a model saved by Xcode 3)."
            )
        }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw XcodeModel.failure("\(file.path): the file cannot be read.")
        }
        let root: XMLNode
        if file.lastPathComponent == "elements" {
            do {
                root = try LegacyModelArchive.read(data)
            } catch {
                throw XcodeModel.failure(
                    "\(file.path): the file is not a model saved by Xcode 3 that Skerry can read: \(error.reason). Open and save the model in a current Xcode."
                )
            }
        } else {
            switch XMLNode.parse(data) {
            case .success(let node): root = node
            case .failure(let failure):
                let place = failure.openElements.isEmpty ? "" : ", in " + failure.openElements.joined(separator: ", ")
                throw XcodeModel.failure(
                    "\(file.path), line \(failure.line)\(place): the file is not well-formed XML: \(failure.reason).")
            }
        }
        guard root.name == "model" else {
            throw fail("the root element is <\(root.name)>, not <model>: this is not an Xcode data model.", line: root.line)
        }

        var composites: [String: XMLNode] = [:]
        for node in root.children(named: "composite") {
            if let name = nonEmpty(node["name"]) { composites[name] = node }
        }
        var entities: [Entity] = []
        for node in root.children(named: "entity") {
            entities.append(try readEntity(node, composites: composites))
        }
        let byName = try indexByName(entities)
        let flat = try flatten(entities, byName: byName)
        try checkRelationships(entities, flat: flat)
        var configurations: [String: [String]] = [:]
        for node in root.children(named: "configuration") {
            guard let name = node["name"], !name.isEmpty else {
                throw fail("a configuration has no name.", line: node.line)
            }
            var members: [String] = []
            for member in node.children(named: "memberEntity") {
                guard let entityName = member["name"], byName[entityName] != nil else {
                    throw fail(
                        "configuration '\(name)' names the entity '\(member["name"] ?? "")', which the model does not define.",
                        line: member.line, element: ("configuration", name))
                }
                members.append(entityName)
            }
            configurations[name] = members
        }
        var templates: [FetchRequestTemplate] = []
        for node in root.children(named: "fetchRequest") {
            templates.append(try readFetchRequest(node, entity: nil))
        }
        let model = try makeModel(entities, flat: flat, configurations: configurations, templates: templates)

        var renaming: [String: String] = [:]
        var modifiers: [String: String] = [:]
        for entity in entities {
            let item = flat[entity.name]!
            renaming[entity.name] = entity.elementID
            modifiers[entity.name] = entity.versionHashModifier
            for (_, attribute) in item.attributes {
                renaming["\(entity.name).\(attribute.description.name)"] = attribute.elementID
                modifiers["\(entity.name).\(attribute.description.name)"] = attribute.versionHashModifier
            }
            for (_, relationship) in item.relationships {
                renaming["\(entity.name).\(relationship.name)"] = relationship.elementID
                modifiers["\(entity.name).\(relationship.name)"] = relationship.versionHashModifier
            }
        }
        let identifier = root["userDefinedModelVersionIdentifier"]
        return XcodeModelVersion(
            name: versionName, url: folder, model: model,
            versionIdentifier: identifier?.isEmpty == false ? identifier : nil,
            renamingIdentifiers: renaming, versionHashModifiers: modifiers,
            abstractEntityNames: entities.filter(\.isAbstract).map(\.name),
            configurations: configurations)
    }

    /// Reads one `<entity>` element.
    private func readEntity(_ node: XMLNode, composites: [String: XMLNode]) throws(SkerryError) -> Entity {
        guard let name = node["name"], !name.isEmpty else {
            throw fail("an entity has no name.", line: node.line)
        }
        var entity = Entity(
            name: name, parentName: node["parentEntity"].flatMap { $0.isEmpty ? nil : $0 },
            isAbstract: node.flag("isAbstract"), elementID: nonEmpty(node["elementID"]),
            versionHashModifier: nonEmpty(node["versionHashModifier"]), line: node.line)
        entity.representedClassName = nonEmpty(node["representedClassName"])
        var singleIndexes: [IndexDescription] = []
        for child in node.children {
            switch child.name {
            case "attribute":
                for attribute in try readAttributes(child, entity: name, composites: composites) {
                    entity.attributes.append(attribute)
                    if child.flag("indexed") { singleIndexes.append(IndexDescription([attribute.description.name])) }
                }
            case "relationship":
                entity.relationships.append(try readRelationship(child, entity: name))
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    entity.constraints.append(
                        try propertyNames(constraint, listedAs: "constraint", in: "uniqueness constraint", entity: name))
                }
            case "fetchIndex":
                if let index = try readFetchIndex(child, entity: name) { entity.indexes.append(index) }
            case "compoundIndexes":
                for index in child.children(named: "compoundIndex") {
                    entity.indexes.append(IndexDescription(try propertyNames(index, listedAs: "index", in: "compound index", entity: name)))
                }
            case "fetchedProperty":
                guard let propertyName = nonEmpty(child["name"]) else {
                    throw fail("a fetched property has no name.", line: child.line, entity: name)
                }
                guard let request = child.children(named: "fetchRequest").first else {
                    throw fail(
                        "the fetched property has no fetch request.", line: child.line, entity: name,
                        element: ("fetched property", propertyName))
                }
                entity.fetchedProperties.append(
                    FetchedPropertyDescription(propertyName, fetchRequest: try readFetchRequest(request, entity: name)))
            case "userInfo":
                continue // not stored: ignored
            default:
                continue // unknown to this reader and not part of the store's shape
            }
        }
        entity.indexes += singleIndexes
        return entity
    }

    /// Reads one `<attribute>` element.
    /// The property names a uniqueness constraint or compound index lists, as the `value` of its
    /// `child` elements; an element that lists none is an error naming `kind`.
    private func propertyNames(
        _ node: XMLNode, listedAs child: String, in kind: String,
        entity: String
    ) throws(SkerryError) -> [String] {
        let names = node.children(named: child).compactMap { $0["value"] }
        guard !names.isEmpty else {
            throw fail("a \(kind) lists no property.", line: node.line, entity: entity, element: (kind, ""))
        }
        return names
    }

    /// Reads one `<attribute>` element: one attribute, or for a composite attribute its elements,
    /// flattened into attributes named "composite.element" (optional when the composite is).
    private func readAttributes(
        _ node: XMLNode, entity: String, composites: [String: XMLNode],
        prefix: String = "", optional: Bool = false
    ) throws(SkerryError) -> [Attribute] {
        guard node["attributeType"] == "Composite" else {
            let attribute = try readAttribute(node, entity: entity)
            guard !prefix.isEmpty else { return [attribute] }
            let d = attribute.description
            return [
                Attribute(
                    description: AttributeDescription(
                        prefix + d.name, d.type, isOptional: d.isOptional || optional,
                        defaultValue: d.defaultValue.isNull ? nil : d.defaultValue,
                        renamingIdentifier: d.renamingIdentifier.map { prefix + $0 },
                        valueTransformerName: d.valueTransformerName),
                    elementID: attribute.elementID.map { prefix + $0 }, versionHashModifier: attribute.versionHashModifier,
                    line: attribute.line)
            ]
        }
        let name = node["name"] ?? ""
        let element = ("attribute", prefix + name)
        guard let compositeName = nonEmpty(node["composite"]), let composite = composites[compositeName] else {
            throw fail(
                "the composite '\(node["composite"] ?? "")' it names is not defined in the model.", line: node.line, entity: entity,
                element: element)
        }
        guard prefix.split(separator: ".").count < 8 else {
            throw fail(
                "composites nest more than 8 deep (a composite containing itself?).", line: node.line, entity: entity, element: element)
        }
        var attributes: [Attribute] = []
        for child in composite.children(named: "attribute") {
            attributes += try readAttributes(
                child, entity: entity, composites: composites, prefix: prefix + name + ".",
                optional: optional || node.flag("optional"))
        }
        return attributes
    }

    private func readAttribute(_ node: XMLNode, entity: String) throws(SkerryError) -> Attribute {
        guard let name = node["name"], !name.isEmpty else {
            throw fail("an attribute has no name.", line: node.line, entity: entity)
        }
        let element = ("attribute", name)
        func unsupported(_ what: String) -> SkerryError {
            fail("\(what) are not supported by Skerry.", line: node.line, entity: entity, element: element)
        }
        var derivation: AttributeDerivation?
        if node.flag("derived") || node["derivationExpression"] != nil {
            let expression = node["derivationExpression"] ?? ""
            guard let parsed = AttributeDerivation(expression: expression) else {
                throw fail(
                    "the derivation '\(expression)' is not one Skerry computes (a key path, to-many.@count, to-many.@sum/@min/@max/@avg.attribute, canonical:/lowercase:/uppercase: of a key path, now()).",
                    line: node.line, entity: entity, element: element)
            }
            derivation = parsed
        }
        // Xcode writes no attributeType for an Undefined attribute, which only a transient one can be.
        guard let typeName = node["attributeType"] ?? (node.flag("transient") ? "Undefined" : nil) else {
            throw fail("the attribute has no attributeType.", line: node.line, entity: entity, element: element)
        }
        let type: AttributeType
        switch typeName {
        case "Boolean": type = .boolean
        case "Integer 16": type = .integer16
        case "Integer 32": type = .integer32
        case "Integer 64": type = .integer64
        case "Float": type = .float
        case "Double": type = .double
        case "Decimal": type = .decimal
        case "Date": type = .date
        case "String": type = .string
        case "Binary": type = .binary
        case "UUID": type = .uuid
        case "URI": type = .url
        case "Transformable":
            // Core Data stores a transformable value as the data its transformer produces: with no
            // name, its keyed archiver; NSSecureUnarchiveFromData (and the app's subclasses of it,
            // whose names the model cannot tell apart) likewise. A registered transformer decides.
            type = nonEmpty(node["valueTransformerName"]).flatMap { transformers[$0] } ?? .binary
        case "Undefined" where node.flag("transient"):
            type = .binary // a transient of any value: Skerry keeps Data (AttributeValue has no "any")
        case "Undefined", "Object ID": throw unsupported("attributes of type '\(typeName)'")
        default:
            throw fail("the attribute type '\(typeName)' is unknown.", line: node.line, entity: entity, element: element)
        }
        var defaultText = node["defaultValueString"]
        if type == .date, let interval = node["defaultDateTimeInterval"] { defaultText = interval }
        // Read as Core Data's model compiler reads it: leniently, never an error (see XcodeDefaultValue).
        let defaultValue = defaultText.map { XcodeDefaultValue.parse($0, as: type) } ?? .null
        return Attribute(
            description: AttributeDescription(
                name, type, isOptional: node.flag("optional"),
                defaultValue: defaultValue.isNull ? nil : defaultValue,
                renamingIdentifier: nonEmpty(node["elementID"]),
                valueTransformerName: typeName == "Transformable" ? nonEmpty(node["valueTransformerName"]) : nil,
                isTransient: node.flag("transient"), derivation: derivation,
                preservesValueInHistoryOnDeletion: node.flag("preserveAfterDeletion")),
            elementID: nonEmpty(node["elementID"]), versionHashModifier: nonEmpty(node["versionHashModifier"]),
            line: node.line)
    }

    /// Reads one `<relationship>` element.
    private func readRelationship(_ node: XMLNode, entity: String) throws(SkerryError) -> Relationship {
        guard let name = node["name"], !name.isEmpty else {
            throw fail("a relationship has no name.", line: node.line, entity: entity)
        }
        let element = ("relationship", name)
        guard let destination = nonEmpty(node["destinationEntity"]) else {
            throw fail("the relationship has no destination entity.", line: node.line, entity: entity, element: element)
        }
        let deleteRule: DeleteRule
        switch node["deletionRule"] {
        case nil, "Nullify": deleteRule = .nullify
        case "Cascade": deleteRule = .cascade
        case "Deny": deleteRule = .deny
        case "No Action": deleteRule = .noAction
        case let other?:
            throw fail("the deletion rule '\(other)' is unknown.", line: node.line, entity: entity, element: element)
        }
        func count(_ key: String) throws(SkerryError) -> Int {
            guard let text = node[key] else { return 0 }
            guard let value = Int(text), value >= 0 else {
                throw fail("\(key) '\(text)' is not a count.", line: node.line, entity: entity, element: element)
            }
            return value
        }
        let toMany = node.flag("toMany")
        let minCount = try count("minCount"), maxCount = try count("maxCount")
        let description = RelationshipDescription(
            name, destination: destination, inverse: nonEmpty(node["inverseName"]),
            toMany: toMany, ordered: node.flag("ordered"),
            isOptional: node.flag("optional"), deleteRule: deleteRule,
            minCount: toMany ? minCount : 0, maxCount: toMany ? maxCount : 0,
            renamingIdentifier: nonEmpty(node["elementID"]), isTransient: node.flag("transient"))
        return Relationship(
            description: description, inverseEntity: nonEmpty(node["inverseEntity"]),
            elementID: nonEmpty(node["elementID"]), versionHashModifier: nonEmpty(node["versionHashModifier"]),
            line: node.line)
    }

    /// Reads one `<fetchRequest>` element: a fetch request template of the model, or the request
    /// of a fetched property of `entity`.
    private func readFetchRequest(_ node: XMLNode, entity: String?) throws(SkerryError) -> FetchRequestTemplate {
        let name = node["name"] ?? ""
        let element = ("fetch request", name)
        guard let entityName = nonEmpty(node["entity"]) else {
            throw fail("the fetch request names no entity.", line: node.line, entity: entity, element: element)
        }
        func count(_ key: String) -> Int { node[key].flatMap { Int($0) }.map { max(0, $0) } ?? 0 }
        return FetchRequestTemplate(
            name: name, entityName: entityName, predicateFormat: nonEmpty(node["predicateString"]),
            fetchLimit: count("fetchLimit"), fetchOffset: count("fetchOffset"),
            fetchBatchSize: count("fetchBatchSize"))
    }

    /// Reads one `<fetchIndex>` element.
    /// Returns nil for an index of expressions only.
    private func readFetchIndex(_ node: XMLNode, entity: String) throws(SkerryError) -> IndexDescription? {
        let element = ("fetch index", node["name"] ?? "")
        var names: [String] = []
        var expressions = 0
        for item in node.children(named: "fetchIndexElement") {
            // An R-tree index (for spatial range queries) becomes an ordinary index of its
            // columns; an expression index is left out. Both only make fetches faster.
            guard let property = nonEmpty(item["property"]) else {
                expressions += 1
                continue
            }
            names.append(property)
        }
        if names.isEmpty && expressions > 0 { return nil }
        guard !names.isEmpty else {
            throw fail("the fetch index lists no property.", line: node.line, entity: entity, element: element)
        }
        return IndexDescription(names)
    }

    // MARK: Check entities together

    /// The entities by name; duplicate names (compared case-insensitively, as the store does)
    /// are an error.
    private func indexByName(_ entities: [Entity]) throws(SkerryError) -> [String: Entity] {
        var byName: [String: Entity] = [:]
        var seen: [String: Entity] = [:]
        for entity in entities {
            if let earlier = seen[entity.name.lowercased()] {
                throw fail("the entity name is used twice (first on line \(earlier.line)).", line: entity.line, entity: entity.name)
            }
            seen[entity.name.lowercased()] = entity
            byName[entity.name] = entity
        }
        return byName
    }

    /// Applies inheritance: every entity with its ancestors' properties first.
    private func flatten(_ entities: [Entity], byName: [String: Entity]) throws(SkerryError) -> [String: FlatEntity] {
        var done: [String: FlatEntity] = [:]
        func resolve(_ entity: Entity, visiting: [String]) throws(SkerryError) -> FlatEntity {
            if let result = done[entity.name] { return result }
            var item = FlatEntity(entity: entity)
            if let parentName = entity.parentName {
                guard let parent = byName[parentName] else {
                    throw fail(
                        "the parent entity '\(parentName)' is not defined in the model.", line: entity.line,
                        entity: entity.name, element: ("parent entity", parentName))
                }
                if parentName == entity.name || visiting.contains(parentName) {
                    throw fail(
                        "the parent entities form a cycle: \((visiting + [entity.name, parentName]).joined(separator: " -> ")).",
                        line: entity.line, entity: entity.name, element: ("parent entity", parentName))
                }
                let inherited = try resolve(parent, visiting: visiting + [entity.name])
                item.attributes = inherited.attributes
                item.relationships = inherited.relationships
                item.constraints = inherited.constraints
                item.indexes = inherited.indexes
                item.fetchedProperties = inherited.fetchedProperties
            }
            item.attributes += entity.attributes.map { (entity.name, $0) }
            item.relationships += entity.relationships.map { (entity.name, $0) }
            item.constraints += entity.constraints
            item.indexes += entity.indexes
            item.fetchedProperties += entity.fetchedProperties
            var names: [String: String] = [:] // lowercased name -> declaring entity
            let properties =
                item.attributes.map { ($0.declaredIn, $0.attribute.description.name, "attribute", $0.attribute.line) }
                + item.relationships.map { ($0.declaredIn, $0.relationship.name, "relationship", $0.relationship.line) }
            for (declaredIn, name, kind, line) in properties {
                if let first = names[name.lowercased()] {
                    let origin =
                        first == entity.name && declaredIn == entity.name
                        ? "is declared twice" : "is declared in both '\(first)' and '\(declaredIn)'"
                    throw fail(
                        "the property name \(origin) (names are compared case-insensitively).",
                        line: declaredIn == entity.name ? line : entity.line, entity: entity.name, element: (kind, name))
                }
                names[name.lowercased()] = declaredIn
            }
            done[entity.name] = item
            return item
        }
        for entity in entities {
            _ = try resolve(entity, visiting: [])
        }
        return done
    }

    /// Checks each relationship's destination and inverse, with messages that say where.
    private func checkRelationships(_ entities: [Entity], flat: [String: FlatEntity]) throws(SkerryError) {
        for entity in entities {
            for relationship in entity.relationships {
                let r = relationship.description
                let element = ("relationship", r.name)
                guard let destination = flat[r.destinationEntityName] else {
                    throw fail(
                        "the destination entity '\(r.destinationEntityName)' is not defined in the model.",
                        line: relationship.line, entity: entity.name, element: element)
                }
                if let inverseEntity = relationship.inverseEntity, inverseEntity != r.destinationEntityName {
                    throw fail(
                        "the inverse entity '\(inverseEntity)' is not the destination entity '\(r.destinationEntityName)'.",
                        line: relationship.line, entity: entity.name, element: element)
                }
                guard let inverseName = r.inverseName else { continue }
                guard let inverse = destination.relationships.first(where: { $0.relationship.name == inverseName }) else {
                    throw fail(
                        "the inverse relationship '\(inverseName)' is not defined in the destination entity '\(r.destinationEntityName)'.",
                        line: relationship.line, entity: entity.name, element: element)
                }
                let back = inverse.relationship.description
                // The inverse points back at this entity, or at one of its ancestors (a sub-entity
                // relating to the destination through an inherited relationship).
                var ancestry = [entity.name], parent = entity.parentName
                while let name = parent, !ancestry.contains(name) {
                    ancestry.append(name)
                    parent = flat[name]?.entity.parentName
                }
                guard ancestry.contains(back.destinationEntityName), back.inverseName == r.name else {
                    throw fail(
                        "the inverse \(r.destinationEntityName).\(inverseName) does not point back to \(entity.name).\(r.name) (it points to \(back.destinationEntityName).\(back.inverseName ?? "no inverse")).",
                        line: relationship.line, entity: entity.name, element: element)
                }
            }
        }
    }

    /// The ``ObjectModel`` of the concrete entities, in file order.
    private func makeModel(
        _ entities: [Entity], flat: [String: FlatEntity], configurations: [String: [String]],
        templates: [FetchRequestTemplate]
    ) throws(SkerryError) -> ObjectModel {
        // Each entity with its own properties after its superentity's (made first; `flatten`
        // has ruled out cycles and missing parents).
        var made: [String: EntityDescription] = [:]
        func make(_ entity: Entity) -> EntityDescription {
            if let done = made[entity.name] { return done }
            let superentity = entity.parentName.flatMap { name in flat[name].map { make($0.entity) } }
            let description = EntityDescription(
                name: entity.name, attributes: entity.attributes.map(\.description),
                relationships: entity.relationships.map(\.description),
                uniquenessConstraints: entity.constraints, indexes: entity.indexes,
                renamingIdentifier: entity.elementID, fetchedProperties: entity.fetchedProperties,
                superentity: superentity, isAbstract: entity.isAbstract)
            made[entity.name] = description
            return description
        }
        let descriptions = entities.map(make)
        for (name, description) in made {
            do {
                try description.declareManagedObjectClassName(flat[name]?.entity.representedClassName)
            } catch {
                throw fail(error.message, line: flat[name]?.entity.line ?? 0, entity: name)
            }
        }
        // Core Data's version hash modifiers, gathered into the model's: two versions that differ
        // only in them get different hashes.
        var modifiers: [String] = []
        for entity in entities {
            if let modifier = entity.versionHashModifier { modifiers.append("\(entity.name)=\(modifier)") }
            for attribute in entity.attributes {
                if let modifier = attribute.versionHashModifier {
                    modifiers.append("\(entity.name).\(attribute.description.name)=\(modifier)")
                }
            }
            for relationship in entity.relationships {
                if let modifier = relationship.versionHashModifier { modifiers.append("\(entity.name).\(relationship.name)=\(modifier)") }
            }
        }
        do {
            return try ObjectModel(
                entities: descriptions,
                versionHashModifier: modifiers.isEmpty ? nil : modifiers.sorted().joined(separator: ";"),
                configurations: configurations, fetchRequestTemplates: templates)
        } catch {
            let line = error.entityName.flatMap { name in flat[name]?.entity.line }.flatMap { $0 > 0 ? $0 : nil }
            throw SkerryError(
                .invalidModel, "\(file.path)\(line.map { ", line \($0)" } ?? ""): \(error.message)",
                entityName: error.entityName, key: error.key)
        }
    }

    // MARK: Helpers

    /// An error that names the file, the line, the entity and the element.
    private func fail(
        _ message: String, line: Int, entity: String? = nil,
        element: (kind: String, name: String)? = nil
    ) -> SkerryError {
        // An element read from Xcode 3's archive has no line (0).
        var place = line > 0 ? "\(file.path), line \(line)" : file.path
        if let entity { place += ", entity '\(entity)'" }
        if let element { place += element.name.isEmpty ? ", \(element.kind)" : ", \(element.kind) '\(element.name)'" }
        return SkerryError(
            .invalidModel, "\(place): \(message)", entityName: entity,
            key: element.flatMap { $0.name.isEmpty ? nil : $0.name })
    }

    /// `text`, or nil when it is nil or empty.
    private func nonEmpty(_ text: String?) -> String? {
        text?.isEmpty == false ? text : nil
    }
}
