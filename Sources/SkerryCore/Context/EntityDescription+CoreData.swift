extension EntityDescription {
    /// Inserts a new object of the entity named `entityName` into `context`: Core Data's
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)`, the same as
    /// ``ObjectContext/insert(entityName:)``. It throws where Core Data raises an exception.
    /// - Parameters:
    ///   - entityName: an entity of the context's model.
    ///   - context: the context, used inside its `perform` or `performAndWait` block.
    /// - Returns: the new object.
    /// - Throws: ``SkerryError/Code/unknownEntity``; ``SkerryError/Code/noStore`` when no loaded
    ///   store holds the entity.
    @discardableResult
    public static func insertNewObject(forEntityName entityName: String, into context: ObjectContext) throws(SkerryError) -> EntityObject {
        try context.insert(entityName: entityName)
    }

    /// The entity named `entityName` in the model of `context`'s stack, if any: Core Data's
    /// `NSEntityDescription.entity(forEntityName:in:)`.
    /// - Parameters:
    ///   - entityName: an entity name.
    ///   - context: any context of the stack (read from any thread).
    public static func entity(forEntityName entityName: String, in context: ObjectContext) -> EntityDescription? {
        context.model.entity(named: entityName)
    }
}
