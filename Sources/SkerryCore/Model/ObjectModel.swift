/// A data model: the entities a store holds.
///
/// Creating a model validates it (see ``init(entities:)``). A model is immutable and `Sendable`;
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

    private let entityByName: [String: EntityDescription]
    /// Whether any entity has relationships.
    let hasRelationships: Bool

    /// Creates a model and validates it.
    /// - Parameters:
    ///   - entities: the entities.
    ///   - versionHashModifier: set it to tell apart two versions of the same shape whose values
    ///     mean different things (prices in cents, then in euros); nil by default.
    /// - Throws: ``SkerryError/Code/invalidModel`` naming the first problem found: a name that is
    ///   not an identifier or is used twice (names are compared case-insensitively, as SQLite
    ///   does), a default value that does not fit its attribute, a relationship whose destination or
    ///   inverse is missing or does not point back, a constraint or index on an unknown attribute.
    public init(entities: [EntityDescription], versionHashModifier: String? = nil) throws(SkerryError) {
        try Self.validate(entities)
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

    /// The entity named `name`, or an ``SkerryError/Code/unknownEntity`` error.
    func requireEntity(_ name: String) throws(SkerryError) -> EntityDescription {
        guard let entity = entityByName[name] else {
            throw SkerryError(.unknownEntity, "The model has no entity '\(name)'.", entityName: name)
        }
        return entity
    }
}
