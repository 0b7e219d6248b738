#if Metrics
    import Metrics
    import SkerryCore

    extension PersistentStack {
        /// Records the stack's events as swift-metrics counters and timers, through whatever metrics
        /// backend the process bootstrapped, until the returned observation is cancelled.
        ///
        /// Always (events only; no statement is timed for these):
        /// - `skerry_store_loads_total` (dimension `outcome`: created, opened, migrated, failed);
        /// - `skerry_migration_steps_total` and the timer `skerry_migration_step_duration`;
        /// - `skerry_store_migrations_total`, `skerry_store_migrated_objects_total` and the timer
        ///   `skerry_store_migration_duration`, for stores moved into a new store
        ///   (`StoreCoordinator.migratePersistentStore(_:to:)`; dimensions `from` and `to`: the
        ///   store kinds, `sqlite`, `inMemory`, `postgres`);
        /// - `skerry_conflicts_resolved_total` (dimension `policy`);
        /// - `skerry_slow_statements_total`: statements that ran at least `slowStatementThreshold`.
        ///
        /// With `timesStatements`, every statement is timed (two clock reads each) and recorded:
        /// the timer `skerry_statement_duration`, and the counters `skerry_rows_read_total` and
        /// `skerry_rows_written_total`.
        /// - Parameters:
        ///   - dimensions: added to every metric (for example `[("stack", name)]`).
        ///   - slowStatementThreshold: what counts as slow; nil for no slow-statement counter. Default 100 ms.
        ///   - timesStatements: whether to time every statement. Default false.
        ///   - factory: the metrics backend; default the one the process bootstrapped.
        /// - Returns: the observation; keep it as long as the stack should record.
        public func addMetrics(
            dimensions: [(String, String)] = [], slowStatementThreshold: Duration? = .milliseconds(100),
            timesStatements: Bool = false, factory: any MetricsFactory = MetricsSystem.factory
        ) -> EventObservation {
            let recorder = StackMetrics(dimensions: dimensions, factory: factory)
            let tracing: StatementTracing = timesStatements ? .all : slowStatementThreshold.map { .slowerThan($0) } ?? .none
            return addEventObserver(statements: tracing) { event in
                recorder.record(event, slowStatementThreshold: slowStatementThreshold, timesStatements: timesStatements)
            }
        }
    }

    /// The metrics of one observed stack. Metric handles are created once; those with a dimension
    /// that varies per event are created on first use by the backend's factory (which caches them).
    struct StackMetrics: Sendable {
        let dimensions: [(String, String)]
        let factory: any MetricsFactory
        let migrationSteps: Counter
        let migrationStepDuration: Metrics.Timer
        let slowStatements: Counter
        let statementDuration: Metrics.Timer
        let rowsRead: Counter
        let rowsWritten: Counter

        init(dimensions: [(String, String)], factory: any MetricsFactory) {
            self.dimensions = dimensions
            self.factory = factory
            migrationSteps = Counter(label: "skerry_migration_steps_total", dimensions: dimensions, factory: factory)
            migrationStepDuration = Metrics.Timer(label: "skerry_migration_step_duration", dimensions: dimensions, factory: factory)
            slowStatements = Counter(label: "skerry_slow_statements_total", dimensions: dimensions, factory: factory)
            statementDuration = Metrics.Timer(label: "skerry_statement_duration", dimensions: dimensions, factory: factory)
            rowsRead = Counter(label: "skerry_rows_read_total", dimensions: dimensions, factory: factory)
            rowsWritten = Counter(label: "skerry_rows_written_total", dimensions: dimensions, factory: factory)
        }

        func record(_ event: StackEvent, slowStatementThreshold: Duration?, timesStatements: Bool) {
            switch event {
            case .storeLoaded(let load):
                Counter(label: "skerry_store_loads_total", dimensions: dimensions + [("outcome", "\(load.outcome)")], factory: factory)
                    .increment()
            case .storeLoadFailed:
                Counter(label: "skerry_store_loads_total", dimensions: dimensions + [("outcome", "failed")], factory: factory).increment()
            case .migrationStep(let step):
                migrationSteps.increment()
                migrationStepDuration.recordNanoseconds(Self.nanoseconds(step.duration))
            case .storeMigrated(let move):
                let kinds = dimensions + [("from", "\(move.source.kind)"), ("to", "\(move.destination.kind)")]
                Counter(label: "skerry_store_migrations_total", dimensions: kinds, factory: factory).increment()
                Counter(label: "skerry_store_migrated_objects_total", dimensions: kinds, factory: factory)
                    .increment(by: move.objectCount)
                Metrics.Timer(label: "skerry_store_migration_duration", dimensions: kinds, factory: factory)
                    .recordNanoseconds(Self.nanoseconds(move.duration))
            case .statement(let trace):
                if let slowStatementThreshold, trace.duration >= slowStatementThreshold { slowStatements.increment() }
                if timesStatements {
                    statementDuration.recordNanoseconds(Self.nanoseconds(trace.duration))
                    if trace.rowsRead > 0 { rowsRead.increment(by: trace.rowsRead) }
                    if trace.rowsWritten > 0 { rowsWritten.increment(by: trace.rowsWritten) }
                }
            case .conflictsResolved(let resolution):
                Counter(
                    label: "skerry_conflicts_resolved_total", dimensions: dimensions + [("policy", "\(resolution.policy)")],
                    factory: factory
                ).increment()
            }
        }

        static func nanoseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        }
    }
#endif
