extension ObjectContext {
    /// How ``ObjectContext/perform(schedule:isolation:_:)`` runs its block: Core Data's
    /// `NSManagedObjectContext.ScheduledTaskType`.
    public enum ScheduledTaskType: Sendable, Hashable {
        /// Run at once if the caller may use the context now (inside one of its blocks, or on the
        /// main thread or main actor for a main-queue context); otherwise enqueue. Reentrant: it
        /// never waits for the context's own queue.
        case immediate
        /// Always append to the context's queue, after the blocks enqueued before it, as
        /// `perform(_:)` does.
        case enqueued
    }

    /// Runs `block` on the context's queue as `schedule` says, and returns its result: Core
    /// Data's `perform(schedule:_:)`.
    ///
    /// ```swift
    /// let count = try await context.perform(schedule: .enqueued) {
    ///     try context.count(for: FetchRequest(entityName: "Book"))
    /// }
    /// ```
    ///
    /// A block that does not throw needs no `try`. The call stays on the caller's actor until it
    /// enqueues, so that `.immediate` from the main actor runs a main-queue context's block at once.
    /// - Parameters:
    ///   - schedule: ``ScheduledTaskType/immediate`` or ``ScheduledTaskType/enqueued``.
    ///   - isolation: the caller's actor (filled in by the compiler).
    ///   - block: the work; it may use the context and its objects, and returns a `Sendable`
    ///     result (object IDs or plain values, never objects).
    /// - Returns: what `block` returned.
    /// - Throws: what `block` threw.
    public func perform<T: Sendable, E: Error>(
        schedule: ScheduledTaskType, isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        // The calling thread owns the context: inside one of its blocks, or the main thread of a
        // main-queue context (which may use it directly).
        if schedule == .immediate && isOwnedByCurrentThread {
            return try block()
        }
        return try await perform(block)
    }
}
