import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A stack over GraphFixtures' model (or another), on a file in a temporary folder, in memory, or
/// on the PostgreSQL test server.
final class GraphHarness: Sendable {
    let kind: StoreKind
    let model: ObjectModel
    let directory: TemporaryDirectory?
    let url: URL?
    let stack: PersistentStack
    /// The PostgreSQL store's description, to reopen it.
    let postgresDescription: StoreDescription?
    /// Stacks opened by `reopened()`, kept alive as long as the harness.
    private let reopenedStacks = Locked<[PersistentStack]>([])

    init(_ kind: StoreKind, model: ObjectModel = GraphFixtures.model()) throws {
        self.kind = kind
        self.model = model
        switch kind {
        case .file:
            let directory = TemporaryDirectory()
            let url = directory.file("Graph.sqlite")
            self.directory = directory
            self.url = url
            postgresDescription = nil
            stack = try Self.openStack(url, model: model)
        case .memory:
            directory = nil
            url = nil
            postgresDescription = nil
            stack = PersistentStack(name: "Graph", model: model)
            stack.persistentStoreDescriptions = [.inMemory()]
            try stack.loadPersistentStores()
        case .postgres:
            directory = nil
            url = nil
            let description = try PostgresTestStore.newDescription()
            postgresDescription = description
            stack = PersistentStack(name: "Graph", model: model)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
        }
    }

    static func openStack(_ url: URL, model: ObjectModel) throws -> PersistentStack {
        let stack = PersistentStack(name: "Graph", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        return stack
    }

    /// A new context of the harness's stack.
    func context() -> ObjectContext { stack.newBackgroundContext() }

    /// A context that reads what was saved afresh: of a new stack on the same file or database
    /// (the store is reopened), or a new context of the in-memory stack.
    func reopened() throws -> ObjectContext {
        if let options = postgresDescription?.postgresOptions {
            let stack = PersistentStack(name: "Graph", model: model)
            stack.persistentStoreDescriptions = [.postgres(options)]
            try stack.loadPersistentStores()
            reopenedStacks.append(stack)
            return stack.newBackgroundContext()
        }
        guard let url else { return stack.newBackgroundContext() }
        let stack = try Self.openStack(url, model: model)
        reopenedStacks.append(stack)
        return stack.newBackgroundContext()
    }

    /// One integer computed by SQL on the store: through a raw connection to the file, or
    /// through the store's own connections.
    func scalar(_ sql: String) throws -> Int {
        if let url {
            let text = try #require(rawSQL(url, sql).first?.first)
            return try #require(Int(text))
        }
        if let store = stack.coordinator.loadedStores.first as? PostgresStore {
            return Int(try store.withConnection(nil) { connection in try connection.scalarInt64(sql) } ?? -1)
        }
        let store = try #require(stack.coordinator.loadedStores.first as? SQLiteStore)
        return Int(try store.read(nil) { connection in try connection.scalarInt64(sql) } ?? -1)
    }
}
