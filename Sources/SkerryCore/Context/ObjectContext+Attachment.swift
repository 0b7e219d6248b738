/// Which threads may use a context: Core Data's `NSManagedObjectContextConcurrencyType`, with its
/// case names.
public enum ContextConcurrencyType: Sendable, Hashable {
    /// The context has its own serial queue; use it inside `ObjectContext.perform(_:)` or
    /// ``ObjectContext/performAndWait(_:)``.
    case privateQueueConcurrencyType
    /// The context's queue is the main queue: the main thread (and code on the main queue, such as
    /// the main actor) may use it directly, at any time, and its blocks run on the main queue (so they need a main run loop, `dispatchMain()` or the main
    /// actor to run, as in Core Data).
    case mainQueueConcurrencyType
}

extension ObjectContext {
    /// Creates a context that is not attached yet: set ``parent`` (a child context) or
    /// ``persistentStoreCoordinator`` (a context of the stores) before first use, as Core Data code
    /// does:
    ///
    /// ```swift
    /// let persisting = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
    /// persisting.persistentStoreCoordinator = stack.persistentStoreCoordinator
    /// let main = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
    /// main.parent = persisting
    /// ```
    ///
    /// Until then the context has an empty model and no store: an insert or a fetch throws
    /// ``SkerryError/Code/noStore`` saying so.
    /// - Parameters:
    ///   - concurrencyType: a private queue of its own, or the main queue.
    ///   - name: a name for debugging.
    public convenience init(concurrencyType: ContextConcurrencyType, name: String? = nil) {
        self.init(
            coordinator: StoreCoordinator(unattached: ()), name: name,
            confinement: concurrencyType == .mainQueueConcurrencyType ? .mainQueue : .privateQueue)
    }

    /// Whether the context uses a private queue or the main queue.
    public var concurrencyType: ContextConcurrencyType {
        confinement == .mainQueue ? .mainQueueConcurrencyType : .privateQueueConcurrencyType
    }

    /// The coordinator of the stores the context reads from and saves into, directly or through
    /// its parents; nil for a context created with ``init(concurrencyType:name:)`` and not attached
    /// yet. Set it (or ``parent``) before first use; setting it makes the context a context of the
    /// stores (no parent).
    ///
    /// Setting it after the context ran a block or was used from the main thread stops the
    /// program, as Core Data does: the objects it holds belong to the stores it had.
    public var persistentStoreCoordinator: StoreCoordinator? {
        get { coordinator.isUnattached ? nil : coordinator }
        set {
            guard let newValue else {
                preconditionUnused("persistentStoreCoordinator")
                return
            }
            attach(coordinator: newValue, parent: nil, "persistentStoreCoordinator")
        }
    }

    /// Attaches the context to `coordinator` and, for a child, to `parent`. Only before first use.
    func attach(coordinator newCoordinator: StoreCoordinator, parent newParent: ObjectContext?, _ what: String) {
        preconditionUnused(what)
        var ancestor = newParent
        while let context = ancestor {
            if context === self {
                fatalError("Skerry: setting the parent of ObjectContext '\(name ?? "unnamed")' would make it its own ancestor.")
            }
            ancestor = context.parent
        }
        let mergesAutomatically = automaticallyMergesChangesFromParent
        if mergesAutomatically { automaticallyMergesChangesFromParent = false }
        coordinator = newCoordinator
        setParent(newParent)
        // The automatic merge observes the did-saves of the new coordinator's contexts.
        if mergesAutomatically { automaticallyMergesChangesFromParent = true }
    }

    /// Stops the program unless the context was never used: its stores and parent are fixed from
    /// its first block (or first use from the main thread) on.
    private func preconditionUnused(_ what: String) {
        if hasBeenUsed.load(ordering: .acquiring) {
            fatalError(
                "Skerry: \(what) of ObjectContext '\(name ?? "unnamed")' was set after the context was first used. Set a context's parent or persistentStoreCoordinator right after creating it, before any perform."
            )
        }
    }
}
