import Foundation
import Testing

@testable import SkerryCore

@Suite struct StatisticsTests {
    /// Rows read are the rows a fetch returned, on every kind of store (PostgreSQL reports a
    /// count for SELECTs too, which once made every fetch count as rows written and none as read).
    @Test(arguments: StoreKind.allCases)
    func fetchesCountRowsReadNotWritten(_ kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        defer { withExtendedLifetime(directory) {} }
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            for title in ["Dune", "Dune Messiah", "Children of Dune"] { try writer.insertNamed("Book", title) }
            try writer.save()
        }
        let before = stack.statistics
        let reader = stack.newBackgroundContext()
        let fetched = try reader.performAndWait { try reader.fetch(FetchRequest(entityName: "Book")).count }
        #expect(fetched == 3)
        #expect(stack.statistics.since(before).rowsRead == 3)
        #expect(stack.statistics.since(before).rowsWritten == 0)
    }

    @Test func storesCountStatementsAndRowsAndContextsCountTheirCache() throws {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let writer = stack.newBackgroundContext()
        let beforeSave = stack.statistics
        let authorID = try writer.performAndWait {
            let author = try writer.insertNamed("Author", "Herbert")
            for title in ["Dune", "Dune Messiah", "Children of Dune"] {
                try writer.insertNamed("Book", title).setRelatedObject(author, forKey: "author")
            }
            try writer.save()
            return author.objectID
        }
        let afterSave = stack.statistics
        // One author, three books, and the two entities' key-sequence rows.
        #expect(afterSave.since(beforeSave).rowsWritten == 6)
        #expect(afterSave.since(beforeSave).statementsExecuted >= 6)

        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let books = try reader.fetch(FetchRequest(entityName: "Book"))
            #expect(books.count == 3)
            let read = stack.statistics.since(afterSave)
            #expect(read.rowsRead == 3)
            #expect(read.rowsWritten == 0)
            #expect(reader.statistics.objectsMaterialized == 3)
            #expect(reader.statistics.rowsRead == 3)

            // Looking the author up twice: the first reads it, the second is a cache hit.
            let before = stack.statistics
            _ = try reader.existingObject(with: authorID)
            _ = try reader.existingObject(with: authorID)
            #expect(stack.statistics.since(before).rowsRead == 1)
            #expect(reader.statistics.cacheHits >= 1)

            // A relationship read twice: one query, then the cache.
            let author = try reader.existingObject(with: authorID)
            let beforeRelationship = stack.statistics
            #expect(try author.relatedObjects(forKey: "books").count == 3)
            #expect(try author.relatedObjects(forKey: "books").count == 3)
            #expect(stack.statistics.since(beforeRelationship).statementsExecuted == 1)
        }
    }
}
