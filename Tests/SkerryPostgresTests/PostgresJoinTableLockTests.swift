import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A many-to-many relationship ordered on both sides has its join rows written by both sides
/// (each sets its own order column): two service instances saving crossing changes at once wait
/// for each other instead of deadlocking.
@Suite(.postgres) struct PostgresJoinTableLockTests {
    /// Tags t1, t2 and t3 sponsor teams (`Tag.sponsored` <-> `Team.sponsors`, both ordered; the
    /// join table `_Tag_sponsored` is Tag's). Save C (one instance) reorders t1's teams and
    /// B's sponsors, dropping t3; save D (another instance on the same schema) reorders t2's
    /// teams and A's sponsors. Each writes join rows of both tags: without locking the other ends
    /// of the rows it writes, C takes (t1, A) and then waits for (t2, B) while D takes (t2, B)
    /// and waits for (t1, A), a deadlock the server breaks after `deadlock_timeout` by failing
    /// one of them (which the store then retries). Another session holds the row (t3, B), so
    /// that C stops part-way (at t3's rows, after t1's) until D waits for it; then it lets go.
    /// Both saves commit, neither is begun again, and every list has its order.
    @Test func crossingSavesOfBothSidesOfADoublyOrderedJoinTableWaitInsteadOfDeadlocking() throws {
        let model = try DoublyOrderedModel.model()
        let schema = PostgresTestServer.newSchema()
        let first = try PostgresTestServer.stack(model, schema, name: "InstanceC", maximumConnections: 2)
        let second = try PostgresTestServer.stack(model, schema, name: "InstanceD", maximumConnections: 2)
        let stores = try [first, second].map { try #require($0.persistentStoreCoordinator.loadedStores.first as? PostgresStore) }

        let seeding = first.newBackgroundContext()
        let (t3Key, bKey) = try seeding.performAndWait {
            let tags = try (1...3).map { index in
                let tag = try seeding.insert(entityName: "Tag")
                try tag.setValue("t\(index)", forKey: "label")
                return tag
            }
            let a = try seeding.insert(entityName: "Team"), b = try seeding.insert(entityName: "Team")
            try a.setValue("A", forKey: "name")
            try b.setValue("B", forKey: "name")
            try tags[0].setRelatedObjects([a, b], forKey: "sponsored")
            try tags[1].setRelatedObjects([a, b], forKey: "sponsored")
            try tags[2].setRelatedObjects([b], forKey: "sponsored")
            try a.setRelatedObjects([tags[0], tags[1]], forKey: "sponsors")
            try b.setRelatedObjects([tags[0], tags[1], tags[2]], forKey: "sponsors")
            try seeding.save()
            return (tags[2].objectID.key, b.objectID.key)
        }
        let seeded = ["A: t1 t2", "B: t1 t2 t3", "t1: A B", "t2: A B", "t3: B"]
        #expect(try DoublyOrderedModel.contents(second.newBackgroundContext()) == seeded)

        let holder = try PostgresTestServer.connect()
        let holderPID = try #require(try holder.scalarInt64("SELECT pg_backend_pid()"))
        try holder.execute("BEGIN")
        try holder.query(
            "SELECT 1 FROM \"\(schema)\".\"_Tag_sponsored\" WHERE source = ? AND target = ? FOR UPDATE", [.int(t3Key), .int(bKey)])
        let watcher = try PostgresTestServer.connect()
        let blockedBy = "SELECT count(*) FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))"

        let results = Locked<[String: SkerryError?]>([:])
        let done = DispatchGroup()
        func save(_ name: String, _ stack: PersistentStack, _ change: @escaping @Sendable (ObjectContext) throws -> Void) {
            let context = stack.newBackgroundContext()
            DispatchQueue.global().async(group: done) {
                let failure: SkerryError? = context.performAndWait {
                    do {
                        try change(context)
                        try context.save()
                        return nil
                    } catch {
                        return error as? SkerryError ?? SkerryError(.database, "\(error)")
                    }
                }
                results.update { $0[name] = failure }
            }
        }
        save("C", first) { context in
            let t1 = try Self.object(context, "Tag", "label", "t1"), t2 = try Self.object(context, "Tag", "label", "t2")
            try t1.moveRelatedObject(from: 1, to: 0, forKey: "sponsored") // B A
            try Self.object(context, "Team", "name", "B").setRelatedObjects([t2, t1], forKey: "sponsors") // t3 leaves
        }
        do {
            try PostgresConcurrentSaveTests.waitUntil(watcher, blockedBy, [.int(holderPID)])
            let firstPID = try #require(
                try watcher.scalarInt64(
                    "SELECT pid FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))", [.int(holderPID)]))
            save("D", second) { context in
                let t1 = try Self.object(context, "Tag", "label", "t1"), t2 = try Self.object(context, "Tag", "label", "t2")
                try t2.moveRelatedObject(from: 1, to: 0, forKey: "sponsored") // B A
                try Self.object(context, "Team", "name", "A").setRelatedObjects([t2, t1], forKey: "sponsors")
            }
            try PostgresConcurrentSaveTests.waitUntil(watcher, blockedBy, [.int(firstPID)])
        } catch {
            try holder.execute("ROLLBACK")
            done.wait()
            throw error
        }
        try holder.execute("ROLLBACK")
        done.wait()

        let outcome = results.value
        #expect(outcome.count == 2)
        #expect((outcome["C"] ?? nil) == nil, "save C failed: \(String(describing: outcome["C"]))")
        #expect((outcome["D"] ?? nil) == nil, "save D failed: \(String(describing: outcome["D"]))")
        #expect(stores.map { $0.writesRetried.load(ordering: .relaxed) } == [0, 0], "a save was begun again (a deadlock)")
        let expected = ["A: t2 t1", "B: t2 t1", "t1: B A", "t2: B A", "t3: "]
        #expect(try DoublyOrderedModel.contents(first.newBackgroundContext()) == expected)
        #expect(try DoublyOrderedModel.contents(second.newBackgroundContext()) == expected)
    }
}

extension PostgresJoinTableLockTests {
    static func object(_ context: ObjectContext, _ entity: String, _ key: String, _ value: String) throws -> EntityObject {
        try #require(try context.fetch(FetchRequest(entityName: entity, predicate: AttributeKey(key) == value)).first)
    }
}

/// The model of the test: `Team.sponsors` <-> `Tag.sponsored`, both ordered.
enum DoublyOrderedModel {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Team", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("sponsors", destination: "Tag", inverse: "sponsored", toMany: true, ordered: true)]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("label", .string)],
                relationships: [RelationshipDescription("sponsored", destination: "Team", inverse: "sponsors", toMany: true, ordered: true)]
            ),
        ])
    }

    /// Each team's sponsors and each tag's teams, in their order, as "name: related…" lines
    /// sorted by name.
    static func contents(_ context: ObjectContext) throws -> [String] {
        try context.performAndWait {
            var lines: [String] = []
            for team in try context.fetch(FetchRequest(entityName: "Team", sortKeys: [SortKey("name")])) {
                let sponsors = try team.relatedObjects(forKey: "sponsors").map { try $0.value(forKey: "label", as: String.self) }
                lines.append("\(try team.value(forKey: "name", as: String.self)): \(sponsors.joined(separator: " "))")
            }
            for tag in try context.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("label")])) {
                let teams = try tag.relatedObjects(forKey: "sponsored").map { try $0.value(forKey: "name", as: String.self) }
                lines.append("\(try tag.value(forKey: "label", as: String.self)): \(teams.joined(separator: " "))")
            }
            return lines
        }
    }
}
