import SkerryCore

/// Skopelos's CRUD helpers, always explicit about the context (the one a read or write block
/// received).
extension ManagedObjectConvertible {
    /// Inserts a new object with the type's default values (`Self()`).
    @discardableResult
    public static func create(in context: ManagedObjectContext) throws(SkerryError) -> ManagedObject<Self> {
        try context.insert(Self())
    }

    /// Every object of the type.
    public static func all(in context: ManagedObjectContext) throws(SkerryError) -> [ManagedObject<Self>] {
        try context.fetch(all)
    }

    /// The objects for which `predicate` holds.
    public static func all(matching predicate: Predicate, in context: ManagedObjectContext) throws(SkerryError) -> [ManagedObject<Self>] {
        try context.fetch(all.where(predicate))
    }

    /// The objects for which a predicate in Core Data's format language holds, with its arguments
    /// (as `NSPredicate(format:)` takes them; see ``Predicate/init(format:_:)``).
    ///
    /// ```swift
    /// let old = try Book.all(matching: "year < %d", 1900, in: context)
    /// ```
    public static func all(matching format: String, _ arguments: Any..., in context: ManagedObjectContext) throws(SkerryError)
        -> [ManagedObject<Self>]
    {
        try context.fetch(all.where(Predicate(format: format, argumentArray: arguments)))
    }

    /// The first object of the type (in store order), or nil.
    public static func first(in context: ManagedObjectContext) throws(SkerryError) -> ManagedObject<Self>? {
        try context.fetchOne(all)
    }

    /// How many objects of the type there are.
    public static func count(in context: ManagedObjectContext) throws(SkerryError) -> Int {
        try context.count(of: all)
    }

    /// Deletes every object of the type at the next save.
    public static func removeAll(in context: ManagedObjectContext) throws(SkerryError) {
        try context.delete(all)
    }
}

extension ManagedObject {
    /// Deletes the object at the next save of `context`.
    public func remove(in context: ManagedObjectContext) throws(SkerryError) {
        try context.instance.delete(instance)
    }

    /// The same object in another context (of another read or write block), or nil when it does
    /// not exist there.
    public func inContext(_ context: ManagedObjectContext) -> ManagedObject<PlainObject>? {
        guard let object = try? context.instance.existingObject(with: instance.objectID) else { return nil }
        return context.scope(of: PlainObject.self, in: object.entity).wrap(object)
    }
}
