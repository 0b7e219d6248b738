import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore

/// Core Data's `NSBatchDeleteRequest(objectIDs:)`, its status-only result, and remote merges into
/// nested contexts, on SQLite files and in-memory stores (the PostgreSQL suite runs the same
/// scenarios: PostgresBatchDeleteTests).
@Suite struct BatchDeleteByIDTests {
    static let kinds: [StoreKind] = [.file, .memory]

    static func stack(_ kind: StoreKind) throws -> (PersistentStack, TemporaryDirectory?) {
        try makeStack(kind, model: BatchDeleteScenarios.model)
    }

    @Test(arguments: kinds) func deletesByObjectIDs(kind: StoreKind) throws {
        let (stack, directory) = try Self.stack(kind)
        try BatchDeleteScenarios.deletesByObjectIDs(stack)
        withExtendedLifetime(directory) {}
    }

    @Test(arguments: kinds) func statusOnlyIsCoreDatasDefault(kind: StoreKind) throws {
        let (stack, directory) = try Self.stack(kind)
        try BatchDeleteScenarios.statusOnlyIsCoreDatasDefault(stack)
        withExtendedLifetime(directory) {}
    }

    @Test(arguments: kinds) func refusesIDsItCannotDelete(kind: StoreKind) throws {
        let (stack, directory) = try Self.stack(kind)
        let (other, otherDirectory) = try Self.stack(kind)
        try BatchDeleteScenarios.refusesIDsItCannotDelete(stack, otherStack: other)
        withExtendedLifetime((directory, otherDirectory)) {}
    }

    @Test(arguments: kinds) func deletesManyObjectIDs(kind: StoreKind) throws {
        let (stack, directory) = try Self.stack(kind)
        try BatchDeleteScenarios.deletesManyObjectIDs(stack)
        withExtendedLifetime(directory) {}
    }

    @Test(arguments: kinds) func remoteMergesReachNestedContexts(kind: StoreKind) throws {
        let (stack, directory) = try Self.stack(kind)
        try BatchDeleteScenarios.remoteMergesReachNestedContexts(stack)
        withExtendedLifetime(directory) {}
    }

    /// Called from inside a block of the parent (as a batch-delete helper does), the merge reaches
    /// the children too, without waiting on itself.
    @Test func remoteMergesFromInsideTheParentsBlockReachItsChildren() throws {
        let stack = try makeMemoryStack(model: BatchDeleteScenarios.model)
        let ids = try BatchDeleteScenarios.saveBooks(["Dune", "Emma"], in: stack)
        let root = stack.newBackgroundContext()
        let child = root.newChildContext()
        try child.performAndWait { for id in ids { _ = try child.existingObject(with: id).value(forKey: "title", as: String.self) } }
        try root.performAndWait {
            var request = BatchDeleteRequest(objectIDs: [ids[0]])
            request.resultType = .resultTypeObjectIDs
            let result = try root.execute(request)
            ObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: result.result as? [ObjectID] ?? []], into: [root])
        }
        #expect(child.performAndWait { child.registeredObject(for: ids[0]) == nil && child.registeredObject(for: ids[1]) != nil })
    }

    /// A parent holds its children weakly: a child that is gone is dropped from its list, and the
    /// merge reaches the children that live.
    @Test func remoteMergesSkipChildrenThatAreGone() throws {
        let stack = try makeMemoryStack(model: BatchDeleteScenarios.model)
        let ids = try BatchDeleteScenarios.saveBooks(["Dune"], in: stack)
        let root = stack.newBackgroundContext()
        var child: ObjectContext? = root.newChildContext()
        weak let released = child
        child = nil
        #expect(released == nil)
        #expect(root.liveChildren.isEmpty)
        let kept = root.newChildContext()
        try kept.performAndWait { _ = try kept.existingObject(with: ids[0]) }
        ObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: ids], into: [root, kept])
        #expect(kept.performAndWait { kept.registeredObject(for: ids[0]) == nil })
        #expect(root.liveChildren.count == 1)
    }
}
