#if ServiceLifecycle
    import Logging
    import ServiceLifecycle
    import Skerry
    import SkerryCore

    /// Saves in-flight changes when a swift-service-lifecycle `ServiceGroup` shuts down gracefully
    /// (or is cancelled): the service form of ``DataAccessLayer/saveOnShutdown(signals:)`` for
    /// programs that run a `ServiceGroup`.
    ///
    /// The service does nothing until shutdown; then it saves and returns. A `ServiceGroup` shuts its
    /// services down in reverse order, so list this service *before* the services that write (an HTTP
    /// server): they finish their in-flight requests first, and the save comes last.
    ///
    /// ```swift
    /// let group = ServiceGroup(configuration: .init(
    ///     services: [SaveOnShutdownService(contexts: [stack.viewContext], logger: logger), server],
    ///     gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    /// try await group.run()
    /// ```
    public struct SaveOnShutdownService: Service {
        private let save: @Sendable () throws -> Void
        private let logger: Logger

        /// A service that runs `save` on shutdown.
        /// - Parameters:
        ///   - logger: where a failed save is logged (at `error`), and the save itself (at `info`).
        ///   - save: the work: save the contexts that hold changes.
        public init(logger: Logger, save: @escaping @Sendable () throws -> Void) {
            self.save = save
            self.logger = logger
        }

        /// A service that saves each of `contexts` that has changes, in order, on its queue (list a
        /// child context before its parent, so that the parent's save includes the child's changes).
        public init(contexts: [ObjectContext], logger: Logger) {
            self.init(logger: logger) {
                for context in contexts {
                    try context.performAndWait { if context.hasChanges { try context.save() } }
                }
            }
        }

        /// A service that saves what a read/write layer's main and root contexts hold
        /// (``DataAccessLayer/saveInFlightChanges()``).
        public init(_ layer: DataAccessLayer, logger: Logger) {
            self.init(logger: logger) { try layer.saveInFlightChanges() }
        }

        /// Waits for graceful shutdown (or cancellation), then saves.
        /// - Throws: the save's error, after logging it; the service group then reports it.
        public func run() async throws {
            do {
                try await gracefulShutdown()
            } catch is CancellationError {
                // A forced shutdown: the changes are saved all the same.
            }
            do {
                try save()
                logger.info("saved in-flight changes on shutdown")
            } catch {
                logger.error("saving in-flight changes on shutdown failed", metadata: ["skerry.error": "\(error)"])
                throw error
            }
        }
    }
#endif
