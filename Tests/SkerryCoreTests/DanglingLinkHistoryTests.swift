import Foundation
import Testing

@testable import SkerryCore

/// The links a save clears because they point at an object it deletes through a relationship with
/// no stored inverse (`DanglingLinkTests`) are in the persistent history as updates of the objects
/// that held them, naming the relationships, as Core Data reports a relationship that lost an
/// object: a consumer merging the history drops the links too.
@Suite struct DanglingLinkHistoryTests {
    @Test(arguments: StoreKind.allCases)
    func theObjectsWhoseLinksADeleteClearedAreRecordedAsUpdates(kind: StoreKind) throws {
        let store = HistoryStore(kind)
        let stack = try store.stack(model: try TransientInverseTests.model())
        let writer = stack.newBackgroundContext()
        try writer.performAndWait { try TransientInverseTests.populate(writer) }
        let token = stack.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
        // A context that never saw the links deletes Ada, the badge and the desk, and renames Bob.
        let deleter = stack.newBackgroundContext()
        try deleter.performAndWait {
            try deleter.delete(try DanglingLinkTests.object(deleter, "Employee", "name", "Ada"))
            try deleter.delete(try DanglingLinkTests.object(deleter, "Badge", "code", "B-1"))
            try deleter.delete(try #require(try deleter.fetch(FetchRequest(entityName: "Desk")).first))
            try DanglingLinkTests.object(deleter, "Employee", "name", "Bob").setValue("Bobby", forKey: "name")
            try deleter.save()
        }
        let transactions = try stack.viewContext.history(.fetchHistory(after: token))
        #expect(transactions.count == 1)
        let changes = transactions.first?.changes ?? []
        #expect(changes.filter { $0.changeType == .delete }.count == 3)
        let reader = stack.newBackgroundContext()
        let updates = try reader.performAndWait {
            try changes.filter { $0.changeType == .update }.map { change in
                let object = try reader.existingObject(with: change.changedObjectID)
                return "\(try object.value(forKey: "name", as: String.self)): \((change.updatedProperties ?? []).sorted())"
            }.sorted()
        }
        // Acme lost Ada from both of its to-many relationships; Bob (renamed in the same save: one
        // update) lost the badge, Cy the desk. Ada, deleted, has no update.
        #expect(updates == [#"Acme: ["employees", "ranking"]"#, #"Bobby: ["badge", "name"]"#, #"Cy: ["desk"]"#])
    }
}
