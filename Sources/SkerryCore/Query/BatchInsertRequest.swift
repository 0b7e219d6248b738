import Foundation

/// An insert of many objects of one entity from their attribute values, written to the store
/// without objects in a context: Core Data's `NSBatchInsertRequest`.
///
/// ```swift
/// var request = BatchInsertRequest(entityName: "Book", objects: [
///     ["title": "Dune", "isbn": "0441013597", "year": 1965],
///     ["title": "Emma", "isbn": "0141439580"],
/// ])
/// request.resultType = .objectIDs
/// let result = try context.execute(request)
/// ObjectContext.mergeChanges(
///     fromRemoteContextSave: [InsertedObjectsKey: result.result as? [ObjectID] ?? []], into: [viewContext])
/// ```
///
/// Each object is a dictionary from attribute names to values, taken as
/// ``EntityObject/setValue(_:forKey:)-(Any?,_)`` takes them (`Int`, `Double`, `String`, `Date`,
/// `Data`, `UUID`, `URL`, `Decimal`, `Bool`, `NSNumber`; `nil` or `NSNull` for no value). As in
/// Core Data, it sets attributes only (no relationships) and runs no validation rules; attributes
/// missing from a dictionary get their default values. Unlike Core Data, it refuses a row it
/// could not load back: a required attribute left without a value, a key that names no attribute
/// of the entity, or a value of the wrong type throws, naming the attribute and the row's index,
/// and nothing is written.
///
/// When the entity has uniqueness constraints, a row whose constrained values match an object
/// already stored goes to the executing context's ``ObjectContext/mergePolicy``, as in Core Data:
/// under `.mergeByPropertyObjectTrump` (what Core Data code sets for this) and `.overwrite` it
/// updates that object instead (an upsert: every stored attribute takes the row's value or
/// default, and the object keeps its ID and relationships); under `.mergeByPropertyStoreTrump` and
/// `.rollback` the object stays as stored and the row is dropped; under `.error` (the default) the
/// batch insert throws ``SkerryError/Code/constraintViolation`` and writes nothing. Rows of the
/// same request that match each other: the later one wins under the first two, the first under
/// the next two, and `.error` throws.
/// Under a constraint a superentity declares, a row matching an object of another entity of the
/// hierarchy updates (under the upserting policies) the attributes the two entities share; the
/// object keeps its entity.
///
/// Live contexts do not see the rows until they merge the result (``BatchInsertResult/changes``
/// with ``ObjectContext/mergeChanges(_:)``, or the IDs with
/// ``ObjectContext/mergeChanges(fromRemoteContextSave:into:)``).
public struct BatchInsertRequest {
    /// What a batch insert reports: Core Data's `NSBatchInsertRequestResultType`.
    public enum ResultType: Sendable, Hashable {
        /// Only whether the insert succeeded (a failed one throws). The default, as in Core Data.
        case statusOnly
        /// The IDs of the objects written, in the order of the rows (one per object: rows that
        /// matched each other's constraints share one).
        case objectIDs
        /// How many objects were written (inserted or, through a constraint, updated; not those
        /// the merge policy left as stored).
        case count
    }

    /// The entity to insert objects of (not an abstract one).
    public var entityName: String
    /// The objects to insert, as dictionaries from attribute names to values (Core Data's
    /// `objectsToInsert`); nil when a handler gives them.
    public var objectsToInsert: [[String: Any]]?
    /// Called again and again, each time with an empty dictionary to fill with one object's
    /// values, until it returns true (the dictionary of that last call is not inserted): Core
    /// Data's `dictionaryHandler`.
    public var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Called again and again, each time with a new object of the entity (in a scratch context of
    /// its own) to set the attributes of, until it returns true (the object of that last call is
    /// not inserted): Core Data's `managedObjectHandler`. Relationships set on the object are
    /// not written.
    public var managedObjectHandler: ((EntityObject) -> Bool)?
    /// What the result reports; ``ResultType/statusOnly`` by default, as in Core Data.
    public var resultType: ResultType = .statusOnly

    /// Creates a batch insert of `objects`: Core Data's `NSBatchInsertRequest(entityName:objects:)`.
    /// - Parameters:
    ///   - entityName: the entity to insert objects of.
    ///   - objects: each object's values by attribute name.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objectsToInsert = objects
    }

    /// Creates a batch insert of `objects`: Core Data's `NSBatchInsertRequest(entity:objects:)`.
    /// - Parameters:
    ///   - entity: the entity to insert objects of.
    ///   - objects: each object's values by attribute name.
    public init(entity: EntityDescription, objects: [[String: Any]]) {
        self.init(entityName: entity.name, objects: objects)
    }

    /// Creates a batch insert whose objects `handler` gives, one dictionary per call, until it
    /// returns true: Core Data's `NSBatchInsertRequest(entityName:dictionaryHandler:)`.
    ///
    /// ```swift
    /// var index = 0
    /// let request = BatchInsertRequest(entityName: "Book") { dictionary in
    ///     guard index < titles.count else { return true }
    ///     dictionary["title"] = titles[index]
    ///     index += 1
    ///     return false
    /// }
    /// ```
    /// - Parameters:
    ///   - entityName: the entity to insert objects of.
    ///   - handler: fills the dictionary with one object's values and returns false, or returns
    ///     true when there are no more.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = handler
    }

    /// Creates a batch insert whose objects `handler` gives: Core Data's
    /// `NSBatchInsertRequest(entity:dictionaryHandler:)`; see ``init(entityName:dictionaryHandler:)``.
    /// - Parameters:
    ///   - entity: the entity to insert objects of.
    ///   - handler: fills the dictionary with one object's values and returns false, or returns
    ///     true when there are no more.
    public init(entity: EntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.init(entityName: entity.name, dictionaryHandler: handler)
    }

    /// Creates a batch insert whose objects `handler` sets the attributes of, one object per call,
    /// until it returns true: Core Data's `NSBatchInsertRequest(entityName:managedObjectHandler:)`.
    ///
    /// The object handed over lives in a scratch context and is never saved itself; its attribute
    /// values are what the request writes.
    /// - Parameters:
    ///   - entityName: the entity to insert objects of.
    ///   - handler: sets one object's attributes and returns false, or returns true when there are
    ///     no more.
    public init(entityName: String, managedObjectHandler handler: @escaping (EntityObject) -> Bool) {
        self.entityName = entityName
        self.managedObjectHandler = handler
    }

    /// Creates a batch insert whose objects `handler` sets the attributes of: Core Data's
    /// `NSBatchInsertRequest(entity:managedObjectHandler:)`; see
    /// ``init(entityName:managedObjectHandler:)``.
    /// - Parameters:
    ///   - entity: the entity to insert objects of.
    ///   - handler: sets one object's attributes and returns false, or returns true when there are
    ///     no more.
    public init(entity: EntityDescription, managedObjectHandler handler: @escaping (EntityObject) -> Bool) {
        self.init(entityName: entity.name, managedObjectHandler: handler)
    }
}

/// What a batch insert did: Core Data's `NSBatchInsertResult`.
public struct BatchInsertResult: Sendable {
    /// The IDs of the objects written, in the order of the rows, one per object (empty for a
    /// `.count` or `.statusOnly` request).
    public let objectIDs: [ObjectID]
    /// How many objects were written: inserted, or updated through a uniqueness constraint (not
    /// those the merge policy left as stored).
    public let count: Int
    /// What the request asked to report.
    public let resultType: BatchInsertRequest.ResultType
    /// The insert as store changes, ready for ``ObjectContext/mergeChanges(_:)``: the new objects
    /// as inserted, those a row updated through a uniqueness constraint as updated (empty for a
    /// `.count` or `.statusOnly` request).
    public let changes: StoreChanges

    /// Core Data's `result`: the objects' IDs (`[ObjectID]`) for a
    /// ``BatchInsertRequest/ResultType/objectIDs`` request, their number (`Int`) for a
    /// ``BatchInsertRequest/ResultType/count`` one, `true` (`Bool`: the insert succeeded; a failed
    /// one throws) for a ``BatchInsertRequest/ResultType/statusOnly`` one.
    public var result: Any? {
        switch resultType {
        case .objectIDs: return objectIDs
        case .count: return count
        case .statusOnly: return true
        }
    }
}

/// Core Data's `NSBatchInsertRequestResultType`.
public typealias BatchInsertRequestResultType = BatchInsertRequest.ResultType
