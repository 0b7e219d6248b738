import Foundation
import SkerryCore

/// The positions of a model type's declared attributes in an entity, found once per (type, entity)
/// instead of by name for every property of every object decoded or encoded.
///
/// `@unchecked Sendable`: `layouts` is only touched while `lock` is held, and the layouts stored
/// are immutable. Each layout holds its entity strongly, so the entity's address (half of the
/// key) cannot be reused by another entity while the layout is cached. The cost is that the
/// entities of every model a process used stay alive: a process holds few models. (A weak
/// reference would put every entity's reference counting on Swift's slow path.)
final class AttributeLayout: @unchecked Sendable {
    static let shared = AttributeLayout()

    private struct Key: Hashable {
        let type: ObjectIdentifier
        let entity: ObjectIdentifier
    }

    private let lock = NSLock()
    private var layouts: [Key: AnyObject] = [:]

    /// The declared attributes of `PlainObject` and their positions in `entity`.
    /// Complexity: O(1) after the first call for a (type, entity) pair.
    func layout<PlainObject: ManagedObjectConvertible>(of type: PlainObject.Type, in entity: EntityDescription)
        -> TypeLayout<PlainObject>
    {
        let key = Key(type: ObjectIdentifier(PlainObject.self), entity: ObjectIdentifier(entity))
        if let cached = lock.withLock({ layouts[key] }) {
            // The key names `PlainObject`, so the stored layout is a `TypeLayout<PlainObject>`.
            return unsafeDowncast(cached, to: TypeLayout<PlainObject>.self)
        }
        let layout = TypeLayout<PlainObject>(entity: entity)
        lock.withLock { layouts[key] = layout }
        return layout
    }
}

/// A model type's declared attributes, in a fixed order, with each one's position in one entity.
final class TypeLayout<PlainObject: ManagedObjectConvertible> {
    /// The entity the positions are for (kept alive; see ``AttributeLayout``).
    let entity: EntityDescription
    /// The declared attributes.
    let attributes: [Attribute<PlainObject>]
    /// `positions[i]` is the index of `attributes[i]` in `entity.attributes`, or -1 where the
    /// entity has no attribute of that name.
    let positions: [Int]

    init(entity: EntityDescription) {
        self.entity = entity
        attributes = Array(PlainObject.attributes)
        positions = attributes.map { entity.attributeIndex(named: $0.name) ?? -1 }
    }
}
