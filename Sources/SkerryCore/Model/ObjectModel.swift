/// A data model: the entities a store holds.
///
/// Creating a model validates it (see ``init(entities:versionHashModifier:configurations:fetchRequestTemplates:)``). A model is immutable and `Sendable`;
/// one model serves every context and store of a stack.
///
/// ```swift
/// let model = try ObjectModel(entities: [
///     EntityDescription(name: "Book", attributes: [
///         AttributeDescription("title", .string),
///         AttributeDescription("year", .integer32, isOptional: true),
///     ], indexes: [IndexDescription(["year"])])
/// ])
/// ```
public final class ObjectModel: Sendable {
    /// The entities, in declaration order.
    public let entities: [EntityDescription]
    /// A hash of everything in the model that affects what a store holds (entity and property
    /// names, types, optionality, relationships, constraints, indexes), and of the
    /// ``versionHashModifier``, as 16 hex digits. Stores record it; equal hashes mean the store
    /// needs no migration.
    public let versionHash: String
    /// Distinguishes versions whose shape is the same but whose values mean something else (Core
    /// Data's version hash modifier), so that a ``MigrationPlan`` can tell them apart.
    public let versionHashModifier: String?
    /// The model's configurations (Core Data's): named sets of entities, each set the entities
    /// one store holds (see ``StoreDescription/configuration``).
    public let configurations: [String: [String]]
    /// The model's fetch request templates, by name (see ``fetchRequestTemplate(named:)``).
    public let fetchRequestTemplates: [String: FetchRequestTemplate]

    private let entityByName: [String: EntityDescription]
    /// Whether any entity has relationships.
    let hasRelationships: Bool

    /// Creates a model and validates it.
    /// - Parameters:
    ///   - entities: the entities.
    ///   - versionHashModifier: set it to tell apart two versions of the same shape whose values
    ///     mean different things (prices in cents, then in euros); nil by default.
    ///   - configurations: named sets of entity names, for stores that hold part of the model.
    ///   - fetchRequestTemplates: named fetch requests.
    /// - Throws: ``SkerryError/Code/invalidModel`` naming the first problem found: a name that is
    ///   not an identifier or is used twice (names are compared case-insensitively, as SQLite
    ///   does), a default value that does not fit its attribute, a relationship whose destination or
    ///   inverse is missing or does not point back, a constraint or index on an unknown attribute.
    public init(
        entities: [EntityDescription], versionHashModifier: String? = nil,
        configurations: [String: [String]] = [:], fetchRequestTemplates: [FetchRequestTemplate] = []
    ) throws(SkerryError) {
        try Self.validate(entities)
        try Self.validate(configurations: configurations, templates: fetchRequestTemplates, entities: entities)
        self.configurations = configurations
        self.fetchRequestTemplates = Dictionary(fetchRequestTemplates.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        self.entities = entities
        self.entityByName = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
        self.versionHashModifier = versionHashModifier
        self.versionHash = Self.computeVersionHash(entities, modifier: versionHashModifier)
        self.hasRelationships = entities.contains { !$0.relationships.isEmpty }
    }

    /// The entity named `name`, or nil.
    public func entity(named name: String) -> EntityDescription? {
        entityByName[name]
    }

    /// The direct sub-entities of `entity` (Core Data's `subentities`), in declaration order.
    public func subentities(of entity: EntityDescription) -> [EntityDescription] {
        entities.filter { $0.superentity === entity }
    }

    /// `entity` and its sub-entities at any depth, in declaration order: the entities whose
    /// objects a fetch of `entity` returns.
    public func entityAndSubentities(of entity: EntityDescription) -> [EntityDescription] {
        entities.filter { $0.isKind(of: entity) }
    }

    /// The fetch request template named `name`, or nil.
    public func fetchRequestTemplate(named name: String) -> FetchRequestTemplate? {
        fetchRequestTemplates[name]
    }

    /// The names of the entities a store of `configuration` holds: the configuration's members;
    /// every entity for "Default" (Core Data's default configuration) unless the model defines one
    /// of that name.
    /// - Throws: ``SkerryError/Code/invalidArgument`` when the model has no such configuration.
    public func entityNames(forConfiguration configuration: String) throws(SkerryError) -> Set<String> {
        if let members = configurations[configuration] { return Set(members) }
        if configuration == "Default" || configuration == "PF_DEFAULT_CONFIGURATION_NAME" { return Set(entities.map(\.name)) }
        throw SkerryError(
            .invalidArgument,
            "The model has no configuration '\(configuration)'; its configurations are \(configurations.keys.sorted().map { "'\($0)'" }.joined(separator: ", "))."
        )
    }

    /// The entity named `name`, or an ``SkerryError/Code/unknownEntity`` error.
    func requireEntity(_ name: String) throws(SkerryError) -> EntityDescription {
        guard let entity = entityByName[name] else {
            throw SkerryError(.unknownEntity, "The model has no entity '\(name)'.", entityName: name)
        }
        return entity
    }
}
