import Foundation
import Skerry

// Set-up of the progressive migration test: Sworm's SwormTools drove Core Data's mapping models;
// here the versions and custom steps are a MigrationPlan. The actions receive the stack, as
// SwormTools' actions received the NSPersistentContainer.

enum MigratingModels {
    /// Version 0: `Ticket`. Version 1: `Token`, made from each ticket (`number` becomes the
    /// `Double` `serial`). Version 2: the same shape, serials multiplied by ten. Version 3 adds `Stamp`.
    static func plan() throws -> MigrationPlan {
        let v0 = try ObjectModel(types: [Migrating.Ticket.self])
        let v1 = try ObjectModel(types: [Migrating.Token.self])
        let v2 = try ObjectModel(entities: [try Migrating.Token.entityDescription()], versionHashModifier: "serial x10")
        let v3 = try ObjectModel(
            entities: [try Migrating.Token.entityDescription(), try Migrating.Stamp.entityDescription()],
            versionHashModifier: "serial x10")
        return MigrationPlan(
            versions: [v0, v1, v2, v3],
            steps: [
                MigrationStep(
                    from: 0,
                    finish: { migration in
                        for ticket in try migration.sourceRows(of: "Ticket") {
                            guard case .int(let number) = ticket["number"] else { continue }
                            _ = try migration.insert("Token", ["serial": .double(Double(number)), "holder": ticket["holder"]])
                        }
                    }),
                MigrationStep(
                    from: 1,
                    transformRow: { entity, source, destination in
                        if entity == "Token", case .double(let serial) = source["serial"] {
                            destination["serial"] = .double(serial * 10)
                        }
                    }),
            ])
    }
}

enum MigrationHarness {
    typealias TestAction = (PersistentStack) -> Void

    /// Fills a new store at the first version with `preAction`, then opens it with the last
    /// version (migrating every step at once) and runs `postAction`.
    static func test(plan: MigrationPlan, preAction: TestAction?, postAction: TestAction?) throws {
        let url = temporaryStore()
        defer { removeStore(url) }
        preAction?(try stack(plan: plan, version: 0, url: url))
        postAction?(try stack(plan: plan, version: plan.versions.count - 1, url: url))
    }

    /// Opens a new store at each version in turn (migrating one step each time) and runs the
    /// action of that version.
    static func testStepByStep(plan: MigrationPlan, actions: [Int: TestAction]) throws {
        let url = temporaryStore()
        defer { removeStore(url) }
        for version in plan.versions.indices {
            actions[version]?(try stack(plan: plan, version: version, url: url))
        }
    }

    private static func stack(plan: MigrationPlan, version: Int, url: URL) throws -> PersistentStack {
        let stack = PersistentStack(name: "Migrating", model: plan.versions[version])
        var description = StoreDescription(url: url)
        description.migrationPlan = plan.through(version)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        return stack
    }

    private static func temporaryStore() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("sworm-style-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("store.sqlite")
    }

    private static func removeStore(_ url: URL) {
        // Cleaning up a temporary folder; a failure leaves it to the system's temporary cleaner.
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
    }
}
