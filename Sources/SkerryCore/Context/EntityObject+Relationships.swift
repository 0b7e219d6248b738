/// Relationships, by name. Related objects load the first time a relationship is read; every
/// change keeps the inverse relationship of the objects concerned in sync.
///
/// ```swift
/// try book.setRelatedObject(author, forKey: "author")   // author's "books" gains the book
/// let books = try author.relatedObjects(forKey: "books")
/// ```
extension EntityObject {
    /// The destination of a to-one relationship, or nil.
    /// - Throws: ``SkerryError/Code/unknownAttribute`` for an unknown or to-many relationship;
    ///   as ``value(forKey:as:)`` for an invalid object.
    public func relatedObject(forKey key: String) throws(SkerryError) -> EntityObject? {
        let (context, index) = try relationship(key, toMany: false)
        guard case .toOne(let id) = try context.relationshipValue(self, index), let id else { return nil }
        return context.relatedObject(id)
    }

    /// Sets the destination of a to-one relationship (nil clears it). The old and the new
    /// destination's inverse relationships follow.
    /// - Throws: ``SkerryError/Code/objectNotInContext`` for an object of another context;
    ///   ``SkerryError/Code/wrongValueType`` for an object of another entity.
    public func setRelatedObject(_ object: EntityObject?, forKey key: String) throws(SkerryError) {
        let (context, index) = try relationship(key, toMany: false)
        if let object { try check(object, for: index, in: context) }
        try context.changingTheGraph { () throws(SkerryError) in try context.setRelated(self, index, to: object) }
    }

    /// The members of a to-many relationship (in order, for an ordered one).
    public func relatedObjects(forKey key: String) throws(SkerryError) -> [EntityObject] {
        let (context, index) = try relationship(key, toMany: true)
        return try context.relationshipValue(self, index).objectIDs.compactMap { context.relatedObject($0) }
    }

    /// Adds a member to a to-many relationship (at the end of an ordered one).
    public func addRelatedObject(_ object: EntityObject, forKey key: String) throws(SkerryError) {
        let (context, index) = try relationship(key, toMany: true)
        try check(object, for: index, in: context)
        try context.changingTheGraph { () throws(SkerryError) in try context.insertRelated(self, index, object, at: nil) }
    }

    /// Removes a member from a to-many relationship. The member is not deleted.
    public func removeRelatedObject(_ object: EntityObject, forKey key: String) throws(SkerryError) {
        let (context, index) = try relationship(key, toMany: true)
        try check(object, for: index, in: context)
        try context.changingTheGraph { () throws(SkerryError) in try context.removeRelated(self, index, object) }
    }

    /// Makes `objects` the members of a to-many relationship, in this order.
    public func setRelatedObjects(_ objects: [EntityObject], forKey key: String) throws(SkerryError) {
        let (context, index) = try relationship(key, toMany: true)
        for object in objects { try check(object, for: index, in: context) }
        let wanted = Set(objects.map(\.objectID))
        for id in try context.relationshipValue(self, index).objectIDs where !wanted.contains(id) {
            if let current = context.relatedObject(id) {
                try context.changingTheGraph { () throws(SkerryError) in try context.removeRelated(self, index, current) }
            } else {
                context.removeUnreachableMember(self, index, id) // e.g. an insert deleted before its save
            }
        }
        for (position, object) in objects.enumerated() {
            let at = entity.relationships[index].isOrdered ? position : nil
            try context.changingTheGraph { () throws(SkerryError) in try context.insertRelated(self, index, object, at: at) }
        }
    }

    /// Inserts a member of an ordered to-many relationship at `position` (moving it there if it is
    /// already a member).
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a relationship that is not ordered or a
    ///   position outside `0...count`.
    public func insertRelatedObject(_ object: EntityObject, at position: Int, forKey key: String) throws(SkerryError) {
        let (context, index) = try relationship(key, toMany: true)
        try check(object, for: index, in: context)
        let count = try context.relationshipValue(self, index).objectIDs.count
        try checkOrdered(index, position: position, count: count + 1)
        try context.changingTheGraph { () throws(SkerryError) in try context.insertRelated(self, index, object, at: position) }
    }

    /// Moves the member at `from` to `to` in an ordered to-many relationship.
    public func moveRelatedObject(from: Int, to: Int, forKey key: String) throws(SkerryError) {
        let (context, index) = try relationship(key, toMany: true)
        let ids = try context.relationshipValue(self, index).objectIDs
        try checkOrdered(index, position: from, count: ids.count)
        try checkOrdered(index, position: to, count: ids.count)
        guard let object = context.relatedObject(ids[from]) else { return }
        try context.changingTheGraph { () throws(SkerryError) in try context.insertRelated(self, index, object, at: to) }
    }

    // MARK: Checks

    private func relationship(
        _ key: String, toMany: Bool,
        _ function: StaticString = #function
    ) throws(SkerryError) -> (ObjectContext, Int) {
        let context = try activeContext(function)
        let index = try entity.requireRelationshipIndex(key)
        guard entity.relationships[index].isToMany == toMany else {
            throw SkerryError(
                .unknownAttribute,
                "'\(entity.name).\(key)' is a \(toMany ? "to-one" : "to-many") relationship; use the \(toMany ? "to-one" : "to-many") methods.",
                entityName: entity.name, key: key)
        }
        return (context, index)
    }

    private func check(_ object: EntityObject, for index: Int, in context: ObjectContext) throws(SkerryError) {
        let relationship = entity.relationships[index]
        guard object.context === context else {
            throw SkerryError(
                .objectNotInContext, "\(object.objectID) is not registered in this object's context; look it up there by its ID.",
                entityName: entity.name, key: relationship.name, objectID: object.objectID)
        }
        guard object.entity.isKind(ofEntityNamed: relationship.destinationEntityName) else {
            throw SkerryError(
                .wrongValueType,
                "'\(entity.name).\(relationship.name)' holds \(relationship.destinationEntityName) objects, not \(object.entity.name).",
                entityName: entity.name, key: relationship.name, objectID: object.objectID)
        }
    }

    private func checkOrdered(_ index: Int, position: Int, count: Int) throws(SkerryError) {
        let relationship = entity.relationships[index]
        guard relationship.isOrdered else {
            throw SkerryError(
                .invalidArgument, "'\(entity.name).\(relationship.name)' is not ordered.",
                entityName: entity.name, key: relationship.name)
        }
        guard position >= 0 && position < count else {
            throw SkerryError(
                .invalidArgument, "Position \(position) is outside '\(entity.name).\(relationship.name)' (\(count - 1) is the last).",
                entityName: entity.name, key: relationship.name)
        }
    }
}
