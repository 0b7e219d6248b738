extension EntityObject {
    /// The context the object is registered in: Core Data's `managedObjectContext`, the same as
    /// ``context``. Nil once the object was invalidated (by `reset()`, by a rollback of its insert,
    /// by the save of its delete, by a merged delete, or by the end of its context).
    ///
    /// Core Data helpers reach the object's context through it:
    ///
    /// ```swift
    /// object.managedObjectContext?.performAndWait { try object.value(forKey: "name") }
    /// ```
    public var managedObjectContext: ObjectContext? { context }
}
