/// An entity: a kind of object, stored as one table.
///
/// An entity description is immutable and shared by every object of the entity, in every
/// context. Attribute values are kept in per-object storage indexed by the attribute's position
/// in ``attributes``; ``attributeIndex(named:)`` maps a name to that position.
///
/// Entities inherit as in Core Data: a sub-entity (made with `superentity:`) has its
/// superentity's properties, at the same positions, before its own; a fetch of an entity returns
/// the objects of its sub-entities too (``FetchRequest/includesSubentities``), and a relationship
/// whose destination is an entity holds objects of its sub-entities. An abstract entity
/// (``isAbstract``) has no objects of its own.
public final class EntityDescription: Sendable, CustomStringConvertible {
    /// The entity's name; also its table name.
    public let name: String
    /// The attributes: the stored ones in declaration order, then the transient ones (which
    /// live in memory only) in declaration order.
    public let attributes: [AttributeDescription]
    /// The relationships, in declaration order.
    public let relationships: [RelationshipDescription]
    /// Sets of attributes whose combined values must be unique among the entity's objects.
    public let uniquenessConstraints: [[String]]
    /// Indexes on the entity's table.
    public let indexes: [IndexDescription]
    /// The name the entity had in an earlier model version (Core Data's renaming identifier), or
    /// nil when it kept its name.
    public let renamingIdentifier: String?
    /// The entity's fetched properties: fetches made per object, not stored.
    public let fetchedProperties: [FetchedPropertyDescription]
    /// The entity this one inherits from (Core Data's superentity), or nil.
    public let superentity: EntityDescription?
    /// Whether the entity has no objects of its own (only its sub-entities do), as Core Data's
    /// abstract entities. Inserting an object of an abstract entity is an error.
    public let isAbstract: Bool

    private let attributeIndexByName: [String: Int]
    /// Each attribute's default value: the starting values of a new object.
    package let defaultValues: [AttributeValue]
    /// Each attribute's type, for hot paths that must not copy whole descriptions.
    package let attributeTypes: [AttributeType]
    /// How many of ``attributes`` are stored: they come first; the transient ones follow.
    package let storedAttributeCount: Int
    /// The indexes of the derived attributes, computed when an object is saved.
    let derivedAttributeIndexes: [Int]
    /// Where each attribute's value lies in an object's storage (see ``ValueLayout``).
    @usableFromInline package let valueLayout: ValueLayout
    /// The class of the entity's objects (see EntityDescription+Class.swift).
    package let classBinding = EntityClassBinding()

    /// Describes an entity.
    /// - Parameters:
    ///   - name: the name, a letter followed by letters, digits or underscores.
    ///   - attributes: the attributes.
    ///   - relationships: the relationships.
    ///   - uniquenessConstraints: each element lists attributes whose values together are unique.
    ///   - indexes: indexes to create.
    ///   - renamingIdentifier: the entity's name in an earlier version, if it was renamed.
    ///   - fetchedProperties: fetched properties (not stored).
    ///   - superentity: the entity this one inherits from: its attributes, relationships,
    ///     uniqueness constraints, indexes and fetched properties come first, then this entity's
    ///     own. The superentity must be in the same ``ObjectModel``.
    ///   - isAbstract: whether the entity has no objects of its own.
    ///
    /// Names are checked when the entity is put in an ``ObjectModel``.
    public init(
        name: String, attributes: [AttributeDescription],
        relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [], indexes: [IndexDescription] = [],
        renamingIdentifier: String? = nil, fetchedProperties: [FetchedPropertyDescription] = [],
        superentity: EntityDescription? = nil, isAbstract: Bool = false
    ) {
        self.name = name
        self.renamingIdentifier = renamingIdentifier
        self.superentity = superentity
        self.isAbstract = isAbstract
        self.fetchedProperties = (superentity?.fetchedProperties ?? []) + fetchedProperties
        // Inherited attributes first, stored then transient within each part, so that the
        // superentity's stored attributes keep their positions (a predicate resolved against it
        // evaluates on the sub-entity's objects) and the stored attributes stay a prefix.
        let all = (superentity?.attributes ?? []) + attributes
        let relationships = (superentity?.relationships ?? []) + relationships
        let uniquenessConstraints = (superentity?.uniquenessConstraints ?? []) + uniquenessConstraints
        let indexes = (superentity?.indexes ?? []) + indexes
        let attributes = all.filter { !$0.isTransient } + all.filter(\.isTransient)
        self.attributes = attributes
        self.storedAttributeCount = attributes.count { !$0.isTransient }
        self.derivedAttributeIndexes = attributes.indices.filter { attributes[$0].derivation != nil }
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        var byName: [String: Int] = [:]
        for (index, attribute) in attributes.enumerated() where byName[attribute.name] == nil {
            byName[attribute.name] = index
        }
        self.attributeIndexByName = byName
        self.defaultValues = attributes.map(\.defaultValue)
        self.attributeTypes = attributes.map(\.type)
        self.valueLayout = ValueLayout(types: attributeTypes, defaults: defaultValues, required: attributes.map { !$0.isOptional })
    }

    /// Whether the entity is `entity` or one of its sub-entities, at any depth.
    public func isKind(of entity: EntityDescription) -> Bool {
        var current: EntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// Whether the entity is the one named `name` or one of its sub-entities, at any depth.
    public func isKind(ofEntityNamed name: String) -> Bool {
        var current: EntityDescription? = self
        while let candidate = current {
            if candidate.name == name { return true }
            current = candidate.superentity
        }
        return false
    }

    /// The entity at the top of the hierarchy: the one without superentity that this one
    /// descends from (itself when it has no superentity).
    public var rootEntity: EntityDescription {
        var root = self
        while let parent = root.superentity { root = parent }
        return root
    }

    /// The attributes a store keeps: all but the transient ones (a prefix of ``attributes``).
    public var storedAttributes: ArraySlice<AttributeDescription> { attributes[..<storedAttributeCount] }

    /// The name migrations match the entity by: its renaming identifier, or its name.
    public var canonicalName: String { renamingIdentifier ?? name }

    /// The position of the attribute named `name` in ``attributes``, or nil. Complexity: O(1).
    public func attributeIndex(named name: String) -> Int? {
        attributeIndexByName[name]
    }

    /// The attribute named `name`, or nil.
    public func attribute(named name: String) -> AttributeDescription? {
        attributeIndexByName[name].map { attributes[$0] }
    }

    /// The fetched property named `name`, or nil.
    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        fetchedProperties.first { $0.name == name }
    }

    /// The relationship named `name`, or nil.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// The position of the relationship named `name` in ``relationships``, or nil.
    public func relationshipIndex(named name: String) -> Int? {
        relationships.firstIndex { $0.name == name }
    }

    /// The position of `name`, or an ``SkerryError/Code/unknownAttribute`` error.
    func requireRelationshipIndex(_ name: String) throws(SkerryError) -> Int {
        guard let index = relationshipIndex(named: name) else {
            throw SkerryError(
                .unknownAttribute, "Entity '\(self.name)' has no relationship '\(name)'.",
                entityName: self.name, key: name)
        }
        return index
    }

    /// An ``SkerryError/Code/unknownAttribute`` error when the attribute at `index` is transient:
    /// a store cannot fetch or sort by what it does not keep (as in Core Data).
    func requireStored(_ index: Int, in keyPath: String) throws(SkerryError) {
        guard index >= storedAttributeCount else { return }
        throw SkerryError(
            .unknownAttribute,
            "'\(attributes[index].name)' of '\(name)' is transient: a fetch cannot filter or sort by it ('\(keyPath)'), as the store does not keep it.",
            entityName: name, key: keyPath)
    }

    /// The position of `name`, or an ``SkerryError/Code/unknownAttribute`` error.
    func requireAttributeIndex(_ name: String) throws(SkerryError) -> Int {
        guard let index = attributeIndexByName[name] else {
            throw SkerryError(
                .unknownAttribute, "Entity '\(self.name)' has no attribute '\(name)'.",
                entityName: self.name, key: name)
        }
        return index
    }

    public var description: String { "EntityDescription(\(name))" }
}
