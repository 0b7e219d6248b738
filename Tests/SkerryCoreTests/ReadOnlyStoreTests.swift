import Foundation
import Testing

@testable import SkerryCore

/// `StoreDescription.isReadOnly`: reading a store that must not, or cannot, be written.
@Suite(.serialized) struct ReadOnlyStoreTests {
    /// Writes a store with two books at `url` and closes it.
    private func writeStore(_ url: URL, model: ObjectModel = Fixtures.model()) throws {
        let stack = PersistentStack(name: "Shelf", model: model)
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune")
            try context.insertBook("Emma")
            try context.save()
        }
    }

    private func readOnlyStack(_ url: URL, model: ObjectModel = Fixtures.model()) -> PersistentStack {
        let stack = PersistentStack(name: "Shelf", model: model)
        var description = StoreDescription(url: url)
        description.isReadOnly = true
        stack.persistentStoreDescriptions = [description]
        return stack
    }

    private func titles(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])).map {
                try $0.value(forKey: "title", as: String.self)
            }
        }
    }

    /// The folder's files, with their contents.
    private func snapshot(_ directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            files[name] = try Data(contentsOf: directory.file(name))
        }
        return files
    }

    /// Checks that the store file holds the bytes it held: SQLite's shared-memory index may appear
    /// beside it (readers of a WAL database share it), but no log with anything in it.
    private func expectUnchanged(
        _ directory: TemporaryDirectory, since before: [String: Data],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let after = try snapshot(directory)
        #expect(after["Shelf.sqlite"] == before["Shelf.sqlite"], sourceLocation: sourceLocation)
        #expect(after["Shelf.sqlite-wal"]?.isEmpty ?? true, sourceLocation: sourceLocation)
        #expect(
            Set(after.keys).subtracting(before.keys).isSubset(of: ["Shelf.sqlite-wal", "Shelf.sqlite-shm"]), sourceLocation: sourceLocation)
    }

    @Test func aReadOnlyStoreReadsAndRefusesEveryWrite() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shelf.sqlite")
        try writeStore(url)
        let before = try snapshot(directory)
        do {
            let stack = readOnlyStack(url)
            try stack.loadPersistentStores()
            #expect(try titles(stack) == ["Dune", "Emma"])
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                try context.insertBook("Not written")
                try context.fetch(FetchRequest(entityName: "Book"))[0].setValue("Renamed", forKey: "title")
                expectError(.storeIsReadOnly) { try context.save() }
                #expect(context.hasChanges) // the changes stay, as after any failed save
                expectError(.storeIsReadOnly) { _ = try context.execute(BatchDeleteRequest(entityName: "Book")) }
            }
        }
        try expectUnchanged(directory, since: before)
    }

    @Test func aStoreOnReadOnlyMediaOpensReadOnly() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shelf.sqlite")
        try writeStore(url)
        let unwritable = try Unwritable(directory.url, file: url)
        defer { unwritable.restore() }
        // Read-write, a WAL store there cannot be opened at all...
        let writable = PersistentStack(name: "Shelf", model: Fixtures.model())
        writable.persistentStoreDescriptions = [StoreDescription(url: url)]
        #expect(throws: SkerryError.self) { try writable.loadPersistentStores() }
        // ...read-only, it reads.
        let stack = readOnlyStack(url)
        try stack.loadPersistentStores()
        #expect(try titles(stack) == ["Dune", "Emma"])
    }

    @Test func aReadOnlyStoreIsNeverMigratedOrCreated() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Shelf.sqlite")
        try writeStore(url)
        let before = try snapshot(directory)
        let newer = try ObjectModel(entities: [
            Fixtures.bookEntity(extraAttributes: [AttributeDescription("subtitle", .string, isOptional: true)]),
            Fixtures.authorEntity(),
        ])
        expectError(.modelMismatch) { try readOnlyStack(url, model: newer).loadPersistentStores() }
        try expectUnchanged(directory, since: before)
        let missing = directory.file("Missing.sqlite")
        expectError(.storeLoadFailed) { try readOnlyStack(missing).loadPersistentStores() }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        let memory = PersistentStack(name: "Memory", model: Fixtures.model())
        var description = StoreDescription.inMemory()
        description.isReadOnly = true
        memory.persistentStoreDescriptions = [description]
        expectError(.storeLoadFailed) { try memory.loadPersistentStores() }
    }
}

/// Makes a folder and a file in it unwritable, as on read-only media: immutable (`chattr +i`) when
/// running as root, whom permissions do not stop; read-only permissions otherwise.
struct Unwritable {
    let paths: [String]
    let asRoot = geteuid() == 0

    init(_ folder: URL, file: URL) throws {
        paths = [file.path, folder.path]
        for path in paths {
            if asRoot {
                try Self.run("/usr/bin/chattr", ["+i", path])
            } else {
                try FileManager.default.setAttributes([.posixPermissions: path == folder.path ? 0o555 : 0o444], ofItemAtPath: path)
            }
        }
        // Prove it: creating a file there must fail.
        guard !FileManager.default.createFile(atPath: folder.appendingPathComponent("probe").path, contents: Data()) else {
            restore()
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: folder.path])
        }
    }

    func restore() {
        for path in paths.reversed() {
            if asRoot {
                try? Self.run("/usr/bin/chattr", ["-i", path]) // best effort: the folder is removed next
            } else {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            }
        }
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }
}
