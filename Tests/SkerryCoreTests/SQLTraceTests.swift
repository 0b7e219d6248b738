import Foundation
import Testing

@testable import SkerryCore

/// The SQL trace hook and the events of a stack, asserted on the statements real stores run.
@Suite struct SQLTraceTests {
    /// The statements of a recording without transaction control.
    static func withoutTransactions(_ sql: [String]) -> [String] {
        sql.filter { !$0.hasPrefix("BEGIN") && $0 != "COMMIT" }
    }

    /// (The PostgreSQL store's statements: PostgresStoreTests.)
    @Test(arguments: [StoreKind.file, .memory])
    func saveWritesOnlyTheChangedColumns(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let recorder = SQLRecorder(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune", year: 1965)
            try context.save()
        }
        // doc: sql-recorder
        let sql = try recorder.record {
            try context.performAndWait {
                let book = try context.fetch(FetchRequest(entityName: "Book"))[0]
                try book.setValue(Int32(1966), forKey: "year")
                try context.save()
            }
        }
        // The save is one write transaction with one UPDATE naming only the changed column,
        // guarded by the version the context read. A file, which other instances may open too,
        // first reads whether one of them turned persistent history on (the save would then
        // refuse to write unrecorded).
        let save = Array(sql.drop { $0 != "BEGIN IMMEDIATE" })
        let trackingCheck = kind == .file ? [#"SELECT "value" FROM "_skerry_metadata" WHERE "key" = 'historyTracking'"#] : []
        #expect(
            save == ["BEGIN IMMEDIATE"] + trackingCheck + [
                #"UPDATE "Book" SET "_version" = "_version" + 1, "year" = ? WHERE "_pk" = ? AND "_version" = ?"#,
                "COMMIT",
            ])
        // doc: end
    }

    @Test func saveWithoutChangesRunsNoStatement() throws {
        let stack = try makeMemoryStack()
        let recorder = SQLRecorder(stack)
        let context = stack.newBackgroundContext()
        let sql = try recorder.record {
            try context.performAndWait {
                try context.insertBook("Dune")
                try context.save()
                try context.save() // nothing left to save
            }
        }
        #expect(sql.filter { $0 == "BEGIN IMMEDIATE" }.count == 1)
    }

    @Test func fetchWithABatchSizeReadsKeysFirstThenOneSelectPerBatch() throws {
        let stack = try makeMemoryStack()
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for i in 0..<5 { try writer.insertBook("B\(i)", year: Int32(1960 + i)) }
            try writer.save()
        }
        let recorder = SQLRecorder(stack)
        let context = stack.newBackgroundContext()
        var titles: [String] = []
        let traces = try recorder.traces {
            try context.performAndWait {
                var request = FetchRequest(entityName: "Book", sortKeys: [SortKey("year")])
                request.fetchBatchSize = 2
                let books = try context.fetch(request)
                titles = try books.map { try $0.value(forKey: "title", as: String.self) }
            }
        }
        #expect(titles == ["B0", "B1", "B2", "B3", "B4"])
        let statements = traces.filter { !$0.sql.hasPrefix("BEGIN") && $0.sql != "COMMIT" }
        // One query for the keys in order, then the rows a batch at a time as they are touched.
        #expect(statements.count == 4)
        #expect(statements.first?.sql == #"SELECT "_pk" FROM "Book" ORDER BY "Book"."year" ASC, "Book"."_pk""#)
        #expect(statements.map(\.rowsRead) == [5, 2, 2, 1])
        #expect(statements.dropFirst().allSatisfy { $0.sql.hasPrefix(#"SELECT "_pk", "_version", "title""#) })
    }

    @Test func traceCountsRowsWrittenAndNamesTheStore() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let recorder = SQLRecorder(stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<3 { try context.insertBook("B\(i)") }
            try context.save()
        }
        let traces = try recorder.traces {
            try context.performAndWait {
                var request = BatchDeleteRequest(entityName: "Book")
                request.resultType = .count
                _ = try context.execute(request)
            }
        }
        let delete = try #require(traces.first { $0.sql.hasPrefix("DELETE") })
        #expect(delete.rowsWritten == 3)
        #expect(delete.store.url == directory.file("Test.sqlite"))
    }

    @Test func observersReceiveOnlyTheStatementsTheyAskFor() throws {
        let stack = PersistentStack(name: "Memory", model: Fixtures.model())
        stack.persistentStoreDescriptions = [.inMemory()]
        let all = Locked<[StackEvent]>([]), slow = Locked<[StackEvent]>([]), none = Locked<[StackEvent]>([])
        let observations = [
            stack.addEventObserver(statements: .all) { all.append($0) },
            stack.addEventObserver(statements: .slowerThan(.seconds(3600))) { slow.append($0) },
            stack.addEventObserver { none.append($0) },
        ]
        try stack.loadPersistentStores()
        try stack.viewContext.performAndWait { _ = try stack.viewContext.count(for: FetchRequest(entityName: "Book")) }

        func statements(_ events: Locked<[StackEvent]>) -> Int {
            events.value.filter { if case .statement = $0 { true } else { false } }.count
        }
        #expect(statements(all) > 0)
        #expect(statements(slow) == 0) // no statement here runs for an hour
        #expect(statements(none) == 0)
        for events in [all, slow, none] {
            #expect(events.value.contains { if case .storeLoaded(let load) = $0 { load.outcome == .created } else { false } })
        }
        observations.forEach { $0.cancel() }
        let before = all.value.count
        try stack.viewContext.performAndWait { _ = try stack.viewContext.count(for: FetchRequest(entityName: "Book")) }
        #expect(all.value.count == before)
    }

    @Test func slowStatementsExample() throws {
        let stack = PersistentStack(name: "Library", model: Fixtures.model())
        stack.persistentStoreDescriptions = [.inMemory()]
        let slow = Locked<[String]>([])
        @Sendable func report(_ text: String) { slow.append(text) }
        // doc: events
        let observation = stack.addEventObserver(statements: .slowerThan(.milliseconds(100))) { event in
            switch event {
            case .storeLoaded(let load):
                report("loaded \(load.store): \(load.outcome) in \(load.duration)")
            case .migrationStep(let step):
                report("migration step \(step.step)/\(step.stepCount): \(step.summary)")
            case .statement(let trace):
                report("slow statement: \(trace.sql) took \(trace.duration), \(trace.rowsRead) rows")
            case .conflictsResolved(let resolution):
                report("\(resolution.policy) resolved \(resolution.changedObjects.count) conflicts")
            case .storeLoadFailed(let store, let error):
                report("\(store) failed to load: \(error)")
            case .storeMigrated(let move):
                report("\(move.source) moved into \(move.destination): \(move.objectCount) objects in \(move.duration)")
            }
        }
        try stack.loadPersistentStores()
        // doc: end
        observation.cancel()
        // A statement may cross the threshold on a loaded machine; any reported took 100 ms or more.
        let statements = slow.value.filter { $0.hasPrefix("slow statement: ") }
        for report in statements {
            let took = report.components(separatedBy: " took ").last?.components(separatedBy: " seconds").first
            #expect(try #require(took.flatMap(Double.init)) >= 0.1, "\(report)")
        }
        let reports = slow.value.filter { !$0.hasPrefix("slow statement: ") }
        #expect(reports.count == 1, "\(slow.value)")
        #expect(reports.first?.hasPrefix("loaded in-memory store: created in ") == true)
    }

    @Test func loadsReportCreatedOpenedMigratedAndFailed() throws {
        let directory = TemporaryDirectory()
        func load(_ model: ObjectModel) -> [StackEvent] {
            let stack = PersistentStack(name: "Test", model: model)
            stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("Test.sqlite"))]
            let events = Locked<[StackEvent]>([])
            let observation = stack.addEventObserver { events.append($0) }
            defer { observation.cancel() }
            try? stack.loadPersistentStores() // the events say how it went
            return events.value
        }
        func outcome(_ events: [StackEvent]) -> StoreLoadEvent.Outcome? {
            for case .storeLoaded(let load) in events { return load.outcome }
            return nil
        }
        #expect(outcome(load(Fixtures.model())) == .created)
        #expect(outcome(load(Fixtures.model())) == .opened)

        let version2 = try ObjectModel(entities: [
            Fixtures.bookEntity(extraAttributes: [AttributeDescription("subtitle", .string, isOptional: true)]),
            Fixtures.authorEntity(),
        ])
        let migrated = load(version2)
        #expect(outcome(migrated) == .migrated)
        let steps = migrated.compactMap { if case .migrationStep(let step) = $0 { step } else { nil } }
        #expect(steps.count == 1)
        #expect(steps.first?.fromVersionHash == Fixtures.model().versionHash)
        #expect(steps.first?.toVersionHash == version2.versionHash)

        let incompatible = try ObjectModel(entities: [
            EntityDescription(name: "Book", attributes: [AttributeDescription("title", .integer64)])
        ])
        let failed = load(incompatible)
        #expect(outcome(failed) == nil)
        #expect(failed.contains { if case .storeLoadFailed(_, let error) = $0 { error.code == .modelMismatch } else { false } })
    }

    @Test func resolvedConflictsAreReported() throws {
        let stack = try makeMemoryStack()
        let events = Locked<[ConflictResolutionEvent]>([])
        let observation = stack.addEventObserver { event in
            if case .conflictsResolved(let resolution) = event { events.append(resolution) }
        }
        defer { observation.cancel() }
        let writer = stack.newBackgroundContext(), stale = stack.newBackgroundContext()
        stale.automaticallyMergesChangesFromParent = false // it keeps the values it read
        let id = try writer.performAndWait {
            let book = try writer.insertBook("Dune", year: 1965)
            try writer.save()
            return book.objectID
        }
        try stale.performAndWait { _ = try stale.existingObject(with: id).value(forKey: "title", as: String.self) }
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue(Int32(1966), forKey: "year")
            try writer.save()
        }
        stale.mergePolicy = .mergeByPropertyObjectTrump
        try stale.performAndWait {
            try stale.existingObject(with: id).setValue("Dune Messiah", forKey: "title")
            try stale.save()
        }
        #expect(events.value.count == 1)
        #expect(events.value.first?.changedObjects == [id])
        #expect(events.value.first?.policy == .mergeByPropertyObjectTrump)
    }
}
