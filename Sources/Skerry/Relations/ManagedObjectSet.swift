import SkerryCore

/// The members of a to-many relation of a ``ManagedObject``: Sworm's `ManagedObjectSet`.
/// Changes keep the inverse relation in sync.
public class ManagedObjectSet<PlainObject: ManagedObjectConvertible>: Sequence {
    let name: String
    let instance: EntityObject

    init(name: String, instance: EntityObject) {
        self.name = name
        self.instance = instance
    }

    /// The members.
    /// - Throws: ``SkerryCore/SkerryError/Code/objectNotFound`` when the object's row or a member's
    ///   is gone; ``SkerryCore/SkerryError/Code/objectNotInContext`` for an object of no context.
    public func objects() throws(SkerryError) -> [ManagedObject<PlainObject>] {
        var members: [ManagedObject<PlainObject>] = []
        for object in try instance.relatedObjects(forKey: name) { members.append(ManagedObject(instance: object)) }
        return members
    }

    /// Iterates over the members. Iteration cannot throw: an error it meets is recorded on the
    /// context (``SkerryCore/ObjectContext/recordedError``), so that the enclosing perform fails
    /// with it and nothing is saved, and the iteration yields no members. Use ``objects()`` to
    /// handle the error where it happens.
    public func makeIterator() -> IndexingIterator<[ManagedObject<PlainObject>]> {
        do {
            return try objects().makeIterator()
        } catch {
            instance.recordOnContext(error)
            return [].makeIterator()
        }
    }

    /// Adds a member.
    public func add(_ object: ManagedObject<PlainObject>) throws(SkerryError) {
        try instance.addRelatedObject(object.instance, forKey: name)
    }

    /// Removes a member (it is not deleted).
    public func remove(_ object: ManagedObject<PlainObject>) throws(SkerryError) {
        try instance.removeRelatedObject(object.instance, forKey: name)
    }

    /// Removes a member and deletes it.
    public func delete(_ object: ManagedObject<PlainObject>, context: ManagedObjectContext) throws(SkerryError) {
        try remove(object)
        try context.delete(object)
    }
}

/// The members of an ordered to-many relation: Sworm's `ManagedObjectOrderedSet`, with insertion
/// and moves by index. Members come, and iterate, in order.
public final class ManagedObjectOrderedSet<PlainObject: ManagedObjectConvertible>: ManagedObjectSet<PlainObject> {
    /// Inserts a member at `index` (moving it there if it is a member already).
    public func insert(_ object: ManagedObject<PlainObject>, at index: Int) throws(SkerryError) {
        try instance.insertRelatedObject(object.instance, at: index, forKey: name)
    }

    /// Moves the member at `from` to `to`.
    public func move(from: Int, to: Int) throws(SkerryError) {
        try instance.moveRelatedObject(from: from, to: to, forKey: name)
    }
}

/// Relations belong to their context's queue.
@available(*, unavailable)
extension ManagedObjectSet: @unchecked Sendable {}
