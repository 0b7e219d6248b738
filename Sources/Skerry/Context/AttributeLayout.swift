import Foundation
import SkerryCore

/// The positions of a model type's declared attributes in an entity, found once per (type, entity)
/// instead of by name for every property of every object decoded or encoded.
///
/// `@unchecked Sendable`: `layouts` is only touched while `lock` is held; the entries stored are
/// immutable once stored. An entry keeps its entity weakly and is used only while that very entity
/// is alive, so a new entity allocated at a freed one's address never reads a stale layout.
final class AttributeLayout: @unchecked Sendable {
    static let shared = AttributeLayout()

    private struct Key: Hashable {
        let type: ObjectIdentifier
        let entity: ObjectIdentifier
    }

    private final class Entry {
        weak var entity: EntityDescription?
        let layout: Any
        init(entity: EntityDescription, layout: Any) {
            self.entity = entity
            self.layout = layout
        }
    }

    private let lock = NSLock()
    private var layouts: [Key: Entry] = [:]

    /// Each declared attribute of `PlainObject` with its position in `entity` (nil where the entity
    /// has no attribute of that name), in a fixed order.
    func positions<PlainObject: ManagedObjectConvertible>(of type: PlainObject.Type, in entity: EntityDescription)
        -> [(attribute: Attribute<PlainObject>, index: Int?)] {
        let key = Key(type: ObjectIdentifier(type), entity: ObjectIdentifier(entity))
        if let entry = lock.withLock({ layouts[key] }), entry.entity === entity,
           let cached = entry.layout as? [(attribute: Attribute<PlainObject>, index: Int?)] {
            return cached
        }
        let layout = PlainObject.attributes.map { (attribute: $0, index: entity.attributeIndex(named: $0.name)) }
        lock.withLock { layouts[key] = Entry(entity: entity, layout: layout) }
        return layout
    }
}
