/// One attribute of an entity: a name, a type, whether it may be nil, and a default value.
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name; also its column name in the store.
    public let name: String
    /// The attribute's type.
    public let type: AttributeType
    /// Whether the attribute may have no value when saved.
    public let isOptional: Bool
    /// The value a newly inserted object starts with, or `.null` for none.
    public let defaultValue: AttributeValue
    /// The name the attribute had in an earlier model version (Core Data's renaming identifier,
    /// Xcode's "Renaming ID"), or nil when it kept its name. A migration matches the attribute
    /// to the earlier version's attribute whose renaming identifier, or name, is the same.
    public let renamingIdentifier: String?
    /// For an attribute that was Transformable in an Xcode model, the value transformer the model
    /// names (nil for Core Data's default, the keyed unarchiver); informational: the attribute's
    /// ``type`` says how values are stored.
    public let valueTransformerName: String?
    /// Whether the attribute lives in memory only (Core Data's transient attributes): objects
    /// hold, set and read it, a store never keeps it, and a refresh or reset drops its value.
    public let isTransient: Bool
    /// How a derived attribute's value is computed when its object is saved (Core Data's
    /// derived attributes), or nil for an ordinary attribute. A derived attribute is stored.
    public let derivation: AttributeDerivation?
    /// Whether a store that records persistent history keeps the attribute's value when its
    /// object is deleted, in the delete's ``PersistentHistoryChange/tombstone`` (Core Data's
    /// `preservesValueInHistoryOnDeletion`, Xcode's "Preserve After Deletion"). Default false.
    public let preservesValueInHistoryOnDeletion: Bool

    /// Describes an attribute.
    /// - Parameters:
    ///   - name: the name, a letter followed by letters, digits or underscores; an element of a
    ///     composite attribute (Core Data's, stored as its elements) is named
    ///     "composite.element".
    ///   - type: the attribute's type.
    ///   - isOptional: whether the attribute may be nil when saved (Core Data's default is true;
    ///     Skerry's is false, so that a forgotten value is an error rather than a silent nil).
    ///   - defaultValue: the value new objects start with; it must fit `type`.
    ///   - renamingIdentifier: the attribute's name in an earlier version, if it was renamed.
    ///   - valueTransformerName: the value transformer an Xcode model names, if any.
    ///   - isTransient: whether the attribute lives in memory only, never stored.
    ///   - derivation: for a derived attribute, how its value is computed at save.
    ///   - preservesValueInHistoryOnDeletion: whether the persistent history keeps the value of a
    ///     deleted object (its tombstone).
    public init(
        _ name: String, _ type: AttributeType, isOptional: Bool = false,
        defaultValue: (any AttributeValueConvertible)? = nil, renamingIdentifier: String? = nil,
        valueTransformerName: String? = nil, isTransient: Bool = false, derivation: AttributeDerivation? = nil,
        preservesValueInHistoryOnDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue?.attributeValue ?? .null
        self.renamingIdentifier = renamingIdentifier
        self.valueTransformerName = valueTransformerName
        self.isTransient = isTransient
        self.derivation = derivation
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
    }

    /// The name migrations match the attribute by: its renaming identifier, or its name.
    public var canonicalName: String { renamingIdentifier ?? name }
}

/// What happens to related objects when an object is deleted (behaviour arrives with relationships).
public enum DeleteRule: String, Sendable, Hashable, Codable {
    /// The inverse relationship of each related object is cleared (the default).
    case nullify
    /// Related objects are deleted too.
    case cascade
    /// The delete fails while any related object exists.
    case deny
    /// Nothing is done to related objects.
    case noAction
}

/// One relationship of an entity, described in the model.
///
/// Relationships are part of the model and its version hash; their behaviour (inverse upkeep,
/// delete rules, storage) is not part of the engine yet.
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name.
    public let name: String
    /// The name of the entity it points to.
    public let destinationEntityName: String
    /// The name of the inverse relationship on the destination entity, if any.
    public let inverseName: String?
    /// Whether it holds many objects.
    public let isToMany: Bool
    /// Whether a to-many relationship keeps its members in order.
    public let isOrdered: Bool
    /// Whether a to-one relationship may be empty / a to-many one may have no members.
    public let isOptional: Bool
    /// What deleting the source object does to the destination objects.
    public let deleteRule: DeleteRule
    /// The fewest members a to-many relationship may have when saved (0 for no limit).
    public let minCount: Int
    /// The most members a to-many relationship may have when saved (0 for no limit).
    public let maxCount: Int
    /// The name the relationship had in an earlier model version (Core Data's renaming
    /// identifier), or nil when it kept its name.
    public let renamingIdentifier: String?
    /// Whether the relationship lives in memory only (Core Data's transient relationships): set
    /// and read on objects, never stored, dropped by refresh and reset.
    public let isTransient: Bool

    /// Describes a relationship.
    /// - Parameters:
    ///   - name: the name, a letter followed by letters, digits or underscores.
    ///   - destination: the destination entity's name.
    ///   - inverse: the inverse relationship's name on the destination entity.
    ///   - toMany: whether it holds many objects.
    ///   - ordered: whether a to-many relationship is ordered.
    ///   - isOptional: whether it may be empty.
    ///   - deleteRule: the delete rule, `.nullify` by default.
    ///   - minCount: the minimum count of a to-many relationship, 0 for none.
    ///   - maxCount: the maximum count of a to-many relationship, 0 for none.
    ///   - renamingIdentifier: the relationship's name in an earlier version, if it was renamed.
    ///   - isTransient: whether the relationship lives in memory only.
    public init(
        _ name: String, destination: String, inverse: String? = nil, toMany: Bool = false,
        ordered: Bool = false, isOptional: Bool = true, deleteRule: DeleteRule = .nullify,
        minCount: Int = 0, maxCount: Int = 0, renamingIdentifier: String? = nil, isTransient: Bool = false
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = toMany
        self.isOrdered = ordered
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamingIdentifier = renamingIdentifier
        self.isTransient = isTransient
    }

    /// The name migrations match the relationship by: its renaming identifier, or its name.
    public var canonicalName: String { renamingIdentifier ?? name }
}

/// An index on one or more attributes (or to-one relationships) of an entity, to speed up fetches
/// that filter or sort on them.
public struct IndexDescription: Sendable, Hashable {
    /// The indexed attributes, in order; a to-one relationship's name indexes the key of the
    /// related object; a to-many relationship's name is left out (there is no column to index:
    /// Core Data accepts such an index and ignores it too).
    public let attributeNames: [String]

    /// Describes an index.
    /// - Parameter attributeNames: the attributes (or to-one relationships), in index order.
    public init(_ attributeNames: [String]) {
        self.attributeNames = attributeNames
    }
}
