import SkerryCore

/// The members of a to-many relation of a ``ManagedObject``: Sworm's `ManagedObjectSet`.
/// Changes keep the inverse relation in sync.
///
/// As in Sworm, ``add(_:)``, ``remove(_:)`` and ``delete(_:context:)`` do not throw, and neither
/// does iterating: an error they meet is recorded on the context, and the enclosing perform fails
/// with it and saves nothing. ``objects()`` reads the members and throws.
public class ManagedObjectSet<PlainObject: ManagedObjectConvertible>: Sequence {
    let name: String
    let instance: EntityObject
    /// Where errors are recorded: the owner's context.
    private let context: ObjectContext?

    init<Owner: ManagedObjectConvertible>(name: String, owner: ManagedObject<Owner>) {
        self.name = name
        self.instance = owner.instance
        self.context = owner.context
    }

    /// The members.
    /// - Throws: `SkerryError.Code.objectNotFound` when the object's row or a member's
    ///   is gone; `SkerryError.Code.objectNotInContext` for an object of no context.
    public func objects() throws(SkerryError) -> [ManagedObject<PlainObject>] {
        var members: [ManagedObject<PlainObject>] = []
        var scope: WrapperScope<PlainObject>?
        // The members are objects of the owner's context, and share, but for sub-entities, their
        // layout: one scope.
        let context = instance.context
        for object in try instance.relatedObjects(forKey: name) {
            let memberScope: WrapperScope<PlainObject> = wrapperScope(reusing: scope, for: object.entity, in: context)
            scope = memberScope
            members.append(memberScope.wrap(object))
        }
        return members
    }

    /// Iterates over the members as they are when iteration starts: changing the relation while
    /// iterating (removing each member, as Sworm code does) is safe. Iteration cannot throw: an
    /// error it meets is recorded on the context (`ObjectContext.recordedError`), so
    /// that the enclosing perform fails with it, and the iteration yields no members. Use
    /// ``objects()`` to handle the error where it happens.
    public func makeIterator() -> ManagedObjectSetIterator<PlainObject> {
        do {
            return ManagedObjectSetIterator(try objects())
        } catch {
            record(error)
            return ManagedObjectSetIterator([])
        }
    }

    /// Adds a member; an error is recorded on the context.
    public func add(_ object: ManagedObject<PlainObject>) {
        do {
            try instance.addRelatedObject(object.instance, forKey: name)
        } catch {
            record(error)
        }
    }

    /// Removes a member (it is not deleted); an error is recorded on the context.
    public func remove(_ object: ManagedObject<PlainObject>) {
        do {
            try instance.removeRelatedObject(object.instance, forKey: name)
        } catch {
            record(error)
        }
    }

    /// Removes a member and deletes it; an error is recorded on the context.
    public func delete(_ object: ManagedObject<PlainObject>, context: ManagedObjectContext) {
        remove(object)
        context.delete(object)
    }

    func record(_ error: SkerryError) {
        recordError(error, wrappedIn: context, of: instance)
    }
}

/// Iterates over the members of a ``ManagedObjectSet``: Sworm's `ManagedObjectSetIterator`.
/// Like the objects it returns, it belongs to its context's queue.
public struct ManagedObjectSetIterator<PlainObject: ManagedObjectConvertible>: IteratorProtocol {
    private var members: IndexingIterator<[ManagedObject<PlainObject>]>

    init(_ members: [ManagedObject<PlainObject>]) {
        self.members = members.makeIterator()
    }

    /// The next member, or nil after the last.
    public mutating func next() -> ManagedObject<PlainObject>? {
        members.next()
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

@available(*, unavailable)
extension ManagedObjectSetIterator: Sendable {}
