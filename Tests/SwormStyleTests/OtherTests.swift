import Foundation
import Skerry
import Synchronization
import Testing

@Suite struct OtherTests {
    /// A container whose factory throws (the stores are not loaded yet) fails every perform with
    /// that error, logged once.
    @Test func isNotReady() throws {
        struct NotReadyError: Swift.Error {}

        let logged = Mutex(0)

        let pc = PersistentContainer(
            managedObjectContext: {
                throw NotReadyError()
            },
            logError: { error in
                #expect(error is NotReadyError)
                logged.withLock { $0 += 1 }
            }
        )

        #expect(throws: NotReadyError.self) {
            try pc.perform { ctx in
                try ctx.insert(Shelf.Novel())
            }
        }
        #expect(logged.withLock { $0 } == 1)
    }

    /// The same, through `schedule`.
    @Test func isNotReadyAsync() async throws {
        struct NotReadyError: Swift.Error {}

        let pc = PersistentContainer(managedObjectContext: { throw NotReadyError() })

        await #expect(throws: NotReadyError.self) {
            try await pc.schedule { ctx in
                try ctx.count(of: Shelf.Novel.all)
            }
        }
    }

    /// Sworm's names for its errors exist (Skerry reports these situations as `SkerryError`).
    @Test func swormErrorNames() {
        let errors: [any Swift.Error] = [
            PersistentContainer.Error.noResult,
            ManagedObjectContext.Error.unknownEntity("Nothing"),
            AttributeError.badInput(nil),
            AttributeError.badAttribute(.init(name: "year", entity: "Novel", originalError: AttributeError.badInput("x"))),
        ]
        #expect(errors.count == 4)
        #expect("\(errors[3])" == "AttributeError.badAttribute(Novel.year: AttributeError.badInput(x))")
    }

    /// Iterating a relation gives Sworm's iterator type.
    @Test func setIterator() throws {
        try TestDB.perform(with: DataModels.shelf) { pc in
            try pc.perform { ctx in
                let writer = try ctx.insert(Shelf.Writer())
                writer.novels.add(try ctx.insert(Shelf.Novel(title: "one")))
            }
            let titles = try pc.perform { ctx in
                var titles: [String] = []
                if let writer = try ctx.fetchOne(Shelf.Writer.all) {
                    var iterator: ManagedObjectSetIterator<Shelf.Novel> = writer.novels.makeIterator()
                    while let novel = iterator.next() {
                        titles.append(try novel.decode(\.title))
                    }
                }
                return titles
            }
            #expect(titles == ["one"])
        }
    }
}
