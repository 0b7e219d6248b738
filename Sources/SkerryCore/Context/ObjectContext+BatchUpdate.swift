extension ObjectContext {
    /// Runs a batch update in the store, without loading objects: Core Data's
    /// `execute(_:)` of an `NSBatchUpdateRequest`. This context is not changed: its objects keep
    /// the values they had until `result.changes` is merged into it (and into other live contexts:
    /// ``mergeChanges(_:)``, or ``mergeChanges(fromRemoteContextSave:into:)`` with the IDs under
    /// ``UpdatedObjectsKey``) or they are refreshed.
    ///
    /// ```swift
    /// var request = BatchUpdateRequest(entityName: "Message", predicate: AttributeKey("isRead") == false)
    /// request.propertiesToUpdate = ["isRead": true]
    /// request.resultType = .updatedObjectIDsResultType
    /// let result = try context.execute(request)
    /// ObjectContext.mergeChanges(fromRemoteContextSave: [UpdatedObjectsKey: result.result as? [ObjectID] ?? []], into: [context])
    /// ```
    ///
    /// As Core Data's, the update works in the store only and runs no validation (beyond the
    /// checks below); derived attributes are not computed again (a save computes them, and the
    /// update saves no object). Each updated row's version changes, so
    /// that a context that changes an object it read before the update, and saves it without
    /// merging, gets a conflict (``SkerryError/Code/mergeConflict`` under the default
    /// ``MergePolicy/error``). The persistent history, when tracked, records an update of each
    /// object naming the attributes set; a PostgreSQL store that propagates changes announces them.
    ///
    /// The request is checked against the model before anything is written; every failure
    /// leaves the store as it was.
    /// - Parameter request: which objects, and the attributes to set.
    /// - Returns: what the request's ``BatchUpdateRequest/resultType`` asks for: the updated
    ///   objects' IDs, their number, or only success.
    /// - Throws: ``SkerryError/Code/unknownEntity``; ``SkerryError/Code/unknownAttribute`` for a
    ///   name the entity does not define; ``SkerryError/Code/invalidArgument`` for no attributes,
    ///   a relationship, a transient or derived attribute, an expression the store cannot
    ///   compute; ``SkerryError/Code/wrongValueType`` for a value (or another attribute) whose
    ///   type does not fit the attribute, or a computed value out of its range;
    ///   ``SkerryError/Code/missingRequiredValue`` for a required attribute left without a value;
    ///   ``SkerryError/Code/constraintViolation`` for an update that breaks a uniqueness
    ///   constraint; the store's errors.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws(SkerryError) -> BatchUpdateResult {
        checkConfinement()
        let entity = try coordinator.entity(named: request.entityName)
        let store = try coordinator.store(for: entity)
        let assignments = try BatchUpdateAssignment.assignments(request.propertyUpdates, of: entity)
        let predicate = try request.predicate?.resolved(for: entity, in: coordinator.model)
        let (count, objectIDs) = try withHistoryAuthor(of: CollectionOfOne(store)) { () throws(SkerryError) in
            try store.batchUpdate(
                entity, predicate: predicate, includesSubentities: request.includesSubentities, assignments: assignments,
                returningIDs: request.resultType == .objectIDs)
        }
        return BatchUpdateResult(updatedObjectIDs: objectIDs, count: count, resultType: request.resultType)
    }
}
