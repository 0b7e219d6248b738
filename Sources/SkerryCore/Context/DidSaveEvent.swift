import Foundation

/// What one successful save did: the context's did-save notification.
///
/// Posted synchronously on the saving context's queue, right after the save committed, to every
/// observer of the context and of its stack.
public struct DidSaveEvent: Sendable {
    /// The context that saved.
    public let context: ObjectContext
    /// The IDs of the inserted, updated and deleted objects: permanent for a save to the stores;
    /// for a child context's save into its parent, inserted objects keep their temporary IDs.
    public let changes: StoreChanges
    /// For a save to the stores, the temporary ID each inserted object had, with its permanent ID.
    public var permanentIDs: [(temporary: ObjectID, permanent: ObjectID)] = []
    /// Whether another process (or another stack) made this save, to a store shared that way
    /// (a PostgreSQL store with `propagatesChanges`). Such an event names a context of this
    /// stack that never saves (named "otherProcesses"), and carries permanent IDs only.
    public var isFromOtherProcess = false
    /// Whether other processes' saves were missed: the stack's store could not learn of them for
    /// longer than it keeps them (a PostgreSQL store's `changeRetention`), so what changed is
    /// unknown and ``changes`` is empty. Contexts that merge saves automatically read every object
    /// they hold again (objects with pending changes keep them on top); other contexts should
    /// refetch, or ``ObjectContext/reset()``. Set only on events with ``isFromOtherProcess``.
    public var missedSavesOfOthers = false

    /// The changed objects' IDs as Core Data's did-save notification carries them in its
    /// `userInfo`: sets of ``ObjectID`` under ``InsertedObjectsKey``, ``UpdatedObjectsKey`` and
    /// ``DeletedObjectsKey``, for ``ObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
    /// Never nil (optional as Core Data's is, so that `guard let userInfo = … else` ports as written).
    public var userInfo: [AnyHashable: Any]? {
        [InsertedObjectsKey: changes.inserted, UpdatedObjectsKey: changes.updated, DeletedObjectsKey: changes.deleted]
    }
}

/// A registration of a did-save observer; the observer is called until ``cancel()``.
public final class DidSaveObservation: Sendable {
    private let cancellation: @Sendable () -> Void

    init(cancellation: @escaping @Sendable () -> Void) {
        self.cancellation = cancellation
    }

    /// Stops the observer. Calling it again does nothing.
    public func cancel() { cancellation() }
}

/// The observers of did-save events of one stack, with an optional filter on the saving context.
///
/// `@unchecked Sendable`: `observers` and `nextToken` are only touched while `lock` is held;
/// observers are `Sendable` closures, called after the lock is released.
final class DidSaveBroadcaster: @unchecked Sendable {
    private struct Observer {
        /// Only events of this context, when set (held weakly: an observer never keeps a context alive).
        weak var context: ObjectContext?
        let filtersByContext: Bool
        let handler: @Sendable (DidSaveEvent) -> Void
    }

    private let lock = NSLock()
    private var observers: [Int: Observer] = [:]
    private var nextToken = 0

    /// Registers `handler` for events of `context` (or of every context when nil).
    func add(context: ObjectContext?, _ handler: @escaping @Sendable (DidSaveEvent) -> Void) -> DidSaveObservation {
        let token = lock.withLock {
            nextToken += 1
            observers[nextToken] = Observer(context: context, filtersByContext: context != nil, handler: handler)
            return nextToken
        }
        return DidSaveObservation { [weak self] in
            guard let self else { return }
            _ = self.lock.withLock { self.observers.removeValue(forKey: token) }
        }
    }

    /// Calls every observer interested in `event`, and drops observers whose context is gone.
    func post(_ event: DidSaveEvent) {
        let handlers = lock.withLock {
            observers = observers.filter { !$0.value.filtersByContext || $0.value.context != nil }
            return observers.values.filter { !$0.filtersByContext || $0.context === event.context }.map(\.handler)
        }
        for handler in handlers { handler(event) }
    }
}
