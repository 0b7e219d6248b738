extension ObjectContext {
    /// Calls `handler` after every successful save of this context.
    ///
    /// The handler runs synchronously on this context's queue, right after the save committed; it
    /// must not block on this context. Keep the returned observation, and cancel it to stop.
    /// - Parameter handler: receives each event.
    /// - Returns: the registration.
    public func addDidSaveObserver(_ handler: @escaping @Sendable (DidSaveEvent) -> Void) -> DidSaveObservation {
        coordinator.didSave.add(context: self, handler)
    }

    /// The did-save events of this context, as an asynchronous sequence that runs until the
    /// consuming task stops iterating.
    public var didSaveEvents: AsyncStream<DidSaveEvent> {
        AsyncStream { continuation in
            let observation = coordinator.didSave.add(context: self) { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Gives objects saved by the parent their permanent IDs, and remembers the mapping for this
    /// context's own children.
    func adoptPermanentIDs(_ permanentIDs: [(temporary: ObjectID, permanent: ObjectID)]) {
        defer { checkRegistryInvariants() }
        if hasChildren { registry.rememberPermanentIDs(permanentIDs) }
        // Found first, then re-keyed all at once.
        var found: [(object: EntityObject, permanentID: ObjectID)] = []
        found.reserveCapacity(permanentIDs.count)
        for (temporary, permanent) in permanentIDs {
            if let object = registry[temporary] { found.append((object, permanent)) }
        }
        registry.rekeyInBulk(expectedCount: found.count) { rekey in
            for (object, permanentID) in found { rekey(object, permanentID) }
        }
        // Relationships that name the saved objects by their temporary IDs follow them: those read
        // from the parent, and this context's own inserts and changes.
        let mapping = Dictionary(permanentIDs, uniquingKeysWith: { _, new in new })
        remapTemporaryIDs(mapping, in: registry.holdingTemporaryIDs)
        remapTemporaryIDs(mapping, in: registry.inserted)
        remapTemporaryIDs(mapping, in: registry.changed)
        registry.pruneHoldersOfTemporaryIDs()
    }

    /// Replaces the temporary IDs in `mapping` by the permanent ones in the relationships (current
    /// and committed) of `objects`. Complexity: O(relationship members of `objects`).
    func remapTemporaryIDs(_ mapping: [ObjectID: ObjectID], in objects: some Sequence<EntityObject>) {
        guard !mapping.isEmpty else { return }
        for object in objects where object.registration.isRegistered {
            if object.relationshipValues.contains(where: \.holdsTemporaryIDs) {
                object.relationshipValues = object.relationshipValues.map { $0.mapped(mapping) }
            }
            if let committed = object.committedRelationships, committed.contains(where: \.holdsTemporaryIDs) {
                object.committedRelationships = committed.map { $0.mapped(mapping) }
            }
        }
    }

    /// Brings this context up to date with another context's save; see ``mergeChanges(_:)``.
    /// An event of this context's own save changes nothing. An event of missed saves of other
    /// processes (``DidSaveEvent/missedSavesOfOthers``) reads every object the context holds again.
    public func mergeChanges(fromContextDidSave event: DidSaveEvent) {
        checkConfinement()
        guard event.context !== self else { return }
        mergeChanges(changesToMerge(event.changes, missedSavesOfOthers: event.missedSavesOfOthers))
    }

    /// What merging an event's `changes` changes here: those changes, or — when saves of other
    /// processes were missed — every saved object the context holds, as if each had been updated.
    private func changesToMerge(_ changes: StoreChanges, missedSavesOfOthers: Bool) -> StoreChanges {
        guard missedSavesOfOthers else { return changes }
        return StoreChanges(updated: Set(registeredObjects.lazy.map(\.objectID).filter { !$0.isTemporary }))
    }

    /// Whether the context merges the saves that reach its parent by itself, as
    /// ``mergeChanges(fromContextDidSave:)`` would, on its own queue shortly after each save:
    /// for a context of the stores, the saves of the stack's other such contexts; for a child
    /// context, the saves of its siblings into the parent and the parent's own saves.
    ///
    /// On by default for the stack's ``PersistentStack/viewContext`` and
    /// ``PersistentStack/newBackgroundContext()`` contexts. May be set from any thread.
    public var automaticallyMergesChangesFromParent: Bool {
        get { automaticMerge.withLock { $0 != nil } }
        set {
            automaticMerge.withLock { observation in
                if newValue, observation == nil {
                    observation = coordinator.didSave.add(context: nil) { [weak self] event in
                        guard let self, event.context !== self,
                            event.context.parent === self.parent || event.context === self.parent
                        else { return }
                        // The queued merge keeps what it merges, not the event: the event holds the
                        // saving context, which must not live on until every other context merged.
                        let changes = event.changes, missedSavesOfOthers = event.missedSavesOfOthers
                        self.perform { self.mergeChanges(self.changesToMerge(changes, missedSavesOfOthers: missedSavesOfOthers)) }
                    }
                } else if !newValue, let current = observation {
                    current.cancel()
                    observation = nil
                }
            }
        }
    }
}
