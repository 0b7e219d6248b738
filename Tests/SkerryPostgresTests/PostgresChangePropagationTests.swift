import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Several instances on one database: saves of the same objects from several processes lose no
/// update, and did-save events cross processes for stacks that opted in. The other process is
/// `SkerryPostgresPeer` (Sources/SkerryPostgresPeer), a real separate process.
@Suite(.postgres) struct PostgresChangePropagationTests {
    /// The model `SkerryPostgresPeer` uses.
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)]),
            EntityDescription(name: "Counter", attributes: [AttributeDescription("value", .integer64, defaultValue: Int64(0))]),
        ])
    }

    static func stack(_ schema: String, propagatesChanges: Bool) throws -> PersistentStack {
        let connectionString = try PostgresTestServer.require()
        // doc: postgres-stack
        let stack = PersistentStack(name: "Instance", model: try model())
        stack.persistentStoreDescriptions = [
            .postgres(connectionString, maximumConnections: 4, schema: schema, propagatesChanges: propagatesChanges)
        ]
        try stack.loadPersistentStores()
        // doc: end
        return stack
    }

    /// A running `SkerryPostgresPeer`, its output read line by line.
    final class Peer {
        let process = Process()
        private let output = Pipe()
        private var buffer = Data()

        init(_ arguments: [String]) throws {
            // Built beside the test bundle (the test target depends on it).
            let directory = Bundle.main.bundleURL
            let candidates = [
                directory, directory.deletingLastPathComponent(),
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            ]
            .map { $0.appendingPathComponent("SkerryPostgresPeer") }
            let executable = try #require(
                candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                "SkerryPostgresPeer is not built beside the tests (\(directory.path))")
            process.executableURL = executable
            process.arguments = arguments
            process.standardOutput = output
            try process.run()
        }

        /// The next line the peer prints, or nil when it ended.
        func nextLine() -> String? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    return line
                }
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
        }

        /// Waits for the end and returns the exit status.
        func finish() -> Int32 {
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// Waits up to two minutes for `condition` (the other process needs to start and connect).
    static func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    @Test func twoProcessesSeeEachOthersSaves() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema, propagatesChanges: true)
        let fromOthers = Mutex<[DidSaveEvent]>([])
        // doc: saves-of-others
        let observation = stack.addDidSaveObserver { event in
            if event.isFromOtherProcess { fromOthers.withLock { $0.append(event) } }
        }
        // doc: end
        defer { observation.cancel() }
        let peer = try Peer([try PostgresTestServer.require(), schema, "echo"])
        #expect(peer.nextLine() == "ready")

        // This process saves a note; the peer hears of it, reads it, answers with a note of its
        // own and renames this one.
        let context = stack.viewContext
        let note = try context.performAndWait {
            let note = try context.insert(entityName: "Note")
            try note.setValue("ping", forKey: "text")
            try context.save()
            return note
        }
        #expect(peer.nextLine() == "done")
        #expect(peer.finish() == 0)

        // This stack hears of the peer's save: one event with its insert and its update...
        #expect(Self.eventually { fromOthers.withLock { !$0.isEmpty } })
        let event = try #require(fromOthers.withLock { $0.first })
        #expect(event.changes.inserted.count == 1)
        #expect(event.changes.updated == [note.objectID])
        #expect(event.context !== context)
        // ...and the view context merged it by itself: the note it holds shows the peer's change.
        #expect(try Self.eventually { try context.performAndWait { try note.value(forKey: "text") as? String } == "ping (read)" })
        let answer = try context.performAndWait {
            try context.existingObject(with: event.changes.inserted.first!).value(forKey: "text") as? String
        }
        #expect(answer == "ping seen")
        // Its own save is not news to it.
        #expect(fromOthers.withLock { $0.count } == 1)
    }

    @Test func concurrentSavesOfOneObjectFromSeveralProcessesLoseNoUpdate() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema, propagatesChanges: false)
        let context = stack.newBackgroundContext()
        let counterID = try context.performAndWait {
            let counter = try context.insert(entityName: "Counter")
            try context.save()
            return counter.objectID
        }
        // Three processes add 1 to the same row 40 times each under the default (error) merge
        // policy: each save that lost the race fails with a merge conflict and is retried after
        // reading the row again (the peer fails on any other error).
        let peers = try (0..<3).map { _ in try Peer([try PostgresTestServer.require(), schema, "increment", "40"]) }
        var conflicts = 0
        for peer in peers {
            let line = try #require(peer.nextLine())
            #expect(line.hasPrefix("conflicts "))
            conflicts += Int(line.dropFirst("conflicts ".count)) ?? 0
            #expect(peer.finish() == 0)
        }
        let value = try context.performAndWait {
            context.reset()
            return try context.existingObject(with: counterID).value(forKey: "value") as? Int64
        }
        #expect(value == 120)
        // Every conflict was a save that wrote nothing: the row's version counts the saves that did.
        let version = try PostgresTestServer.connect().query("SELECT \"_version\" FROM \"\(schema)\".\"Counter\"").int64(0, 0)
        #expect(version == 121)
        _ = conflicts
    }

    @Test func aListenerWhoseConnectionWasCutCatchesUp() throws {
        let schema = PostgresTestServer.newSchema()
        let listening = try Self.stack(schema, propagatesChanges: true)
        let writing = try Self.stack(schema, propagatesChanges: true)
        let inserted = Mutex<Set<ObjectID>>([])
        let observation = listening.addDidSaveObserver { event in
            if event.isFromOtherProcess { inserted.withLock { $0.formUnion(event.changes.inserted) } }
        }
        defer { observation.cancel() }
        let store = try #require(listening.coordinator.loadedStores.first as? PostgresStore)
        let listener = try #require(store.listener)
        let admin = try PostgresTestServer.connect()
        func save(_ text: String) throws -> ObjectID {
            let context = writing.newBackgroundContext()
            return try context.performAndWait {
                let note = try context.insert(entityName: "Note")
                try note.setValue(text, forKey: "text")
                try context.save()
                return note.objectID
            }
        }
        let first = try save("before")
        #expect(Self.eventually { inserted.withLock { $0.count == 1 } })
        // The listener's connection is cut; saves go on meanwhile, and it reconnects and resumes.
        let pid = listener.backendPID.load(ordering: .relaxed)
        try admin.query("SELECT pg_terminate_backend(?::integer)", [.int(Int64(pid))])
        let during = try (0..<5).map { try save("during \($0)") }
        #expect(Self.eventually { inserted.withLock { $0.count == 6 } })
        #expect(inserted.withLock { Set($0.map(\.key)) } == Set(([first] + during).map(\.key)))
        #expect(listener.backendPID.load(ordering: .relaxed) != pid)
    }

    @Test func permanentIDsObtainedBeforeTheSaveNameTheRowInEveryInstance() throws {
        let schema = PostgresTestServer.newSchema()
        let first = try Self.stack(schema, propagatesChanges: false)
        let second = try Self.stack(schema, propagatesChanges: false)
        // Keys reserved in two instances at once never collide (one sequence), and the saves
        // write the rows under them.
        let (one, two) = try [first, second].map { stack in
            let context = stack.newBackgroundContext()
            return try context.performAndWait {
                let note = try context.insert(entityName: "Note")
                try note.setValue("reserved", forKey: "text")
                try context.obtainPermanentIDs(for: [note])
                let reserved = note.objectID
                try context.save()
                #expect(note.objectID == reserved)
                return reserved.uriRepresentation()
            }
        }.reduce(into: (URL?.none, URL?.none)) { pair, uri in if pair.0 == nil { pair.0 = uri } else { pair.1 = uri } }
        let firstURI = try #require(one), secondURI = try #require(two)
        #expect(firstURI != secondURI)
        // Each instance finds the other's row by its URI (the store's identifier is shared).
        let context = first.newBackgroundContext()
        let text = try context.performAndWait {
            try context.existingObject(with: first.objectID(forURIRepresentation: secondURI)).value(forKey: "text") as? String
        }
        #expect(text == "reserved")
    }

    @Test func aStackWithoutPropagationNeitherAnnouncesNorHears() throws {
        let schema = PostgresTestServer.newSchema()
        let quiet = try Self.stack(schema, propagatesChanges: false)
        let store = try #require(quiet.coordinator.loadedStores.first as? PostgresStore)
        #expect(store.listener == nil)
        let context = quiet.newBackgroundContext()
        try context.performAndWait {
            try context.insert(entityName: "Note").setValue("unheard", forKey: "text")
            try context.save()
        }
        let recorded = try PostgresTestServer.connect().query("SELECT count(*) FROM \"\(schema)\".\"_skerry_changes\"").int64(0, 0)
        #expect(recorded == 0)
    }
}
