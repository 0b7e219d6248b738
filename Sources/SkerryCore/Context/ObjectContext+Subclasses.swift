extension ObjectContext {
    /// Fetches objects as an ``EntityObject`` subclass, as Core Data's typed fetch does:
    ///
    /// ```swift
    /// let books: [Book] = try context.fetch(Book.fetchRequest())
    /// ```
    ///
    /// The result type chooses this method; without one, ``fetch(_:)`` returns `[EntityObject]`.
    /// - Parameters:
    ///   - request: what to fetch.
    ///   - type: the class of the request's entity (or a superclass of it), usually inferred.
    /// - Returns: the objects, in the request's order.
    /// - Throws: the errors of ``fetch(_:)``; ``SkerryError/Code/invalidArgument`` when a fetched
    ///   object is not a `T` (the entity's class is another: see
    ///   ``ObjectModel/setManagedObjectClass(_:forEntityName:)``). Nothing is returned then.
    ///
    /// Complexity: ``fetch(_:)``'s, plus one class check per object.
    public func fetch<T: EntityObject>(_ request: FetchRequest, as type: T.Type = T.self) throws(SkerryError) -> [T] {
        let objects = try fetch(request)
        var typed: [T] = []
        typed.reserveCapacity(objects.count)
        for object in objects {
            guard let member = object as? T else {
                throw SkerryError(
                    .invalidArgument,
                    "A fetch of '\(request.entityName)' returned an object of \(String(reflecting: Swift.type(of: object))), not \(String(reflecting: T.self)): register the class with setManagedObjectClass(_:forEntityName:).",
                    entityName: object.entity.name, objectID: object.objectID)
            }
            typed.append(member)
        }
        return typed
    }
}
