/// A description of which objects of an entity to fetch, in what order, and how many.
///
/// ```swift
/// var request = FetchRequest(entityName: "Book")
/// request.predicate = AttributeKey("year") < 1970
/// request.sortKeys = [SortKey("year", ascending: false), SortKey("title")]
/// request.fetchLimit = 10
/// let books = try context.fetch(request)
/// ```
///
/// The result form is chosen by the context method: ``ObjectContext/fetch(_:)`` (objects),
/// ``ObjectContext/fetchObjectIDs(_:)``, ``ObjectContext/count(for:)`` and
/// ``ObjectContext/fetchDictionaries(_:)``.
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String
    /// Which objects to fetch; nil for all.
    public var predicate: FetchPredicate?
    /// The order of the results, first key first. Unsorted results come in store order.
    public var sortKeys: [SortKey]
    /// The most objects to return; 0 for no limit.
    public var fetchLimit: Int = 0
    /// How many matching objects to skip first.
    public var fetchOffset: Int = 0
    /// When greater than 0, fetched objects come back as faults whose values are loaded this many
    /// at a time, the first time any of them is read; 0 loads every object's values at once.
    public var fetchBatchSize: Int = 0
    /// Whether the context's unsaved inserts, changes and deletes take part in the result (the
    /// default), as if they had been saved. Dictionary results always read the store only.
    public var includesPendingChanges: Bool = true
    /// Whether objects of the entity's sub-entities match too (the default, as in Core Data);
    /// false fetches objects of the entity itself only.
    public var includesSubentities: Bool = true
    /// For ``ObjectContext/fetchDictionaries(_:)``: the attributes to fetch; nil for all.
    public var propertiesToFetch: [String]?
    /// Relationships of the fetched objects whose related objects are loaded with the fetch: one
    /// query per relationship for all the objects, instead of one per object when each is first
    /// read. Names of the entity's relationships (to-one or to-many).
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// Core Data's hint that fetched objects may come back as faults (true by default): accepted
    /// so that Core Data code compiles unchanged, and without effect. A Skerry fetch loads the
    /// values of the objects it returns (``fetchBatchSize`` decides when), whatever this says;
    /// results are the same either way. Two requests that differ in it are not equal.
    public var returnsObjectsAsFaults: Bool = true
    /// Core Data's hint that the fetch may skip the objects' values (true by default): accepted,
    /// and without effect, as ``returnsObjectsAsFaults``. Results are the same either way; two
    /// requests that differ in it are not equal.
    public var includesPropertyValues: Bool = true

    /// Creates a request.
    /// - Parameters:
    ///   - entityName: the entity to fetch.
    ///   - predicate: which objects; nil for all.
    ///   - sortKeys: the order.
    public init(entityName: String, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
    }
}

/// A delete that runs in the store without loading objects, as Core Data's
/// `NSBatchDeleteRequest` does.
///
/// Live contexts do not see the delete until the returned changes are merged into them with
/// ``ObjectContext/mergeChanges(_:)``.
public struct BatchDeleteRequest: Sendable, Hashable {
    /// What a batch delete reports.
    public enum ResultType: Sendable, Hashable {
        /// The deleted objects' IDs (to merge into live contexts). The default.
        case objectIDs
        /// Only how many objects were deleted: one `DELETE` statement, no IDs to merge.
        case count
        /// Only whether the delete succeeded (Core Data's `.resultTypeStatusOnly`, the default of
        /// its requests and of ``BatchDeleteRequest/init(fetchRequest:)`` and
        /// ``BatchDeleteRequest/init(objectIDs:)``): as cheap as `.count`, no IDs to merge.
        case statusOnly
    }

    /// The entity to delete from.
    public var entityName: String
    /// Which objects to delete; nil for all.
    public var predicate: FetchPredicate?
    /// What the result reports: `.objectIDs` by default for ``init(entityName:predicate:)``,
    /// `.statusOnly` (Core Data's default) for ``init(fetchRequest:)`` and ``init(objectIDs:)``.
    public var resultType: ResultType = .objectIDs
    /// Whether the objects of the entity's sub-entities are deleted too (true by default, as in
    /// Core Data); false deletes the entity's own objects only.
    public var includesSubentities: Bool = true
    /// The IDs given to ``init(objectIDs:)``, checked when the request runs; nil for a request
    /// made from an entity or a fetch request.
    public private(set) var objectIDs: [ObjectID]?

    /// Creates a batch delete.
    /// - Parameters:
    ///   - entityName: the entity to delete from.
    ///   - predicate: which objects; nil for all of them.
    public init(entityName: String, predicate: FetchPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// A batch delete of what `fetchRequest` matches (its entity, predicate and
    /// `includesSubentities`): Core Data's `NSBatchDeleteRequest(fetchRequest:)`. As Core Data's,
    /// it reports ``ResultType/statusOnly`` unless ``resultType`` is set.
    public init(fetchRequest: FetchRequest) {
        self.init(entityName: fetchRequest.entityName, predicate: fetchRequest.predicate)
        includesSubentities = fetchRequest.includesSubentities
        resultType = .statusOnly
    }

    /// A batch delete of the objects with these IDs: Core Data's
    /// `NSBatchDeleteRequest(objectIDs:)`. As Core Data's, it reports ``ResultType/statusOnly``
    /// unless ``resultType`` is set.
    ///
    /// ```swift
    /// var request = BatchDeleteRequest(objectIDs: ids)
    /// request.resultType = .resultTypeObjectIDs
    /// let result = try context.execute(request)
    /// ```
    ///
    /// The IDs must be permanent IDs of objects of one entity, in one store of the context's
    /// stack: running the request otherwise throws ``SkerryError/Code/invalidArgument`` (Core
    /// Data: "mixing entity types results in an error when you execute the request"), and
    /// deletes nothing. IDs of rows already gone are skipped; no IDs delete nothing.
    /// - Parameter objectIDs: the objects to delete.
    public init(objectIDs: [ObjectID]) {
        self.init(entityName: objectIDs.first?.entityName ?? "", predicate: .isObject(keyPath: "", in: objectIDs))
        includesSubentities = false
        resultType = .statusOnly
        self.objectIDs = objectIDs
    }
}

/// What a batch delete did.
public struct BatchDeleteResult: Sendable {
    /// The IDs of the deleted objects (empty for a `.count` or `.statusOnly` request).
    public let deletedObjectIDs: [ObjectID]
    /// How many objects were deleted.
    public let count: Int
    /// What the request asked to report.
    public internal(set) var resultType: BatchDeleteRequest.ResultType = .objectIDs
    /// The delete as store changes, ready for ``ObjectContext/mergeChanges(_:)``.
    public var changes: StoreChanges { StoreChanges(deleted: Set(deletedObjectIDs)) }
}

/// Object IDs inserted, updated and deleted in a store, by a save or a batch operation.
///
/// Merging them into a context with ``ObjectContext/mergeChanges(_:)`` brings it up to date.
public struct StoreChanges: Sendable, Hashable {
    /// Objects that were inserted.
    public var inserted: Set<ObjectID>
    /// Objects that were updated.
    public var updated: Set<ObjectID>
    /// Objects that were deleted.
    public var deleted: Set<ObjectID>

    /// Creates a set of changes.
    public init(inserted: Set<ObjectID> = [], updated: Set<ObjectID> = [], deleted: Set<ObjectID> = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Whether there are no changes.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
