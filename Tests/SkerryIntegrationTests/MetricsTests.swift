#if Metrics
    import Foundation
    import Metrics
    import MetricsTestKit
    import SkerryCore
    import SkerryMetrics
    import Testing

    @Suite struct MetricsTests {
        @Test func loadsAndStatementsAreCounted() throws {
            let metrics = TestMetrics()
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [.inMemory()]
            let observation = stack.addMetrics(dimensions: [("stack", "library")], timesStatements: true, factory: metrics)
            defer { observation.cancel() }
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for title in ["Dune", "Solaris", "Neuromancer"] {
                    let book = try context.insert(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                }
                try context.save()
                _ = try context.fetch(FetchRequest(entityName: "Book"))
            }
            #expect(
                metrics.counterTotal(label: "skerry_store_loads_total", dimensions: [("stack", "library"), ("outcome", "created")]) == 1)
            #expect(metrics.counterTotal(label: "skerry_rows_written_total") >= 3)
            #expect(metrics.counterTotal(label: "skerry_rows_read_total") >= 3)
            let timer = try metrics.expectTimer("skerry_statement_duration", [("stack", "library")])
            #expect(!timer.values.isEmpty)
        }

        @Test func aStoreMoveIsCountedAndTimed() throws {
            let folder = TemporaryDirectory()
            let metrics = TestMetrics()
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [StoreDescription(url: folder.file("Library.sqlite"))]
            let observation = stack.addMetrics(dimensions: [("stack", "library")], factory: metrics)
            defer { observation.cancel() }
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for title in ["Dune", "Solaris"] {
                    let book = try context.insert(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                }
                try context.save()
            }
            let coordinator = stack.persistentStoreCoordinator
            try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: .inMemory())

            let dimensions = [("stack", "library"), ("from", "sqlite"), ("to", "inMemory")]
            #expect(metrics.counterTotal(label: "skerry_store_migrations_total", dimensions: dimensions) == 1)
            #expect(metrics.counterTotal(label: "skerry_store_migrated_objects_total", dimensions: dimensions) == 2)
            let timer = try metrics.expectTimer("skerry_store_migration_duration", dimensions)
            #expect(timer.values.count == 1)
        }

        @Test func withoutStatementTimingNoStatementIsRecorded() throws {
            let metrics = TestMetrics()
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [.inMemory()]
            // doc: stack-metrics
            let observation = stack.addMetrics(
                dimensions: [("stack", stack.name)],
                slowStatementThreshold: .milliseconds(100),
                factory: metrics) // default: the bootstrapped MetricsSystem
            // doc: end
            defer { observation.cancel() }
            // The statements that did take 100 ms or more: none here, unless the machine is loaded.
            let slow = Locked(0)
            let slowObservation = stack.addEventObserver(statements: .slowerThan(.milliseconds(100))) { event in
                if case .statement = event { slow.update { $0 += 1 } }
            }
            defer { slowObservation.cancel() }
            try stack.loadPersistentStores()
            try stack.viewContext.performAndWait { _ = try stack.viewContext.count(for: FetchRequest(entityName: "Book")) }
            #expect(metrics.counterTotal(label: "skerry_store_loads_total") == 1)
            #expect(metrics.counterTotal(label: "skerry_rows_read_total") == 0)
            #expect(metrics.counterTotal(label: "skerry_slow_statements_total") == Int64(slow.value))
        }
    }
#endif
