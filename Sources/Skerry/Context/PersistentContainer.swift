import SkerryCore

/// Runs work against contexts from a factory, saves it, and (by default) forgets every object
/// afterwards: Sworm's `PersistentContainer`.
///
/// ```swift
/// let container = PersistentContainer(
///     managedObjectContext: { stack.newBackgroundContext() },
///     logError: { error in print(error) },
///     cleanUpAfterExecution: true)
/// let titles = try container.perform { context in
///     try context.insert(Book(title: "Dune", year: 1965))
///     return try context.fetch(Book.all.sort(\Book.title)).map { try $0.decode().title }
/// }
/// ```
///
/// `cleanUpAfterExecution` trades memory for disk I/O: with it (the default) the context is reset
/// after each perform, so no object outlives the perform and nothing grows; without it a context
/// the factory hands out again keeps its objects as a cache, and reading them again costs no I/O.
public final class PersistentContainer: Sendable {
    /// Sworm's container error, kept so that code naming it compiles. Skerry never throws it:
    /// Sworm threw `noResult` when Core Data's `performAndWait` did not run its block, and a
    /// Skerry context's `performAndWait` always runs it.
    public enum Error: Swift.Error, Sendable {
        /// The perform produced no result (never thrown by Skerry).
        case noResult
    }

    private let managedObjectContext: @Sendable () throws -> ObjectContext
    private let logError: (@Sendable (any Swift.Error) -> Void)?
    private let cleanUpAfterExecution: Bool

    /// Creates a container.
    /// - Parameters:
    ///   - managedObjectContext: called for every perform: the view context, a new background
    ///     context, a choice by thread, a child context — or a closure that throws until the stores
    ///     are loaded.
    ///   - logError: receives every error of a perform (from the factory, the work or the save)
    ///     once, before it is rethrown; cancellation is not logged.
    ///   - cleanUpAfterExecution: whether the context is reset after each perform. Default true.
    @preconcurrency
    public init(
        managedObjectContext: @escaping @Sendable () throws -> ObjectContext,
        logError: (@Sendable (any Swift.Error) -> Void)? = nil,
        cleanUpAfterExecution: Bool = true
    ) {
        self.managedObjectContext = managedObjectContext
        self.logError = logError
        self.cleanUpAfterExecution = cleanUpAfterExecution
    }

    /// Runs `action` on a context from the factory, on that context's queue, and waits: saves the
    /// context if `action` left changes, and resets it afterwards when cleaning up.
    /// - Parameter action: the work; it receives the context and returns a value.
    /// - Returns: what `action` returned.
    /// - Throws: what the factory, `action` or the save threw, or the error a call that cannot
    ///   throw recorded on the context during `action` (after logging it, once).
    ///
    /// A perform called inside another perform on the same context (from any container: a
    /// repository method called by another one) joins it, as one unit of work: it runs at once,
    /// neither saves nor resets, and the outermost perform saves everything or nothing. When the
    /// nested work throws, its error reaches its caller and is also recorded on the context
    /// (`ObjectContext.recordedError`): the outermost perform then fails with it and
    /// saves nothing, even if the caller caught it. Errors are logged once, by the outermost perform.
    @discardableResult
    public func perform<T>(action: (ManagedObjectContext) throws -> T) throws -> T {
        var nested = false
        do {
            let context = try managedObjectContext()
            return try context.performAndWait {
                nested = context.unitOfWorkDepth > 0
                return try execute(action, on: context)
            }
        } catch {
            if !nested { log(error) }
            throw error
        }
    }

    /// The asynchronous form of ``perform(action:)`` (Sworm's name): suspends instead of blocking.
    /// - Parameter action: the work; it returns a value made inside it (plain values, never
    ///   objects or the context: the compiler refuses to send those out).
    /// - Returns: what `action` returned.
    /// - Throws: `CancellationError` (not logged) when the task is cancelled before the work
    ///   starts; otherwise as ``perform(action:)``.
    @discardableResult
    public func schedule<T>(action: @escaping @Sendable (ManagedObjectContext) throws -> sending T) async throws -> sending T {
        try Task.checkCancellation()
        let context: ObjectContext
        do {
            context = try managedObjectContext()
        } catch {
            log(error)
            throw error
        }
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Swift.Error>) in
                context.perform {
                    let result: T
                    do {
                        result = try self.execute(action, on: context)
                    } catch {
                        continuation.resume(throwing: error)
                        return
                    }
                    continuation.resume(returning: result)
                }
            }
        } catch {
            log(error)
            throw error
        }
    }

    /// The work of one perform, on the context's queue. An error that an operation unable to
    /// throw recorded on the context (`add`, `remove`, `encode`...) fails the perform like a
    /// thrown one: nothing is saved. When the work also threw, the recorded error is logged and
    /// the thrown one rethrown.
    private func execute<T>(_ action: (ManagedObjectContext) throws -> T, on context: ObjectContext) throws -> T {
        try PerformingContext.$current.withValue(context) { try executeAsCurrent(action, on: context) }
    }

    private func executeAsCurrent<T>(_ action: (ManagedObjectContext) throws -> T, on context: ObjectContext) throws -> T {
        context.unitOfWorkDepth += 1
        defer { context.unitOfWorkDepth -= 1 }
        guard context.unitOfWorkDepth == 1 else {
            // Nested in another perform on this context: part of its work (see `perform`).
            do {
                return try action(ManagedObjectContext(context))
            } catch {
                context.recordError(error)
                throw error
            }
        }
        defer { if cleanUpAfterExecution { context.reset() } }
        do {
            let result = try action(ManagedObjectContext(context))
            if let recorded = context.takeRecordedError() { throw recorded }
            if context.hasChanges { try context.save() }
            return result
        } catch {
            // A nested perform's error is recorded and usually rethrown unchanged: log it once.
            if let recorded = context.takeRecordedError(), !Self.isSameError(recorded, error) { log(recorded) }
            // A context kept as a cache must not save half of a failed perform later.
            if !cleanUpAfterExecution { context.rollback() }
            throw error
        }
    }

    /// Whether two errors are the same value (an error recorded by a nested perform and then
    /// rethrown through the outer work): same type, same contents.
    private static func isSameError(_ a: any Swift.Error, _ b: any Swift.Error) -> Bool {
        type(of: a) == type(of: b) && String(reflecting: a) == String(reflecting: b)
    }

    private func log(_ error: any Swift.Error) {
        if error is CancellationError { return }
        logError?(error)
    }
}

/// The context of the perform running on this thread, if any: where a wrapper whose object left
/// the context it was wrapped in records its errors (see `recordError(_:wrappedIn:of:)`).
enum PerformingContext {
    @TaskLocal static var current: ObjectContext?
}

/// Records `error`, met by an operation that cannot throw on `object`, wrapped in `context`: on
/// that context while the object is still in it; once the object left it (a perform reset it, and
/// the wrapper was kept), on the context of the perform running now, which then fails with it
/// (`context` may be another perform's, owned by another queue: recording there would stop the
/// process). Outside any perform, on `context`, whose confinement check reports the misuse.
func recordError(_ error: SkerryError, wrappedIn context: ObjectContext?, of object: EntityObject) {
    if object.context !== context, let performing = PerformingContext.current {
        performing.recordError(error)
    } else {
        context?.recordError(error)
    }
}
