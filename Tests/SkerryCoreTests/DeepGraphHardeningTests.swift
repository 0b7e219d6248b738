import Foundation
import Testing

@testable import SkerryCore

/// Object graphs of extreme shapes through the public API: typed errors or success, never a
/// trap or an exhausted stack.
@Suite struct DeepGraphHardeningTests {
    /// Node.children (to-many, cascade) <-> Node.parent (to-one): a tree, here a chain.
    private static func chainModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Node", attributes: [AttributeDescription("n", .integer64, isOptional: true)],
                relationships: [
                    RelationshipDescription("children", destination: "Node", inverse: "parent", toMany: true, deleteRule: .cascade),
                    RelationshipDescription("parent", destination: "Node", inverse: "children"),
                ])
        ])
    }

    @Test func aCascadeDownALongChainDeletesItAllWithoutRecursion() throws {
        // Before: each cascaded object was deleted by a recursive call, and a long enough chain
        // exhausted the thread's stack (a crash). The rows are written with SQL, so that the
        // objects are faults the cascade fetches one level at a time.
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory, model: Self.chainModel())
        let count = 300
        try rawSQL(
            directory.file("Test.sqlite"),
            """
            WITH RECURSIVE chain(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM chain WHERE k < \(count)) \
            INSERT INTO "Node" ("_pk", "_version", "n", "parent") SELECT k, 1, k, CASE WHEN k > 1 THEN k - 1 END FROM chain
            """)
        let context = stack.newBackgroundContext()
        let left = try context.performAndWait {
            let root = try #require(try context.fetch(FetchRequest(entityName: "Node", predicate: AttributeKey("n") == Int64(1))).first)
            try context.delete(root)
            #expect(context.deletedObjects.count == count)
            try context.save()
            return try context.count(for: FetchRequest(entityName: "Node"))
        }
        #expect(left == 0)
    }

    #if DEBUG
        @Test func debugChecksOfTheRegistryStayLinearOverThousandsOfObjects() throws {
            // Before: a debug build checked every registered object after every insert and every
            // fault registered, so that inserting n objects, or cascading a delete over n faults
            // (each related ID registers one), looked at n^2/2 objects: a 3,000-node cascade took a
            // minute. Now each operation pays for `debugCheckSpacing` objects' checks on average.
            let directory = TemporaryDirectory()
            let stack = try makeFileStack(directory, model: Self.chainModel())
            let count = 3_000
            let bound = 3 * count * ObjectRegistry.debugCheckSpacing
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                var previous: EntityObject?
                for n in 0..<count {
                    let node = try context.insert(entityName: "Node")
                    try node.setValue(Int64(n), forKey: "n")
                    try node.setValue(previous, forKey: "parent")
                    previous = node
                }
                #expect(context.registry.objectsChecked < bound, "\(context.registry.objectsChecked)")
                try context.save()
            }
            let reading = stack.newBackgroundContext()
            try reading.performAndWait {
                let root = try #require(try reading.fetch(FetchRequest(entityName: "Node", predicate: AttributeKey("n") == Int64(0))).first)
                try reading.delete(root)
                #expect(reading.deletedObjects.count == count)
                #expect(reading.registry.objectsChecked < bound, "\(reading.registry.objectsChecked)")
                try reading.save()
                #expect(try reading.count(for: FetchRequest(entityName: "Node")) == 0)
            }
        }
    #endif
}
