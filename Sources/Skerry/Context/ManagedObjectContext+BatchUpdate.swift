import SkerryCore

extension ManagedObjectContext {
    /// Sets one attribute of every object the request matches, in the store now, without loading
    /// them: a batch update (`BatchUpdateRequest`, Core Data's `NSBatchUpdateRequest`). The
    /// objects this context holds are brought up to date; other live contexts keep the old values
    /// until the update's IDs are merged into them (`ObjectContext.mergeChanges(_:)`), and one
    /// that saves a changed object it read before the update gets a merge conflict.
    ///
    /// ```swift
    /// try context.batchUpdate(Book.all.where(\Book.year < 1900), set: \Book.inPrint, to: false)
    /// ```
    /// - Parameters:
    ///   - request: which objects; it may have no limit or offset.
    ///   - keyPath: a declared attribute of the model type.
    ///   - value: its new value.
    /// - Returns: how many objects were updated.
    /// - Throws: `SkerryError.Code.invalidArgument` for a request with a limit or an offset;
    ///   `unknownAttribute` for a key path not among the type's attributes; as
    ///   `ObjectContext.execute(_:)` of a `BatchUpdateRequest` (a value that breaks a uniqueness
    ///   constraint: `constraintViolation`, nothing written).
    @discardableResult
    public func batchUpdate<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, set keyPath: WritableKeyPath<PlainObject, Value>, to value: Value
    ) throws(SkerryError) -> Int {
        try batchUpdate(request, keyPath, value)
    }

    /// Sets one optional attribute of every object the request matches (nil clears it), in the
    /// store now, without loading them, as the form for a required attribute does.
    /// - Parameters:
    ///   - request: which objects; it may have no limit or offset.
    ///   - keyPath: a declared optional attribute of the model type.
    ///   - value: its new value, or nil.
    /// - Returns: how many objects were updated.
    /// - Throws: as the required attribute's form.
    @discardableResult
    public func batchUpdate<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, set keyPath: WritableKeyPath<PlainObject, Value?>, to value: Value?
    ) throws(SkerryError) -> Int {
        try batchUpdate(request, keyPath, value)
    }

    private func batchUpdate<PlainObject: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ request: Request<PlainObject>, _ keyPath: PartialKeyPath<PlainObject>, _ value: Value?
    ) throws(SkerryError) -> Int {
        let fetchRequest = try request.fetchRequest()
        guard fetchRequest.fetchLimit == 0, fetchRequest.fetchOffset == 0 else {
            throw SkerryError(
                .invalidArgument,
                "A batch update takes every object the request matches; it cannot honour a limit or an offset. Nothing was updated.",
                entityName: PlainObject.entityName)
        }
        guard let attribute = PlainObject.attribute(keyPath) else {
            throw SkerryError(
                .unknownAttribute,
                "\(keyPath) is not one of \(PlainObject.self).attributes; declare it as an Attribute to update it. Nothing was updated.",
                entityName: PlainObject.entityName)
        }
        var batch = BatchUpdateRequest(entityName: fetchRequest.entityName, predicate: fetchRequest.predicate)
        batch.propertyUpdates = [attribute.name: .constant(try attribute.encodedValue(value))]
        // The IDs are only needed to refresh objects this context holds.
        batch.resultType = instance.hasRegisteredObjects(ofEntity: PlainObject.entityName) ? .objectIDs : .count
        let result = try instance.execute(batch)
        instance.mergeChanges(result.changes)
        return result.count
    }
}
