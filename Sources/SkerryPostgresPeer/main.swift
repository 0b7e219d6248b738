// A second process for the PostgreSQL store's tests (Tests/SkerryPostgresTests): it opens the
// same store as the test and answers its saves, so that the tests can show what crosses
// processes. Not a product; run by the tests only.
//
//   SkerryPostgresPeer CONNECTION SCHEMA echo           waits for a Note another process saves,
//                                                       answers with a Note "<text> seen" and
//                                                       renames the Note "<text> (read)"
//   SkerryPostgresPeer CONNECTION SCHEMA increment N    adds 1 to the Counter N times, retrying
//                                                       each save that fails with a conflict
//   SkerryPostgresPeer CONNECTION SCHEMA history N      with persistent history on, saves N Notes,
//                                                       one per save, as the author "peer"
import Foundation
import SkerryCore
import SkerryPostgres
import Synchronization

/// The model the tests and this peer share.
func peerModel() throws -> ObjectModel {
    try ObjectModel(entities: [
        EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)]),
        EntityDescription(name: "Counter", attributes: [AttributeDescription("value", .integer64, defaultValue: Int64(0))]),
    ])
}

/// Prints a line for the test, unbuffered (the test waits for it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("peer: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: SkerryPostgresPeer CONNECTION SCHEMA echo|increment N|history N") }
let stack = PersistentStack(name: "Peer", model: try peerModel())
var description = StoreDescription.postgres(
    arguments[1], maximumConnections: 2, schema: arguments[2], propagatesChanges: arguments[3] == "echo")
if arguments[3] == "history" { description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey) }
stack.persistentStoreDescriptions = [description]
do { try stack.loadPersistentStores() } catch { fail("cannot load the store: \(error)") }

switch arguments[3] {
case "echo":
    let received = Mutex<ObjectID?>(nil)
    let observation = stack.addDidSaveObserver { event in
        guard event.isFromOtherProcess, let id = event.changes.inserted.first(where: { $0.entity.name == "Note" }) else { return }
        received.withLock { $0 = $0 ?? id }
    }
    say("ready")
    let deadline = Date().addingTimeInterval(120)
    var noteID: ObjectID?
    while noteID == nil {
        guard Date() < deadline else { fail("no save of another process arrived in 120 seconds") }
        Thread.sleep(forTimeInterval: 0.05)
        noteID = received.withLock { $0 }
    }
    observation.cancel()
    let context = stack.newBackgroundContext()
    do {
        try context.performAndWait {
            let note = try context.existingObject(with: noteID!)
            let text = try note.value(forKey: "text") as? String ?? ""
            let answer = try context.insert(entityName: "Note")
            try answer.setValue("\(text) seen", forKey: "text")
            try note.setValue("\(text) (read)", forKey: "text")
            try context.save()
        }
    } catch { fail("cannot answer: \(error)") }
    say("done")

case "increment":
    guard arguments.count >= 5, let count = Int(arguments[4]) else { fail("increment needs a count") }
    let context = stack.newBackgroundContext()
    var conflicts = 0
    do {
        try context.performAndWait {
            for _ in 0..<count {
                while true {
                    context.reset()
                    guard let counter = try context.fetch(FetchRequest(entityName: "Counter")).first else { fail("no Counter") }
                    try counter.setValue(((try counter.value(forKey: "value") as? Int64) ?? 0) + 1, forKey: "value")
                    do {
                        try context.save()
                        break
                    } catch let error as SkerryError where error.code == .mergeConflict {
                        conflicts += 1 // another process saved the counter since it was read: read it again
                    }
                }
            }
        }
    } catch { fail("cannot increment: \(error)") }
    say("conflicts \(conflicts)")

case "history":
    guard arguments.count >= 5, let count = Int(arguments[4]) else { fail("history needs a count") }
    let context = stack.newBackgroundContext()
    context.transactionAuthor = "peer"
    do {
        try context.performAndWait {
            for index in 0..<count {
                try context.insert(entityName: "Note").setValue(
                    "peer \(ProcessInfo.processInfo.processIdentifier) \(index)", forKey: "text")
                try context.save()
            }
        }
    } catch { fail("cannot save: \(error)") }
    say("saved \(count)")

default:
    fail("unknown mode \(arguments[3])")
}
