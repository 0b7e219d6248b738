import Foundation
import Testing

@testable import SkerryCore

/// The store boundary (`ObjectStore`), used as contexts use it: logical changes in ("this object's
/// relationship now holds these IDs"), rows and related IDs out. Nothing here names a table or a
/// column, so the same expectations hold for any store kind.
@Suite struct StoreBoundaryTests {
    private func store(_ stack: PersistentStack) throws -> any ObjectStore {
        try #require(stack.coordinator.loadedStores.first)
    }

    private func entity(_ stack: PersistentStack, _ name: String) throws -> EntityDescription {
        try #require(stack.model.entity(named: name))
    }

    /// Inserts `rows` (temporary IDs) in one write and returns the keys the store gave them.
    private func insert(_ store: any ObjectStore, _ rows: [RowInsert]) throws -> [Int64] {
        var write = StoreWrite()
        write.inserts = rows
        return try store.write(write, resolving: nil) { try $0?.run() }.insertedKeys
    }

    @Test(arguments: StoreKind.allCases)
    func logicalRelationshipChangesComeBackAsRelatedIDs(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind, model: GraphFixtures.model())
        _ = directory
        let store = try store(stack)
        let (author, book, tag, shelf) = (
            try entity(stack, "Author"), try entity(stack, "Book"),
            try entity(stack, "Tag"), try entity(stack, "Shelf")
        )
        func temporary(_ entity: EntityDescription) -> ObjectID { .temporary(store: store.identity, entity: entity) }
        let (a, b1, b2, t, s) = (temporary(author), temporary(book), temporary(book), temporary(tag), temporary(shelf))
        // Both sides of every pair, as a context sends them; the store keeps whichever it needs.
        let keys = try insert(
            store,
            [
                RowInsert(
                    objectID: a, values: [.string("Le Guin")],
                    relationships: [.toMany([b1, b2]), .toOne(nil), .toOne(nil)]),
                RowInsert(objectID: b1, values: [.string("Earthsea")], relationships: [.toOne(a), .toMany([t]), .toOne(s)]),
                RowInsert(objectID: b2, values: [.string("Lathe")], relationships: [.toOne(a), .toMany([]), .toOne(s)]),
                RowInsert(objectID: t, values: [.string("fantasy")], relationships: [.toMany([b1])]),
                RowInsert(objectID: s, values: [.string("Top")], relationships: [.toMany([b2, b1])]),
            ])
        let ids = zip([author, book, book, tag, shelf], keys).map { ObjectID(store: store.identity, entity: $0, primaryKey: $1) }
        let (authorID, book1, book2, tagID, shelfID) = (ids[0], ids[1], ids[2], ids[3], ids[4])

        // A row carries what the store can give with it; the rest is not loaded.
        let row = try #require(try store.fetchRows(book, primaryKeys: [book1.key]).first)
        #expect(row.objectID == book1)
        #expect(row.values == [.string("Earthsea")])
        #expect(row.relationships.count == book.relationships.count)
        for (index, value) in row.relationships.enumerated() where value != .notLoaded {
            #expect(value == [RelationshipValue.toOne(authorID), .toMany([tagID]), .toOne(shelfID)][index])
        }
        // Every relationship can be asked for, with IDs naming the destination entity, in order.
        #expect(try store.fetchRelated(author, relationship: 0, sourceKeys: [authorID.key]) == [authorID.key: [book1, book2]])
        #expect(try store.fetchRelated(book, relationship: 1, sourceKeys: [book1.key, book2.key]) == [book1.key: [tagID]])
        #expect(try store.fetchRelated(tag, relationship: 0, sourceKeys: [tagID.key]) == [tagID.key: [book1]])
        #expect(try store.fetchRelated(shelf, relationship: 0, sourceKeys: [shelfID.key]) == [shelfID.key: [book2, book1]])
        #expect(try store.fetchRelated(book, relationship: 2, sourceKeys: [book2.key]) == [book2.key: [shelfID]])

        // An update names only what changed, with whole new values.
        var update = StoreWrite()
        update.updates = [
            RowUpdate(objectID: shelfID, expectedVersion: 1, changes: [], relationshipChanges: [(0, .toMany([book1, book2]))]),
            RowUpdate(
                objectID: book2, expectedVersion: 1, changes: [(0, .string("The Lathe of Heaven"))],
                relationshipChanges: [(1, .toMany([tagID]))]),
            RowUpdate(objectID: tagID, expectedVersion: 1, changes: [], relationshipChanges: [(0, .toMany([book1, book2]))]),
        ]
        _ = try store.write(update, resolving: nil) { try $0?.run() }
        #expect(try store.fetchRelated(shelf, relationship: 0, sourceKeys: [shelfID.key]) == [shelfID.key: [book1, book2]])
        #expect(try store.fetchRelated(tag, relationship: 0, sourceKeys: [tagID.key]) == [tagID.key: [book1, book2]])
        let updated = try #require(try store.fetchRows(book, primaryKeys: [book2.key]).first)
        #expect(updated.values == [.string("The Lathe of Heaven")] && updated.version == 2)
        #expect(try #require(try store.fetchRows(shelf, primaryKeys: [shelfID.key]).first).version == 2)

        // A delete takes the links kept outside the row with it.
        var delete = StoreWrite()
        delete.deletes = [(tagID, 2)]
        _ = try store.write(delete, resolving: nil) { try $0?.run() }
        #expect(try store.fetchRelated(book, relationship: 1, sourceKeys: [book1.key, book2.key]).isEmpty)
    }

    @Test func aWriteWithAStaleVersionReportsTheConflictAndWritesNothing() throws {
        let stack = try makeMemoryStack()
        let store = try store(stack)
        let book = try entity(stack, "Book")
        let values = book.defaultValues.enumerated().map { $0.offset == 0 ? AttributeValue.string("Dune") : $0.element }
        let key = try #require(
            try insert(
                store,
                [
                    RowInsert(
                        objectID: .temporary(store: store.identity, entity: book),
                        values: values, relationships: [])
                ]
            ).first)
        let id = ObjectID(store: store.identity, entity: book, primaryKey: key)
        var write = StoreWrite()
        write.updates = [RowUpdate(objectID: id, expectedVersion: 7, changes: [(0, .string("Emma"))], relationshipChanges: [])]
        do {
            _ = try store.write(write, resolving: nil) { try $0?.run() }
            Issue.record("a stale version was written")
        } catch let conflicts as StoreWriteConflicts {
            #expect(conflicts.versionConflicts.map(\.objectID) == [id])
            #expect(conflicts.versionConflicts.first?.stored?.values.first == .string("Dune"))
        }
        #expect(try store.fetchRows(book, primaryKeys: [key]).first?.values.first == .string("Dune"))
    }
}
