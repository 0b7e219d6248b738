import Synchronization

/// The observers of one stack's events, and what stores and contexts call to emit them.
///
/// Costs nothing measurable when nobody observes: emitting checks one atomic count, and a
/// statement is timed only while some observer asked for statements (one atomic load per
/// statement otherwise). `package` so that store kinds in other modules of the package (the
/// PostgreSQL store) emit the same events.
package final class EventHub: Sendable {
    private struct Observer: Sendable {
        /// Statements at least this long (nanoseconds) are delivered; nil: none.
        let statementThreshold: Int64?
        let handler: @Sendable (StackEvent) -> Void
    }

    private struct State {
        var observers: [Int: Observer] = [:]
        var nextToken = 0
    }

    private let state = Mutex(State())
    private let observerCount = Atomic<Int>(0)
    /// The smallest statement threshold of any observer in nanoseconds; `Int64.max` when none
    /// asked for statements.
    private let smallestThreshold = Atomic<Int64>(.max)

    package init() {}

    /// Registers `handler`; see ``PersistentStack/addEventObserver(statements:_:)``.
    func add(statements: StatementTracing, _ handler: @escaping @Sendable (StackEvent) -> Void) -> EventObservation {
        let token = state.withLock { state in
            state.nextToken += 1
            state.observers[state.nextToken] = Observer(statementThreshold: statements.thresholdNanoseconds, handler: handler)
            publish(state)
            return state.nextToken
        }
        return EventObservation { [weak self] in
            guard let self else { return }
            self.state.withLock { state in
                state.observers.removeValue(forKey: token)
                self.publish(state)
            }
        }
    }

    /// Updates the atomics read on hot paths; called with the lock held.
    private func publish(_ state: State) {
        observerCount.store(state.observers.count, ordering: .relaxed)
        let smallest = state.observers.values.compactMap(\.statementThreshold).min() ?? .max
        smallestThreshold.store(smallest, ordering: .relaxed)
    }

    /// Whether anyone observes events (check before building an expensive event).
    package var isObserved: Bool { observerCount.load(ordering: .relaxed) > 0 }

    /// Whether statements should be timed: some observer wants statements.
    package var tracesStatements: Bool { smallestThreshold.load(ordering: .relaxed) != .max }

    /// Delivers `event` to every observer. Statement events go only to observers whose threshold
    /// the statement reached.
    package func emit(_ event: @autoclosure () -> StackEvent) {
        guard isObserved else { return }
        let event = event()
        let handlers: [@Sendable (StackEvent) -> Void] = state.withLock { state in
            if case .statement(let trace) = event {
                let nanoseconds = trace.duration.nanoseconds
                return state.observers.values.filter { observer in
                    observer.statementThreshold.map { nanoseconds >= $0 } ?? false
                }.map(\.handler)
            }
            return state.observers.values.map(\.handler)
        }
        for handler in handlers { handler(event) }
    }

    /// Reports a finished statement that was timed because ``tracesStatements`` was true.
    package func statementFinished(store: StoreDescription, sql: String, duration: Duration, rowsRead: Int, rowsWritten: Int) {
        guard duration.nanoseconds >= smallestThreshold.load(ordering: .relaxed) else { return }
        emit(.statement(StatementTrace(store: store, sql: sql, duration: duration, rowsRead: rowsRead, rowsWritten: rowsWritten)))
    }
}
