#if Logging
    import Logging
    import Skerry
    import SkerryCore

    extension PersistentContainer {
        /// Creates a container that logs every error of a perform to `logger` (at `error` level, with
        /// the error's code and message in the metadata) before rethrowing it: the `Logger` form of
        /// ``PersistentContainer/init(managedObjectContext:logError:cleanUpAfterExecution:)``.
        /// Cancellation is not logged.
        /// - Parameters:
        ///   - managedObjectContext: called for every perform (see the closure form).
        ///   - logger: where errors go.
        ///   - cleanUpAfterExecution: whether the context is reset after each perform. Default true.
        public convenience init(
            managedObjectContext: @escaping @Sendable () throws -> ObjectContext,
            logger: Logger,
            cleanUpAfterExecution: Bool = true
        ) {
            self.init(
                managedObjectContext: managedObjectContext,
                logError: { error in
                    if let error = error as? SkerryError {
                        logger.error(
                            "perform failed",
                            metadata: [
                                "skerry.error_code": "\(error.code)", "skerry.error": "\(error.message)",
                            ])
                    } else {
                        logger.error("perform failed", metadata: ["skerry.error": "\(error)"])
                    }
                },
                cleanUpAfterExecution: cleanUpAfterExecution)
        }
    }
#endif
