import Foundation
import Skerry
import SkerryCore
// Every file of this target sees the shared test kit without importing it.
@_exported import SkerryTestSupport
import Synchronization
import Testing

/// Collects what a container's `logError` receives, from any thread.
final class RecordedErrors: Sendable {
    private let storage = Mutex<[any Error]>([])

    /// The errors received so far, in order.
    var all: [any Error] { storage.withLock { $0 } }

    /// A `logError` handler that records into this log.
    var handler: @Sendable (any Error) -> Void {
        { [self] error in storage.withLock { $0.append(error) } }
    }
}

/// Counts calls, from any thread.
final class InvocationCounter: Sendable {
    private let storage = Mutex(0)
    var value: Int { storage.withLock { $0 } }
    func increment() { storage.withLock { $0 += 1 } }
}

/// An error a test throws on purpose.
struct SampleFailure: Error, Equatable {
    var reason: String
}

/// The two kinds of store, for tests that must hold on each.
enum TypedStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case file, memory
    var testDescription: String { rawValue }
}

/// A loaded stack of `kind`, with the folder it lives in (nil in memory): keep the folder alive
/// as long as the stack.
func makeTypedStack(_ kind: TypedStoreKind) throws -> (PersistentStack, TemporaryDirectory?) {
    switch kind {
    case .memory:
        return (try makeStack(), nil)
    case .file:
        let folder = TemporaryDirectory()
        return (try makeStack(in: folder.url), folder)
    }
}

/// A stack with the test models and an in-memory store description, whose stores are not loaded yet.
func makeUnloadedTypedStack() throws -> PersistentStack {
    let stack = PersistentStack(name: "Library", model: try ObjectModel(types: [Book.self, AllTypes.self]))
    stack.persistentStoreDescriptions = [.inMemory()]
    return stack
}

/// The titles in the store, sorted, read through a fresh container (new context, nothing cached).
func storedTitles(in stack: PersistentStack) throws -> [String] {
    let reader = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
    return try reader.perform { try $0.fetch(Book.all, \Book.title) }.sorted()
}
