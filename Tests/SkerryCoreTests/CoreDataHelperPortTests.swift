import Dispatch
import Foundation
import Testing

@testable import SkerryCore

// A real app's Core Data helpers, ported: AlpineCore's extensions of NSManagedObjectContext and
// NSManagedObject (github.com/Alpine-Land-Information-Services/AlpineCore,
// Sources/AlpineCore/Extensions/Core Data/), written again here in Skerry's names. docs/names.md
// ("Porting a helper file") lists every change the port needed; everything else is as written.

// MARK: NSManagedObjectContext's helpers

extension ObjectContext {
    fileprivate func easySave() {
        do {
            if self.hasChanges {
                try self.save()
            }
        } catch {
            assertionFailure("Failure to save context: \(error)")
        }
    }

    fileprivate func saveChanges() throws {
        try performAndWait {
            if hasChanges {
                try save()
            }
        }
    }

    fileprivate func persistentSave() throws {
        try performAndWait {
            try save()
            var parentContext = parent
            while let parent = parentContext {
                try parent.performAndWait {
                    try parent.save()
                }
                parentContext = parent.parent
            }
        }
    }

    fileprivate func safeRefresh() {
        performAndWait {
            refreshAllObjects()
        }
    }
}

// MARK: NSManagedObject's helpers

extension EntityObject {
    fileprivate func cdValue(for key: String) -> Any? {
        self.managedObjectContext?.performAndWait {
            return try? value(forKey: key) // change: value(forKey:) throws for an unknown key
        }
    }

    fileprivate func save(in context: ObjectContext? = nil) {
        guard let context = context ?? self.managedObjectContext else {
            assertionFailure()
            return
        }
        do {
            if context.hasChanges {
                try context.save()
            }
        } catch {
            assertionFailure("Failure to save context: \(error)")
        }
    }

    // change: `-> Self?` and `as? Self` drop out (one object class, EntityObject, for every entity)
    fileprivate func inContext(_ context: ObjectContext) -> EntityObject? {
        self.managedObjectContext?.performAndWait {
            context.performAndWait {
                return try? context.existingObject(with: self.objectID)
            }
        }
    }

    // change: an object cannot leave the block under Swift 6 (not Sendable): the ID found is
    // returned; and the look-up runs on `context`'s queue, not on the object's context's.
    fileprivate func inContextAsync(_ context: ObjectContext) async -> ObjectID? {
        let objectID = self.objectID
        return await context.perform {
            return (try? context.existingObject(with: objectID))?.objectID
        }
    }

    fileprivate func delete(in context: ObjectContext? = nil, doSave: Bool = true) {
        guard let context = context ?? self.managedObjectContext else {
            assertionFailure()
            return
        }
        do {
            try context.delete(self) // change: delete(_:) throws (an object of another context)
            if doSave {
                try context.save()
            }
        } catch {
            assertionFailure("Failure to delete object: \(error)")
        }
    }

    fileprivate func saveMergeInTo(context: ObjectContext) {
        guard let selfContext = self.managedObjectContext else {
            assertionFailure()
            return
        }
        do {
            try selfContext.performAndWait {
                try selfContext.save()
                try context.performAndWait {
                    try context.save()
                }
            }
        } catch {
            print(error.localizedDescription)
        }
    }
}

// change (every static helper): Core Data code names the entity by the subclass
// (`Self.entityName`, the class name); Skerry has one object class, so the entity name is passed.
extension EntityObject {
    fileprivate static func mainAsyncSave(in context: ObjectContext) {
        DispatchQueue.main.async {
            do {
                try context.save()
            } catch {
                print("Could not save changed value:", error)
            }
        }
    }

    fileprivate static func all(entityName: String, in context: ObjectContext) -> [EntityObject] {
        var request = FetchRequest(entityName: entityName) // change: a value, so `var`
        request.returnsObjectsAsFaults = false
        var result: [EntityObject] = []
        context.performAndWait {
            do {
                result = try context.fetch(request)
            } catch {
                print(error)
            }
        }
        return result
    }

    fileprivate static func disableAll(entityName: String, in context: ObjectContext) {
        do {
            for item in all(entityName: entityName, in: context) {
                try item.setValue(false, forKey: "enabled_") // change: setValue throws
            }
            try context.save()
        } catch {
            print(error)
        }
    }

    fileprivate static func findByName(entityName: String, _ name: String, in context: ObjectContext) -> EntityObject? {
        guard !name.isEmpty else { return nil }
        var request = FetchRequest(entityName: entityName)
        request.predicate = try? FetchPredicate(format: "name = %@", name) // change: a bad format throws
        request.returnsObjectsAsFaults = false
        request.fetchLimit = 1
        var result: EntityObject?
        context.performAndWait {
            do {
                result = try context.fetch(request).first
            } catch {
                print(error)
            }
        }
        return result
    }

    fileprivate static func findPredicate(
        entityName: String, with predicate: FetchPredicate, fetchLimit: Int, in context: ObjectContext
    ) -> [EntityObject] {
        var request = FetchRequest(entityName: entityName)
        request.predicate = predicate
        request.returnsObjectsAsFaults = false
        request.fetchLimit = fetchLimit
        var result: [EntityObject] = []
        context.performAndWait {
            do {
                result = try context.fetch(request)
            } catch {
                print(error)
            }
        }
        return result
    }

    fileprivate static func clearData(entityName: String, predicate: FetchPredicate? = nil, in context: ObjectContext) {
        var fetch = FetchRequest(entityName: entityName)
        fetch.predicate = predicate
        let request = BatchDeleteRequest(fetchRequest: fetch)
        context.performAndWait {
            do {
                try context.execute(request)
                try context.save()
                context.refreshAllObjects()
            } catch {
                print(error)
            }
        }
    }

    @discardableResult
    fileprivate static func deleteData(entityName: String, predicate: FetchPredicate? = nil, in context: ObjectContext) -> Bool {
        var request = FetchRequest(entityName: entityName)
        request.predicate = predicate
        request.returnsObjectsAsFaults = true
        var objects: [EntityObject] = []
        context.performAndWait {
            do {
                objects = try context.fetch(request)
                for object in objects {
                    try context.delete(object)
                }
            } catch {
                print(error)
            }
        }
        return !objects.isEmpty
    }

    fileprivate static func count(entityName: String, predicate: FetchPredicate? = nil, in context: ObjectContext) -> Int {
        var request = FetchRequest(entityName: entityName)
        request.predicate = predicate
        var result = 0
        request.returnsObjectsAsFaults = true
        context.performAndWait {
            do {
                result = try context.fetch(request).count
            } catch {
                print(error)
            }
        }
        return result
    }

    fileprivate static func hasAnyEntities(entityName: String, in context: ObjectContext) -> Bool {
        var request = FetchRequest(entityName: entityName)
        var result = false
        request.fetchLimit = 1
        request.returnsObjectsAsFaults = true
        context.performAndWait {
            do {
                result = try context.fetch(request).count > 0
            } catch {
                print(error)
            }
        }
        return result
    }

    fileprivate static func findObject(for entity: String, by predicate: FetchPredicate, in context: ObjectContext) -> EntityObject? {
        context.performAndWait {
            var request = FetchRequest(entityName: entity)
            request.predicate = predicate
            request.returnsObjectsAsFaults = false
            request.fetchLimit = 1
            var result: EntityObject?
            do {
                result = try context.fetch(request).first
            } catch {
                print(error)
            }
            return result
        }
    }

    fileprivate static func find(entityName: String, by predicate: FetchPredicate?, in context: ObjectContext) throws -> EntityObject? {
        try context.performAndWait {
            var request = FetchRequest(entityName: entityName)
            if let predicate {
                request.predicate = predicate
            }
            request.returnsObjectsAsFaults = false
            request.fetchLimit = 1

            return try context.fetch(request).first
        }
    }

    fileprivate static func findMultiple(entityName: String, by predicate: FetchPredicate?, in context: ObjectContext) throws
        -> [EntityObject]
    {
        try context.performAndWait {
            var request = FetchRequest(entityName: entityName)
            if let predicate {
                request.predicate = predicate
            }
            request.returnsObjectsAsFaults = false
            return try context.fetch(request)
        }
    }

    // change: the async `findObjects(by:in:)` returns objects from `perform`, which Swift 6
    // refuses (objects are not Sendable); `findObjectIDs` is its Sendable form, ported as is.
    fileprivate static func findObjectIDs(entityName: String, by predicate: FetchPredicate?, in context: ObjectContext) async throws
        -> [ObjectID]
    {
        return try await context.perform {
            var fetchRequest = FetchRequest(entityName: entityName)
            fetchRequest.predicate = predicate
            fetchRequest.returnsObjectsAsFaults = false
            do {
                let fetchedObjects = try context.fetch(fetchRequest)
                let objectIDs = fetchedObjects.map { $0.objectID }
                return objectIDs
            } catch {
                throw error
            }
        }
    }
}

// MARK: The helpers at work

@Suite struct CoreDataHelperPortTests {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Site",
            attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("enabled_", .boolean, defaultValue: true),
            ])
    ])

    /// A stack over a SQLite file in `directory`, with sites of these names.
    static func stack(_ directory: TemporaryDirectory, sites: [String]) throws -> PersistentStack {
        let stack = PersistentStack(name: "Sites", managedObjectModel: model)
        stack.persistentStoreDescriptions[0].url = directory.file("Sites.sqlite")
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for name in sites {
                try context.insert(entityName: "Site").setValue(name, forKey: "name")
            }
            try context.save()
        }
        return stack
    }

    /// The objects' names, sorted, each read in its context's block.
    static func names(_ objects: [EntityObject]) throws -> [String] {
        try objects.map { object in
            let context = try #require(object.managedObjectContext)
            return try context.performAndWait { try object.value(forKey: "name", as: String.self) }
        }.sorted()
    }

    @Test func contextHelpersSaveWhenThereAreChangesAndUpTheParentChain() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(directory, sites: [])
        let saves = Locked(0) // saves into the store (not into a parent)
        let observation = stack.addDidSaveObserver { event in
            if event.context.parent == nil { saves.update { $0 += 1 } }
        }
        defer { observation.cancel() }

        let root = stack.newBackgroundContext()
        let main = root.newChildContext(name: "main")
        let editor = main.newChildContext(name: "editor")
        try editor.saveChanges() // nothing to save: no save at all
        try editor.performAndWait { try editor.insert(entityName: "Site").setValue("Basin", forKey: "name") }
        try editor.persistentSave() // editor -> main -> root -> store
        #expect(saves.value == 1)
        #expect(EntityObject.count(entityName: "Site", in: stack.newBackgroundContext()) == 1)

        let other = stack.newBackgroundContext()
        try other.performAndWait {
            try other.insert(entityName: "Site").setValue("Ridge", forKey: "name")
            other.easySave()
        }
        #expect(saves.value == 2)
        // safeRefresh brings registered objects up to date with the store.
        let reader = stack.newBackgroundContext()
        reader.automaticallyMergesChangesFromParent = false
        let basin = try #require(EntityObject.findByName(entityName: "Site", "Basin", in: reader))
        try other.performAndWait {
            let site = try #require(EntityObject.findByName(entityName: "Site", "Basin", in: other))
            try site.setValue("Basin (north)", forKey: "name")
            other.easySave()
        }
        #expect(basin.cdValue(for: "name") as? String == "Basin")
        reader.safeRefresh()
        #expect(basin.cdValue(for: "name") as? String == "Basin (north)")
        #expect(basin.cdValue(for: "noSuchKey") == nil)
    }

    @Test func objectHelpersSaveMoveAndDeleteThroughTheObjectsContext() async throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(directory, sites: ["Basin", "Ridge"])
        let context = stack.newBackgroundContext()
        let other = stack.newBackgroundContext()
        let basin = try #require(EntityObject.findByName(entityName: "Site", "Basin", in: context))
        #expect(basin.managedObjectContext === context)

        // inContext finds the same row in another context, on that context's queue.
        let elsewhere = try #require(basin.inContext(other))
        #expect(elsewhere.managedObjectContext === other && elsewhere.objectID == basin.objectID)
        #expect(await basin.inContextAsync(other) == basin.objectID)

        // save(in:) saves the object's context when it has changes.
        try context.performAndWait { try basin.setValue("Basin (north)", forKey: "name") }
        context.performAndWait { basin.save() }
        #expect(EntityObject.findByName(entityName: "Site", "Basin (north)", in: stack.newBackgroundContext()) != nil)

        // saveMergeInTo(context:) saves a child, then its parent.
        let child = context.newChildContext()
        let ridge = try #require(EntityObject.findByName(entityName: "Site", "Ridge", in: child))
        try child.performAndWait { try ridge.setValue(false, forKey: "enabled_") }
        ridge.saveMergeInTo(context: context)
        let disabled = try FetchPredicate(format: "enabled_ == NO")
        #expect(EntityObject.count(entityName: "Site", predicate: disabled, in: stack.newBackgroundContext()) == 1)

        // delete(in:doSave:) deletes and saves; the object leaves its context.
        context.performAndWait { basin.delete() }
        #expect(basin.managedObjectContext == nil)
        let reader = stack.newBackgroundContext()
        #expect(try Self.names(EntityObject.all(entityName: "Site", in: reader)) == ["Ridge"])
    }

    @Test func staticHelpersFindCountDisableAndClear() async throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(directory, sites: ["Basin", "Cove", "Ridge", "Summit"])
        let context = stack.newBackgroundContext()

        #expect(try Self.names(EntityObject.all(entityName: "Site", in: context)) == ["Basin", "Cove", "Ridge", "Summit"])
        #expect(EntityObject.hasAnyEntities(entityName: "Site", in: context))
        #expect(EntityObject.findByName(entityName: "Site", "", in: context) == nil)
        let startsWithR = try FetchPredicate(format: "name BEGINSWITH %@", "R")
        #expect(try Self.names(EntityObject.findPredicate(entityName: "Site", with: startsWithR, fetchLimit: 5, in: context)) == ["Ridge"])
        let found = EntityObject.findObject(for: "Site", by: startsWithR, in: context)
        #expect(try context.performAndWait { try found?.value(forKey: "name", as: String.self) } == "Ridge")
        #expect(try EntityObject.find(entityName: "Site", by: nil, in: context) != nil)
        let withI = try FetchPredicate(format: "name CONTAINS[c] %@", "i")
        #expect(try Self.names(EntityObject.findMultiple(entityName: "Site", by: withI, in: context)) == ["Basin", "Ridge", "Summit"])
        #expect(try await EntityObject.findObjectIDs(entityName: "Site", by: startsWithR, in: context).count == 1)

        // disableAll changes every object and saves (called, as the app does, where the
        // context's objects may be used: here inside its block).
        context.performAndWait { EntityObject.disableAll(entityName: "Site", in: context) }
        let enabled = try FetchPredicate(format: "enabled_ == YES")
        #expect(EntityObject.count(entityName: "Site", predicate: enabled, in: stack.newBackgroundContext()) == 0)

        // deleteData deletes in the context only; the store changes with the next save.
        #expect(EntityObject.deleteData(entityName: "Site", predicate: startsWithR, in: context))
        #expect(!EntityObject.deleteData(entityName: "Site", predicate: try FetchPredicate(format: "name == 'Nowhere'"), in: context))
        #expect(EntityObject.count(entityName: "Site", in: stack.newBackgroundContext()) == 4)
        context.performAndWait { context.easySave() }
        #expect(EntityObject.count(entityName: "Site", in: stack.newBackgroundContext()) == 3)

        // clearData batch-deletes in the store (Core Data's status-only request), then refreshes.
        EntityObject.clearData(entityName: "Site", predicate: try FetchPredicate(format: "name != 'Cove'"), in: context)
        #expect(EntityObject.count(entityName: "Site", in: stack.newBackgroundContext()) == 1)
        EntityObject.clearData(entityName: "Site", in: context)
        #expect(!EntityObject.hasAnyEntities(entityName: "Site", in: stack.newBackgroundContext()))
    }

    /// The fetch hints the helpers set are accepted and change no result; requests that differ in
    /// them are different requests.
    @Test func fetchHintsChangeNoResult() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(directory, sites: ["Basin", "Ridge"])
        let context = stack.newBackgroundContext()
        let plain = FetchRequest(entityName: "Site", sortKeys: [SortKey("name")])
        var hinted = plain
        hinted.returnsObjectsAsFaults = false
        hinted.includesPropertyValues = false
        #expect(plain.returnsObjectsAsFaults && plain.includesPropertyValues)
        #expect(hinted != plain && Set([plain, hinted]).count == 2)
        let (first, second) = try context.performAndWait {
            let names = { (request: FetchRequest) in
                try context.fetch(request).map { try $0.value(forKey: "name", as: String.self) }
            }
            return (try names(plain), try names(hinted))
        }
        #expect(first == ["Basin", "Ridge"] && second == first)
    }

    /// `mainAsyncSave(in:)` saves a main-queue context from the main queue.
    @MainActor @Test func mainAsyncSaveSavesAMainQueueContextLater() async throws {
        let directory = TemporaryDirectory()
        let stack = try Self.stack(directory, sites: [])
        let main = ObjectContext(concurrencyType: .mainQueueConcurrencyType, name: "main")
        main.persistentStoreCoordinator = stack.persistentStoreCoordinator
        try main.insert(entityName: "Site").setValue("Harbour", forKey: "name")
        EntityObject.mainAsyncSave(in: main)
        #expect(main.hasChanges)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { continuation.resume() } // runs after the save's block
        }
        #expect(!main.hasChanges)
        #expect(EntityObject.count(entityName: "Site", in: stack.newBackgroundContext()) == 1)
    }
}
