import Foundation
import Skerry
import SkerryCore
import Testing

/// A perform inside another perform on the same context joins it: one unit of work that the
/// outermost perform saves, or fails, as a whole.
@Suite struct NestedPerformTests {
    /// A container over one shared context, with its error log.
    private func sharedContainer(_ stack: PersistentStack, cleanUp: Bool = true) -> (PersistentContainer, RecordedErrors) {
        let shared = stack.newBackgroundContext()
        let errors = RecordedErrors()
        return (PersistentContainer(managedObjectContext: { shared }, logError: errors.handler, cleanUpAfterExecution: cleanUp), errors)
    }

    @Test(arguments: [true, false])
    func aNestedPerformSavesWithTheOuterOneAndLeavesItsObjectsValid(cleanUp: Bool) throws {
        let stack = try makeStack()
        let (container, errors) = sharedContainer(stack, cleanUp: cleanUp)
        let title = try container.perform { context in
            let outer = try context.insert(Book(title: "Outer"))
            let inner = try container.perform { try $0.insert(Book(title: "Inner")).decode().title }
            #expect(try storedTitles(in: stack).isEmpty) // the nested perform saved nothing
            return try outer.decode().title + "+" + inner // and reset nothing
        }
        #expect(title == "Outer+Inner")
        #expect(try storedTitles(in: stack) == ["Inner", "Outer"])
        #expect(errors.all.isEmpty)
    }

    @Test func anOuterPerformThatFailsSavesNothingOfTheNestedOne() throws {
        let stack = try makeStack()
        let (container, errors) = sharedContainer(stack)
        #expect(throws: SampleFailure(reason: "outer")) {
            try container.perform { context in
                try context.insert(Book(title: "Outer"))
                try container.perform { try $0.insert(Book(title: "Inner")) }
                throw SampleFailure(reason: "outer")
            }
        }
        #expect(try storedTitles(in: stack).isEmpty)
        #expect(errors.all.count == 1)
    }

    @Test func aNestedFailureFailsTheOuterPerformEvenWhenCaught() throws {
        let stack = try makeStack()
        let (container, errors) = sharedContainer(stack)
        var caughtInside = false
        #expect(throws: SampleFailure(reason: "inner")) {
            try container.perform { context in
                try context.insert(Book(title: "Outer"))
                do {
                    try container.perform { context in
                        try context.insert(Book(title: "Half done"))
                        throw SampleFailure(reason: "inner")
                    }
                } catch {
                    caughtInside = true // the outer work goes on...
                }
                try context.insert(Book(title: "After"))
            } // ...but cannot save half of the inner work
        }
        #expect(caughtInside)
        #expect(try storedTitles(in: stack).isEmpty)
        #expect(errors.all.count == 1) // logged once, by the outermost perform
    }

    @Test func performsOfTwoContainersOverOneContextJoinToo() throws {
        let stack = try makeStack()
        let shared = stack.newBackgroundContext()
        let repository = PersistentContainer(managedObjectContext: { shared })
        let service = PersistentContainer(managedObjectContext: { shared })
        try service.perform { context in
            let book = try context.insert(Book(title: "Service"))
            try repository.perform { try $0.insert(Book(title: "Repository")) }
            _ = try book.decode() // still valid: nothing was reset
        }
        #expect(try storedTitles(in: stack) == ["Repository", "Service"])
    }
}
