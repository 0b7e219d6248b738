#if Logging
    import Foundation
    import InMemoryLogging
    import Logging
    import Skerry
    import SkerryCore
    import SkerryLogging
    import Testing

    @Suite struct LoggingTests {
        @Test func guideExampleLogsTheLoad() throws {
            let (logger, handler) = logger(.info)
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [.inMemory()]
            // doc: stack-logging
            let logging = stack.addLogging(to: logger, slowStatementThreshold: .milliseconds(50))
            try stack.loadPersistentStores() // logged: "store loaded", outcome created
            // keep `logging`; logging.cancel() stops it
            // doc: end
            logging.cancel()
            // A statement may cross the slow threshold on a loaded machine: not what this checks.
            let entries = handler.entries.filter { $0.message != "slow statement" }
            #expect(entries.map(\.message.description) == ["store loaded"])
            #expect(entries.first?.metadata["skerry.outcome"] == "created")
        }

        func logger(_ level: Logger.Level) -> (Logger, InMemoryLogHandler) {
            let handler = InMemoryLogHandler()
            var logger = Logger(label: "skerry-tests") { _ in handler }
            logger.logLevel = level
            return (logger, handler)
        }

        @Test func storeLoadsMigrationsAndErrorsAreLogged() throws {
            let folder = TemporaryDirectory()
            let (logger, handler) = logger(.info)
            func load(_ model: ObjectModel) throws {
                let stack = PersistentStack(name: "Library", model: model)
                stack.persistentStoreDescriptions = [StoreDescription(url: folder.file("Library.sqlite"))]
                let observation = stack.addLogging(to: logger)
                defer { observation.cancel() }
                try stack.loadPersistentStores()
            }
            try load(try bookModel())
            try load(
                try ObjectModel(entities: [
                    EntityDescription(
                        name: "Book",
                        attributes: [
                            AttributeDescription("title", .string),
                            AttributeDescription("year", .integer32, isOptional: true),
                            AttributeDescription("subtitle", .string, isOptional: true),
                        ])
                ]))
            #expect(throws: SkerryError.self) {
                try load(
                    try ObjectModel(entities: [EntityDescription(name: "Book", attributes: [AttributeDescription("title", .integer64)])]))
            }
            // A statement may cross the slow threshold on a loaded machine: not what this checks.
            let entries = handler.entries.filter { $0.message != "slow statement" }
            #expect(
                entries.map(\.message.description) == [
                    "store loaded", "migration step 1 of 1 done", "store loaded", "store failed to load",
                ])
            #expect(entries[0].metadata["skerry.outcome"] == "created")
            #expect(entries[2].metadata["skerry.outcome"] == "migrated")
            #expect(entries[3].level == .error)
            #expect(entries[3].metadata["skerry.error_code"] == "modelMismatch")
        }

        @Test func aStoreMoveIsLoggedWithBothStoresTheObjectsAndTheDuration() throws {
            let folder = TemporaryDirectory()
            let (logger, handler) = logger(.info)
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [StoreDescription(url: folder.file("Library.sqlite"))]
            let observation = stack.addLogging(to: logger)
            defer { observation.cancel() }
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                for title in ["Dune", "Solaris", "Neuromancer"] {
                    let book = try context.insert(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                }
                try context.save()
            }
            let coordinator = stack.persistentStoreCoordinator
            let moved = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: .inMemory())

            let entry = try #require(handler.entries.first { $0.message == "store migrated" })
            #expect(entry.level == .notice)
            #expect(entry.metadata["skerry.store"]?.description == "\(moved)")
            #expect(entry.metadata["skerry.from_store"]?.description.contains("Library.sqlite") == true)
            #expect(entry.metadata["skerry.store_kind"] == "inMemory")
            #expect(entry.metadata["skerry.from_store_kind"] == "sqlite")
            #expect(entry.metadata["skerry.objects"] == "3")
            #expect(entry.metadata["skerry.store_identifier"] != nil)
            #expect(entry.metadata["skerry.from_store_identifier"] != entry.metadata["skerry.store_identifier"])
            #expect(entry.metadata["skerry.duration"] != nil)
        }

        @Test func statementsAreLoggedAtTraceLevelOnly() throws {
            let (traceLogger, traced) = logger(.trace)
            let (infoLogger, quiet) = logger(.info)
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [.inMemory()]
            let observations = [stack.addLogging(to: traceLogger), stack.addLogging(to: infoLogger)]
            defer { observations.forEach { $0.cancel() } }
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let book = try context.insert(entityName: "Book")
                try book.setValue("Dune", forKey: "title")
                try context.save()
            }
            let statements = traced.entries.filter { $0.message == "statement" }
            #expect(statements.contains { $0.metadata["skerry.sql"]?.description.hasPrefix(#"INSERT INTO "Book""#) == true })
            #expect(statements.allSatisfy { $0.level == .trace })
            #expect(!quiet.entries.contains { $0.message == "statement" })
        }

        @Test func containerWithALoggerLogsPerformErrors() throws {
            let (logger, handler) = logger(.info)
            let stack = PersistentStack(name: "Library", model: try bookModel())
            stack.persistentStoreDescriptions = [.inMemory()]
            try stack.loadPersistentStores()
            // doc: container-logger
            let container = PersistentContainer(
                managedObjectContext: { stack.newBackgroundContext() },
                logger: logger, // errors of a perform go here, then are rethrown
                cleanUpAfterExecution: true)
            // doc: end
            #expect(throws: SkerryError.self) {
                try container.perform { context in
                    _ = try context.instance.insert(entityName: "Book") // no title: the save fails
                }
            }
            #expect(handler.entries.count == 1)
            #expect(handler.entries.first?.level == .error)
            #expect(handler.entries.first?.metadata["skerry.error_code"] == "missingRequiredValue")
        }
    }
#endif
