import Foundation
import SkerryCore

/// A read/write layer over a nested stack: Skopelos's `DALService`.
///
/// Reads run on the main context, the source of truth. Each write runs on a new short-lived child
/// of the main context; its save moves the changes into main (synchronously), and then the root
/// context saves them to the store on its own queue. Every error goes to ``handleError(_:)``,
/// the one place to override.
///
/// ```swift
/// let dal = try DataAccessLayer(inMemoryModel: model)
/// dal.writeSync { context in
///     try context.insert(Book(title: "Dune"))
/// }.read { context in
///     print(try Book.count(in: context))
/// }
/// ```
///
/// `@unchecked Sendable`: the stored properties are immutable and the contexts are `Sendable`;
/// `handleError` is the subclass's to make thread-safe (it may be called from any context's queue).
open class DataAccessLayer: @unchecked Sendable {
    /// The stack.
    public let stack: PersistentStack
    /// The private context that writes to the store.
    public let rootContext: ObjectContext
    /// The context reads run on: a child of ``rootContext``.
    public let mainContext: ObjectContext

    /// A layer over a stack whose stores are loaded (or loaded here).
    /// - Throws: the load error of the stack's stores.
    public init(stack: PersistentStack) throws {
        try stack.loadPersistentStores()
        self.stack = stack
        rootContext = stack.newBackgroundContext()
        mainContext = rootContext.newChildContext(name: "main")
    }

    /// A layer over a SQLite store `<name>.sqlite` in `directory` (the stack's default directory
    /// when nil).
    public convenience init(sqliteStack name: String, model: ObjectModel, directory: URL? = nil) throws {
        let stack = PersistentStack(name: name, model: model)
        if let directory {
            stack.persistentStoreDescriptions = [StoreDescription(url: directory.appendingPathComponent("\(name).sqlite"))]
        }
        try self.init(stack: stack)
    }

    /// A layer over an in-memory store.
    public convenience init(inMemoryModel model: ObjectModel) throws {
        let stack = PersistentStack(name: "InMemory", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try self.init(stack: stack)
    }

    /// Where every error of a read or write goes. Override it; the default prints the error.
    open func handleError(_ error: any Error) {
        print("Skerry DataAccessLayer: \(error)")
    }

    /// Runs `block` on the main context and waits.
    @discardableResult
    public func read(_ block: (ManagedObjectContext) throws -> Void) -> Self {
        do {
            try mainContext.performAndWait {
                try block(ManagedObjectContext(mainContext))
                try Self.throwRecordedError(of: mainContext)
            }
        } catch {
            handleError(error)
        }
        return self
    }

    /// Runs `block` on a new child of the main context and saves it into main before returning;
    /// the changes then reach the store asynchronously, and `completion` gets the result of that
    /// store save (nil on success), or the first error.
    @discardableResult
    public func writeSync(
        _ block: (ManagedObjectContext) throws -> Void,
        completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) -> Self {
        let writer = mainContext.newChildContext(name: "write")
        do {
            try writer.performAndWait {
                try block(ManagedObjectContext(writer))
                try Self.throwRecordedError(of: writer)
                try writer.save()
            }
            try mainContext.performAndWait { try mainContext.save() }
        } catch {
            handleError(error)
            completion?(error)
            return self
        }
        saveRootContext(completion)
        return self
    }

    /// Skopelos's chaining spelling of ``writeSync(_:completion:)``.
    @discardableResult
    public func write(_ block: (ManagedObjectContext) throws -> Void) -> Self {
        writeSync(block)
    }

    /// Runs `block` on a new child of the main context, asynchronously, then saves it into main
    /// and main's changes to the store; `completion` gets the result of the store save.
    @discardableResult
    public func writeAsync(
        _ block: @escaping @Sendable (ManagedObjectContext) throws -> Void,
        completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) -> Self {
        let writer = mainContext.newChildContext(name: "write")
        writer.perform {
            do {
                try block(ManagedObjectContext(writer))
                try Self.throwRecordedError(of: writer)
                try writer.save()
                try self.mainContext.performAndWait { try self.mainContext.save() }
            } catch {
                self.handleError(error)
                completion?(error)
                return
            }
            self.saveRootContext(completion)
        }
        return self
    }

    /// Throws the error an operation unable to throw (`add`, `encode`...) recorded in `context`.
    private static func throwRecordedError(of context: ObjectContext) throws {
        if let recorded = context.takeRecordedError() { throw recorded }
    }

    /// Saves the root context on its queue, reporting to `completion`.
    private func saveRootContext(_ completion: (@Sendable ((any Error)?) -> Void)?) {
        let root = rootContext
        root.perform {
            do {
                try root.save()
                completion?(nil)
            } catch {
                self.handleError(error)
                completion?(error)
            }
        }
    }

    /// Saves whatever the main and root contexts hold to the store, and waits: the explicit form
    /// of what ``saveOnShutdown(signals:)`` does when the process is asked to stop.
    /// - Throws: the save's error (also sent to ``handleError(_:)``).
    public func saveInFlightChanges() throws {
        do {
            try mainContext.performAndWait { if mainContext.hasChanges { try mainContext.save() } }
            try rootContext.performAndWait { if rootContext.hasChanges { try rootContext.save() } }
        } catch {
            handleError(error)
            throw error
        }
    }

    /// Opts in to saving in-flight changes when the process receives one of `signals` (SIGTERM
    /// and SIGINT by default; SIGHUP and SIGQUIT may be added, other signals are ignored): the layer
    /// saves, then lets the signal end the process as it would have. Skopelos's state reactor for
    /// services.
    public func saveOnShutdown(signals: [Int32] = [SIGTERM, SIGINT]) {
        // `try?`: saveInFlightChanges already sent its error to handleError; the process is ending.
        ShutdownSignals.shared.install(signals) { [weak self] in try? self?.saveInFlightChanges() }
    }
}
