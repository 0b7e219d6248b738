import Foundation
import Testing

@testable import SkerryCore

/// Use of a context or its objects outside the context's blocks stops the process with a message
/// naming the context and the call, in every build: each case runs in a separately spawned process
/// (an exit test), which must die by the trap that `fatalError` raises — not by a crash elsewhere —
/// with the message on its standard error. `swift test -c release --filter ConfinementTests` runs the
/// same cases against a release build.
@Suite struct ConfinementTests {
    /// The signal Swift's runtime traps raise on this architecture.
    #if arch(x86_64) || arch(i386)
        static let trapSignal = SIGILL
    #else
        static let trapSignal = SIGTRAP
    #endif

    /// Checks the message a misuse process wrote.
    private func expectMessage(
        _ result: ExitTest.Result?, call: String, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Skerry: \(call) was called on ObjectContext '\(context)'"), "\(text)", sourceLocation: sourceLocation)
        #expect(text.contains("outside its perform/performAndWait block"), sourceLocation: sourceLocation)
    }

    @Test func savingAContextOutsideItsBlocksStops() async {
        let result = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack()
            let context = stack.newBackgroundContext()
            try context.save()
        }
        expectMessage(result, call: "save()", context: "background")
    }

    @Test func fetchingFromAnotherThreadWhileTheContextWorksStops() async {
        let result = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack()
            let context = stack.newBackgroundContext()
            // The owner is busy in a block; a second thread barges in, as a misused service would.
            try context.performAndWait {
                for index in 0..<50 { try context.insertBook("Book \(index)") }
                let intruder = Thread { _ = try? context.fetch(FetchRequest(entityName: "Book")) }
                intruder.start()
                while true {
                    try context.insertBook("Busy")
                    usleep(1000)
                }
            }
        }
        expectMessage(result, call: "fetch(_:)", context: "background")
    }

    @Test func settingAValueOfAnObjectOutsideItsContextStops() async {
        let result = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack()
            let context = stack.newBackgroundContext()
            let book = try context.performAndWait { try context.insertBook("Escaped") }
            try book.setValue("Changed outside", forKey: "title")
        }
        expectMessage(result, call: "setValue(_:forKey:)", context: "background")
    }

    @Test func readingAValueOfAnObjectOutsideItsContextStops() async {
        let result = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack()
            let context = stack.newBackgroundContext()
            let book = try context.performAndWait { try context.insertBook("Escaped") }
            _ = try book.value(forKey: "title", as: String.self)
        }
        expectMessage(result, call: "value(forKey:as:)", context: "background")
    }

    @Test func relatingObjectsInsideAnotherContextsBlockStops() async {
        let result = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack(model: GraphFixtures.model())
            let a = stack.viewContext
            let b = stack.newBackgroundContext()
            let (author, book) = try a.performAndWait { (try a.insertNamed("Author", "A"), try a.insertNamed("Book", "B")) }
            try b.performAndWait { try book.setRelatedObject(author, forKey: "author") }
        }
        expectMessage(result, call: "setRelatedObject(_:forKey:)", context: "viewContext")
    }

    @Test func resettingAndMergingOutsideTheBlocksStop() async {
        let reset = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack()
            stack.newBackgroundContext().reset()
        }
        expectMessage(reset, call: "reset()", context: "background")
        let merge = await #expect(processExitsWith: .signal(Self.trapSignal), observing: [\.standardErrorContent]) {
            let stack = try makeMemoryStack()
            stack.newBackgroundContext().mergeChanges(StoreChanges())
        }
        expectMessage(merge, call: "mergeChanges(_:)", context: "background")
    }

    @Test func theSameWorkInsideTheBlocksExitsNormally() async {
        await #expect(processExitsWith: .success) {
            let stack = try makeMemoryStack()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let book = try context.insertBook("Inside")
                _ = context.hasChanges
                _ = try book.value(forKey: "title", as: String.self)
                try context.save()
                context.reset()
            }
        }
    }
}
