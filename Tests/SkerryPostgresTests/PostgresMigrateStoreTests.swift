import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// `StoreCoordinator.migratePersistentStore(_:to:)` between SQLite and PostgreSQL: a service's
/// SQLite file moves into a PostgreSQL schema that several instances then share, and back.
@Suite(.postgres) struct PostgresMigrateStoreTests {
    /// A stack on a new SQLite file in `directory`, filled with `people` people.
    static func sqliteStack(_ directory: TemporaryDirectory, people: Int) throws -> (PersistentStack, URL) {
        let url = directory.file("Service.sqlite")
        let stack = PersistentStack(name: "Service", model: try StoreMoveFixture.model())
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        try StoreMoveFixture.fill(stack.newBackgroundContext(), people: people)
        return (stack, url)
    }

    static func contents(_ stack: PersistentStack) throws -> [String] {
        try StoreMoveFixture.contents(stack.newBackgroundContext())
    }

    /// Inserts a person named `name` through a new context of `stack`.
    static func insertPerson(_ name: String, _ stack: PersistentStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let person = try context.insert(entityName: "Person")
            try person.setValue(name, forKey: "name")
            let item = try context.insert(entityName: "Item")
            try item.setValue("\(name)-item", forKey: "code")
            try person.setRelatedObjects([item], forKey: "items")
            try context.save()
        }
    }

    @Test func aSQLiteFileMovesIntoPostgreSQLForSeveralInstances() throws {
        let directory = TemporaryDirectory()
        let (stack, url) = try Self.sqliteStack(directory, people: 1_200)
        let before = try Self.contents(stack)
        let connectionString = try PostgresTestServer.require()
        let schema = PostgresTestServer.newSchema()

        // doc: move-to-postgres
        let coordinator = stack.persistentStoreCoordinator
        let file = try #require(coordinator.persistentStore(for: url))
        let postgres = try coordinator.migratePersistentStore(
            file, to: .postgres(connectionString, maximumConnections: 4, schema: schema))
        // doc: end
        // The stack lists the PostgreSQL store in place of the file: loading again loads nothing.
        #expect(stack.persistentStoreDescriptions == [postgres])
        try stack.loadPersistentStores()
        #expect(coordinator.persistentStores == [postgres])

        #expect(coordinator.persistentStores.map(\.kind) == [.postgres])
        #expect(try Self.contents(stack) == before)
        // Another instance opens the schema and finds every object and link.
        let other = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Other")
        #expect(try Self.contents(other) == before)
        // Both write on: keys come from sequences restarted past the copied rows.
        try Self.insertPerson("from-first", stack)
        try Self.insertPerson("from-other", other)
        let after = try Self.contents(other)
        #expect(after.count == before.count + 4)
        #expect(after.contains { $0.hasPrefix("Person:from-first ") } && after.contains { $0.hasPrefix("Person:from-other ") })
        // The file is left as it was.
        let check = PersistentStack(name: "Check", model: try StoreMoveFixture.model())
        check.persistentStoreDescriptions = [StoreDescription(url: url)]
        try check.loadPersistentStores()
        #expect(try Self.contents(check) == before)
    }

    @Test func keysOfDeletedOrReservedObjectsAreNeverHandedOutAgain() throws {
        let directory = TemporaryDirectory()
        let (stack, _) = try Self.sqliteStack(directory, people: 20)
        let coordinator = stack.persistentStoreCoordinator
        // SQLite's keys table into PostgreSQL's sequences.
        var burnt = try StoreMoveFixture.burnKeys(stack)
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: try PostgresTestServer.description())
        var fresh = try StoreMoveFixture.insertPersonAndTag(stack, "in-postgres")
        #expect(fresh.person > burnt.person)
        #expect(fresh.tag > burnt.tag)
        // PostgreSQL's sequences into a SQLite file's keys table.
        burnt = try StoreMoveFixture.burnKeys(stack)
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: directory.file("Back.sqlite"), type: .sqlite)
        fresh = try StoreMoveFixture.insertPersonAndTag(stack, "back-in-a-file")
        #expect(fresh.person > burnt.person)
        #expect(fresh.tag > burnt.tag)
    }

    @Test func aPostgreSQLStoreMovesBackIntoAFile() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema)
        try StoreMoveFixture.fill(stack.newBackgroundContext(), people: 40)
        let before = try Self.contents(stack)
        let directory = TemporaryDirectory()
        let coordinator = stack.persistentStoreCoordinator

        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: directory.file("Back.sqlite"), type: .sqlite)
        #expect(coordinator.persistentStores.map(\.kind) == [.sqlite])
        #expect(try Self.contents(stack) == before)
        // The schema is left as it was.
        #expect(try Self.contents(PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Check")) == before)
    }

    /// Whether `schema` exists on the test server.
    static func schemaExists(_ schema: String) throws -> Bool {
        try PostgresTestServer.connect().scalarInt64("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.string(schema)]) == 1
    }

    @Test func aFailedCopyLeavesNoSchemaAndTheFileLoaded() throws {
        let directory = TemporaryDirectory()
        let (stack, url) = try Self.sqliteStack(directory, people: 1_100)
        let coordinator = stack.persistentStoreCoordinator
        let file = coordinator.persistentStores[0]
        // Two people share a name in the file (written past the store, its unique index dropped):
        // PostgreSQL's constraint refuses the copy, in its second batch of people.
        let raw = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: 5)
        try raw.execute("DROP INDEX \"\(StoreIndexes.indexName("Person", ["name"], unique: true))\"")
        try raw.execute("UPDATE \"Person\" SET \"name\" = 'person01050' WHERE \"name\" = 'person01060'")
        let before = try Self.contents(stack)
        let schema = PostgresTestServer.newSchema()

        let error = expectError(.constraintViolation) {
            try coordinator.migratePersistentStore(file, to: try PostgresTestServer.description(schema: schema))
        }
        #expect(error?.key == "name")
        #expect(coordinator.persistentStores == [file])
        #expect(try Self.contents(stack) == before)
        // The schema the store made when it opened is dropped again: the server is as it was.
        #expect(try !Self.schemaExists(schema))
    }

    @Test func aFailedCopyIntoAnExistingSchemaLeavesItsStoreEmpty() throws {
        let directory = TemporaryDirectory()
        let (stack, url) = try Self.sqliteStack(directory, people: 1_100)
        let coordinator = stack.persistentStoreCoordinator
        let file = coordinator.persistentStores[0]
        let raw = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: 5)
        try raw.execute("DROP INDEX \"\(StoreIndexes.indexName("Person", ["name"], unique: true))\"")
        try raw.execute("UPDATE \"Person\" SET \"name\" = 'person01050' WHERE \"name\" = 'person01060'")
        // An empty store there already (made by another instance's load).
        let schema = PostgresTestServer.newSchema()
        _ = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Empty")

        expectError(.constraintViolation) {
            try coordinator.migratePersistentStore(file, to: try PostgresTestServer.description(schema: schema))
        }
        let check = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Check")
        #expect(try Self.contents(check).isEmpty)
        // The sequences are where they were: the copy's keys were rolled back, the first key given is 1.
        let context = check.newBackgroundContext()
        let key = try context.performAndWait {
            let tag = try context.insert(entityName: "Tag")
            try tag.setValue("first", forKey: "label")
            try context.save()
            return tag.objectID.key
        }
        #expect(key == 1)
    }

    @Test func aDestinationSchemaWithObjectsIsRefused() throws {
        let schema = PostgresTestServer.newSchema()
        let occupied = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema)
        try Self.insertPerson("already-here", occupied)
        let directory = TemporaryDirectory()
        let (stack, _) = try Self.sqliteStack(directory, people: 5)
        let coordinator = stack.persistentStoreCoordinator
        let file = coordinator.persistentStores[0]

        expectError(.invalidArgument) {
            try coordinator.migratePersistentStore(file, to: try PostgresTestServer.description(schema: schema))
        }
        #expect(coordinator.persistentStores == [file])
        #expect(try Self.contents(occupied).count == 2)
    }

    @Test func aDestinationSchemaOfAnotherModelVersionIsRefusedUntouched() throws {
        let schema = PostgresTestServer.newSchema()
        let older = try PostgresTestServer.stack(try StoreMoveFixture.olderModel(), schema, name: "Older")
        let context = older.newBackgroundContext()
        try context.performAndWait {
            try context.insert(entityName: "Tag").setValue("old", forKey: "label")
            try context.save()
        }
        let connection = try PostgresTestServer.connect()
        func state() throws -> [String] {
            let person = try connection.query("SELECT to_regclass(?) IS NOT NULL", [.string("\"\(schema)\".\"Person\"")])
            let hash = try connection.query("SELECT value FROM \"\(schema)\"._skerry_metadata WHERE key = 'modelVersionHash'")
            return [person.value(0, 0, as: .boolean) == .bool(true) ? "Person" : "-", hash.text(0, 0)]
        }
        let before = try state()
        #expect(before[0] == "-")
        let directory = TemporaryDirectory()
        let (stack, _) = try Self.sqliteStack(directory, people: 5)
        let coordinator = stack.persistentStoreCoordinator
        let file = coordinator.persistentStores[0]

        let error = expectError(.invalidArgument) {
            try coordinator.migratePersistentStore(file, to: try PostgresTestServer.description(schema: schema))
        }
        #expect(error?.message.contains("another version of the model") == true)
        #expect(coordinator.persistentStores == [file])
        #expect(try state() == before)
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Tag")) } == 1)
    }

    @Test func aServerThatCannotBeReachedFailsWithATypedErrorAndNothingChanges() throws {
        let directory = TemporaryDirectory()
        let (stack, _) = try Self.sqliteStack(directory, people: 5)
        let before = try Self.contents(stack)
        let coordinator = stack.persistentStoreCoordinator
        let file = coordinator.persistentStores[0]
        let nowhere = StoreDescription.postgres("host=\(directory.url.path) port=1 dbname=none connect_timeout=2", schema: "s")

        let error = expectError(.database) { try coordinator.migratePersistentStore(file, to: nowhere) }
        #expect(error?.postgres?.sqlState == .unableToConnect)
        #expect(coordinator.persistentStores == [file])
        #expect(try Self.contents(stack) == before)
        // A store this coordinator has loaded already is no destination, nor the source itself.
        let schema = PostgresTestServer.newSchema()
        try coordinator.addPersistentStore(with: try PostgresTestServer.description(schema: schema))
        expectError(.invalidArgument) {
            try coordinator.migratePersistentStore(file, to: try PostgresTestServer.description(schema: schema))
        }
    }

    @Test func destroyDropsTheStoresSchemaAndUnloadsIt() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema)
        let other = try PostgresTestServer.stack(try StoreMoveFixture.model(), schema, name: "Other")
        try Self.insertPerson("doomed", stack)
        let coordinator = stack.persistentStoreCoordinator

        try coordinator.destroyPersistentStore(with: try PostgresTestServer.description(schema: schema))
        #expect(try !Self.schemaExists(schema))
        // Both stacks of the process lost the store; loading again makes a new, empty one.
        #expect(coordinator.persistentStores.isEmpty && other.persistentStoreCoordinator.persistentStores.isEmpty)
        try stack.loadPersistentStores()
        #expect(try Self.contents(stack).isEmpty)

        // A schema that is not there: nothing to do.
        try coordinator.destroyPersistentStore(with: try PostgresTestServer.description(schema: PostgresTestServer.newSchema()))
        // A store without a schema of its own, and a schema that holds no store, are refused.
        expectError(.invalidArgument) { try coordinator.destroyPersistentStore(with: .postgres(try PostgresTestServer.require())) }
        let foreign = PostgresTestServer.newSchema()
        let connection = try PostgresTestServer.connect()
        try connection.execute("CREATE SCHEMA \(foreign); CREATE TABLE \(foreign).keep (id integer)")
        expectError(.invalidArgument) { try coordinator.destroyPersistentStore(with: try PostgresTestServer.description(schema: foreign)) }
        #expect(try Self.schemaExists(foreign))
        try connection.execute("DROP SCHEMA \(foreign) CASCADE")
    }

    @Test func replaceRefusesPostgreSQLStoresWithATypedError() throws {
        let directory = TemporaryDirectory()
        let coordinator = StoreCoordinator(managedObjectModel: try StoreMoveFixture.model())
        let postgres = try PostgresTestServer.description()
        let error = expectError(.invalidArgument) {
            try coordinator.replacePersistentStore(postgres, withPersistentStoreFrom: StoreDescription(url: directory.file("A.sqlite")))
        }
        #expect(error?.message.contains("migratePersistentStore") == true)
        expectError(.invalidArgument) {
            try coordinator.replacePersistentStore(StoreDescription(url: directory.file("B.sqlite")), withPersistentStoreFrom: postgres)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("B.sqlite").path))
    }
}
