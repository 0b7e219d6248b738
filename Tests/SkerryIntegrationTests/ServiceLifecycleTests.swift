#if ServiceLifecycle
    import Foundation
    import Logging
    import ServiceLifecycle
    import ServiceLifecycleTestKit
    import Skerry
    import SkerryCore
    import SkerryServiceLifecycle
    import Testing

    @Suite struct ServiceLifecycleTests {
        @Test func gracefulShutdownSavesInFlightChanges() async throws {
            let folder = TemporaryDirectory()
            let model = try bookModel()
            let stack = PersistentStack(name: "Library", model: model)
            stack.persistentStoreDescriptions = [StoreDescription(url: folder.file("Library.sqlite"))]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let book = try context.insert(entityName: "Book")
                try book.setValue("Dune", forKey: "title") // not saved: in flight
            }
            let service = SaveOnShutdownService(contexts: [context], logger: Logger(label: "test"))
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            // A new stack over the same file sees the book: it reached the store.
            let reopened = PersistentStack(name: "Library", model: model)
            reopened.persistentStoreDescriptions = [StoreDescription(url: folder.file("Library.sqlite"))]
            try reopened.loadPersistentStores()
            let count = try reopened.viewContext.performAndWait { try reopened.viewContext.count(for: FetchRequest(entityName: "Book")) }
            #expect(count == 1)
        }

        @Test func aServiceGroupSavesOnGracefulShutdown() async throws {
            let folder = TemporaryDirectory()
            let model = try bookModel()
            let logger = Logger(label: "library")
            let stack = PersistentStack(name: "Library", model: model)
            stack.persistentStoreDescriptions = [StoreDescription(url: folder.file("Library.sqlite"))]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let book = try context.insert(entityName: "Book")
                try book.setValue("Dune", forKey: "title")
            }
            // doc: service-group
            let saving = SaveOnShutdownService(contexts: [context], logger: logger)
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: [saving], // then the services that write: an HTTP server...
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            // doc: end
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(context.performAndWait { !context.hasChanges })
            let stored = try stack.newBackgroundContext().performAndWait { [stack] in
                try stack.viewContext.performAndWait { try stack.viewContext.count(for: FetchRequest(entityName: "Book")) }
            }
            #expect(stored == 1)
        }

        @Test func aFailedSaveOnShutdownIsThrownAndChangesStayInTheContext() async throws {
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [.inMemory()]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait { _ = try context.insert(entityName: "Book") } // no title: cannot be saved
            let service = SaveOnShutdownService(contexts: [context], logger: Logger(label: "test"))
            await #expect(throws: SkerryError.self) {
                try await testGracefulShutdown { trigger in
                    trigger.triggerGracefulShutdown()
                    try await service.run()
                }
            }
            #expect(context.performAndWait { context.hasChanges })
        }
    }
#endif
