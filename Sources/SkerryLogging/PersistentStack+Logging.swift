#if Logging
    import Logging
    import SkerryCore

    extension PersistentStack {
        /// Logs the stack's notable events to `logger` until the returned observation is cancelled:
        /// store loads (`info`), failed loads (`error`), migration steps (`notice`), stores moved into a
        /// new store (`notice`: both stores, their identifiers and kinds, the objects moved, the
        /// duration), merge conflicts a policy resolved (`notice`), statements slower than `slowStatementThreshold` (`warning`), and,
        /// when `logger.logLevel` is `trace`, every statement (`trace`).
        ///
        /// Call it before ``PersistentStack/loadPersistentStores()`` to see the loads. The logger's
        /// level is read once, here: statements are timed only for what can be logged.
        /// - Parameters:
        ///   - logger: where to log; each message carries the store in its metadata.
        ///   - slowStatementThreshold: statements that run at least this long are logged as warnings;
        ///     nil for none. Default 100 ms.
        /// - Returns: the observation; keep it as long as the stack should log.
        public func addLogging(to logger: Logger, slowStatementThreshold: Duration? = .milliseconds(100)) -> EventObservation {
            let tracing: StatementTracing
            if logger.logLevel <= .trace {
                tracing = .all
            } else if let slowStatementThreshold, logger.logLevel <= .warning {
                tracing = .slowerThan(slowStatementThreshold)
            } else {
                tracing = .none
            }
            return addEventObserver(statements: tracing) { event in
                StackEventLog.log(event, to: logger, slowStatementThreshold: slowStatementThreshold)
            }
        }
    }

    /// How each event becomes a log message.
    enum StackEventLog {
        static func log(_ event: StackEvent, to logger: Logger, slowStatementThreshold: Duration?) {
            switch event {
            case .storeLoaded(let load):
                logger.info(
                    "store loaded",
                    metadata: [
                        "skerry.store": "\(load.store)", "skerry.outcome": "\(load.outcome)",
                        "skerry.model_version_hash": "\(load.modelVersionHash)", "skerry.duration": "\(load.duration)",
                    ])
            case .storeLoadFailed(let store, let error):
                logger.error(
                    "store failed to load",
                    metadata: [
                        "skerry.store": "\(store)", "skerry.error_code": "\(error.code)", "skerry.error": "\(error.message)",
                    ])
            case .migrationStep(let step):
                logger.notice(
                    "migration step \(step.step) of \(step.stepCount) done",
                    metadata: [
                        "skerry.store": "\(step.store)", "skerry.from": "\(step.fromVersionHash ?? "?")",
                        "skerry.to": "\(step.toVersionHash)", "skerry.summary": "\(step.summary)", "skerry.duration": "\(step.duration)",
                    ])
            case .storeMigrated(let move):
                logger.notice(
                    "store migrated",
                    metadata: [
                        "skerry.store": "\(move.destination)", "skerry.from_store": "\(move.source)",
                        "skerry.store_identifier": "\(move.destinationIdentifier)",
                        "skerry.from_store_identifier": "\(move.sourceIdentifier)",
                        "skerry.store_kind": "\(move.destination.kind)", "skerry.from_store_kind": "\(move.source.kind)",
                        "skerry.objects": "\(move.objectCount)", "skerry.duration": "\(move.duration)",
                    ])
            case .statement(let trace):
                let metadata: Logger.Metadata = [
                    "skerry.store": "\(trace.store)", "skerry.sql": "\(trace.sql)", "skerry.duration": "\(trace.duration)",
                    "skerry.rows_read": "\(trace.rowsRead)", "skerry.rows_written": "\(trace.rowsWritten)",
                ]
                if let slowStatementThreshold, trace.duration >= slowStatementThreshold {
                    logger.warning("slow statement", metadata: metadata)
                } else {
                    logger.trace("statement", metadata: metadata)
                }
            case .conflictsResolved(let resolution):
                logger.notice(
                    "merge conflicts resolved",
                    metadata: [
                        "skerry.context": "\(resolution.contextName ?? "?")", "skerry.policy": "\(resolution.policy)",
                        "skerry.changed_objects": "\(resolution.changedObjects.count)",
                        "skerry.uniqueness_conflicts": "\(resolution.uniquenessConflicts)",
                    ])
            }
        }
    }
#endif
