import Foundation
import Skerry
import Testing

// Sworm code as an app keeping user profiles in Core Data writes it (its container set-up, a
// Sworm container over the view context or background contexts, fetch-and-decode, counts from
// `async let`), ported with the names page's renames only. Modelled on pizza-studio's profile
// stores; no code of theirs is copied.

private struct ProfileRecord: ManagedObjectConvertible {
    struct Relations {}

    static let entityName = "ProfileConfiguration"
    static let relations = Relations()
    static let attributes: Set<Attribute<ProfileRecord>> = [
        .init(\.allowNotification, "allowNotification"),
        .init(\.name, "name"),
        .init(\.priority, "priority"),
        .init(\.token, "token"),
        .init(\.uid, "uid"),
        .init(\.uuid, "uuid"),
    ]

    init() {}

    var allowNotification = false
    var name = ""
    var priority = 0
    var token: String? = ""
    var uid = "000000000"
    var uuid = UUID()
}

private enum Persistence {
    case inMemory
    case local(URL)
}

/// The stack as the app loads it: the first description pointed at `/dev/null` for memory or at
/// a file, an option the platform has no use for, errors collected from the completion handler,
/// and a view context that merges saves with the store's values winning.
private func loadedStack(_ persistence: Persistence) throws -> PersistentStack {
    let stack = PersistentStack(name: "ProfileConfiguration", managedObjectModel: try ObjectModel(types: [ProfileRecord.self]))
    switch persistence {
    case .inMemory: stack.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
    case .local(let url): stack.persistentStoreDescriptions[0].url = url
    }
    stack.persistentStoreDescriptions[0].setOption(true as NSNumber, forKey: "NSPersistentStoreRemoteChangeNotificationOptionKey")
    var error: Error?
    stack.loadPersistentStores { _, caughtError in
        error = caughtError
    }
    if let error { throw error }
    let viewContext = stack.viewContext
    viewContext.automaticallyMergesChangesFromParent = true
    viewContext.mergePolicy = MergeByPropertyStoreTrumpMergePolicy
    viewContext.performAndWait { viewContext.refreshAllObjects() } // the view context has its own queue here
    return stack
}

/// The app's access object: one Sworm container over the view context or background contexts.
private final class ProfileSputnik: Sendable {
    let db: PersistentContainer

    init(_ persistence: Persistence, backgroundContext: Bool) throws {
        let stack = try loadedStack(persistence)
        if backgroundContext {
            db = .init(managedObjectContext: stack.newBackgroundContext)
        } else {
            db = .init { stack.viewContext }
        }
    }

    func add(_ profile: ProfileRecord) throws {
        try db.perform { ctx in
            _ = try ctx.insert(profile)
        }
    }

    func allProfiles() throws -> [ProfileRecord] {
        try db.perform { ctx in
            try ctx.fetch(ProfileRecord.all.sort(\.priority)).map { try $0.decode() }
        }
    }

    func countAll() throws -> Int {
        try db.perform { ctx in
            try ctx.count(of: ProfileRecord.all)
        }
    }

    func countTwiceConcurrently() async throws -> Int {
        async let first = countAll()
        async let second = countAll()
        return try await first + second
    }
}

@Suite struct ContainerPortTests {
    private func profile(_ name: String, priority: Int, token: String?) -> ProfileRecord {
        var profile = ProfileRecord()
        profile.name = name
        profile.priority = priority
        profile.token = token
        return profile
    }

    @Test func profilesSurviveReopeningAFileStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skerry-port-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) } // try?: cleanup only
        let url = directory.appendingPathComponent("Profiles.sqlite")
        do {
            let writer = try ProfileSputnik(.local(url), backgroundContext: true)
            try writer.add(profile("Lumine", priority: 2, token: nil))
            try writer.add(profile("Aether", priority: 1, token: "v2"))
        }
        let reader = try ProfileSputnik(.local(url), backgroundContext: false)
        let profiles = try reader.allProfiles()
        #expect(profiles.map(\.name) == ["Aether", "Lumine"])
        #expect(profiles.map(\.token) == ["v2", nil])
        #expect(try await reader.countTwiceConcurrently() == 4)
    }

    @Test func devNullStoresAreSeparateAndKeepNothing() throws {
        let first = try ProfileSputnik(.inMemory, backgroundContext: true)
        let second = try ProfileSputnik(.inMemory, backgroundContext: false)
        try first.add(profile("Lumine", priority: 1, token: nil))
        #expect(try first.countAll() == 1)
        #expect(try second.countAll() == 0)
    }
}
