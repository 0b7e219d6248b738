import Foundation
import SkerryCore
import Testing

/// Core Data's batch delete by object IDs and its status-only result, and
/// `mergeChanges(fromRemoteContextSave:into:)` reaching nested contexts: scenarios that the SQLite
/// and the PostgreSQL suites both run, on a stack of ``model`` they make.
public enum BatchDeleteScenarios {
    /// Book (title, year) and Note (text).
    public static let model = try! ObjectModel(entities: [
        EntityDescription(name: "Book", attributes: [AttributeDescription("title", .string), AttributeDescription("year", .integer32)]),
        EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)]),
    ])

    /// Saves books with these titles (year: their index); returns their IDs, in order.
    @discardableResult
    public static func saveBooks(_ titles: [String], in stack: PersistentStack) throws -> [ObjectID] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            let books = try titles.enumerated().map { index, title in
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(Int32(index), forKey: "year")
                return book
            }
            try context.save()
            return books.map(\.objectID)
        }
    }

    /// The titles of the books in the store, sorted.
    public static func titles(in stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }.sorted()
        }
    }

    /// `BatchDeleteRequest(objectIDs:)` deletes those rows only, and reports what its result type
    /// asks for: the IDs, the number, or (the default, as in Core Data) a status.
    public static func deletesByObjectIDs(_ stack: PersistentStack) throws {
        let ids = try saveBooks(["Dune", "Emma", "Ulysses", "Walden", "Zazie"], in: stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var request = BatchDeleteRequest(objectIDs: [ids[0], ids[2]])
            #expect(request.resultType == .resultTypeStatusOnly)
            request.resultType = .resultTypeObjectIDs
            let result = try context.execute(request)
            #expect(Set(result.result as? [ObjectID] ?? []) == [ids[0], ids[2]])
            #expect(result.count == 2)

            // The default: only a status, true for a delete that ran (rows already gone are skipped).
            let status = try context.execute(BatchDeleteRequest(objectIDs: [ids[1], ids[2]]))
            #expect(status.result as? Bool == true)
            #expect(status.deletedObjectIDs.isEmpty && status.changes.isEmpty)
            #expect(status.count == 1)

            var count = BatchDeleteRequest(objectIDs: [ids[3]])
            count.resultType = .resultTypeCount
            #expect(try context.execute(count).result as? Int == 1)

            // No IDs delete nothing.
            #expect(try context.execute(BatchDeleteRequest(objectIDs: [])).count == 0)
        }
        #expect(try titles(in: stack) == ["Zazie"])
    }

    /// `BatchDeleteRequest(fetchRequest:)` reports a status unless told otherwise, as Core Data's
    /// request does; ``BatchDeleteRequest/init(entityName:predicate:)`` keeps reporting IDs.
    public static func statusOnlyIsCoreDatasDefault(_ stack: PersistentStack) throws {
        try saveBooks(["Dune", "Emma", "Ulysses"], in: stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let fetch = FetchRequest(entityName: "Book", predicate: AttributeKey("year") < Int32(2))
            let result = try context.execute(BatchDeleteRequest(fetchRequest: fetch))
            #expect(result.resultType == .statusOnly)
            #expect(result.result as? Bool == true)
            #expect(result.deletedObjectIDs.isEmpty && result.count == 2)

            let rest = try context.execute(BatchDeleteRequest(entityName: "Book"))
            #expect(rest.resultType == .objectIDs && rest.deletedObjectIDs.count == 1)
        }
        #expect(try titles(in: stack).isEmpty)
    }

    /// IDs of several entities, temporary IDs, and IDs of another store are refused when the
    /// request runs, and nothing is deleted.
    public static func refusesIDsItCannotDelete(_ stack: PersistentStack, otherStack: PersistentStack) throws {
        let ids = try saveBooks(["Dune", "Emma"], in: stack)
        let foreign = try saveBooks(["Ulysses"], in: otherStack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let draft = try context.insert(entityName: "Book")
            try draft.setValue("Draft", forKey: "title")
            let temporary = expectError(.invalidArgument) { try context.execute(BatchDeleteRequest(objectIDs: [ids[0], draft.objectID])) }
            #expect(temporary?.objectID == draft.objectID)
            context.rollback()

            let note = try context.insert(entityName: "Note")
            try note.setValue("to read", forKey: "text")
            try context.save()
            let mixed = expectError(.invalidArgument) { try context.execute(BatchDeleteRequest(objectIDs: [ids[0], note.objectID])) }
            #expect(mixed?.objectID == note.objectID)
            let other = expectError(.invalidArgument) { try context.execute(BatchDeleteRequest(objectIDs: [ids[1], foreign[0]])) }
            #expect(other?.objectID == foreign[0])
        }
        #expect(try titles(in: stack) == ["Dune", "Emma"])
        #expect(try titles(in: otherStack) == ["Ulysses"])
    }

    /// More IDs than a statement could take as parameters one by one.
    public static func deletesManyObjectIDs(_ stack: PersistentStack) throws {
        let ids = try saveBooks((0..<1500).map { "Book \($0)" }, in: stack)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            var request = BatchDeleteRequest(objectIDs: Array(ids.dropLast(3)))
            request.resultType = .resultTypeObjectIDs
            let deleted = try context.execute(request).deletedObjectIDs
            #expect(deleted.count == 1497)
        }
        #expect(try titles(in: stack) == ["Book 1497", "Book 1498", "Book 1499"])
    }

    /// `mergeChanges(fromRemoteContextSave:into:)` brings the child contexts of the contexts it is
    /// given up to date too, and their children: after a batch delete, and after another
    /// context's update.
    public static func remoteMergesReachNestedContexts(_ stack: PersistentStack) throws {
        let ids = try saveBooks(["Dune", "Emma"], in: stack)
        let root = stack.newBackgroundContext()
        root.automaticallyMergesChangesFromParent = false
        let child = root.newChildContext(name: "child")
        let grandchild = child.newChildContext(name: "grandchild")
        let nested = [root, child, grandchild]
        for context in nested {
            try context.performAndWait {
                for id in ids { _ = try context.existingObject(with: id).value(forKey: "title", as: String.self) }
            }
        }

        let writer = stack.newBackgroundContext()
        let deleted = try writer.performAndWait {
            var request = BatchDeleteRequest(objectIDs: [ids[0]])
            request.resultType = .resultTypeObjectIDs
            let deleted = try writer.execute(request).result as? [ObjectID] ?? []
            try writer.existingObject(with: ids[1]).setValue("Emma (2nd ed.)", forKey: "title")
            try writer.save()
            return deleted
        }
        ObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: deleted, UpdatedObjectsKey: [ids[1]]], into: [root])
        for context in nested {
            try context.performAndWait {
                #expect(context.registeredObject(for: ids[0]) == nil, "\(context.name ?? "")")
                let emma = try context.existingObject(with: ids[1])
                #expect(try emma.value(forKey: "title", as: String.self) == "Emma (2nd ed.)", "\(context.name ?? "")")
            }
        }
    }
}
