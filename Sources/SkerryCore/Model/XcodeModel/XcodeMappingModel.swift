import Foundation

/// A mapping model drawn in Xcode (a `.xcmappingmodel` folder), read so that it can drive one
/// step of a ``MigrationPlan``: which old entity each new entity takes its rows from, and for
/// each attribute and relationship, where its value comes from.
///
/// ```swift
/// let mapping = try XcodeMappingModel(contentsOf: URL(fileURLWithPath: "Library2ToLibrary3.xcmappingmodel"))
/// let plan = try MigrationPlan(xcodeVersions: versions, mappingModels: [mapping])
/// ```
///
/// Value expressions that are key paths of `$source` (`$source.title`, and through to-one
/// relationships, `$source.owner.name`), constants (`"none"`, `0`, `nil`, converted to the
/// attribute's type) and the common Foundation methods on such values
/// (`FUNCTION($source.name, "uppercaseString")`, see ``ValueExpression/function(receiver:selector:arguments:)``)
/// are carried out, and so are relationship mappings to the destination objects of a source
/// relationship (Xcode's default) or of a path of to-one relationships. An entity mapping without
/// a source entity (Xcode's "add" mapping) makes no objects from existing rows. A custom migration
/// policy class (an `NSEntityMigrationPolicy` subclass) is the app's own code and cannot run here:
/// making a step from such a mapping is an error that names the class and says to write its work
/// as a ``MigrationStep``; given to ``MigrationPlan/init(xcodeVersions:mappingModels:steps:progress:)``
/// with the mapping, that step does the policy's work and the mapping drives the rest.
public struct XcodeMappingModel: Sendable {
    /// Where an attribute's or relationship's value comes from.
    public enum ValueExpression: Sendable, Equatable, CustomStringConvertible {
        /// `$source.keyPath`: the value of the source object.
        case keyPath(String)
        /// A constant.
        case constant(AttributeValue)
        /// The destination objects of the source objects a key path of `$source` reaches (Core
        /// Data's `destinationInstancesForEntityMappingNamed:sourceInstances:` and
        /// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`); an empty key path
        /// is `$source` itself: the objects another entity mapping makes of the source object.
        case destinationInstances(sourceKeyPath: String)
        /// `FUNCTION(receiver, "selector", arguments...)`: a method of the receiver's value.
        /// The ones a step carries out are Foundation's common conversions of strings, numbers,
        /// dates, URLs and UUIDs (`uppercaseString`, `lowercaseString`, `capitalizedString`,
        /// `length`, `stringByAppendingString:`, `stringValue`, `description`, `integerValue`,
        /// `intValue`, `longLongValue`, `doubleValue`, `floatValue`, `boolValue`,
        /// `timeIntervalSinceReferenceDate`, `timeIntervalSince1970`, `absoluteString`,
        /// `UUIDString`); another selector makes the step an error naming it.
        indirect case function(receiver: ValueExpression, selector: String, arguments: [ValueExpression])
        /// One of `NSExpression`'s predefined functions, as Xcode writes `now()` or
        /// `uppercase:($source.name)`. The ones a step carries out are `now` (the time of the
        /// migration), `uppercase:`, `lowercase:`, `abs:`, `add:to:`, `from:subtract:`,
        /// `multiply:by:`, `divide:by:` and `modulus:by:`; another one makes the step an error
        /// naming it.
        indirect case predefinedFunction(name: String, arguments: [ValueExpression])
        /// An expression Skerry does not carry out, as text.
        case unsupported(String)

        public var description: String {
            switch self {
            case .keyPath(let path): return "$source.\(path)"
            case .constant(let value): return "\(value)"
            case .destinationInstances(let path): return "the destination objects of $source\(path.isEmpty ? "" : ".\(path)")"
            case .function(let receiver, let selector, let arguments):
                return "FUNCTION(\(receiver), \"\(selector)\"\(arguments.map { ", \($0)" }.joined()))"
            case .predefinedFunction(let name, let arguments):
                return "\(name)(\(arguments.map(\.description).joined(separator: ", ")))"
            case .unsupported(let text): return text
            }
        }
    }

    /// An attribute or relationship of the destination entity and where its value comes from
    /// (nil: from the source's property of the same name, as Xcode generates it).
    public struct PropertyMapping: Sendable, Equatable {
        public let name: String
        public let valueExpression: ValueExpression?
        /// The entity mapping whose destination objects a relationship mapping takes (Xcode's
        /// "Source Mapping" of a relationship mapping, as `NoteToNote`), if the mapping model names
        /// one.
        public let sourceMappingName: String?

        init(name: String, valueExpression: ValueExpression?, sourceMappingName: String? = nil) {
            self.name = name
            self.valueExpression = valueExpression
            self.sourceMappingName = sourceMappingName
        }
    }

    /// How one destination entity gets its objects.
    public struct EntityMapping: Sendable {
        /// The mapping's name, "SourceToDestination".
        public let name: String
        /// The source entity; nil when the destination's objects are all new.
        public let sourceEntityName: String?
        /// The destination entity; nil when the source's objects are dropped.
        public let destinationEntityName: String?
        /// The class of a custom migration policy, if the mapping names one.
        public let migrationPolicyClassName: String?
        public let attributeMappings: [PropertyMapping]
        public let relationshipMappings: [PropertyMapping]
        /// The source filter predicate (Xcode's "Filter Predicate", as its format text), which
        /// keeps the source objects that match it; nil when the mapping has none.
        public let sourceFilterPredicate: String?

        init(
            name: String, sourceEntityName: String?, destinationEntityName: String?, migrationPolicyClassName: String?,
            attributeMappings: [PropertyMapping], relationshipMappings: [PropertyMapping], sourceFilterPredicate: String? = nil
        ) {
            self.name = name
            self.sourceEntityName = sourceEntityName
            self.destinationEntityName = destinationEntityName
            self.migrationPolicyClassName = migrationPolicyClassName
            self.attributeMappings = attributeMappings
            self.relationshipMappings = relationshipMappings
            self.sourceFilterPredicate = sourceFilterPredicate
        }
    }

    /// The `.xcmappingmodel` folder (or its `xcmapping.xml`).
    public let url: URL
    /// The source model version's name (its `.xcdatamodel` folder name without extension).
    public let sourceVersionName: String?
    /// The destination model version's name.
    public let destinationVersionName: String?
    /// The source and destination model paths as Xcode wrote them (`Model.xcdatamodeld/Model 2.xcdatamodel`).
    let sourceModelPath: String?, destinationModelPath: String?
    /// The entity mappings, in file order.
    public let entityMappings: [EntityMapping]

    /// A mapping model made in code (for tests).
    init(url: URL, sourceVersionName: String?, destinationVersionName: String?, entityMappings: [EntityMapping]) {
        self.url = url
        self.sourceVersionName = sourceVersionName
        self.destinationVersionName = destinationVersionName
        self.sourceModelPath = nil
        self.destinationModelPath = nil
        self.entityMappings = entityMappings
    }

    /// Reads a mapping model.
    /// - Parameter url: a `.xcmappingmodel` folder, or its `xcmapping.xml` file.
    /// - Throws: ``SkerryError/Code/invalidModel`` when the file is missing, empty, not
    ///   well-formed, or not a mapping model; the message names the file.
    public init(contentsOf url: URL) throws(SkerryError) {
        self.url = url
        let file = url.pathExtension == "xml" ? url : url.appendingPathComponent("xcmapping.xml")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw XcodeModel.failure("\(file.path): there is no mapping model file (a .xcmappingmodel folder holds xcmapping.xml).")
        }
        guard data.contains(where: { !" \t\r\n".utf8.contains($0) }) else {
            throw XcodeModel.failure(
                "\(file.path): the mapping model file is empty: it maps nothing (save the mapping model again in Xcode).")
        }
        let root: XMLNode
        switch XMLNode.parse(data) {
        case .success(let node): root = node
        case .failure(let failure):
            throw XcodeModel.failure("\(file.path), line \(failure.line): the file is not well-formed XML: \(failure.reason).")
        }
        guard root.name == "database" else {
            throw XcodeModel.failure(
                "\(file.path): the root element is <\(root.name)>, not <database>: this is not an Xcode mapping model.")
        }
        var objects: [String: XMLNode] = [:]
        for object in root.children(named: "object") {
            if let id = object["id"] { objects[id] = object }
        }
        func attribute(_ object: XMLNode, _ name: String) -> String? {
            object.children(named: "attribute").first { $0["name"] == name }.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        func related(_ object: XMLNode, _ name: String) -> [XMLNode] {
            let refs = object.children(named: "relationship").first { $0["name"] == name }?["idrefs"] ?? ""
            return refs.split(separator: " ").compactMap { objects[String($0)] }
        }
        func versionName(_ path: String?) -> String? {
            path.flatMap { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }.flatMap { $0.isEmpty ? nil : $0 }
        }
        func expression(_ object: XMLNode, relationship: Bool) -> ValueExpression? {
            if let text = attribute(object, "valueexpressiondata"), !text.isEmpty {
                guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                    return .unsupported("an expression that cannot be read")
                }
                return ArchivedExpression.read(data)
            }
            if relationship, let path = attribute(object, "sourcekeypath"), path.hasPrefix("$source.") {
                return .destinationInstances(sourceKeyPath: String(path.dropFirst("$source.".count)))
            }
            if relationship, attribute(object, "sourcekeypath") == "$source" {
                return .destinationInstances(sourceKeyPath: "")
            }
            return nil
        }
        let model = root.children(named: "object").first { $0["type"] == "XDDEVMAPPINGMODEL" }
        sourceModelPath = model.flatMap { attribute($0, "sourcemodelpath") }
        destinationModelPath = model.flatMap { attribute($0, "destinationmodelpath") }
        sourceVersionName = versionName(sourceModelPath)
        destinationVersionName = versionName(destinationModelPath)
        let entityNodes =
            model.map { related($0, "entitymappings") }
            ?? root.children(named: "object").filter { $0["type"] == "XDDEVENTITYMAPPING" }
        entityMappings = entityNodes.map { node in
            let source = attribute(node, "sourcename").flatMap { $0.isEmpty ? nil : $0 }
            let destination = attribute(node, "destinationname").flatMap { $0.isEmpty ? nil : $0 }
            let policy = attribute(node, "migrationpolicyclassname").flatMap { $0.isEmpty || $0 == "NSEntityMigrationPolicy" ? nil : $0 }
            return EntityMapping(
                name: "\(source ?? "")To\(destination ?? "")", sourceEntityName: source, destinationEntityName: destination,
                migrationPolicyClassName: policy,
                attributeMappings: related(node, "attributemappings").compactMap { object in
                    attribute(object, "name").map { PropertyMapping(name: $0, valueExpression: expression(object, relationship: false)) }
                },
                relationshipMappings: related(node, "relationshipmappings").compactMap { object in
                    attribute(object, "name").map {
                        PropertyMapping(
                            name: $0, valueExpression: expression(object, relationship: true),
                            sourceMappingName: attribute(object, "sourcemappingname").flatMap { $0.isEmpty ? nil : $0 })
                    }
                },
                sourceFilterPredicate: attribute(node, "sourcefilterpredicatestring").flatMap { $0.isEmpty ? nil : $0 })
        }
    }
}

/// Reads the `NSExpression` a mapping model keeps for a value, archived with
/// `NSKeyedArchiver`, into the few forms a migration step can carry out.
enum ArchivedExpression {
    static func read(_ data: Data) -> XcodeMappingModel.ValueExpression {
        guard let plist = try? BinaryPropertyList.parse(data), // unreadable data is reported as unsupported
            case .array(let objects)? = plist["$objects"], case .uid(let root)? = plist["$top"]?["root"]
        else {
            return .unsupported("an expression that cannot be read")
        }
        return Reader(objects: objects).expression(root, depth: 0)
    }

    private struct Reader {
        let objects: [PropertyListValue]

        func object(_ reference: PropertyListValue?) -> PropertyListValue? {
            guard case .uid(let index)? = reference, objects.indices.contains(index) else { return reference }
            return objects[index]
        }

        func className(_ object: PropertyListValue?) -> String? {
            self.object(object?["$class"])?["$classname"]?.string
        }

        func arguments(_ node: PropertyListValue) -> [PropertyListValue] {
            guard case .array(let items)? = object(object(node["NSArguments"])?["NS.objects"]) else { return [] }
            return items
        }

        /// The value of a constant expression, or nil when it is no constant a store keeps.
        func constant(_ node: PropertyListValue) -> AttributeValue? {
            guard className(node) == "NSConstantValueExpression" else { return nil }
            switch node["NSConstantValue"] {
            case nil: return .null
            case .uid(0)?: return .null
            case let reference?:
                switch object(reference) {
                case .string(let text)?: return text == "$null" ? .null : .string(text)
                case .int(let number)?: return .int(number)
                case .real(let number)?: return .double(number)
                case .bool(let flag)?: return .bool(flag)
                case let value? where className(value) == "NSDate":
                    if case .real(let seconds)? = value["NS.time"] { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
                    return nil
                default: return nil
                }
            }
        }

        /// The key path of `$source.path`, or nil.
        func sourceKeyPath(_ node: PropertyListValue) -> String? {
            guard ["NSKeyPathExpression", "NSFunctionExpression"].contains(className(node)),
                object(node["NSSelectorName"])?.string == "valueForKeyPath:",
                let operand = object(node["NSOperand"]), className(operand) == "NSVariableExpression",
                object(operand["NSVariable"])?.string == "source",
                let specifier = arguments(node).first.flatMap(object),
                let path = object(specifier["NSKeyPath"])?.string
            else { return nil }
            return path
        }

        func expression(_ reference: Int, depth: Int) -> XcodeMappingModel.ValueExpression {
            guard depth < 16, objects.indices.contains(reference) else { return .unsupported("an expression nested too deep") }
            let node = objects[reference]
            if let value = constant(node) { return .constant(value) }
            if let path = sourceKeyPath(node) { return .keyPath(path) }
            if className(node) == "NSFunctionExpression", let selector = object(node["NSSelectorName"])?.string {
                let operand = object(node["NSOperand"]).flatMap { object($0["NSVariable"])?.string }
                let arguments = arguments(node).compactMap(object)
                if operand == "manager",
                    [
                        "destinationInstancesForEntityMappingNamed:sourceInstances:",
                        "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                    ].contains(selector),
                    arguments.count == 2
                {
                    if let path = sourceKeyPath(arguments[1]) { return .destinationInstances(sourceKeyPath: path) }
                    if className(arguments[1]) == "NSVariableExpression", object(arguments[1]["NSVariable"])?.string == "source" {
                        return .destinationInstances(sourceKeyPath: "")
                    }
                }
                if let utilities = object(node["NSOperand"]), className(utilities) == "NSConstantValueExpression",
                    object(utilities["NSConstantValueClassName"])?.string == "_NSPredicateUtilities"
                {
                    // NSExpression(forFunction:arguments:): the receiver is Foundation's class of
                    // predefined functions.
                    var values: [XcodeMappingModel.ValueExpression] = []
                    for argument in self.arguments(node) {
                        guard case .uid(let index) = argument else {
                            return .unsupported("\(selector)() with an argument that cannot be read")
                        }
                        values.append(expression(index, depth: depth + 1))
                    }
                    let function = XcodeMappingModel.ValueExpression.predefinedFunction(name: selector, arguments: values)
                    if values.contains(where: { if case .unsupported = $0 { return true } else { return false } }) {
                        return .unsupported(function.description)
                    }
                    return function
                }
                if operand == nil, case .uid(let receiver)? = node["NSOperand"] {
                    let target = expression(receiver, depth: depth + 1)
                    var values: [XcodeMappingModel.ValueExpression] = []
                    for argument in self.arguments(node) {
                        guard case .uid(let index) = argument else { return .unsupported("FUNCTION with an argument that cannot be read") }
                        values.append(expression(index, depth: depth + 1))
                    }
                    let function = XcodeMappingModel.ValueExpression.function(receiver: target, selector: selector, arguments: values)
                    if case .unsupported = target { return .unsupported(function.description) }
                    if values.contains(where: { if case .unsupported = $0 { return true } else { return false } }) {
                        return .unsupported(function.description)
                    }
                    return function
                }
                return .unsupported("FUNCTION($\(operand ?? "?"), \"\(selector)\")")
            }
            return .unsupported("an expression of class \(className(node) ?? "?")")
        }
    }
}
