import Foundation
import Synchronization

/// A data model drawn in Xcode's model editor, read from its source folders: a `.xcdatamodeld`
/// package of versions, or a single `.xcdatamodel` version.
///
/// ```swift
/// let xcodeModel = try XcodeModel(contentsOf: URL(fileURLWithPath: "Library.xcdatamodeld"))
/// let current = try xcodeModel.loadCurrentVersion()      // honours .xccurrentversion
/// let stack = PersistentStack(name: "Library", model: current.model)
/// let first = try xcodeModel.load(version: "Library 1")  // any version, by name
/// ```
///
/// Opening the folder reads only its layout (versions and the current version); each version's
/// `contents` file is read and checked by ``load(version:)``. Every problem is a
/// ``SkerryError/Code/invalidModel`` error whose message names the file, and where they apply the
/// line, entity and element; ``SkerryError/entityName`` and ``SkerryError/key`` name the entity
/// and element too.
///
/// How Xcode's model maps to ``ObjectModel``:
///
/// - Attribute types: Boolean, Integer 16/32/64, Float, Double, Decimal, Date, String, Binary,
///   UUID and URI map to the ``AttributeType`` of the same meaning (URI is ``AttributeType/url``).
///   Transformable attributes are ``AttributeType/binary`` (Core Data stores the data their
///   transformer produces) unless their `valueTransformerName` was registered with
///   ``registerTransformer(named:as:)``, which says how their values are stored.
/// - An attribute or relationship is optional only when Xcode wrote `optional="YES"`; absent
///   means required. Default values (`defaultValueString`, and `defaultDateTimeInterval` —
///   seconds since 2001-01-01 UTC — for dates) are read as Core Data's model compiler reads them,
///   with `NSString`'s lenient conversions (`"0.0"` on an integer is 0, `"100"` on a Boolean is
///   true); a text that is no value gives 0, false or no default, never an error.
/// - Relationships keep their destination, inverse, to-many, ordered, optional, delete rule and,
///   for to-many relationships, minimum and maximum counts (Xcode's `maxCount="1"` of a to-one
///   relationship is implied by to-one and becomes 0).
/// - Uniqueness constraints and fetch indexes (and the older `compoundIndexes` and
///   `indexed="YES"`) become ``EntityDescription/uniquenessConstraints`` and
///   ``EntityDescription/indexes``; an index element's sort order is ignored, R-tree indexes are
///   ordinary ones and expression indexes are left out (they only speed up fetches).
/// - Entity inheritance as in Core Data: a sub-entity (``EntityDescription/superentity``) has its
///   parent's attributes, relationships, uniqueness constraints, indexes and fetched properties
///   before its own; abstract entities (`isAbstract="YES"`) are in the model with
///   ``EntityDescription/isAbstract`` set. A fetch of an entity returns its sub-entities' objects
///   too, and a relationship to an entity (abstract or not) holds objects of its sub-entities.
/// - Renaming IDs (`elementID`) and version hash modifiers are returned in
///   ``XcodeModelVersion/renamingIdentifiers`` and ``XcodeModelVersion/versionHashModifiers`` for
///   migrations; configurations in ``XcodeModelVersion/configurations``.
/// - A version last saved by Xcode 3 keeps its model in an `elements` file (a keyed archive of
///   Xcode's model classes) instead of `contents`: it is read into the same model, but for its
///   fetch requests and fetched properties (archived predicates), which are an error.
/// - Transient and derived attributes, composite attributes and transient relationships are
///   unsupported (an error). Fetched properties, fetch request
///   templates, user info, validation rules (min/max values, regular expressions), class names,
///   code generation, `usesScalarValueType`, external binary storage and the diagram layout are
///   ignored: none of them changes what a store holds.
public struct XcodeModel: Sendable {
    /// The folder the model was read from: a `.xcdatamodeld` or a `.xcdatamodel`.
    public let url: URL
    /// The names of the versions (the `.xcdatamodel` folder names without extension), in natural
    /// order ("Library 2" before "Library 10"). A single `.xcdatamodel` has one version.
    public let versionNames: [String]
    /// The name of the current version: the one `.xccurrentversion` names, or the only version.
    /// Empty when a package of several versions names none (apps that load their versions by
    /// name have such packages): ``load(version:)`` reads each version, and
    /// ``loadCurrentVersion()`` is an error listing them.
    public let currentVersionName: String
    /// Why the package has no current version, when it has none.
    private let currentVersionProblem: String?
    /// Each version's `.xcdatamodel` folder, by version name.
    private let versionFolders: [String: URL]

    /// Reads the layout of an Xcode model: which versions it has and which one is current.
    /// - Parameter url: a `.xcdatamodeld` folder (its `.xccurrentversion` file names the current
    ///   version; a package of one version needs none, as Xcode writes none until a model gets
    ///   its second version) or a single `.xcdatamodel` folder. A folder with another extension is
    ///   taken for a version if it holds a `contents` file, for a package if it holds
    ///   `.xcdatamodel` folders.
    /// - Throws: ``SkerryError/Code/invalidModel`` when the folder does not exist or is not a
    ///   model, when a package has no version, or when its `.xccurrentversion` names a version the
    ///   package does not hold. (A package of several versions whose `.xccurrentversion` names
    ///   none opens: see ``currentVersionName``.)
    public init(contentsOf url: URL) throws(SkerryError) {
        let url = url.standardizedFileURL
        let path = url.path
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw Self.failure("\(path): there is no such model folder.")
        }
        guard isDirectory.boolValue else {
            throw Self.failure("\(path): an Xcode model is a folder (.xcdatamodeld or .xcdatamodel), not a file.")
        }
        let children = (try? fileManager.contentsOfDirectory(atPath: path)) ?? []
        let versionFolderNames = children.filter {
            !$0.hasPrefix(".") && ($0 as NSString).pathExtension == "xcdatamodel"
        }
        let isSingleVersion: Bool
        switch url.pathExtension {
        case "xcdatamodel": isSingleVersion = true
        case "xcdatamodeld": isSingleVersion = false
        default:
            if children.contains("contents") {
                isSingleVersion = true
            } else if !versionFolderNames.isEmpty {
                isSingleVersion = false
            } else {
                throw Self.failure("\(path): the folder is not an Xcode model: it has neither a 'contents' file nor .xcdatamodel versions.")
            }
        }
        self.url = url
        if isSingleVersion {
            let name = url.deletingPathExtension().lastPathComponent
            versionNames = [name]
            currentVersionName = name
            currentVersionProblem = nil
            versionFolders = [name: url]
            return
        }
        guard !versionFolderNames.isEmpty else {
            throw Self.failure("\(path): the model package holds no .xcdatamodel version.")
        }
        var folders: [String: URL] = [:]
        for folder in versionFolderNames {
            folders[(folder as NSString).deletingPathExtension] = url.appendingPathComponent(folder, isDirectory: true)
        }
        versionFolders = folders
        versionNames = folders.keys.sorted(by: Self.naturalOrder)
        switch try Self.readCurrentVersion(of: url, versions: versionNames) {
        case .success(let name):
            currentVersionName = name
            currentVersionProblem = nil
        case .failure(let problem):
            currentVersionName = ""
            currentVersionProblem = problem.message
        }
    }

    /// Reads and checks one version.
    /// - Parameter name: the version's name, with or without the `.xcdatamodel` extension.
    /// - Returns: the version, with its ``ObjectModel``.
    /// - Throws: ``SkerryError/Code/invalidModel`` when there is no such version, when its
    ///   `contents` file is missing or is not well-formed XML (or, in a version last saved by
    ///   Xcode 3, its `elements` file cannot be read), or when the model it describes is
    ///   invalid or uses something Skerry does not support; the message names the file, the line,
    ///   the entity and the element.
    public func load(version name: String) throws(SkerryError) -> XcodeModelVersion {
        let bare = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
        guard let folder = versionFolders[bare] else {
            throw Self.failure(
                "\(url.path): the model has no version '\(name)'; its versions are \(versionNames.map { "'\($0)'" }.joined(separator: ", "))."
            )
        }
        let transformers = Self.transformers.withLock { $0 }
        return try XcodeModelParser(versionName: bare, folder: folder, transformers: transformers).parse()
    }

    /// Reads and checks the current version (see ``currentVersionName``).
    /// - Throws: as ``load(version:)``; ``SkerryError/Code/invalidModel`` listing the versions
    ///   when a package of several versions names no current version.
    public func loadCurrentVersion() throws(SkerryError) -> XcodeModelVersion {
        if let currentVersionProblem { throw Self.failure(currentVersionProblem) }
        return try load(version: currentVersionName)
    }

    /// Reads and checks every version, in the order of ``versionNames``.
    /// - Throws: as ``load(version:)``, for the first version that fails.
    public func loadAllVersions() throws(SkerryError) -> [XcodeModelVersion] {
        var versions: [XcodeModelVersion] = []
        for name in versionNames {
            versions.append(try load(version: name))
        }
        return versions
    }

    /// Reads the current version of the Xcode model at `url` and returns its ``ObjectModel``: the
    /// short form of `XcodeModel(contentsOf: url).loadCurrentVersion().model`.
    /// - Parameter url: a `.xcdatamodeld` or `.xcdatamodel` folder.
    /// - Throws: as ``init(contentsOf:)`` and ``load(version:)``.
    public static func loadModel(contentsOf url: URL) throws(SkerryError) -> ObjectModel {
        try XcodeModel(contentsOf: url).loadCurrentVersion().model
    }

    // MARK: Value transformers

    /// Registered value transformer names and the storage type of their attributes.
    private static let transformers = Mutex<[String: AttributeType]>([:])

    /// Makes Transformable attributes whose `valueTransformerName` is `name` loadable, as
    /// attributes of type `type`: the app stores the transformed value (for example the `Data`
    /// the transformer produces, with `.binary`). Registration is process-wide and applies to
    /// versions loaded afterwards; registering a name again replaces its type.
    /// - Parameters:
    ///   - name: the transformer name exactly as the model writes it, for example
    ///     "NSSecureUnarchiveFromData" or "ColorTransformer".
    ///   - type: the type the attribute gets in the ``ObjectModel``.
    public static func registerTransformer(named name: String, as type: AttributeType) {
        transformers.withLock { $0[name] = type }
    }

    /// Removes a registration made with ``registerTransformer(named:as:)``; does nothing for a
    /// name that is not registered.
    /// - Parameter name: the transformer name.
    public static func unregisterTransformer(named name: String) {
        _ = transformers.withLock { $0.removeValue(forKey: name) }
    }

    /// The storage type registered for the value transformer `name`, or nil.
    /// - Parameter name: the transformer name.
    public static func registeredTransformer(named name: String) -> AttributeType? {
        transformers.withLock { $0[name] }
    }

    // MARK: Helpers

    /// An ``SkerryError/Code/invalidModel`` error.
    static func failure(_ message: String, entityName: String? = nil, key: String? = nil) -> SkerryError {
        SkerryError(.invalidModel, message, entityName: entityName, key: key)
    }

    /// The current version of a package: the one its `.xccurrentversion` names, or its only
    /// version when that file is missing, empty or names none (Xcode writes the file only when a
    /// model gets its second version); for a package of several versions that names none, the
    /// error ``loadCurrentVersion()`` gives.
    private static func readCurrentVersion(of package: URL, versions: [String]) throws(SkerryError) -> Result<String, SkerryError> {
        let file = package.appendingPathComponent(".xccurrentversion")
        let named: String?
        switch currentVersionName(in: file) {
        case .success(let name): named = name
        case .failure(let reason):
            guard versions.count == 1 else {
                return .failure(
                    failure(
                        "\(file.path): \(reason), so the package has no current version; it holds \(versions.count) versions (\(versions.map { "'\($0)'" }.joined(separator: ", "))): name one in '_XCCurrentVersionName' (Xcode: Model Version in the File inspector)."
                    ))
            }
            named = nil
        }
        guard let value = named else { return .success(versions[0]) }
        let name = value.hasSuffix(".xcdatamodel") ? String(value.dropLast(".xcdatamodel".count)) : value
        guard versions.contains(name) else {
            throw failure(
                "\(file.path): the current version '\(value)' is not in the package; its versions are \(versions.map { "'\($0)'" }.joined(separator: ", "))."
            )
        }
        return .success(name)
    }

    /// The version name `.xccurrentversion` holds, or why it holds none.
    private static func currentVersionName(in file: URL) -> Result<String, CurrentVersionProblem> {
        guard let data = FileManager.default.contents(atPath: file.path) else { return .failure(.missing) }
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .failure(.empty) }
        // A file that is not a property list is treated like an empty one: Xcode would not open
        // the package either, but the error must say so rather than guess.
        let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        guard let dictionary = plist as? [String: Any] else { return .failure(.notAPropertyList) }
        guard let value = dictionary["_XCCurrentVersionName"] as? String, !value.isEmpty else { return .failure(.noName) }
        return .success(value)
    }

    /// Why a package's `.xccurrentversion` names no version.
    private enum CurrentVersionProblem: Error, CustomStringConvertible {
        case missing, empty, notAPropertyList, noName
        var description: String {
            switch self {
            case .missing: return "the file is missing"
            case .empty: return "the file is empty"
            case .notAPropertyList: return "the file is not a property list dictionary"
            case .noName: return "the file has no '_XCCurrentVersionName' string"
            }
        }
    }

    /// Whether `a` sorts before `b`, comparing runs of digits by their numeric value.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        func chunks(_ text: String) -> [(isNumber: Bool, text: Substring)] {
            var result: [(Bool, Substring)] = []
            var start = text.startIndex
            while start < text.endIndex {
                let isNumber = text[start].isASCII && text[start].isNumber
                var end = text.index(after: start)
                while end < text.endIndex, (text[end].isASCII && text[end].isNumber) == isNumber {
                    end = text.index(after: end)
                }
                result.append((isNumber, text[start..<end]))
                start = end
            }
            return result
        }
        for (x, y) in zip(chunks(a), chunks(b)) where x.text != y.text {
            if x.isNumber && y.isNumber {
                let xDigits = x.text.drop { $0 == "0" }, yDigits = y.text.drop { $0 == "0" }
                if xDigits.count != yDigits.count { return xDigits.count < yDigits.count }
                if xDigits != yDigits { return xDigits < yDigits }
                return x.text.count < y.text.count
            }
            return x.text < y.text
        }
        return a.count < b.count || (a.count == b.count && a < b)
    }
}

/// One version of an Xcode model, read and checked: its ``ObjectModel`` and what Xcode records
/// alongside it for migrations.
public struct XcodeModelVersion: Sendable {
    /// The version's name: its `.xcdatamodel` folder name without extension.
    public let name: String
    /// The version's `.xcdatamodel` folder.
    public let url: URL
    /// The model, abstract entities included; sub-entities hold their inherited properties.
    public let model: ObjectModel
    /// The model's "Identifier" from Xcode's model inspector (`userDefinedModelVersionIdentifier`),
    /// or nil when it is empty.
    public let versionIdentifier: String?
    /// The Renaming IDs of the model (Xcode's `elementID`): "Entity" for an entity and
    /// "Entity.property" for an attribute or relationship, mapped to the name the element had in
    /// the previous version. Properties a sub-entity inherits appear under the sub-entity's name.
    /// For example `["Book.title": "name"]`: `Book.title` was called `name`.
    public let renamingIdentifiers: [String: String]
    /// The version hash modifiers of the model, keyed like ``renamingIdentifiers``. Xcode uses
    /// them to mark a change that alters what values mean without changing the schema (which
    /// ``ObjectModel/versionHash`` does not see): a migration can compare them between versions.
    public let versionHashModifiers: [String: String]
    /// The abstract entities of the file, in file order.
    public let abstractEntityNames: [String]
    /// The configurations of the model, by name, each with its member entities in file order:
    /// suitable for ``StoreDescription/entityNames``.
    public let configurations: [String: [String]]
}

extension MigrationPlan {
    /// A plan over the versions of an Xcode model, oldest first, whose steps also carry the
    /// attribute renames each version declares with renaming identifiers: those migrate without
    /// a custom step.
    /// - Parameters:
    ///   - xcodeVersions: the versions, oldest first (``XcodeModel/loadAllVersions()``).
    ///   - steps: custom steps; their own `renamedAttributes` win over the declared ones.
    ///   - progress: told of each step as it starts.
    public convenience init(
        xcodeVersions: [XcodeModelVersion], steps: [MigrationStep] = [],
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) {
        var merged: [MigrationStep] = []
        for index in 0..<max(0, xcodeVersions.count - 1) {
            let custom = steps.first { $0.from == index }
            let old = xcodeVersions[index].model, new = xcodeVersions[index + 1].model
            var renames: [String: String] = [:]
            for (key, oldName) in xcodeVersions[index + 1].renamingIdentifiers {
                let parts = key.split(separator: ".").map(String.init)
                guard parts.count == 2, parts[1] != oldName,
                    new.entity(named: parts[0])?.attribute(named: parts[1]) != nil,
                    old.entity(named: parts[0])?.attribute(named: oldName) != nil
                else { continue }
                renames[key] = oldName
            }
            renames.merge(custom?.renamedAttributes ?? [:]) { _, own in own }
            if custom == nil && renames.isEmpty { continue }
            merged.append(
                MigrationStep(
                    from: index, renamedAttributes: renames, renamedEntities: custom?.renamedEntities ?? [:],
                    renamedRelationships: custom?.renamedRelationships ?? [:], prepare: custom?.prepare,
                    keepsRow: custom?.keepsRow, transformRow: custom?.transformRow, finish: custom?.finish))
        }
        self.init(versions: xcodeVersions.map(\.model), steps: merged, progress: progress)
    }

    /// A plan over the versions of an Xcode model whose steps between consecutive versions are
    /// driven by Xcode mapping models where the app has them (Core Data uses a mapping model
    /// between two versions when one exists), and inferred elsewhere.
    /// - Parameters:
    ///   - xcodeVersions: the versions, oldest first.
    ///   - mappingModels: mapping models, each from one version to the next.
    ///   - steps: custom steps; a custom step for the same versions as a mapping model runs its
    ///     `prepare`, `transformRow` and `finish` after the mapping's, keeps the rows both keep,
    ///     and its renames win. It also answers
    ///     for what the mapping model cannot carry out: the entity mappings of a custom migration
    ///     policy class are carried as far as their expressions go, and the expressions Skerry
    ///     cannot compute (the policy's `FUNCTION($entityPolicy, ...)`) are left to it, and so are
    ///     the filter predicates Skerry cannot evaluate, to its `keepsRow` (which is also asked,
    ///     with the destination entity's name, about the objects a second entity mapping of a
    ///     source entity makes).
    ///   - progress: told of each step as it starts.
    /// - Throws: ``SkerryError/Code/modelMismatch`` for a mapping model whose versions are not two
    ///   consecutive versions of the plan, that names an entity or property its versions do not
    ///   have, or that a step without a custom step cannot carry out (a custom migration policy
    ///   class, an expression Skerry cannot compute, a filter predicate Skerry cannot evaluate
    ///   when the custom step has no `keepsRow`).
    public convenience init(
        xcodeVersions: [XcodeModelVersion], mappingModels: [XcodeMappingModel],
        steps: [MigrationStep] = [], progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(SkerryError) {
        var byIndex = Dictionary(steps.map { ($0.from, $0) }, uniquingKeysWith: { _, last in last })
        let names = xcodeVersions.map(\.name)
        for mapping in mappingModels {
            guard let source = mapping.sourceVersionName, let from = names.firstIndex(of: source), from + 1 < names.count,
                mapping.destinationVersionName == names[from + 1]
            else {
                throw SkerryError(
                    .modelMismatch,
                    "\(mapping.url.path) maps '\(mapping.sourceVersionName ?? "?")' to '\(mapping.destinationVersionName ?? "?")', which are not two consecutive versions of the plan (\(names.map { "'\($0)'" }.joined(separator: ", ")))."
                )
            }
            // With a custom step for the same versions, what the mapping cannot carry out (a
            // custom policy class's work) is the custom step's to do.
            let (mapped, filtersLeft) = try mapping.migrationStepAndFiltersLeft(
                from: from, source: xcodeVersions[from].model, destination: xcodeVersions[from + 1].model,
                leavingToCustomCode: byIndex[from] != nil)
            guard let custom = byIndex[from] else {
                byIndex[from] = mapped
                continue
            }
            // A filter left to the custom step is its keepsRow's to apply: without one, every
            // source row would be kept.
            if custom.keepsRow == nil, let refusal = filtersLeft.first { throw refusal }
            let first = mapped.transformRow, second = custom.transformRow
            var transform = second ?? first
            if let first, let second {
                transform = { @Sendable entity, source, row in
                    try first(entity, source, &row)
                    try second(entity, source, &row)
                }
            }
            byIndex[from] = MigrationStep(
                from: from,
                renamedAttributes: mapped.renamedAttributes.merging(custom.renamedAttributes) { _, own in own },
                renamedEntities: mapped.renamedEntities.merging(custom.renamedEntities) { _, own in own },
                renamedRelationships: mapped.renamedRelationships.merging(custom.renamedRelationships) { _, own in own },
                prepare: Self.sequence(mapped.prepare, custom.prepare), keepsRow: Self.both(mapped.keepsRow, custom.keepsRow),
                transformRow: transform, finish: Self.sequence(mapped.finish, custom.finish))
        }
        self.init(versions: xcodeVersions.map(\.model), steps: Array(byIndex.values), progress: progress)
    }

    /// Keeps a row both keep (either may be nil, which keeps every row).
    private static func both(
        _ first: (@Sendable (String, MigrationRow) throws -> Bool)?, _ second: (@Sendable (String, MigrationRow) throws -> Bool)?
    ) -> (@Sendable (String, MigrationRow) throws -> Bool)? {
        guard let first, let second else { return first ?? second }
        return { entity, row in try first(entity, row) && second(entity, row) }
    }

    /// `first` then `second`, either of which may be nil.
    private static func sequence(
        _ first: (@Sendable (MigrationContext) throws -> Void)?, _ second: (@Sendable (MigrationContext) throws -> Void)?
    ) -> (@Sendable (MigrationContext) throws -> Void)? {
        guard let first, let second else { return first ?? second }
        return { context in
            try first(context)
            try second(context)
        }
    }
}
