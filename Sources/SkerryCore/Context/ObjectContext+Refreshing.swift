extension ObjectContext {
    /// Brings every registered object up to date with the store while keeping unsaved changes:
    /// Core Data's `refreshAllObjects()`. Objects without pending changes become faults (their
    /// values load again when next read, no I/O now); updated objects take the store's values
    /// under their own changes (``refresh(_:mergeChanges:)`` with `true`); inserted and deleted
    /// objects are left as they are. References to the objects stay valid.
    ///
    /// An updated object whose row is gone from the store keeps its state: its next save meets the
    /// deletion as a conflict, which the merge policy resolves or reports.
    public func refreshAllObjects() {
        checkConfinement()
        for object in registeredObjects where !object.isInserted && !object.isDeleted {
            do {
                try refresh(object, mergeChanges: object.isUpdated)
            } catch  where error.code == .objectNotFound {
                // Not lost: the save that would write the object reports the missing row.
                continue
            } catch {
                recordError(error)
            }
        }
    }
}
