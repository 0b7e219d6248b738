import Dispatch
import Foundation
import Testing

@testable import SkerryCore

/// Contexts used from many threads and tasks at once: queues, reentrancy, concurrent saves and
/// reads, optimistic locking (use outside a context's queue: ConfinementTests).
@Suite struct ConcurrencyTests {
    /// Books each worker inserts in the many-writers tests.
    static let booksPerWorker = 5

    // MARK: Many writers

    @Test(arguments: StoreKind.allCases)
    func hundredThreadsInsertAndSaveOnBackgroundContexts(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for worker in 0..<100 {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                let context = stack.newBackgroundContext()
                do {
                    let inserted = try context.performAndWait {
                        for index in 0..<Self.booksPerWorker {
                            try context.insertBook(Self.title(worker, index), year: Int32(worker))
                        }
                        return try context.save().inserted.count
                    }
                    if inserted != Self.booksPerWorker { failures.append("worker \(worker) saved \(inserted) books") }
                } catch {
                    failures.append("worker \(worker): \(error)")
                }
            }
            thread.start()
        }
        try #require(group.wait(timeout: .now() + 120) == .success, "workers did not finish (deadlock?)")
        #expect(failures.value.isEmpty, "\(failures.value)")
        try Self.expectAllTitles(in: stack, workers: 100)
    }

    @Test(arguments: StoreKind.allCases)
    func hundredTasksInsertAndSaveWithAsyncPerform(kind: StoreKind) async throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let saved = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<100 {
                group.addTask {
                    // Half through a context's async perform, half through performBackgroundTask.
                    if worker.isMultiple(of: 2) {
                        let context = stack.newBackgroundContext()
                        return try await context.perform {
                            for index in 0..<Self.booksPerWorker { try context.insertBook(Self.title(worker, index)) }
                            return try context.save().inserted.count
                        }
                    } else {
                        return try await stack.performBackgroundTask { context in
                            for index in 0..<Self.booksPerWorker { try context.insertBook(Self.title(worker, index)) }
                            return try context.save().inserted.count
                        }
                    }
                }
            }
            var total = 0
            for try await count in group { total += count }
            return total
        }
        #expect(saved == 100 * Self.booksPerWorker)
        try Self.expectAllTitles(in: stack, workers: 100)
    }

    // MARK: performAndWait

    @Test func performAndWaitReturnsTheBlocksValue() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let answer = context.performAndWait { 6 * 7 }
        #expect(answer == 42)
        let (objectID, title) = try context.performAndWait {
            let book = try context.insertBook("Dune", year: 1965)
            try context.save()
            return (book.objectID, try book.value(forKey: "title", as: String.self))
        }
        #expect(!objectID.isTemporary)
        #expect(title == "Dune")
    }

    @Test func performAndWaitRethrowsTheBlocksErrorUnchanged() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()

        let original = SkerryError(.invalidArgument, "thrown by the test", entityName: "Book", key: "title")
        let caught = #expect(throws: SkerryError.self) {
            try context.performAndWait { () throws -> Int in throw original }
        }
        #expect(caught?.code == .invalidArgument)
        #expect(caught?.message == "thrown by the test")
        #expect(caught?.entityName == "Book")
        #expect(caught?.key == "title")

        // An error of the engine itself: a Book without its required title.
        let engineError = #expect(throws: SkerryError.self) {
            try context.performAndWait {
                _ = try context.insert(entityName: "Book")
                try context.save()
            }
        }
        #expect(engineError?.code == .missingRequiredValue)
        #expect(engineError?.entityName == "Book")

        // An error of another type passes through as well.
        #expect(throws: TestError.boom) {
            try context.performAndWait { () throws -> Void in throw TestError.boom }
        }

        // The context is still usable after errors: the failed save left its insert pending.
        let pending = context.performAndWait { context.insertedObjects.count }
        #expect(pending == 1)
    }

    @Test func nestedPerformAndWaitOnTheSameContextRunsInline() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let log = Locked<[String]>([])
        let finished = Self.finishes {
            context.performAndWait {
                log.append("outer start")
                context.performAndWait {
                    log.append("middle")
                    let inserted = context.performAndWait { () -> Bool in
                        log.append("inner")
                        return (try? context.insertBook("Nested")) != nil
                    }
                    log.append("inserted \(inserted)")
                }
                log.append("outer end, hasChanges \(context.hasChanges)")
            }
        }
        #expect(finished, "nested performAndWait deadlocked")
        #expect(log.value == ["outer start", "middle", "inner", "inserted true", "outer end, hasChanges true"])
    }

    @Test(arguments: StoreKind.allCases)
    func performAndWaitAcrossTwoContextsAndBackDoesNotDeadlock(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let a = stack.newBackgroundContext()
        let b = stack.newBackgroundContext()
        let log = Locked<[String]>([])
        let finished = Self.finishes {
            a.performAndWait {
                log.append("A")
                b.performAndWait {
                    log.append("B")
                    a.performAndWait {
                        log.append("A again")
                        if (try? a.insertBook("Saved in A")) != nil, (try? a.save()) != nil { log.append("A saved") }
                    }
                    // B sees what A saved inside B's block.
                    let count = (try? b.count(for: FetchRequest(entityName: "Book"))) ?? -1
                    log.append("B counts \(count)")
                }
                log.append("A end")
            }
        }
        #expect(finished, "A -> B -> A performAndWait deadlocked")
        #expect(log.value == ["A", "B", "A again", "A saved", "B counts 1", "A end"])
    }

    @Test func asyncPerformBlockCanCallPerformAndWaitOnOtherContextAndBack() throws {
        let stack = try makeMemoryStack()
        let a = stack.newBackgroundContext()
        let b = stack.newBackgroundContext()
        let log = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        a.perform {
            b.performAndWait {
                a.performAndWait {
                    log.append("A inside B inside A.perform, hasChanges \(a.hasChanges)")
                }
                log.append("B, hasChanges \(b.hasChanges)")
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "perform -> performAndWait chain deadlocked")
        #expect(log.value == ["A inside B inside A.perform, hasChanges false", "B, hasChanges false"])
    }

    @Test(arguments: StoreKind.allCases)
    func viewContextPerformAndWaitNeedsNoMainRunLoop(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        // From the test's own thread.
        let view = stack.viewContext
        let saved = try view.performAndWait {
            try view.insertBook("From the test thread")
            return try view.save().inserted.count
        }
        #expect(saved == 1)
        // From a background thread, while this thread blocks (no run loop is serviced anywhere).
        let result = Locked<Int?>(nil)
        let finished = Self.finishes {
            let count = try? stack.viewContext.performAndWait {
                try stack.viewContext.insertBook("From a background thread")
                try stack.viewContext.save()
                return try stack.viewContext.count(for: FetchRequest(entityName: "Book"))
            }
            result.set(count)
        }
        #expect(finished, "viewContext.performAndWait from a background thread deadlocked")
        #expect(result.value == 2)
        // From a dispatch queue's worker.
        let fromQueue = Locked<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            fromQueue.set(try? stack.viewContext.performAndWait { try stack.viewContext.count(for: FetchRequest(entityName: "Book")) })
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "viewContext.performAndWait from a dispatch queue deadlocked")
        #expect(fromQueue.value == 2)
        #expect(stack.viewContext === view)
    }

    @MainActor
    @Test func viewContextPerformAndWaitWhileTheMainThreadIsBlocked() throws {
        let stack = try makeMemoryStack()
        // On the main actor itself.
        let count = try stack.viewContext.performAndWait {
            try stack.viewContext.insertBook("On the main actor")
            try stack.viewContext.save()
            return try stack.viewContext.count(for: FetchRequest(entityName: "Book"))
        }
        #expect(count == 1)
        // From another thread while the main actor waits synchronously: a context tied to the
        // main queue or run loop would never run this block.
        let other = Locked<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            other.set(try? stack.viewContext.performAndWait { try stack.viewContext.count(for: FetchRequest(entityName: "Book")) })
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 30) == .success, "viewContext needed the blocked main thread")
        #expect(other.value == 1)
    }

    // MARK: perform

    @Test(arguments: StoreKind.allCases)
    func performRunsBlocksOnTheContextSeriallyInSubmissionOrder(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        let order = Locked<[Int]>([])
        let running = Locked<(now: Int, most: Int)>((0, 0))
        let failures = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let blocks = 200
        for index in 0..<blocks {
            context.perform {
                running.update {
                    $0.now += 1
                    $0.most = max($0.most, $0.now)
                }
                // Using the context here is allowed: the block runs on its queue.
                do { try context.insertBook("Book \(index)") } catch { failures.append("\(error)") }
                order.append(index)
                running.update { $0.now -= 1 }
                if index == blocks - 1 { done.signal() }
            }
        }
        try #require(done.wait(timeout: .now() + 30) == .success, "perform blocks did not all run")
        #expect(order.value == Array(0..<blocks))
        #expect(running.value.most == 1, "perform blocks overlapped")
        #expect(failures.value.isEmpty, "\(failures.value)")
        // The blocks built up this context's state, which performAndWait then sees and saves.
        let saved = try context.performAndWait {
            #expect(context.insertedObjects.count == blocks)
            return try context.save().inserted.count
        }
        #expect(saved == blocks)
    }

    @Test func performReturnsBeforeItsBlockRuns() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let gate = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        let finished = Self.finishes {
            // The block waits for a signal sent only after perform returned: a synchronous
            // perform would wait forever.
            context.perform {
                gate.wait()
                ran.signal()
            }
            gate.signal()
            ran.wait()
        }
        #expect(finished, "perform waited for its block")
    }

    @Test(arguments: StoreKind.allCases)
    func asyncPerformReturnsValueAndPropagatesErrors(kind: StoreKind) async throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        let objectID = try await context.perform {
            let book = try context.insertBook("Dune", year: 1965)
            try context.save()
            return book.objectID
        }
        #expect(!objectID.isTemporary)
        let title = try await context.perform {
            try context.existingObject(with: objectID).value(forKey: "title", as: String.self)
        }
        #expect(title == "Dune")

        let original = SkerryError(.objectNotFound, "thrown by the test", entityName: "Book", objectID: objectID)
        let caught = await #expect(throws: SkerryError.self) {
            try await context.perform { () throws -> Int in throw original }
        }
        #expect(caught?.code == .objectNotFound)
        #expect(caught?.message == "thrown by the test")
        #expect(caught?.objectID == objectID)

        // The engine's own error: a duplicate ISBN.
        let duplicate = await #expect(throws: SkerryError.self) {
            try await context.perform {
                try context.insertBook("One", isbn: "978-0")
                try context.insertBook("Two", isbn: "978-0")
                try context.save()
            }
        }
        #expect(duplicate?.code == .constraintViolation)

        // The async performBackgroundTask propagates errors too.
        let background = await #expect(throws: SkerryError.self) {
            try await stack.performBackgroundTask { context in
                _ = try context.insert(entityName: "Nope")
            }
        }
        #expect(background?.code == .unknownEntity)
    }

    @Test(arguments: StoreKind.allCases)
    func performBackgroundTaskGivesAFreshContextEachTime(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let contexts = Locked<[ObjectContext]>([])
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        let tasks = 10
        for index in 0..<tasks {
            group.enter()
            stack.performBackgroundTask { context in
                defer { group.leave() }
                contexts.append(context)
                if context.hasChanges { failures.append("task \(index): context already had changes") }
                do {
                    try context.insertBook("Task \(index)")
                    if context.insertedObjects.count != 1 {
                        failures.append("task \(index): \(context.insertedObjects.count) inserted objects")
                    }
                    try context.save()
                } catch {
                    failures.append("task \(index): \(error)")
                }
            }
        }
        try #require(group.wait(timeout: .now() + 30) == .success, "background tasks did not all run")
        #expect(failures.value.isEmpty, "\(failures.value)")
        let all = contexts.value
        #expect(all.count == tasks)
        #expect(Set(all.map(ObjectIdentifier.init)).count == tasks, "a context was reused")
        #expect(!all.contains { $0 === stack.viewContext })
        let reader = stack.newBackgroundContext()
        let count = try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Book")) }
        #expect(count == tasks)
    }

    // MARK: Readers and a writer

    @Test(arguments: StoreKind.allCases)
    func concurrentReadersAlwaysSeeWholeSaves(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let batch = 10
        let saves = 20
        let readers = 4
        let writerDone = Locked(false)
        let failures = Locked<[String]>([])
        let group = DispatchGroup()

        group.enter()
        Thread {
            defer { group.leave() }
            let writer = stack.newBackgroundContext()
            for save in 0..<saves {
                do {
                    try writer.performAndWait {
                        for index in 0..<batch { try writer.insertBook("Save \(save) book \(index)", year: Int32(save)) }
                        try writer.save()
                    }
                } catch {
                    failures.append("save \(save): \(error)")
                }
            }
            writerDone.set(true)
        }.start()

        for reader in 0..<readers {
            group.enter()
            Thread {
                defer { group.leave() }
                let context = stack.newBackgroundContext()
                var last = 0
                while true {
                    // Read the flag first: a read that starts after the writer finished sees everything.
                    let writerFinished = writerDone.value
                    do {
                        let (count, ids, objects) = try context.performAndWait {
                            let count = try context.count(for: FetchRequest(entityName: "Book"))
                            let ids = try context.fetchObjectIDs(FetchRequest(entityName: "Book")).count
                            let objects = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("year") >= Int32(0)))
                                .count
                            return (count, ids, objects)
                        }
                        for (what, value) in [("count", count), ("ids", ids), ("objects", objects)] where !value.isMultiple(of: batch) {
                            failures.append("reader \(reader): \(what) \(value) is not a whole number of saves")
                        }
                        if count < last { failures.append("reader \(reader): count went back from \(last) to \(count)") }
                        last = count
                        if writerFinished {
                            if count != batch * saves { failures.append("reader \(reader): final count \(count)") }
                            break
                        }
                    } catch {
                        failures.append("reader \(reader): \(error)")
                        break
                    }
                }
            }.start()
        }
        try #require(group.wait(timeout: .now() + 120) == .success, "readers or writer did not finish")
        #expect(failures.value.isEmpty, "\(failures.value.prefix(10))")
    }

    @Test(arguments: StoreKind.allCases)
    func aReaderContextSeesEverySaveOfAnotherContext(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let writer = stack.newBackgroundContext()
        let reader = stack.newBackgroundContext()
        var seen: [Int] = []
        for save in 1...3 {
            try writer.performAndWait {
                try writer.insertBook("Book \(save)")
                try writer.save()
            }
            seen.append(try reader.performAndWait { try reader.count(for: FetchRequest(entityName: "Book")) })
        }
        let fetched = try reader.performAndWait { try reader.fetch(FetchRequest(entityName: "Book")).count }
        #expect(seen == [1, 2, 3])
        #expect(fetched == 3)
    }

    // MARK: Optimistic locking

    @Test(arguments: StoreKind.allCases)
    func concurrentUpdatesOfOneRowLetExactlyOneSaveWin(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        for round in 0..<10 {
            let seed = stack.newBackgroundContext()
            let objectID = try seed.performAndWait {
                let book = try seed.insertBook("Original \(round)")
                try seed.save()
                return book.objectID
            }
            let contexts = [stack.newBackgroundContext(), stack.newBackgroundContext()]
            // Optimistic locking between contexts that do not merge each other's saves.
            for context in contexts { context.automaticallyMergesChangesFromParent = false }
            for (index, context) in contexts.enumerated() {
                try context.performAndWait {
                    try context.existingObject(with: objectID).setValue("Edit \(index)", forKey: "title")
                }
            }

            // Both save at once, released together.
            let results = Locked<[Int: SkerryError?]>([:])
            let go = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (index, context) in contexts.enumerated() {
                group.enter()
                Thread {
                    defer { group.leave() }
                    go.wait()
                    let error = context.performAndWait { () -> SkerryError? in
                        do throws(SkerryError) {
                            try context.save()
                            return nil
                        } catch { return error }
                    }
                    results.update { $0[index] = error }
                }.start()
            }
            go.signal()
            go.signal()
            try #require(group.wait(timeout: .now() + 30) == .success)

            let outcome = results.value
            let winners = outcome.filter { $0.value == nil }.map(\.key)
            let losers = outcome.compactMap { entry in entry.value.map { (entry.key, $0) } }
            try #require(winners.count == 1, "round \(round): \(outcome)")
            try #require(losers.count == 1, "round \(round): \(outcome)")
            let winner = winners[0]
            let (loser, error) = losers[0]
            #expect(error.code == .mergeConflict)
            #expect(error.objectIDs == [objectID])

            // The store holds the winner's edit, not a mix and not the loser's.
            let reader = stack.newBackgroundContext()
            let stored = try reader.performAndWait {
                try reader.existingObject(with: objectID).value(forKey: "title", as: String.self)
            }
            #expect(stored == "Edit \(winner)")

            // The loser's context is untouched by the failed save; after a refresh keeping its
            // change, saving again succeeds (and now the loser's edit is the latest).
            let loserContext = contexts[loser]
            try loserContext.performAndWait {
                let book = try loserContext.existingObject(with: objectID)
                #expect(loserContext.hasChanges)
                #expect(try book.value(forKey: "title", as: String.self) == "Edit \(loser)")
                try loserContext.refresh(book, mergeChanges: true)
                try loserContext.save()
            }
            let final = try reader.performAndWait {
                try reader.refresh(reader.existingObject(with: objectID), mergeChanges: false)
                return try reader.existingObject(with: objectID).value(forKey: "title", as: String.self)
            }
            #expect(final == "Edit \(loser)")
        }
    }
}

// MARK: - Helpers

extension ConcurrencyTests {
    enum TestError: Error, Equatable { case boom }

    static func title(_ worker: Int, _ index: Int) -> String { "Worker \(worker) book \(index)" }

    /// Runs `body` on a new thread and waits for it; false when it has not finished after a
    /// generous delay, which here can only mean a deadlock.
    static func finishes(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + 30) == .success
    }

    /// Checks, from a fresh context, that the store holds exactly the books of `workers` workers.
    static func expectAllTitles(
        in stack: PersistentStack, workers: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reader = stack.newBackgroundContext()
        let (count, titles) = try reader.performAndWait {
            let count = try reader.count(for: FetchRequest(entityName: "Book"))
            let titles = try reader.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }
            return (count, titles)
        }
        let expected = Set((0..<workers).flatMap { worker in (0..<booksPerWorker).map { title(worker, $0) } })
        #expect(count == workers * booksPerWorker, sourceLocation: sourceLocation)
        #expect(titles.count == workers * booksPerWorker, sourceLocation: sourceLocation)
        #expect(Set(titles) == expected, sourceLocation: sourceLocation)
    }
}
