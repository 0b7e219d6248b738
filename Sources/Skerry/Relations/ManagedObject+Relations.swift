import SkerryCore

/// Relations, reached by key path on the model's `Relations`, as in Sworm:
///
/// ```swift
/// book.author = author            // a ManagedObject<Author>?
/// try author.books.add(book)
/// try book.set(\.author, value: Author(name: "Frank Herbert"), context: context)
/// ```
extension ManagedObject {
    /// The destination of a to-one relation. Setting it relates the objects (nil clears it).
    ///
    /// Neither the getter nor the setter can throw: an error they meet (the object's row is gone,
    /// the new destination belongs to another context) is recorded on the context
    /// (``SkerryCore/ObjectContext/recordedError``), so that the enclosing perform fails with it
    /// and nothing is saved; the getter then returns nil. Use ``relate(_:to:)`` to handle the
    /// error where it happens.
    public subscript<Destination: ManagedObjectConvertible>(
        dynamicMember keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>
    ) -> ManagedObject<Destination>? {
        get {
            let name = PlainObject.relations[keyPath: keyPath].name
            do {
                return try instance.relatedObject(forKey: name).map { ManagedObject<Destination>(instance: $0) }
            } catch {
                instance.recordOnContext(error)
                return nil
            }
        }
        set {
            do {
                try relate(keyPath, to: newValue)
            } catch {
                instance.recordOnContext(error)
            }
        }
    }

    /// The members of a to-many relation.
    public subscript<Destination: ManagedObjectConvertible>(
        dynamicMember keyPath: KeyPath<PlainObject.Relations, ToManyRelation<Destination>>
    ) -> ManagedObjectSet<Destination> {
        ManagedObjectSet(name: PlainObject.relations[keyPath: keyPath].name, instance: instance)
    }

    /// The members of an ordered to-many relation.
    public subscript<Destination: ManagedObjectConvertible>(
        dynamicMember keyPath: KeyPath<PlainObject.Relations, ToManyOrderedRelation<Destination>>
    ) -> ManagedObjectOrderedSet<Destination> {
        ManagedObjectOrderedSet(name: PlainObject.relations[keyPath: keyPath].name, instance: instance)
    }

    /// Sets the destination of a to-one relation (nil clears it); the inverse follows.
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
        guard let value else { return try delete(keyPath, context: context) }
        let name = PlainObject.relations[keyPath: keyPath].name
        if let existing = try instance.relatedObject(forKey: name) {
            try ManagedObject<Destination>(instance: existing).encode(value)
        } else {
            try relate(keyPath, to: try context.insert(value))
        }
        return self
    }

    /// Clears a to-one relation and deletes the object it pointed at.
    @discardableResult
    public func delete<Destination: ManagedObjectConvertible>(
        _ keyPath: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, context: ManagedObjectContext
    ) throws(SkerryError) -> Self {
        let name = PlainObject.relations[keyPath: keyPath].name
        if let existing = try instance.relatedObject(forKey: name) {
            try instance.setRelatedObject(nil, forKey: name)
            try context.instance.delete(existing)
        }
        return self
    }
}

extension EntityObject {
    /// Records `error`, met by a call that cannot throw, on the object's context, so that the
    /// enclosing perform fails with it. An object that belongs to no context any more (its perform
    /// ended, or it was reset) has no perform to fail: every operation on it reports that itself.
    func recordOnContext(_ error: SkerryError) {
        context?.recordError(error)
    }
}
