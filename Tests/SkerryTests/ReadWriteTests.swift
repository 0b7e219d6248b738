import Foundation
import Skerry
import SkerryCore
import Testing

/// A layer that records its errors instead of printing them.
final class RecordingLayer: DataAccessLayer, @unchecked Sendable {
    // `@unchecked Sendable`: `errors` is only touched while `lock` is held.
    private let lock = NSLock()
    private var errors: [String] = []
    var recordedErrors: [String] { lock.withLock { errors } }
    override func handleError(_ error: any Error) { lock.withLock { errors.append("\(error)") } }
}

struct WriteFailed: Error {}

/// What ``Completion/wait()`` returns when the completion never came.
struct TimedOut: Error {}

/// Waits for a completion handler.
final class Completion: @unchecked Sendable {
    // `@unchecked Sendable`: `error` is written once before `done` is signalled, read after.
    private let done = DispatchSemaphore(value: 0)
    private var error: (any Error)?
    var handler: @Sendable ((any Error)?) -> Void {
        {
            self.error = $0
            self.done.signal()
        }
    }
    /// The completion's error (nil: success), or a recorded issue and `TimedOut` when the
    /// completion did not come within a generous bound (a guard against hanging, not a measurement).
    func wait() -> (any Error)? {
        guard done.wait(timeout: .now() + 120) == .success else {
            Issue.record("the completion handler was not called")
            return TimedOut()
        }
        return error
    }
}

@Suite struct ReadWriteTests {
    private func storedTitles(_ layer: DataAccessLayer) throws -> [String] {
        let context = layer.stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")]))
                .map { try $0.value(forKey: "title", as: String.self) }
        }
    }

    @Test func writeSyncIsReadableAtOnceAndReachesTheStoreBeforeItsCompletion() throws {
        let layer = try RecordingLayer(inMemoryModel: try ObjectModel(types: [Book.self]))
        let completion = Completion()
        var titles: [String] = []
        layer.writeSync(
            { context in
                try context.insert(Book(title: "Dune", year: 1965))
            }, completion: completion.handler
        ).read { context in
            titles = try context.fetch(Book.all, \Book.title)
        }
        #expect(titles == ["Dune"])
        #expect(completion.wait() == nil)
        #expect(try storedTitles(layer) == ["Dune"])
        #expect(layer.recordedErrors.isEmpty)
    }

    @Test func writeAsyncReachesTheStoreBeforeItsCompletion() throws {
        let layer = try RecordingLayer(inMemoryModel: try ObjectModel(types: [Book.self]))
        let completion = Completion()
        layer.writeAsync(
            { context in
                try context.insert(Book(title: "Solaris"))
            }, completion: completion.handler)
        #expect(completion.wait() == nil)
        #expect(try storedTitles(layer) == ["Solaris"])
        var count = 0
        layer.read { context in count = try Book.count(in: context) }
        #expect(count == 1)
    }

    @Test func chainedWritesAndReadsSeeEachOther() throws {
        let layer = try RecordingLayer(inMemoryModel: try ObjectModel(types: [Book.self]))
        var book: ManagedObject<Book>?
        var remaining = -1
        layer.write { context in
            book = try context.insert(Book(title: "Dune"))
        }.write { context in
            try book?.inContext(context)?.remove(in: context)
        }.read { context in
            remaining = try Book.count(in: context)
        }
        #expect(remaining == 0)
        #expect(layer.recordedErrors.isEmpty)
    }

    @Test func everyErrorGoesToHandleErrorAndTheCompletionAndNothingIsSaved() throws {
        let layer = try RecordingLayer(inMemoryModel: try ObjectModel(types: [Book.self]))
        let completion = Completion()
        layer.writeSync(
            { context in
                try context.insert(Book(title: "Half-written"))
                throw WriteFailed()
            }, completion: completion.handler)
        #expect(completion.wait() is WriteFailed)
        #expect(layer.recordedErrors.count == 1)
        var count = -1
        layer.read { context in count = try Book.count(in: context) }
        #expect(count == 0)
        layer.read { _ in throw WriteFailed() }
        #expect(layer.recordedErrors.count == 2)
    }

    @Test func crudHelpers() throws {
        let layer = try RecordingLayer(inMemoryModel: try ObjectModel(types: [Book.self]))
        layer.writeSync { context in
            try Book.create(in: context).encode(\.title, "Dune").encode(\.year, 1965)
            try context.insert(Book(title: "Emma", year: 1815))
            try context.insert(Book(title: "Solaris", year: 1961))
        }
        var results: [String: Int] = [:]
        var firstTitle: String?
        layer.read { context in
            results["all"] = try Book.all(in: context).count
            results["old"] = try Book.all(matching: \Book.year < 1900, in: context).count
            results["old by format"] = try Book.all(matching: "year < %d", 1900, in: context).count
            results["count"] = try Book.count(in: context)
            firstTitle = try Book.first(in: context)?.decode(\.title)
        }
        #expect(results == ["all": 3, "old": 1, "old by format": 1, "count": 3])
        #expect(firstTitle == "Dune")
        layer.writeSync { context in try Book.removeAll(in: context) }
        layer.read { context in results["after"] = try Book.count(in: context) }
        #expect(results["after"] == 0)
        #expect(layer.recordedErrors.isEmpty)
    }

    @Test func aSQLiteSetUpInOneCallKeepsItsDataAcrossRestarts() throws {
        let folder = TemporaryDirectory()
        let model = try ObjectModel(types: [Book.self])
        do {
            let layer = try RecordingLayer(sqliteStack: "Library", model: model, directory: folder.url)
            let completion = Completion()
            layer.writeSync({ context in try context.insert(Book(title: "Dune")) }, completion: completion.handler)
            #expect(completion.wait() == nil)
        }
        let reopened = try RecordingLayer(sqliteStack: "Library", model: model, directory: folder.url)
        var titles: [String] = []
        reopened.read { context in titles = try context.fetch(Book.all, \Book.title) }
        #expect(titles == ["Dune"])
    }

    @Test func saveInFlightChangesWritesWhatMainHolds() throws {
        let layer = try RecordingLayer(inMemoryModel: try ObjectModel(types: [Book.self]))
        layer.read { context in try context.insert(Book(title: "Unsaved in main")) } // left unsaved in main
        #expect(try storedTitles(layer) == [])
        try layer.saveInFlightChanges()
        #expect(try storedTitles(layer) == ["Unsaved in main"])
    }

    #if !os(Windows)
        @Test func aTerminationSignalSavesInFlightChangesFirst() async throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("skerry-shutdown-\(getpid())")
            defer { try? FileManager.default.removeItem(at: path) }
            await #expect(processExitsWith: .signal(SIGTERM)) {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("skerry-shutdown-\(getppid())")
                let layer = try DataAccessLayer(sqliteStack: "Library", model: try ObjectModel(types: [Book.self]), directory: folder)
                layer.saveOnShutdown()
                layer.read { context in try context.insert(Book(title: "Saved on SIGTERM")) } // unsaved in main
                kill(getpid(), SIGTERM) // as a service manager stops a process
                // Stay alive as a server would (a signal interrupts `sleep`); the handler saves, then
                // ends the process by the signal. The deadline only guards against a hang (generous:
                // on a loaded machine the save may take seconds).
                for _ in 0..<1_200 { usleep(100_000) }
            }
            let layer = try DataAccessLayer(sqliteStack: "Library", model: try ObjectModel(types: [Book.self]), directory: path)
            #expect(try storedTitles(layer) == ["Saved on SIGTERM"])
        }
    #endif
}
