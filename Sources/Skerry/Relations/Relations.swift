import SkerryCore

/// A relation declared in a model type's `Relations`: what the engine needs to describe it.
protocol RelationDeclaration {
    /// The relationship as declared.
    var relationshipDescription: RelationshipDescription { get }
    /// The relationship with `inverse` as its inverse (one derived by `ObjectModel.init(types:)`).
    func relationshipDescription(inverse: String) -> RelationshipDescription
}

/// A to-one relation: Sworm's `ToOneRelation`, with what Swift types cannot say (the inverse,
/// the delete rule, optionality) as parameters with defaults.
///
/// ```swift
/// struct Relations {
///     let author = ToOneRelation<Author>("author", inverse: "books")
/// }
/// ```
public struct ToOneRelation<Destination: ManagedObjectConvertible>: Sendable, RelationDeclaration {
    /// The relationship's name.
    public let name: String
    let description: RelationshipDescription

    /// Declares a to-one relation.
    /// - Parameters:
    ///   - name: the relationship's name in the entity.
    ///   - inverse: the name of the inverse relation on `Destination`.
    ///   - deleteRule: what deleting an object does to its destination (`.nullify` by default).
    ///   - isOptional: whether it may be empty when saved (true by default).
    public init(_ name: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify, isOptional: Bool = true) {
        self.name = name
        self.description = RelationshipDescription(
            name, destination: Destination.entityName, inverse: inverse,
            isOptional: isOptional, deleteRule: deleteRule)
    }

    var relationshipDescription: RelationshipDescription { description }

    func relationshipDescription(inverse: String) -> RelationshipDescription {
        RelationshipDescription(
            name, destination: Destination.entityName, inverse: inverse,
            isOptional: description.isOptional, deleteRule: description.deleteRule)
    }
}

/// A to-many relation: Sworm's `ToManyRelation`.
public struct ToManyRelation<Destination: ManagedObjectConvertible>: Sendable, RelationDeclaration {
    /// The relationship's name.
    public let name: String
    let description: RelationshipDescription

    /// Declares a to-many relation.
    /// - Parameters:
    ///   - name: the relationship's name in the entity.
    ///   - inverse: the name of the inverse relation on `Destination`.
    ///   - deleteRule: what deleting an object does to its members (`.nullify` by default).
    ///   - minCount: the fewest members when saved (0: no limit).
    ///   - maxCount: the most members when saved (0: no limit).
    public init(
        _ name: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
        minCount: Int = 0, maxCount: Int = 0
    ) {
        self.name = name
        self.description = RelationshipDescription(
            name, destination: Destination.entityName, inverse: inverse, toMany: true,
            deleteRule: deleteRule, minCount: minCount, maxCount: maxCount)
    }

    var relationshipDescription: RelationshipDescription { description }

    func relationshipDescription(inverse: String) -> RelationshipDescription {
        RelationshipDescription(
            name, destination: Destination.entityName, inverse: inverse, toMany: true,
            deleteRule: description.deleteRule, minCount: description.minCount, maxCount: description.maxCount)
    }
}

/// An ordered to-many relation: Sworm's `ToManyOrderedRelation`.
public struct ToManyOrderedRelation<Destination: ManagedObjectConvertible>: Sendable, RelationDeclaration {
    /// The relationship's name.
    public let name: String
    let description: RelationshipDescription

    /// Declares an ordered to-many relation; see ``ToManyRelation/init(_:inverse:deleteRule:minCount:maxCount:)``.
    public init(
        _ name: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
        minCount: Int = 0, maxCount: Int = 0
    ) {
        self.name = name
        self.description = RelationshipDescription(
            name, destination: Destination.entityName, inverse: inverse, toMany: true,
            ordered: true, deleteRule: deleteRule, minCount: minCount, maxCount: maxCount)
    }

    var relationshipDescription: RelationshipDescription { description }

    func relationshipDescription(inverse: String) -> RelationshipDescription {
        RelationshipDescription(
            name, destination: Destination.entityName, inverse: inverse, toMany: true, ordered: true,
            deleteRule: description.deleteRule, minCount: description.minCount, maxCount: description.maxCount)
    }
}

extension ManagedObjectConvertible {
    /// The relationships declared in ``relations``, in declaration order (read with `Mirror`: each
    /// stored property of `Relations` that is a relation).
    static var relationshipDescriptions: [RelationshipDescription] {
        relationDeclarations.map(\.relationshipDescription)
    }

    /// The relations declared in ``relations``, in declaration order.
    static var relationDeclarations: [any RelationDeclaration] {
        Mirror(reflecting: relations).children.compactMap { $0.value as? any RelationDeclaration }
    }
}
