import Synchronization

/// A context held weakly, in a parent's list of children.
struct WeakContext: Sendable {
    weak var context: ObjectContext?
}

extension ObjectContext {
    /// Lists `child` among this context's children (dropping entries of children gone since).
    func addChild(_ child: ObjectContext) {
        childList.withLock { list in
            list.removeAll { $0.context == nil }
            list.append(WeakContext(context: child))
        }
    }

    /// Takes `child` off this context's list of children (its parent changed before first use).
    func removeChild(_ child: ObjectContext) {
        childList.withLock { list in list.removeAll { $0.context == nil || $0.context === child } }
    }

    /// The child contexts that are still alive, in the order they were made. May be called from
    /// any thread.
    var liveChildren: [ObjectContext] {
        childList.withLock { list in list.compactMap(\.context) }
    }

    /// This context and its live descendants, each once, parents before their children.
    var selfAndDescendants: [ObjectContext] {
        var result: [ObjectContext] = []
        var pending = [self]
        while let context = pending.popLast() {
            result.append(context)
            pending.append(contentsOf: context.liveChildren.reversed())
        }
        return result
    }
}
