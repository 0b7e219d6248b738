import Foundation
import Synchronization
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// A stack whose listener was away longer than the change table keeps saves: it cannot name
/// what it missed, so it says so (a did-save event with `missedSavesOfOthers`), and contexts
/// that merge automatically read their objects again.
@Suite(.postgres) struct PostgresMissedSavesTests {
    static func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        try PostgresChangePropagationTests.eventually(condition)
    }

    @Test func aListenerAwayLongerThanTheRetentionSaysSoAndContextsReadTheirObjectsAgain() throws {
        let schema = PostgresTestServer.newSchema()
        let listening = try PostgresChangePropagationTests.stack(schema, propagatesChanges: true)
        let writing = try PostgresChangePropagationTests.stack(schema, propagatesChanges: true)
        let events = Mutex<[DidSaveEvent]>([])
        let observation = listening.addDidSaveObserver { event in
            if event.isFromOtherProcess { events.withLock { $0.append(event) } }
        }
        defer { observation.cancel() }
        let store = try #require(listening.coordinator.loadedStores.first as? PostgresStore)
        let listener = try #require(store.listener)

        // The listening stack holds a note that the other instance then renames.
        let writer = writing.newBackgroundContext()
        let noteID = try writer.performAndWait {
            let note = try writer.insert(entityName: "Note")
            try note.setValue("first", forKey: "text")
            try writer.save()
            return note.objectID
        }
        #expect(Self.eventually { events.withLock { $0.count == 1 } })
        // The listening stack names the note in its own store's terms.
        let heardID = try #require(events.withLock { $0.first?.changes.inserted.first })
        let reader = listening.newBackgroundContext()
        let note = try reader.performAndWait {
            let note = try reader.existingObject(with: heardID)
            #expect(try note.value(forKey: "text") as? String == "first")
            return note
        }

        // The listener stays away while the note is renamed and the change is pruned for age.
        listener.holdRequested.store(true, ordering: .relaxed)
        #expect(Self.eventually { listener.isHeld.load(ordering: .relaxed) })
        try writer.performAndWait {
            try writer.existingObject(with: noteID).setValue("renamed while away", forKey: "text")
            try writer.save()
        }
        try store.withConnection(nil) { try PostgresChangeListener.prune($0, retention: .zero) }
        listener.holdRequested.store(false, ordering: .relaxed)

        // The listener says what it cannot name, once; the context reads its note again.
        #expect(Self.eventually { events.withLock { $0.contains { $0.missedSavesOfOthers } } })
        let missed = events.withLock { $0.filter(\.missedSavesOfOthers) }
        #expect(missed.count == 1)
        #expect(missed.first?.changes.isEmpty == true)
        #expect(try Self.eventually { try reader.performAndWait { try note.value(forKey: "text") as? String } == "renamed while away" })

        // Later saves arrive as usual, and the gap is reported once.
        try writer.performAndWait {
            try writer.existingObject(with: noteID).setValue("third", forKey: "text")
            try writer.save()
        }
        #expect(Self.eventually { events.withLock { $0.last?.changes.updated == [heardID] } })
        #expect(events.withLock { $0.filter(\.missedSavesOfOthers).count } == 1)
    }
}
