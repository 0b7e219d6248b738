/// What ``EntityObject`` subclasses get, as `NSManagedObject` subclasses do in Core Data:
/// `Book(context:)`, `Book(entity:insertInto:)`, `Book.fetchRequest()`.
///
/// A Swift class initializer cannot allocate an object with its values after it, so these are
/// initializers of a protocol extension, which may assign `self`. ``EntityObject`` adopts the
/// protocol: every subclass has them without declaring anything. Use it through subclasses only.
public protocol EntityObjectSubclassing {}

extension EntityObject: EntityObjectSubclassing {}

extension EntityObjectSubclassing where Self: EntityObject {
    /// Inserts a new object of the entity this class represents into `context`: Core Data's
    /// `NSManagedObject.init(context:)`. As in Core Data, the class must represent a single entity
    /// of the context's model (see ``ObjectModel/setManagedObjectClass(_:forEntityName:)``).
    ///
    /// ```swift
    /// let book = try Book(context: context)
    /// ```
    /// - Parameter context: the context, used inside its `perform` or `performAndWait` block.
    /// - Throws: ``SkerryError/Code/unknownEntity`` when no entity of the model is represented by
    ///   the class; ``SkerryError/Code/invalidArgument`` when several are; as
    ///   ``ObjectContext/insert(_:)`` otherwise.
    public init(context: ObjectContext) throws(SkerryError) {
        let entities = context.model.entities(representedBy: Self.self)
        guard entities.count == 1, let entity = entities.first else {
            let name = String(reflecting: Self.self)
            if entities.isEmpty {
                throw SkerryError(
                    .unknownEntity,
                    "No entity of the model is represented by \(name): register it with setManagedObjectClass(_:forEntityName:) (Core Data's Class field of the entity)."
                )
            }
            throw SkerryError(
                .invalidArgument,
                "\(name) represents \(entities.count) entities (\(entities.map(\.name).joined(separator: ", "))): use init(entity:insertInto:)."
            )
        }
        self = try Self.inserted(entity, into: context)
    }

    /// Inserts a new object of `entity` into `context`: Core Data's
    /// `NSManagedObject.init(entity:insertInto:)`.
    /// - Parameters:
    ///   - entity: an entity of the context's model whose class (``EntityDescription/managedObjectClass``)
    ///     is this class or a subclass.
    ///   - context: the context. An object always belongs to a context in Skerry: nil (Core Data's
    ///     object inserted later) is refused.
    /// - Throws: ``SkerryError/Code/invalidArgument`` for a nil context;
    ///   ``SkerryError/Code/wrongValueType`` when the entity's objects are not of this class; as
    ///   ``ObjectContext/insert(_:)`` otherwise.
    public init(entity: EntityDescription, insertInto context: ObjectContext?) throws(SkerryError) {
        guard let context else {
            throw SkerryError(
                .invalidArgument,
                "An object of '\(entity.name)' needs a context: Skerry has no objects outside a context (insert it with init(entity:insertInto:) given the context).",
                entityName: entity.name)
        }
        self = try Self.inserted(entity, into: context)
    }

    /// A new object of `entity` in `context`, of this class; checked before anything is inserted.
    private static func inserted(_ entity: EntityDescription, into context: ObjectContext) throws(SkerryError) -> Self {
        guard entity.managedObjectClass is Self.Type else {
            throw SkerryError(
                .wrongValueType,
                "Objects of '\(entity.name)' are \(String(reflecting: entity.managedObjectClass)), not \(String(reflecting: Self.self)): register the class with setManagedObjectClass(_:forEntityName:).",
                entityName: entity.name)
        }
        let object = try context.insert(entity)
        // Only a class registered between the check and the insert could fail this.
        guard let typed = object as? Self else {
            throw SkerryError(
                .wrongValueType,
                "Objects of '\(entity.name)' are \(String(reflecting: type(of: object))), not \(String(reflecting: Self.self)).",
                entityName: entity.name, objectID: object.objectID)
        }
        return typed
    }

    /// The name of the entity this class was last registered for (in any model), else the
    /// class's name without its module: what `fetchRequest()` fetches.
    public static var entityName: String {
        EntityDescription.recordedEntityName(for: Self.self) ?? String(describing: Self.self)
    }

    /// A fetch request for the entity this class represents (`entityName`): Core Data's
    /// `Book.fetchRequest()`. Its results are instances of the class: `as! [Book]`.
    public static func fetchRequest() -> FetchRequest {
        FetchRequest(entityName: entityName)
    }
}
