import Foundation
import Skerry
import Synchronization
import Testing

/// Sworm's `add`, `remove`, `context.delete` and `encode` cannot throw. An error they meet is not
/// lost: the perform fails with it, logs it once, and saves nothing.
@Suite struct ErrorRecordingTests {
    /// What a container's `logError` received.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ error: any Swift.Error) { entries.withLock { $0.append("\(error)") } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A container over a new store, and what its `logError` received.
    private func container() throws -> (PersistentContainer, Log) {
        let stack = try TestDB.loadedStack(DataModels.shelf)
        let logged = Log()
        let pc = PersistentContainer(
            managedObjectContext: stack.newBackgroundContext,
            logError: { error in logged.append(error) }
        )
        return (pc, logged)
    }

    /// An object kept from an earlier perform (whose context was reset since) cannot be added.
    @Test func addingAStaleObjectFailsThePerform() throws {
        let (pc, logged) = try container()
        let stale = try pc.perform { ctx in
            try ctx.insert(Shelf.Novel(title: "kept too long"))
        }

        let error = #expect(throws: SkerryError.self) {
            try pc.perform { ctx in
                let writer = try ctx.insert(Shelf.Writer(name: "new"))
                writer.novels.add(stale)
            }
        }
        #expect(error?.code == .objectNotInContext)
        #expect(logged.all.count == 1)
        let writers = try pc.perform { ctx in
            try ctx.count(of: Shelf.Writer.all)
        }
        #expect(writers == 0)
    }

    @Test func deletingAStaleObjectFailsThePerform() throws {
        let (pc, logged) = try container()
        let stale = try pc.perform { ctx in
            try ctx.insert(Shelf.Novel(title: "kept too long"))
        }

        #expect(throws: SkerryError.self) {
            try pc.perform { ctx in
                try ctx.insert(Shelf.Writer(name: "new"))
                ctx.delete(stale)
            }
        }
        #expect(logged.all.count == 1)
        let counts = try pc.perform { ctx in
            (try ctx.count(of: Shelf.Writer.all), try ctx.count(of: Shelf.Novel.all))
        }
        #expect(counts == (0, 1))
    }

    /// Writing to an object deleted earlier in the same perform.
    @Test func encodingADeletedObjectFailsThePerform() throws {
        let (pc, logged) = try container()

        let error = #expect(throws: SkerryError.self) {
            try pc.perform { ctx in
                try ctx.insert(Shelf.Writer(name: "kept"))
                let novel = try ctx.insert(Shelf.Novel(title: "gone"))
                ctx.delete(novel)
                novel.encode(\.title, "changed after the delete")
            }
        }
        #expect(error?.code == .objectNotInContext)
        #expect(logged.all.count == 1)
        let writers = try pc.perform { ctx in
            try ctx.count(of: Shelf.Writer.all)
        }
        #expect(writers == 0)
    }

    /// When the work also throws, the thrown error is the perform's; the recorded one is logged too.
    @Test func aThrownErrorWinsAndTheRecordedOneIsLogged() throws {
        struct Stop: Swift.Error {}
        let (pc, logged) = try container()
        let stale = try pc.perform { ctx in
            try ctx.insert(Shelf.Novel(title: "kept too long"))
        }

        #expect(throws: Stop.self) {
            try pc.perform { ctx in
                try ctx.insert(Shelf.Writer(name: "new")).novels.add(stale)
                throw Stop()
            }
        }
        let messages = logged.all
        #expect(messages.count == 2)
        #expect(messages.first?.contains("objectNotInContext") == true)
    }

    /// The next perform on a context kept as a cache starts clean.
    @Test func aFailedPerformLeavesACachedContextClean() throws {
        let stack = try TestDB.loadedStack(DataModels.shelf)
        let context = stack.newBackgroundContext()
        let pc = PersistentContainer(managedObjectContext: { context }, cleanUpAfterExecution: false)
        let stale = try PersistentContainer(managedObjectContext: stack.newBackgroundContext).perform { ctx in
            try ctx.insert(Shelf.Novel(title: "elsewhere"))
        }

        #expect(throws: SkerryError.self) {
            try pc.perform { ctx in
                try ctx.insert(Shelf.Writer(name: "new")).novels.add(stale)
            }
        }
        try pc.perform { ctx in
            try ctx.insert(Shelf.Writer(name: "next"))
        }
        let names = try pc.perform { ctx in
            try ctx.fetch(Shelf.Writer.all, \.name)
        }
        #expect(names == ["next"])
    }
}
