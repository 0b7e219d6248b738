import SkerryCore

/// The context a ``PersistentContainer`` perform works in: Sworm's `ManagedObjectContext`, over an
/// engine `ObjectContext`. Valid only inside the perform that received it.
public final class ManagedObjectContext {
    /// Sworm's context error, kept so that code naming it compiles. Skerry reports an entity the
    /// model lacks as a `SkerryError` with code `SkerryError.Code.unknownEntity`
    /// instead, like every other error of the typed layer.
    public enum Error: Swift.Error, Sendable {
        /// The model has no entity of this name (Skerry throws `SkerryError` `.unknownEntity`).
        case unknownEntity(String)
    }

    /// The engine context, for what the typed layer does not cover.
    public let instance: ObjectContext

    /// The wrapper scope (context and layout) last used to insert, and the one last used to wrap
    /// fetched objects: a run of inserts of one type, or the objects of a fetch, share one.
    private var lastInsertScope: AnyWrapperScope?
    private var lastFetchScope: AnyWrapperScope?

    init(_ instance: ObjectContext) {
        self.instance = instance
    }

    /// Inserts a new object with the values of `value`. When a value cannot be stored, nothing is
    /// inserted.
    @discardableResult
    public func insert<PlainObject: ManagedObjectConvertible>(_ value: PlainObject) throws(SkerryError) -> ManagedObject<PlainObject> {
        // Before this context's own state (the cached layout) is read: misuse from another
        // thread stops with the confinement message.
        instance.checkConfinement()
        let object: ManagedObject<PlainObject>
        if let last = lastInsertScope, last.anyLayout.type == ObjectIdentifier(PlainObject.self) {
            // The entity named `PlainObject.entityName`, found by an earlier insert; a scope of
            // this context (`lastInsertScope` only holds those).
            object = unsafeDowncast(last, to: WrapperScope<PlainObject>.self).wrap(try instance.insert(last.anyLayout.entity))
        } else {
            let inserted = try instance.insert(entityName: PlainObject.entityName)
            let scope = WrapperScope<PlainObject>(context: instance, entity: inserted.entity)
            lastInsertScope = scope
            object = scope.wrap(inserted)
        }
        do {
            try object.write(value)
            return object
        } catch {
            // No half-written object stays behind. Deleting an object this context has just
            // inserted only unregisters it: it cannot fail.
            try? instance.delete(object.instance)
            throw error
        }
    }

    /// Deletes an object at the next save. It does not throw, as in Sworm: an error (an object
    /// of another context) is recorded on the context and fails the enclosing perform. An
    /// object another context deleted meanwhile is deleted without an error, as in Core Data.
    public func delete<PlainObject: ManagedObjectConvertible>(_ object: ManagedObject<PlainObject>) {
        do {
            try instance.delete(object.instance)
        } catch {
            instance.recordError(error)
        }
    }

    /// Deletes every object the request matches, at the next save (loading them, so that the
    /// context's pending changes and other contexts see the deletes; see ``batchDelete(_:)``).
    public func delete<PlainObject: ManagedObjectConvertible>(_ request: Request<PlainObject>) throws(SkerryError) {
        for object in try instance.fetch(try request.fetchRequest()) {
            try instance.delete(object)
        }
    }

    /// Deletes every object the request matches in the store now, without loading them, and
    /// removes them from this context; other live contexts see it once the IDs are merged
    /// (`ObjectContext.mergeChanges(_:)`).
    /// - Returns: how many objects were deleted.
    /// - Throws: `SkerryError.Code.invalidArgument` for a request with a limit or an
    ///   offset (a batch delete takes every match; use ``delete(_:)-(Request<PlainObject>)`` for those).
    @discardableResult
    public func batchDelete<PlainObject: ManagedObjectConvertible>(_ request: Request<PlainObject>) throws(SkerryError) -> Int {
        let fetchRequest = try request.fetchRequest()
        guard fetchRequest.fetchLimit == 0, fetchRequest.fetchOffset == 0 else {
            throw SkerryError(
                .invalidArgument,
                "A batch delete takes every object the request matches; it cannot honour a limit or an offset. Use delete(_:) for those.",
                entityName: PlainObject.entityName)
        }
        var batch = BatchDeleteRequest(entityName: fetchRequest.entityName, predicate: fetchRequest.predicate)
        // The IDs are only needed to drop objects this context holds; without any, one statement does.
        batch.resultType = instance.hasRegisteredObjects(ofEntity: PlainObject.entityName) ? .objectIDs : .count
        let result = try instance.execute(batch)
        instance.mergeChanges(result.changes)
        return result.count
    }

    /// How many objects the request matches.
    @discardableResult
    public func count<PlainObject: ManagedObjectConvertible>(of request: Request<PlainObject>) throws(SkerryError) -> Int {
        try instance.count(for: try request.fetchRequest())
    }

    /// The objects the request matches.
    @discardableResult
    public func fetch<PlainObject: ManagedObjectConvertible>(_ request: Request<PlainObject>) throws(SkerryError) -> [ManagedObject<
        PlainObject
    >] {
        try instance.withFetched(try request.fetchRequest()) { objects in
            guard let first = objects.first else { return [] }
            // The objects share this context and, but for sub-entities, their layout: one scope
            // holds both for every wrapper, rather than a reference to each per object.
            var scope = scope(of: PlainObject.self, in: first.entity)
            // The wrapper's type, looked up once: in the closure below, naming it (or a pointer to
            // it) would look its generic metadata up for every object.
            let wrapper = ManagedObject<PlainObject>.self
            // The entity `scope` serves, kept at hand: each wrapper is made only for an object of
            // it (the check `ManagedObject.init(instance:scope:)` makes, once per object here).
            var entity = scope.anyLayout.entityIdentity
            // The objects borrowed from the engine (no array of its own to fill, retaining each
            // object, and to release): each wrapper retains its object.
            return [ManagedObject<PlainObject>](unsafeUninitializedCapacity: objects.count) { buffer, count in
                // Each wrapper stored as the reference it is (through `initialize(to:)`, a call
                // to the type's value witness per object): its +1 handed to the array.
                let base = UnsafeMutableRawPointer(buffer.baseAddress!)
                for object in objects {
                    // The entities compared by identity, read in place (no reference counting).
                    if object.entityIdentity != entity {
                        scope = self.scope(of: PlainObject.self, in: object.entity)
                        wrapper.check(object, scope)
                        entity = scope.anyLayout.entityIdentity
                    }
                    let made = Unmanaged.passRetained(wrapper.init(fetched: object, checkedScope: scope))
                    base.storeBytes(
                        of: made.toOpaque(), toByteOffset: count &* MemoryLayout<UnsafeMutableRawPointer>.stride,
                        as: UnsafeMutableRawPointer.self)
                    count += 1
                }
            }
        }
    }

    /// The wrapper scope of `type` in `entity` and this context; the last one asked for is kept
    /// (the objects of a fetch share their entity, but for sub-entities).
    func scope<PlainObject: ManagedObjectConvertible>(of type: PlainObject.Type, in entity: EntityDescription) -> WrapperScope<
        PlainObject
    > {
        if let last = lastFetchScope, last.serves(ObjectIdentifier(PlainObject.self), entity, in: instance) {
            // It serves `PlainObject`, so it is a `WrapperScope<PlainObject>`.
            return unsafeDowncast(last, to: WrapperScope<PlainObject>.self)
        }
        let scope = WrapperScope<PlainObject>(context: instance, entity: entity)
        lastFetchScope = scope
        return scope
    }

    /// One attribute's values of the objects the request matches.
    @discardableResult
    public func fetch<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, _ keyPath: KeyPath<PlainObject, Value>
    ) throws(SkerryError) -> [Value] {
        var values: [Value] = []
        try forEachFetched(request) { (layout, object) throws(SkerryError) in values.append(try layout.value(keyPath, of: object)) }
        return values
    }

    /// One optional attribute's values of the objects the request matches.
    @discardableResult
    public func fetch<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, _ keyPath: KeyPath<PlainObject, Value?>
    ) throws(SkerryError) -> [Value?] {
        var values: [Value?] = []
        try forEachFetched(request) { (layout, object) throws(SkerryError) in values.append(try layout.value(keyPath, of: object)) }
        return values
    }

    /// Calls `body` with each object the request matches and the layout of `PlainObject` in its
    /// entity: what a fetch of one attribute's values reads, without a wrapper per object.
    private func forEachFetched<PlainObject: ManagedObjectConvertible>(
        _ request: Request<PlainObject>, _ body: (TypeLayout<PlainObject>, EntityObject) throws(SkerryError) -> Void
    ) throws(SkerryError) {
        let fetched = try instance.fetch(try request.fetchRequest())
        guard let first = fetched.first else { return }
        var scope = scope(of: PlainObject.self, in: first.entity)
        for object in fetched {
            if object.entity !== scope.anyLayout.entity { scope = self.scope(of: PlainObject.self, in: object.entity) }
            try body(scope.layout, object)
        }
    }

    /// The object with `objectID`, loaded: the one this context holds, or else read from the
    /// store. IDs, unlike objects, may be passed between performs and threads. An object's ID is
    /// temporary until its insert is saved (after the closure of the perform that inserted it):
    /// take IDs to keep from objects fetched in a later perform.
    /// - Parameters:
    ///   - objectID: an ID from ``ManagedObject/objectID``, taken in this or another context.
    ///   - type: the plain type of the ID's entity.
    /// - Throws: `SkerryError.Code.invalidArgument` when the ID names an entity other
    ///   than `PlainObject`'s; `SkerryError.Code.objectNotFound` when the row does not
    ///   exist (or the ID is temporary and the object was never saved).
    public func existingObject<PlainObject: ManagedObjectConvertible>(
        with objectID: ObjectID, as type: PlainObject.Type = PlainObject.self
    ) throws(SkerryError) -> ManagedObject<PlainObject> {
        guard objectID.entityName == PlainObject.entityName else {
            throw SkerryError(
                .invalidArgument, "\(objectID) is an object of '\(objectID.entityName)', not of '\(PlainObject.entityName)'.",
                entityName: objectID.entityName, objectID: objectID)
        }
        let object = try instance.existingObject(with: objectID)
        return scope(of: PlainObject.self, in: object.entity).wrap(object)
    }

    /// The first object the request matches, or nil.
    @discardableResult
    public func fetchOne<PlainObject: ManagedObjectConvertible>(_ request: Request<PlainObject>) throws(SkerryError) -> ManagedObject<
        PlainObject
    >? {
        try fetch(request.limit(1)).first
    }

    /// One attribute of the first object the request matches, or nil.
    @discardableResult
    public func fetchOne<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, _ keyPath: KeyPath<PlainObject, Value>
    ) throws(SkerryError) -> Value? {
        try fetch(request.limit(1), keyPath).first
    }

    /// One optional attribute of the first object the request matches, or nil.
    @discardableResult
    public func fetchOne<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, _ keyPath: KeyPath<PlainObject, Value?>
    ) throws(SkerryError) -> Value? {
        try fetch(request.limit(1), keyPath).first ?? nil
    }
}

/// A typed context is valid only inside the perform that received it.
@available(*, unavailable, message: "A ManagedObjectContext is valid only inside the perform that received it.")
extension ManagedObjectContext: @unchecked Sendable {}
