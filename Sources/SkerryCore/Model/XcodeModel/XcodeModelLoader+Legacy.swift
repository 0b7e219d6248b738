import Foundation

/// Reads the `elements` file of a model version last saved by Xcode 3 (Xcode 4 and later write a
/// `contents` XML file, and still compile the old files): a keyed archive of Xcode's own model
/// classes (`XDPMModel`, `XDPMEntity`, `XDPMAttribute`, `XDPMRelationship`), whose settings are
/// "tagged values" of UML stereotypes (`XD_PAttK_attributeType`, `XD_PRK_destination`...). It
/// becomes the element tree a `contents` file would give, so that one reader checks both
/// formats: entities, inheritance, attributes with their types, optionality, defaults and value
/// transformers, relationships with their inverses, counts, deletion rules and order, renaming
/// identifiers, version hash modifiers and configurations. Fetch request templates and fetched
/// properties (archived predicates) are not read: a model that has any is an error naming them.
enum LegacyModelArchive {
    /// Why the archive cannot be read.
    struct Failure: Error {
        let reason: String
    }

    /// The element tree of the model the archive `data` holds.
    static func read(_ data: Data) throws(Failure) -> XMLNode {
        let plist: PropertyListValue
        do {
            // Every object of the archive is reached once from `$objects`; a model of a hundred
            // entities has some 400,000 values.
            plist = try BinaryPropertyList.parse(data, budget: 4_000_000)
        } catch {
            throw Failure(reason: "not a binary property list (\(error.reason))")
        }
        guard case .array(let objects)? = plist["$objects"], case .uid(let top)? = plist["$top"]?["root"] else {
            throw Failure(reason: "not a keyed archive")
        }
        return try Reader(objects: objects).model(top)
    }

    private struct Reader {
        let objects: [PropertyListValue]

        /// The object a reference names; `$null` is nil.
        func object(_ value: PropertyListValue?) -> PropertyListValue? {
            guard let value else { return nil }
            if case .uid(let index) = value {
                guard objects.indices.contains(index), objects[index] != .string("$null") else { return nil }
                return objects[index]
            }
            return value == .string("$null") ? nil : value
        }

        func className(_ value: PropertyListValue?) -> String? {
            object(object(value)?["$class"])?["$classname"]?.string
        }

        func name(_ value: PropertyListValue?) -> String? {
            object(object(value)?["_name"])?.string
        }

        /// The pairs of an archived dictionary, keys as text.
        func pairs(_ value: PropertyListValue?) -> [(String, PropertyListValue)] {
            guard let dictionary = object(value), case .array(let keys)? = dictionary["NS.keys"],
                case .array(let values)? = dictionary["NS.objects"], keys.count == values.count
            else { return [] }
            return zip(keys, values).compactMap { key, value in object(key)?.string.map { ($0, value) } }
        }

        /// The members of an archived array or set.
        func members(_ value: PropertyListValue?) -> [PropertyListValue] {
            guard case .array(let items)? = object(value)?["NS.objects"] else { return [] }
            return items
        }

        /// The tagged values of an element's stereotypes, by key (`XD_PPSK_isOptional`...).
        func tagged(_ element: PropertyListValue) -> [String: PropertyListValue] {
            var values: [String: PropertyListValue] = [:]
            for (_, stereotype) in pairs(element["XDBucketForStereotypesstorage"]) {
                for (key, property) in pairs(object(stereotype)?["XDBucketForOwnedAttributesstorage"]) {
                    if let value = object(object(property)?["_default"]) { values[key] = value }
                }
            }
            return values
        }

        func flag(_ value: PropertyListValue?) -> Bool {
            switch value {
            case .bool(let flag)?: return flag
            case .int(let number)?: return number != 0
            default: return false
            }
        }

        func text(_ value: PropertyListValue?) -> String? {
            guard let text = value?.string, !text.isEmpty else { return nil }
            return text
        }

        func integer(_ value: PropertyListValue?) -> Int64? {
            if case .int(let number)? = value { return number }
            return nil
        }

        func model(_ top: Int) throws(Failure) -> XMLNode {
            guard objects.indices.contains(top), className(.uid(top)) == "XDPMModel" else {
                throw Failure(reason: "the archive holds no Xcode 3 data model (\(className(.uid(top)) ?? "no object") at its root)")
            }
            let root = objects[top]
            var children: [XMLNode] = []
            var entities: [(String, PropertyListValue)] = []
            for (_, value) in pairs(object(root["_xd_rootPackage"])?["XDBucketForClassesstorage"]) {
                guard let entity = object(value), className(value) == "XDPMEntity", let name = name(value) else { continue }
                entities.append((name, entity))
            }
            for (name, entity) in entities.sorted(by: { $0.0 < $1.0 }) {
                children.append(try self.entity(name, entity))
            }
            for (name, list) in pairs(root["_configurationsByName"]).sorted(by: { $0.0 < $1.0 }) {
                let names = members(list).compactMap { object($0)?.string ?? self.name($0) }
                children.append(
                    XMLNode(
                        name: "configuration", attributes: ["name": name],
                        children: names.sorted().map { XMLNode(name: "memberEntity", attributes: ["name": $0], children: [], line: 0) },
                        line: 0))
            }
            return XMLNode(name: "model", attributes: [:], children: children, line: 0)
        }

        func entity(_ name: String, _ entity: PropertyListValue) throws(Failure) -> XMLNode {
            let values = tagged(entity)
            var attributes = ["name": name]
            if let className = text(values["XD_PSK_entityClassName"]), className != "NSManagedObject" {
                attributes["representedClassName"] = className
            }
            if flag(entity["_isAbstract"]) || flag(values["XD_PSK_isAbstract"]) { attributes["isAbstract"] = "YES" }
            for generalization in members(entity["XDBucketForGeneralizationsstorage"]) {
                let parent = className(generalization) == "XDPMEntity" ? generalization : object(generalization)?["_general"]
                if let parentName = self.name(parent) { attributes["parentEntity"] = parentName }
            }
            attributes["elementID"] = text(values["XD_PSK_elementID"])
            attributes["versionHashModifier"] = text(values["XD_PSK_versionHashModifier"])
            if !members(values["XD_PSK_fetchRequestsArray"]).isEmpty {
                throw Failure(
                    reason:
                        "entity '\(name)' has fetch requests, which a model saved by Xcode 3 keeps as archived predicates that Skerry does not read: open and save the model in a current Xcode"
                )
            }
            var children: [XMLNode] = []
            for (propertyName, value) in pairs(object(entity)?["XDBucketForOwnedAttributesstorage"]).sorted(by: { $0.0 < $1.0 }) {
                guard let property = object(value) else { continue }
                switch className(value) {
                case "XDPMAttribute": children.append(attribute(propertyName, property))
                case "XDPMRelationship": children.append(relationship(propertyName, property))
                case let other:
                    throw Failure(
                        reason:
                            "entity '\(name)', property '\(propertyName)': a \(other ?? "property of an unknown kind") (a fetched property?), which Skerry does not read in a model saved by Xcode 3: open and save the model in a current Xcode"
                    )
                }
            }
            return XMLNode(name: "entity", attributes: attributes, children: children, line: 0)
        }

        /// What every property has: optionality, transience, indexing, renaming identifier.
        func propertyAttributes(_ name: String, _ values: [String: PropertyListValue]) -> [String: String] {
            var attributes = ["name": name]
            if flag(values["XD_PPSK_isOptional"]) { attributes["optional"] = "YES" }
            if flag(values["XD_PPSK_isTransient"]) { attributes["transient"] = "YES" }
            if flag(values["XD_PPSK_isIndexed"]) { attributes["indexed"] = "YES" }
            attributes["elementID"] = text(values["XD_PPSK_elementID"])
            attributes["versionHashModifier"] = text(values["XD_PPSK_versionHashModifier"])
            return attributes
        }

        func attribute(_ name: String, _ property: PropertyListValue) -> XMLNode {
            let values = tagged(property)
            var attributes = propertyAttributes(name, values)
            // NSAttributeType's raw values.
            let code = integer(values["XD_PAttK_attributeType"]) ?? 0
            let types: [Int64: String] = [
                0: "Undefined", 100: "Integer 16", 200: "Integer 32", 300: "Integer 64", 400: "Decimal", 500: "Double",
                600: "Float", 700: "String", 800: "Boolean", 900: "Date", 1000: "Binary", 1800: "Transformable", 2000: "Object ID",
            ]
            attributes["attributeType"] = types[code] ?? "with Xcode 3's type number \(code)"
            attributes["defaultValueString"] = text(values["XD_PAttK_defaultValueAsString"])
            attributes["valueTransformerName"] = text(values["XD_PAttK_valueTransformerName"])
            return XMLNode(name: "attribute", attributes: attributes, children: [], line: 0)
        }

        func relationship(_ name: String, _ property: PropertyListValue) -> XMLNode {
            let values = tagged(property)
            var attributes = propertyAttributes(name, values)
            attributes["destinationEntity"] = self.name(values["XD_PRK_destination"])
            if let inverse = values["XD_PRK_inverseRelationship"], let inverseName = self.name(inverse) {
                attributes["inverseName"] = inverseName
                attributes["inverseEntity"] = self.name(object(inverse)?["_owner"])
            }
            let maxCount = max(0, integer(values["XD_PRK_maxCount"]) ?? 0)
            let minCount = max(0, integer(values["XD_PRK_minCount"]) ?? 0)
            // Older files name no isToMany: a relationship of at most one object is to-one.
            let toMany = values["XD_PRK_isToMany"].map { flag($0) } ?? (maxCount != 1)
            if toMany {
                attributes["toMany"] = "YES"
                if minCount > 0 { attributes["minCount"] = String(minCount) }
                if maxCount > 0 { attributes["maxCount"] = String(maxCount) }
                if flag(values["XD_PRK_ordered"]) { attributes["ordered"] = "YES" }
            } else {
                attributes["maxCount"] = "1"
            }
            // NSDeleteRule's raw values.
            let rules: [Int64: String] = [0: "No Action", 1: "Nullify", 2: "Cascade", 3: "Deny"]
            let rule = integer(values["XD_PRK_deleteRule"]) ?? 1
            attributes["deletionRule"] = rules[rule] ?? "with Xcode 3's number \(rule)"
            return XMLNode(name: "relationship", attributes: attributes, children: [], line: 0)
        }
    }
}
