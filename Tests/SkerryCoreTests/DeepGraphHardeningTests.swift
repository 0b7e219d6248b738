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
}
