import Foundation
import Testing

@testable import SkerryCore

// A real app's hand-built Core Data stack, ported: `CoreDataStack` of VirtualTourist
// (github.com/BryanMorfe/VirtualTourist, VirtualTourist/Model/CoreDataStack.swift), the stack of
// Udacity's Core Data course that many apps copied: a coordinator with one SQLite store, a private
// "persisting" context on it, the main-queue context as its child and a background context as the
// main context's child; `removeAllData()` destroys the store and adds it again; background batches;
// a save down the chain, and a timed autosave. Written again in Skerry's names; what the port
// changed is listed in docs/names.md ("Porting a hand-built stack"). The model is the app's (pins and
// their photos), as an Xcode model file (the app loads the compiled `.momd` from its bundle).

struct VirtualTouristStack {

    // MARK: Properties

    private let model: ObjectModel
    let coordinator: StoreCoordinator
    private let modelURL: URL
    let dbURL: URL
    let context: ObjectContext
    let persistingContext: ObjectContext
    let backgroundContext: ObjectContext

    // MARK: Initializer

    /// Port: the app looks `modelName.momd` up in its bundle and puts the store in its documents
    /// folder; the test passes both folders.
    init?(modelName: String, modelFolder: URL, documentFolder: URL) {
        let modelURL = modelFolder.appendingPathComponent("\(modelName).xcdatamodeld")
        guard FileManager.default.fileExists(atPath: modelURL.path) else {
            print("Unable to find \(modelName).")
            return nil
        }
        self.modelURL = modelURL

        // Port: `NSManagedObjectModel(contentsOf:)` returns nil on failure; `loadModel` throws.
        guard let model = try? XcodeModel.loadModel(contentsOf: modelURL) else {
            print("Unable to create an object from \(modelURL).")
            return nil
        }
        self.model = model

        coordinator = StoreCoordinator(managedObjectModel: model)

        persistingContext = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        persistingContext.persistentStoreCoordinator = coordinator

        context = ObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.parent = persistingContext

        backgroundContext = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        backgroundContext.parent = context

        let dbURL = documentFolder.appendingPathComponent("model.sqlite")

        do {
            try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: dbURL, options: nil)
        } catch {
            print("Unable to add store at \(dbURL)")
        }

        self.dbURL = dbURL
    }
}

// MARK: Remove Data

extension VirtualTouristStack {
    func removeAllData() throws {
        try coordinator.destroyPersistentStore(at: dbURL, ofType: SQLiteStoreType, options: nil)
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: dbURL, options: nil)
    }
}

// MARK: Background Context Operations

extension VirtualTouristStack {
    /// Port: the batch is `@Sendable` (Swift 6: it runs on the background context's queue).
    func performBackgroundBatchOperations(batch: @escaping @Sendable (ObjectContext) -> Void) {
        backgroundContext.perform {
            batch(self.backgroundContext)

            do {
                try self.backgroundContext.save()
            } catch {
                print("Error saving in background context: \(error)")
            }
        }
    }

    /// Port: called from the background context's queue (a batch), as the app calls it.
    func saveInBackground() {
        do {
            try self.backgroundContext.save()
        } catch {
            print("Error saving in background context: \(error)")
        }
    }
}

// MARK: Save Data

private let nanosecondsPerSecond: UInt64 = 1_000_000_000

extension VirtualTouristStack {
    func save() {
        context.performAndWait {
            if self.context.hasChanges {
                do {
                    try self.context.save()
                } catch {
                    print("Error in main context saving: \(error.localizedDescription)")
                }

                self.persistingContext.perform {
                    do {
                        try self.persistingContext.save()
                    } catch {
                        print("Error in the saving context: \(error.localizedDescription)")
                    }
                }
            }
        }
    }

    /// Port: `@MainActor` (the app runs it on the main thread; Swift 6 asks to say so for
    /// `DispatchQueue.main.asyncAfter`'s block).
    @MainActor func save(every delay: TimeInterval) {
        if delay > 0 {
            save()

            // Port: `NSEC_PER_SEC` is Darwin's; Linux's Dispatch does not export it.
            let nanoSeconds = UInt64(delay) * nanosecondsPerSecond
            let time = DispatchTime.now() + Double(nanoSeconds) / Double(nanosecondsPerSecond)

            DispatchQueue.main.asyncAfter(
                deadline: time,
                execute: {
                    self.save(every: delay)
                })
        }
    }
}

@Suite struct CoreDataStackPortTests {
    /// Pins in the store, read through a context of their own (as another screen of the app would).
    static func storedPins(_ stack: VirtualTouristStack) throws -> [Double] {
        let reader = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = stack.coordinator
        return try reader.performAndWait {
            var request = FetchRequest(entityName: "Pin")
            request.sortDescriptors = [SortKey(key: "latitude", ascending: true)]
            return try reader.fetch(request).map { try $0.value(forKey: "latitude") as? Double ?? .nan }
        }
    }

    /// The app's flow: photos for a new pin are made in a background batch, the main context
    /// shows them and `save()` writes them down the chain; "remove all data" leaves an empty
    /// store that the same contexts go on using.
    @MainActor @Test func theStackPortsAndItsResetLeavesAnEmptyStoreInUse() async throws {
        let documents = TemporaryDirectory()
        let stack = try #require(
            VirtualTouristStack(modelName: "VirtualTourist", modelFolder: FixtureFiles.folder, documentFolder: documents.url))
        #expect(VirtualTouristStack(modelName: "Missing", modelFolder: FixtureFiles.folder, documentFolder: documents.url) == nil)

        // A pin dropped on the map (main context), its photos made in the background.
        let pin = try stack.context.insert(entityName: "Pin")
        try pin.setValue(48.85, forKey: "latitude")
        try pin.setValue(2.35, forKey: "longitude")
        try stack.context.obtainPermanentIDs(for: [pin])
        let pinID = pin.objectID
        stack.performBackgroundBatchOperations { context in
            do {
                let pin = try context.existingObject(with: pinID)
                for number in 1...3 {
                    let photo = try context.insert(entityName: "Photo")
                    try photo.setValue("https://farm.example/\(number).jpg", forKey: "url")
                    try photo.setRelatedObject(pin, forKey: "pin")
                }
            } catch {
                Issue.record(error)
            }
        }
        // The batch ran and pushed its photos into the main context.
        await stack.backgroundContext.perform(schedule: .enqueued) {}
        #expect(try pin.relatedObjects(forKey: "photos").count == 3)
        #expect(try Self.storedPins(stack).isEmpty)

        stack.save()
        await stack.persistingContext.perform(schedule: .enqueued) {}
        #expect(try Self.storedPins(stack) == [48.85])
        let storedPhotos = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        storedPhotos.persistentStoreCoordinator = stack.coordinator
        #expect(try storedPhotos.performAndWait { try storedPhotos.count(for: FetchRequest(entityName: "Photo")) } == 3)

        // Remove all data: the store is empty, and the stack's contexts save into it.
        try stack.removeAllData()
        #expect(try Self.storedPins(stack).isEmpty)
        #expect(stack.coordinator.persistentStores.map(\.url) == [stack.dbURL])
        let newPin = try stack.context.insert(entityName: "Pin")
        try newPin.setValue(51.5, forKey: "latitude")
        stack.save()
        await stack.persistingContext.perform(schedule: .enqueued) {}
        #expect(try Self.storedPins(stack) == [51.5])

        // The autosave with no delay does nothing, as in the app.
        try stack.context.insert(entityName: "Pin").setValue(0.5, forKey: "latitude")
        stack.save(every: 0)
        #expect(stack.context.hasChanges)
    }
}
