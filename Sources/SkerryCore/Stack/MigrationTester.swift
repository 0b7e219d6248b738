import Foundation

/// Tests a ``MigrationPlan`` in a user's own test suite: a store is filled at the first version,
/// then migrated to the last — at once, or one version at a time with a check after each step.
///
/// ```swift
/// let tester = MigrationTester(plan: plan, directory: temporaryFolder)
/// try tester.migrateStepByStep(populate: { context in ... try context.save() },
///                              check: { version, context in ... })
/// ```
public struct MigrationTester: Sendable {
    /// The plan under test.
    public let plan: MigrationPlan
    /// Where the test stores are made.
    public let directory: URL

    /// A tester for `plan`, making its stores in `directory`.
    public init(plan: MigrationPlan, directory: URL) {
        self.plan = plan
        self.directory = directory
    }

    /// Fills a new store at the first version with `populate` (which must save), then migrates it
    /// to each later version in turn and calls `check` with the version's index and a context on
    /// the migrated store.
    public func migrateStepByStep(
        populate: (ObjectContext) throws -> Void,
        check: (_ version: Int, _ context: ObjectContext) throws -> Void
    ) throws {
        let url = try populatedStore(populate)
        for version in 1..<plan.versions.count {
            try open(url, version: version) { try check(version, $0) }
        }
    }

    /// Fills a new store at the first version, migrates it straight to the last version, and calls
    /// `check` with a context on it.
    public func migrateAtOnce(populate: (ObjectContext) throws -> Void, check: (_ context: ObjectContext) throws -> Void) throws {
        let url = try populatedStore(populate)
        try open(url, version: plan.versions.count - 1, check)
    }

    private func populatedStore(_ populate: (ObjectContext) throws -> Void) throws -> URL {
        let url = directory.appendingPathComponent("MigrationTest-\(UUID().uuidString).sqlite")
        let stack = PersistentStack(name: "MigrationTest", model: plan.versions[0])
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait { try populate(context) }
        return url
    }

    private func open(_ url: URL, version: Int, _ body: (ObjectContext) throws -> Void) throws {
        let stack = PersistentStack(name: "MigrationTest", model: plan.versions[version])
        var description = StoreDescription(url: url)
        description.migrationPlan = plan.through(version)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait { try body(context) }
    }
}
