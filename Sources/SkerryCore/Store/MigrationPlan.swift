import Foundation

/// One row of an entity during a migration step: its attribute values and the keys of its to-one
/// relationships, by name.
public struct MigrationRow: Sendable {
    /// The row's primary key: kept by the migration, except for a row whose key clashes with
    /// another's when two entity hierarchies merge (it gets a new one).
    public let primaryKey: Int64
    /// Attribute values (and to-one relationship keys, as `.int`), by name.
    public var values: [String: AttributeValue]

    /// A row with its key and values.
    package init(primaryKey: Int64, values: [String: AttributeValue]) {
        self.primaryKey = primaryKey
        self.values = values
    }

    /// The value named `name`, or `.null`.
    public subscript(name: String) -> AttributeValue {
        get { values[name] ?? .null }
        set { values[name] = newValue }
    }
}

/// What a step's `finish` closure can do with the store while it migrates: read the rows of the
/// version being left, and insert rows of the version being reached.
public final class MigrationContext {
    let source: [EntityDescription]
    let destination: ObjectModel
    let readSource: (EntityDescription) throws -> [MigrationRow]
    let insertRow: (EntityDescription, [String: AttributeValue]) throws -> Int64
    /// The step's `keepsRow` (nil: it keeps every row), for code that makes objects of old rows
    /// in `finish` (a mapping model's second entity mapping of a source entity).
    package let keepsRow: (@Sendable (String, MigrationRow) throws -> Bool)?
    /// Where the step put the old rows (nil in `prepare`, before it did).
    package let carried: CarriedRows?

    /// A context over a store's migration: `readSource` reads an old entity's rows, `insertRow`
    /// inserts a row of a new one and returns its key; `keepsRow` is the step's, `carried` says
    /// which old rows the step kept and under which keys.
    package init(
        source: [EntityDescription], destination: ObjectModel,
        readSource: @escaping (EntityDescription) throws -> [MigrationRow],
        insertRow: @escaping (EntityDescription, [String: AttributeValue]) throws -> Int64,
        keepsRow: (@Sendable (String, MigrationRow) throws -> Bool)? = nil, carried: CarriedRows? = nil
    ) {
        self.source = source
        self.destination = destination
        self.readSource = readSource
        self.insertRow = insertRow
        self.keepsRow = keepsRow
        self.carried = carried
    }

    /// The rows an entity of the version being left had (also an entity the new version drops).
    /// - Throws: ``SkerryError/Code/unknownEntity`` for an entity the old version did not have.
    public func sourceRows(of entityName: String) throws -> [MigrationRow] {
        guard let entity = source.first(where: { $0.name == entityName }) else {
            throw SkerryError(.unknownEntity, "The version being migrated from has no entity '\(entityName)'.", entityName: entityName)
        }
        return try readSource(entity)
    }

    /// Inserts a row of an entity of the version being reached; returns its key.
    /// - Throws: ``SkerryError/Code/invalidArgument`` in a step's `prepare`, which runs before
    ///   the step's rows are in place (insert in its `finish`).
    public func insert(_ entityName: String, _ values: [String: AttributeValue]) throws -> Int64 {
        try insertRow(try destination.requireEntity(entityName), values)
    }

    /// This context for a step's `prepare`: the same reads, and no inserts (rows are inserted by
    /// `finish`, once the step's own rows are in place and their keys taken).
    package func readingOnly() -> MigrationContext {
        MigrationContext(
            source: source, destination: destination, readSource: readSource,
            insertRow: { entity, _ in
                throw SkerryError(
                    .invalidArgument,
                    "A migration step's prepare reads the old rows only: insert the '\(entity.name)' rows in the step's finish, once the step's own rows are in place.",
                    entityName: entity.name)
            }, keepsRow: keepsRow)
    }

    /// The key in the new store of the row that old entity `entityName` (or another entity of
    /// its old hierarchy) had under `key`, for `finish` code that links the rows it inserts to
    /// rows the step carried: nil when the step left that row out (`keepsRow`) or carried it to
    /// no entity; another key when the step renumbered it (a hierarchy of the new version made of
    /// several old ones, whose keys clash); else `key`.
    /// - Throws: ``SkerryError/Code/invalidArgument`` in `prepare`, before the step placed the rows.
    public func carriedKey(of entityName: String, _ key: Int64) throws -> Int64? {
        guard let carried else {
            throw SkerryError(
                .invalidArgument,
                "A migration step's prepare runs before the step's rows are in place: their new keys are known in finish.",
                entityName: entityName)
        }
        return carried.newKey(entityName, key)
    }
}

/// How a store written with an older model version reaches the current one: the versions in order
/// (oldest first, the current model last), with custom steps where a change is not additive.
///
/// ```swift
/// let plan = MigrationPlan(versions: [v1, v2, v3], steps: [
///     MigrationStep(from: 0, transformRow: { entity, old, new in
///         if entity == "Book" { new["year"] = .string(old["year"].description) }   // Int16 -> String
///     }),
/// ])
/// var description = StoreDescription(url: url)
/// description.migrationPlan = plan
/// ```
///
/// A store written with `versions[i]` (recognised by its recorded model version hash) is migrated
/// one step at a time, each step in its own transaction, on a copy of the store file that replaces
/// the original only when every step succeeded: a failed step leaves the original store as it was.
/// Each step copies the rows of each entity whose shape changed into a new table, attribute by
/// attribute (by name, or by the renaming identifier the new version declares), through the step's
/// `transformRow`; new entities start empty (the step's `finish` may fill them), dropped ones go.
///
/// A PostgreSQL store runs the same steps in place (`ALTER TABLE`), all of them in the load's one
/// transaction: a failed step leaves the schema and the rows as they were.
public final class MigrationPlan: Sendable {
    /// The model versions, oldest first; the last is the current model.
    public let versions: [ObjectModel]
    /// Custom steps, by the index of the version they start from.
    public let steps: [Int: MigrationStep]
    /// Called before each step with (step number, number of steps), from 1.
    public let progress: (@Sendable (Int, Int) -> Void)?

    /// Describes a plan.
    /// - Parameters:
    ///   - versions: the model versions, oldest first; at least one.
    ///   - steps: custom steps; a step without one copies what it can and fails on what it cannot
    ///     (a type change with values that do not fit, a required attribute left without a value).
    ///   - progress: told of each step as it starts.
    public init(versions: [ObjectModel], steps: [MigrationStep] = [], progress: (@Sendable (Int, Int) -> Void)? = nil) {
        self.versions = versions
        self.steps = Dictionary(steps.map { ($0.from, $0) }, uniquingKeysWith: { _, last in last })
        self.progress = progress
    }

    /// The plan up to and including version `index` (for testing each step in turn).
    public func through(_ index: Int) -> MigrationPlan {
        MigrationPlan(
            versions: Array(versions.prefix(index + 1)), steps: Array(steps.values.filter { $0.from < index }), progress: progress)
    }
}

/// A custom migration step from `versions[from]` to `versions[from + 1]` of a ``MigrationPlan``.
public struct MigrationStep: Sendable {
    /// The index of the version the step starts from.
    public let from: Int
    /// Attributes renamed in this step, by "Entity.newName" -> "oldName" (Xcode's renaming
    /// identifiers): their values are copied from the old name.
    public let renamedAttributes: [String: String]
    /// Entities renamed in this step, by new name -> old name: their rows are copied from the old
    /// entity.
    public let renamedEntities: [String: String]
    /// Relationships renamed in this step, by "Entity.newName" -> "oldName": their links are
    /// carried over from the old relationship.
    public let renamedRelationships: [String: String]
    /// Called once before any row is copied or left out, with the rows of the version being left
    /// readable through the context (`sourceRows(of:)`): to gather what `keepsRow` and
    /// `transformRow` need from other entities' rows (the rows a to-one relationship reaches,
    /// say). It reads only: inserting rows is for `finish` (``MigrationContext/insert(_:_:)``
    /// throws here). Throwing fails the step.
    public let prepare: (@Sendable (MigrationContext) throws -> Void)?
    /// Whether the new entity `entity` gets an object from the old row `source` (of the old
    /// entity whose rows `entity` takes): a row it returns false for is left out of the new
    /// version, and so are the links to and from it, as a mapping model's filter predicate
    /// leaves source objects out of its entity mapping. Nil keeps every row. Throwing fails the
    /// step. In a plan with a mapping model, it is also asked about the objects a second entity
    /// mapping of a source entity makes (`entity` is that mapping's destination entity, `source`
    /// the old row it would make one from): one it returns false for is not made.
    public let keepsRow: (@Sendable (_ entity: String, _ source: MigrationRow) throws -> Bool)?
    /// Called for each row of each entity kept by the step, with the old row and the new one as
    /// prepared by the automatic copy; change `destination` to transform values, split or merge
    /// attributes. Throwing fails the step (and the migration).
    public let transformRow: (@Sendable (_ entity: String, _ source: MigrationRow, _ destination: inout MigrationRow) throws -> Void)?
    /// Called once after the rows were copied, to fill new entities or derive values across entities.
    public let finish: (@Sendable (MigrationContext) throws -> Void)?

    /// Describes a step.
    /// - Parameters:
    ///   - from: the index of the version the step starts from.
    ///   - renamedAttributes: "Entity.newName" -> "oldName".
    ///   - renamedEntities: new entity name -> old entity name.
    ///   - renamedRelationships: "Entity.newName" -> "oldName".
    ///   - prepare: runs once before the rows are copied (reads the old rows of any entity).
    ///   - keepsRow: whether a new entity gets an object from an old row (nil: from every row).
    ///   - transformRow: converts each copied row.
    ///   - finish: runs once after the rows were copied.
    public init(
        from: Int, renamedAttributes: [String: String] = [:], renamedEntities: [String: String] = [:],
        renamedRelationships: [String: String] = [:],
        prepare: (@Sendable (MigrationContext) throws -> Void)? = nil,
        keepsRow: (@Sendable (_ entity: String, _ source: MigrationRow) throws -> Bool)? = nil,
        transformRow: (@Sendable (_ entity: String, _ source: MigrationRow, _ destination: inout MigrationRow) throws -> Void)? = nil,
        finish: (@Sendable (MigrationContext) throws -> Void)? = nil
    ) {
        self.from = from
        self.renamedAttributes = renamedAttributes
        self.renamedEntities = renamedEntities
        self.renamedRelationships = renamedRelationships
        self.prepare = prepare
        self.keepsRow = keepsRow
        self.transformRow = transformRow
        self.finish = finish
    }
}
