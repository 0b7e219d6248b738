import SkerryCore

/// Relations, reached by key path on the model's `Relations`, as in Sworm:
///
/// ```swift
/// book.author = author            // a ManagedObject<Author>?
/// author.books.add(book)
/// try book.set(\.author, value: Author(name: "Frank Herbert"), context: context)
/// ```
///
/// The setter, `add`, `remove` and the deletes do not throw, as in Sworm: an error they meet is
/// recorded on the context and fails the enclosing perform (use ``relate(_:to:)`` to get it at
/// the call instead).
extension ManagedObject {
    /// The destination of a to-one relation. Setting it relates the objects (nil clears it).
    ///
    /// Neither the getter nor the setter can throw: an error they meet (the object's row is gone,
    /// the new destination belongs to another context) is recorded on the context
    /// (`ObjectContext.recordedError`), so that the enclosing perform fails with it
    /// and nothing is saved; the getter then returns nil. Use ``relate(_:to:)`` to handle the
    /// error where it happens.
    public subscript<Destination: ManagedObjectConvertible>(
        dynamicMember keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>
    ) -> ManagedObject<Destination>? {
        get {
            do {
                return try relatedObject(keyPath)
            } catch {
                record(error)
                return nil
            }
        }
        set {
            do {
                try relate(keyPath, to: newValue)
            } catch {
                record(error)
            }
        }
    }

    /// The members of a to-many relation.
    public subscript<Destination: ManagedObjectConvertible>(
        dynamicMember keyPath: KeyPath<PlainObject.Relations, ToManyRelation<Destination>>
    ) -> ManagedObjectSet<Destination> {
        ManagedObjectSet(name: PlainObject.relations[keyPath: keyPath].name, owner: self)
    }

    /// The members of an ordered to-many relation.
    public subscript<Destination: ManagedObjectConvertible>(
        dynamicMember keyPath: KeyPath<PlainObject.Relations, ToManyOrderedRelation<Destination>>
    ) -> ManagedObjectOrderedSet<Destination> {
        ManagedObjectOrderedSet(name: PlainObject.relations[keyPath: keyPath].name, owner: self)
    }

    /// The destination of a to-one relation, or nil.
    private func relatedObject<Destination: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>
    ) throws(SkerryError) -> ManagedObject<Destination>? {
        guard let related = try instance.relatedObject(forKey: PlainObject.relations[keyPath: keyPath].name) else { return nil }
        let relatedScope: WrapperScope<Destination> = scope.relatedScope(for: related)
        return relatedScope.wrap(related)
    }

    /// Sets the destination of a to-one relation (nil clears it); the inverse follows.
    /// - Throws: what the subscript's setter records instead: an object of another context, or
    ///   one no longer in its context.
    public func relate<Destination: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, to object: ManagedObject<Destination>?
    ) throws(SkerryError) {
        try instance.setRelatedObject(object?.instance, forKey: PlainObject.relations[keyPath: keyPath].name)
    }

    /// Sets a to-one relation from a plain value, as Sworm does: updates the related object with
    /// `value` if there is one, else inserts one; nil deletes the related object.
    @discardableResult
    public func set<Destination: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, value: Destination?, context: ManagedObjectContext
    ) throws(SkerryError) -> Self {
        guard let value else {
            try deleteRelated(keyPath, context: context)
            return self
        }
        if let existing = try relatedObject(keyPath) {
            try existing.write(value)
        } else {
            try relate(keyPath, to: try context.insert(value))
        }
        return self
    }

    /// Clears a to-one relation and deletes the object it pointed at. It does not throw, as in
    /// Sworm: an error is recorded on the context.
    @discardableResult
    public func delete<Destination: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, context: ManagedObjectContext
    ) -> Self {
        do {
            try deleteRelated(keyPath, context: context)
        } catch {
            record(error)
        }
        return self
    }

    private func deleteRelated<Destination: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, context: ManagedObjectContext
    ) throws(SkerryError) {
        if let existing = try relatedObject(keyPath) {
            try relate(keyPath, to: nil)
            try context.instance.delete(existing.instance)
        }
    }
}
