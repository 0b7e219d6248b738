import Foundation
import Testing

@testable import SkerryCore

/// A save into one store under a merge policy that resolves conflicts resolves them inside the
/// store's transaction (its first attempt's statements are undone, the resolved write runs in the
/// same transaction): what the store, its history, the observers and the context see afterwards
/// is that of the final write only, as if the save had been written once.
@Suite struct SaveResolvedInTransactionTests {
    /// The events of a stack, in the order told, by a short name.
    final class Events: Sendable {
        let names = Locked<[String]>([])
        let permanentIDs = Locked<[ObjectID]>([])
        let resolutions = Locked<[ConflictResolutionEvent]>([])
        let statements = Locked<[String]>([])
        private let observations: Locked<[any Sendable]> = Locked([])

        init(_ stack: PersistentStack, statements tracing: StatementTracing = .none) {
            let event = stack.addEventObserver(statements: tracing) { [self] event in
                switch event {
                case .conflictsResolved(let resolution):
                    names.update { $0.append("conflictsResolved") }
                    resolutions.update { $0.append(resolution) }
                case .statement(let trace): statements.update { $0.append(trace.sql) }
                default: break
                }
            }
            let save = stack.addDidSaveObserver { [self] event in
                names.update { $0.append("didSave") }
                permanentIDs.update { $0 += event.permanentIDs.map(\.permanent) }
            }
            observations.update { $0 = [event, save] }
        }
    }

    /// "Dune" saved; a stale context loads it; another context renames it. Returns its ID and
    /// the stale context with its book.
    static func staleScene(_ stack: PersistentStack) throws -> (id: ObjectID, stale: ObjectContext, book: EntityObject) {
        let id = try MergePolicyTests.saveBooks(stack, [MergePolicyTests.original])[0]
        let (stale, books) = try MergePolicyTests.staleContext(stack, [id])
        try MergePolicyTests.writerSaves(stack, id) { _, book in try book.setValue("Dune (W)", forKey: "title") }
        return (id, stale, books[0])
    }

    /// The history's transactions after `token`, each as its changes' types and objects.
    static func history(_ stack: PersistentStack, after token: PersistentHistoryToken?) throws -> [[String]] {
        try stack.viewContext.history(.fetchHistory(after: token)).map { transaction in
            (transaction.changes ?? []).map { "\($0.changeType) \($0.changedObjectID)" }.sorted()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theHistoryAndTheObserversSeeOnlyTheFinalWrite(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let (id, stale, book) = try Self.staleScene(stack)
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let events = Events(stack)
        let (changes, addedID) = try stale.performAndWait {
            stale.mergePolicy = .mergeByPropertyObjectTrump
            try book.setValue(Int32(2000), forKey: "year")
            let added = try stale.insertBook("Added")
            return (try stale.save(), added.objectID)
        }
        #expect(!addedID.isTemporary)
        #expect(changes.inserted == [addedID])
        #expect(changes.updated == [id])
        // conflictsResolved told once, before didSave.
        #expect(events.names.value == ["conflictsResolved", "didSave"])
        #expect(events.resolutions.value.map(\.changedObjects) == [[id]])
        #expect(events.permanentIDs.value == [addedID])
        // One transaction in the history: the final write's insert (under the key the context
        // was given) and update.
        #expect(try Self.history(stack, after: token) == [["insert \(addedID)", "update \(id)"].sorted()])
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let added = try reader.existingObject(with: addedID)
            #expect(try added.value(forKey: "title", as: String.self) == "Added")
            #expect(try reader.count(for: FetchRequest(entityName: "Book")) == 2)
            let dune = try reader.existingObject(with: id)
            #expect(try MergePolicyTests.row(dune) == MergePolicyTests.Row("Dune (W)", 2000, 100))
        }
    }

    /// Deletes in a resolved save: one of a row changed in the store (the delete wins), one of a
    /// row another context deleted (no conflict: recorded by that context), with an update that
    /// conflicts. The history has the final write's delete and update, once.
    @Test(arguments: StoreKind.allCases)
    func deletesOfAResolvedSaveAreRecordedOnce(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let ids = try MergePolicyTests.saveBooks(
            stack, [MergePolicyTests.Row("A", 1, 1), MergePolicyTests.Row("B", 2, 2), MergePolicyTests.Row("C", 3, 3)])
        let (stale, books) = try MergePolicyTests.staleContext(stack, ids)
        try MergePolicyTests.writerSaves(stack, ids[0]) { _, book in try book.setValue("A (W)", forKey: "title") }
        try MergePolicyTests.writerSaves(stack, ids[1]) { writer, book in try writer.delete(book) }
        try MergePolicyTests.writerSaves(stack, ids[2]) { _, book in try book.setValue("C (W)", forKey: "title") }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let changes = try stale.performAndWait {
            stale.mergePolicy = .mergeByPropertyObjectTrump
            try stale.delete(books[0])
            try stale.delete(books[1])
            try books[2].setValue(Int32(2000), forKey: "year")
            return try stale.save()
        }
        #expect(changes.deleted == [ids[0], ids[1]])
        #expect(changes.updated == [ids[2]])
        #expect(try Self.history(stack, after: token) == [["delete \(ids[0])", "update \(ids[2])"].sorted()])
        #expect(try MergePolicyTests.storedRows(stack) == [MergePolicyTests.Row("C (W)", 2000, 3)])
    }

    /// The policy drops the save's only change (an update of a row deleted in the store): the
    /// save writes nothing, records no history, and the object goes with its row.
    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyStoreTrump, .rollback])
    func aResolutionThatDropsEveryChangeWritesNothing(kind: StoreKind, policy: MergePolicy) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let (id, stale, book) = try MergePolicyTests.deletedRowScene(stack)
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let events = Events(stack)
        try stale.performAndWait {
            stale.mergePolicy = policy
            try book.setValue(Int32(2000), forKey: "year")
            let changes = try stale.save()
            #expect(changes.inserted.isEmpty && changes.updated.isEmpty && changes.deleted.isEmpty)
            #expect(stale.registeredObject(for: id) == nil)
            #expect(!stale.hasChanges)
        }
        #expect(events.names.value.first == "conflictsResolved")
        #expect(try Self.history(stack, after: token).isEmpty)
        #expect(try MergePolicyTests.storedRows(stack).isEmpty)
    }

    /// An insert with an existing row's unique value becomes an update of that row, resolved in
    /// the transaction: the history has the update, not the insert of the first attempt.
    @Test(arguments: StoreKind.allCases)
    func anUpsertResolvedInTheTransactionIsRecordedAsTheRowsUpdate(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack()
        let existing = try MergePolicyTests.saveBooks(stack, [MergePolicyTests.Row("Old", 1965, nil, isbn: "X")])[0]
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let context = stack.newBackgroundContext()
        let events = Events(stack)
        let objectID = try context.performAndWait {
            context.mergePolicy = .mergeByPropertyObjectTrump
            let book = try context.insertBook("New", year: 2001, isbn: "X")
            try context.save()
            return book.objectID
        }
        #expect(objectID == existing)
        #expect(events.resolutions.value.map(\.uniquenessConflicts) == [1])
        #expect(try Self.history(stack, after: token) == [["update \(existing)"]])
        #expect(try MergePolicyTests.storedRows(stack) == [MergePolicyTests.Row("New", 2001, nil, isbn: "X")])
    }

    /// A policy that leaves a conflict unresolved ends the save inside the transaction: nothing
    /// is written, the context keeps its changes, and the store's connection (a pool of one) is
    /// usable by the next save.
    @Test(arguments: StoreKind.allCases)
    func anUnresolvedConflictFoundInTheTransactionLeavesTheStoreUsable(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack =
            kind == .postgres
            ? try PostgresTestServer.stack(Fixtures.model(), PostgresTestServer.newSchema(), maximumConnections: 1)
            : kind == .file ? try makeFileStack(directory) : try makeMemoryStack()
        // A row changed in the store (resolvable) and one deleted from it (not, under object trump).
        let ids = try MergePolicyTests.saveBooks(stack, [MergePolicyTests.Row("Dune", 1965, 100), MergePolicyTests.Row("Emma", 1815, 200)])
        let (stale, books) = try MergePolicyTests.staleContext(stack, ids)
        try MergePolicyTests.writerSaves(stack, ids[0]) { _, book in try book.setValue("Dune (W)", forKey: "title") }
        try MergePolicyTests.writerSaves(stack, ids[1]) { writer, book in try writer.delete(book) }
        let events = Events(stack)
        try stale.performAndWait {
            stale.mergePolicy = .mergeByPropertyObjectTrump
            try books[0].setValue(Int32(2000), forKey: "year")
            try books[1].setValue(Int32(2000), forKey: "year")
            let added = try stale.insertBook("Added")
            let error = try #require(expectError(.mergeConflict) { try stale.save() })
            #expect(error.objectIDs == [ids[1]])
            #expect(added.objectID.isTemporary && added.isInserted)
            #expect(books[0].isUpdated && books[1].isUpdated)
        }
        #expect(!events.names.value.contains("didSave"))
        #expect(try MergePolicyTests.storedRows(stack) == [MergePolicyTests.Row("Dune (W)", 1965, 100)])
        // The same context, under a policy that resolves both, saves on the same connection.
        try stale.performAndWait {
            stale.mergePolicy = .rollback
            try stale.save()
        }
        #expect(try MergePolicyTests.storedRows(stack).map(\.title) == ["Added", "Dune (W)"])
    }

    /// Under `.error` (the default) a save runs as before: no savepoint, no statement locking its
    /// rows; under a resolving policy the save sets a savepoint.
    @Test(arguments: StoreKind.allCases)
    func onlyAResolvingPolicyPaysForTheSavepoint(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        defer { withExtendedLifetime(directory) {} }
        // An author: no uniqueness constraint (whose writes lock their rows under any policy).
        let setup = stack.newBackgroundContext()
        let id = try setup.performAndWait {
            let author = try setup.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            try setup.save()
            return author.objectID
        }
        func statements(_ policy: MergePolicy, born: Int64) throws -> [String] {
            let events = Events(stack, statements: .all)
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                context.mergePolicy = policy
                try context.existingObject(with: id).setValue(born, forKey: "born")
                try context.save()
            }
            return events.statements.value
        }
        let plain = try statements(.error, born: 1)
        #expect(!plain.contains { $0.contains("SAVEPOINT") || $0.contains("FOR UPDATE") })
        let resolving = try statements(.mergeByPropertyObjectTrump, born: 2)
        #expect(resolving.contains { $0.hasPrefix("SAVEPOINT") })
    }

    // MARK: Relationships and hierarchies

    /// A model with a many-to-many relationship, an ordered to-many one, and a sub-entity.
    static func graphModel() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription("code", .string), AttributeDescription("note", .string, isOptional: true)],
            relationships: [
                RelationshipDescription("tags", destination: "Tag", inverse: "items", toMany: true),
                RelationshipDescription("parts", destination: "Part", inverse: "item", toMany: true, ordered: true),
            ],
            uniquenessConstraints: [["code"]])
        let gadget = EntityDescription(
            name: "Gadget", attributes: [AttributeDescription("watts", .integer32, isOptional: true)], superentity: item)
        return try ObjectModel(entities: [
            item, gadget,
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("items", destination: "Item", inverse: "tags", toMany: true)]),
            EntityDescription(
                name: "Part", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("item", destination: "Item", inverse: "parts")]),
        ])
    }

    /// A gadget (a sub-entity's row) changed in the store while a stale context adds tags (one
    /// new) and ordered parts to it, and inserts another gadget: resolved in the transaction, the
    /// store holds each link once, the parts in order, the new objects under the keys the
    /// context was given, and the history the final write's entries.
    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump])
    func relationshipsAndSubEntitiesOfAResolvedSave(kind: StoreKind, policy: MergePolicy) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack(model: try Self.graphModel())
        let setup = stack.newBackgroundContext()
        let (gadgetID, oldTagID, oldPartID) = try setup.performAndWait {
            let gadget = try setup.insert(entityName: "Gadget")
            try gadget.setValue("g1", forKey: "code")
            let tag = try setup.insert(entityName: "Tag")
            try tag.setValue("old", forKey: "name")
            let part = try setup.insert(entityName: "Part")
            try part.setValue("p0", forKey: "name")
            try gadget.addRelatedObject(tag, forKey: "tags")
            try gadget.addRelatedObject(part, forKey: "parts")
            try setup.save()
            return (gadget.objectID, tag.objectID, part.objectID)
        }
        let stale = stack.newBackgroundContext()
        stale.automaticallyMergesChangesFromParent = false
        let gadget = try stale.performAndWait { try stale.existingObject(with: gadgetID) }
        let writer = stack.newBackgroundContext()
        try writer.performAndWait {
            try writer.existingObject(with: gadgetID).setValue(Int32(60), forKey: "watts")
            try writer.save()
        }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        let events = Events(stack)
        let (newTagID, newPartIDs, otherID) = try stale.performAndWait {
            stale.mergePolicy = policy
            try gadget.setValue("mine", forKey: "note")
            let tag = try stale.insert(entityName: "Tag")
            try tag.setValue("new", forKey: "name")
            try gadget.addRelatedObject(tag, forKey: "tags")
            let parts = try ["p1", "p2"].map { name in
                let part = try stale.insert(entityName: "Part")
                try part.setValue(name, forKey: "name")
                try gadget.addRelatedObject(part, forKey: "parts")
                return part
            }
            let other = try stale.insert(entityName: "Gadget")
            try other.setValue("g2", forKey: "code")
            try other.setValue(Int32(5), forKey: "watts")
            try stale.save()
            return (tag.objectID, parts.map(\.objectID), other.objectID)
        }
        #expect(events.resolutions.value.map(\.changedObjects) == [[gadgetID]])
        #expect(Set(events.permanentIDs.value) == Set([newTagID, otherID] + newPartIDs))
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let stored = try reader.existingObject(with: gadgetID)
            #expect(try stored.value(forKey: "note", as: String?.self) == "mine")
            #expect(try stored.value(forKey: "watts", as: Int32?.self) == (policy == .overwrite ? nil : 60))
            let tags = try stored.relatedObjects(forKey: "tags")
            #expect(Set(tags.map(\.objectID)) == [oldTagID, newTagID])
            let parts = try stored.relatedObjects(forKey: "parts")
            #expect(parts.map(\.objectID) == [oldPartID] + newPartIDs)
            let other = try reader.existingObject(with: otherID)
            #expect(try other.value(forKey: "code", as: String.self) == "g2")
            #expect(try reader.count(for: FetchRequest(entityName: "Item")) == 2)
            #expect(try reader.count(for: FetchRequest(entityName: "Part")) == 3)
            #expect(try reader.count(for: FetchRequest(entityName: "Tag")) == 2)
        }
        let history = try Self.history(stack, after: token)
        try #require(history.count == 1)
        let inserted = Set(history[0].filter { $0.hasPrefix("insert") })
        #expect(inserted == Set(([newTagID, otherID] + newPartIDs).map { "insert \($0)" }))
        #expect(history[0].contains("update \(gadgetID)"))
    }

    /// An insert that meets an existing row's unique value, with links to a stored tag, a new
    /// tag and a new ordered part, resolved in the transaction into an update of that row: the
    /// links are the existing row's, each once, and the new objects point at it.
    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyObjectTrump, .overwrite])
    func anUpsertKeepsItsLinks(kind: StoreKind, policy: MergePolicy) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack(model: try Self.graphModel())
        let setup = stack.newBackgroundContext()
        let (itemID, oldTagID) = try setup.performAndWait {
            let item = try setup.insert(entityName: "Item")
            try item.setValue("i1", forKey: "code")
            let tag = try setup.insert(entityName: "Tag")
            try tag.setValue("old", forKey: "name")
            try setup.save()
            return (item.objectID, tag.objectID)
        }
        let context = stack.newBackgroundContext()
        let (objectID, newTagID, partID) = try context.performAndWait {
            context.mergePolicy = policy
            let item = try context.insert(entityName: "Item")
            try item.setValue("i1", forKey: "code")
            try item.setValue("mine", forKey: "note")
            let tag = try context.insert(entityName: "Tag")
            try tag.setValue("new", forKey: "name")
            let part = try context.insert(entityName: "Part")
            try part.setValue("p1", forKey: "name")
            try item.addRelatedObject(try context.existingObject(with: oldTagID), forKey: "tags")
            try item.addRelatedObject(tag, forKey: "tags")
            try item.addRelatedObject(part, forKey: "parts")
            try context.save()
            return (item.objectID, tag.objectID, part.objectID)
        }
        #expect(objectID == itemID)
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let stored = try reader.existingObject(with: itemID)
            #expect(try stored.value(forKey: "note", as: String?.self) == "mine")
            #expect(Set(try stored.relatedObjects(forKey: "tags").map(\.objectID)) == [oldTagID, newTagID])
            #expect(try stored.relatedObjects(forKey: "parts").map(\.objectID) == [partID])
            #expect(try reader.existingObject(with: partID).relatedObject(forKey: "item")?.objectID == itemID)
            #expect(Set(try reader.existingObject(with: oldTagID).relatedObjects(forKey: "items").map(\.objectID)) == [itemID])
            #expect(try reader.count(for: FetchRequest(entityName: "Item")) == 1)
        }
    }

    // MARK: Several stores

    /// A save into two stores (Book in one, Author in the other) under a resolving policy: the
    /// conflicts are resolved outside the transactions (another store's part may change with
    /// them), and the save writes both parts.
    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .rollback])
    func aSaveIntoTwoStoresResolvesItsConflicts(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try Self.twoStoreStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let (id, stale, book) = try Self.staleScene(stack)
        let events = Events(stack)
        let authorID = try stale.performAndWait {
            stale.mergePolicy = policy
            try book.setValue(Int32(2000), forKey: "year")
            let author = try stale.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            try stale.save()
            return author.objectID
        }
        #expect(events.names.value == ["conflictsResolved", "didSave"])
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            #expect(try reader.existingObject(with: authorID).value(forKey: "name", as: String.self) == "Herbert")
            let stored = try MergePolicyTests.row(try reader.existingObject(with: id))
            #expect(stored == MergePolicyTests.Row("Dune (W)", policy == .rollback ? 1965 : 2000, 100))
        }
    }

    /// An insert with an existing row's unique value, in a save into two stores: resolved
    /// between attempts into an update of that row (object trump), or the existing row adopted.
    @Test(arguments: StoreKind.allCases, [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
    func aSaveIntoTwoStoresResolvesAUniquenessConflict(kind: StoreKind, policy: MergePolicy) throws {
        let (stack, directory) = try Self.twoStoreStack(kind)
        defer { withExtendedLifetime(directory) {} }
        let existing = try MergePolicyTests.saveBooks(stack, [MergePolicyTests.Row("Old", 1965, nil, isbn: "X")])[0]
        let events = Events(stack)
        let context = stack.newBackgroundContext()
        let (bookID, authorID) = try context.performAndWait {
            context.mergePolicy = policy
            let book = try context.insertBook("New", year: 2001, isbn: "X")
            let author = try context.insert(entityName: "Author")
            try author.setValue("Herbert", forKey: "name")
            try context.save()
            return (book.objectID, author.objectID)
        }
        #expect(bookID == existing)
        #expect(events.resolutions.value.map(\.uniquenessConflicts) == [1])
        let expected =
            policy == .mergeByPropertyObjectTrump
            ? MergePolicyTests.Row("New", 2001, nil, isbn: "X") : MergePolicyTests.Row("Old", 1965, nil, isbn: "X")
        #expect(try MergePolicyTests.storedRows(stack) == [expected])
        let reader = stack.newBackgroundContext()
        let name = try reader.performAndWait { try reader.existingObject(with: authorID).value(forKey: "name", as: String.self) }
        #expect(name == "Herbert")
    }

    /// A stack with Book in one store and Author in another, both of `kind`, with the folder of
    /// its files (keep it alive as long as the stack).
    static func twoStoreStack(_ kind: StoreKind) throws -> (PersistentStack, TemporaryDirectory) {
        let model = try ObjectModel(
            entities: [Fixtures.bookEntity(), Fixtures.authorEntity()], configurations: ["Books": ["Book"], "People": ["Author"]])
        let directory = TemporaryDirectory()
        var books: StoreDescription, people: StoreDescription
        switch kind {
        case .file:
            (books, people) = (
                StoreDescription(url: directory.file("Books.sqlite")), StoreDescription(url: directory.file("People.sqlite"))
            )
        case .memory: (books, people) = (.inMemory(), .inMemory())
        case .postgres: (books, people) = (try PostgresTestStore.newDescription(), try PostgresTestStore.newDescription())
        }
        books.configuration = "Books"
        people.configuration = "People"
        let stack = PersistentStack(name: "Two", model: model)
        stack.persistentStoreDescriptions = [books, people]
        try stack.loadPersistentStores()
        return (stack, directory)
    }
}
