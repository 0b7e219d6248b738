import Foundation
import SkerryCore
import Testing

@testable import Skerry

/// The scopes of to-one destinations are reused, a wrapper kept past its perform fails with the
/// typed errors instead of crashing, and values read from a wrapper are copies.
@Suite struct WrapperLifetimeTests {
    private func stack() throws -> PersistentStack {
        let stack = PersistentStack(name: "Lifetimes", model: try ObjectModel(types: [Writer.self, Work.self, Picture.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        return stack
    }

    @Test func readingAToOneRelationOverTheObjectsOfAFetchMakesOneScope() throws {
        let stack = try stack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            for name in ["Herbert", "Lem"] {
                let writer = try context.insert(Writer(name: name))
                for number in 1...3 { try context.insert(Work(title: "\(name) \(number)")).writer = writer }
            }
        }
        try container.perform { context in
            let works = try context.fetch(Work.all.sort(\.title))
            #expect(works.count == 6)
            let writers = works.compactMap(\.writer)
            #expect(try writers.map { try $0.decode().name } == ["Herbert", "Herbert", "Herbert", "Lem", "Lem", "Lem"])
            // One scope for every destination, kept by the scope of the works, of this context.
            #expect(writers.allSatisfy { $0.scope === writers[0].scope })
            #expect(works[0].scope.relatedScope === writers[0].scope)
            #expect(writers[0].scope.context === context.instance)
            #expect(writers[0].scope.layout.entity === writers[0].instance.entity)
            // Another relation's destination gets its own scope, the writers theirs again after it.
            let portrait = try context.insert(Picture(file: "lem.jpg"))
            writers[3].portrait = portrait
            #expect(try writers[3].portrait?.decode().file == "lem.jpg")
            #expect(try portrait.writer?.decode().name == "Lem")
            #expect(works[5].writer?.scope === works[0].writer?.scope)
            #expect(context.instance.recordedError == nil)
        }
    }

    @Test func aRelationToTheSameTypeTakesTheObjectsOwnScope() throws {
        let stack = PersistentStack(name: "Mentors", model: try ObjectModel(types: [Colleague.self]))
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            let names = ["Ada", "Grace", "Edsger", "Barbara"]
            let colleagues = try names.map { try context.insert(Colleague(name: $0)) }
            for (mentee, mentor) in zip(colleagues.dropFirst(), colleagues) { mentee.mentor = mentor }
            // Up the chain of mentors: every wrapper shares the scope, which keeps none.
            var chain: [String] = []
            var current: ManagedObject<Colleague>? = colleagues[3]
            while let colleague = current {
                chain.append(try colleague.decode().name)
                #expect(colleague.scope === colleagues[0].scope)
                current = colleague.mentor
            }
            #expect(chain == names.reversed())
            #expect(colleagues[0].scope.relatedScope == nil)
        }
    }

    @Test(arguments: [false, true])
    func aWrapperKeptPastItsPerformFailsWithTheTypedError(sharedContext: Bool) throws {
        let stack = try stack()
        let shared = stack.newBackgroundContext()
        let recorded = RecordedErrors()
        let container = PersistentContainer(
            managedObjectContext: { sharedContext ? shared : stack.newBackgroundContext() }, logError: recorded.handler,
            cleanUpAfterExecution: true)
        let (work, writer) = try container.perform { context in
            let work = try context.insert(Work(title: "Dune"))
            let writer = try context.insert(Writer(name: "Herbert"))
            work.writer = writer
            return (work, writer)
        }
        // The perform reset its context: the wrapper's object left it.
        let decodeError = try container.perform { _ in
            #expect(throws: SkerryError.self) { try work.decode() }
        }
        #expect(decodeError?.code == .objectNotInContext)
        let valueError = try container.perform { _ in
            #expect(throws: SkerryError.self) { try work.decode(\.title) }
        }
        #expect(valueError?.code == .objectNotInContext)
        // `encode` and the relation getter cannot throw: the error goes to the running perform's
        // context (the object left the one it was wrapped in, which may be another perform's),
        // and the perform fails with it.
        for use in [
            { _ = work.encode(Work(title: "Emma")) }, { #expect(work.writer == nil) }, { #expect(Array(writer.works).isEmpty) },
        ] as [() -> Void] {
            let error = #expect(throws: SkerryError.self) { try container.perform { _ in use() } }
            #expect(error?.code == .objectNotInContext)
        }
        #expect(recorded.all.count == 3)
        // Nothing was saved by the failed performs.
        #expect(try container.perform { context in try context.fetch(Work.all).map { try $0.decode().title } } == ["Dune"])
    }

    @Test func aStringReadIsACopyOfTheValue() throws {
        let stack = try stack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            let writer = try context.insert(Writer(name: "Frank " + String(repeating: "Herbert", count: 4)))
            let first = try writer.decode(\.name)
            let whole = try writer.decode()
            let engine = try writer.instance.value(forKey: "name", as: String.self)
            writer.encode(Writer(name: "Stanisław Lem"))
            #expect(try writer.decode(\.name) == "Stanisław Lem")
            try writer.instance.setValue("Ursula " + String(repeating: "Le Guin", count: 4), forKey: "name")
            #expect(try writer.decode(\.name) == "Ursula Le GuinLe GuinLe GuinLe Guin")
            #expect(first == "Frank HerbertHerbertHerbertHerbert")
            #expect(whole.name == "Frank HerbertHerbertHerbertHerbert")
            #expect(engine == "Frank HerbertHerbertHerbertHerbert")
        }
    }

    /// A wrapper of a fault (its object refreshed) reads through the checked path: the values
    /// load, or, when the row is gone, `decode()` and `decode(_:)` throw `.objectNotFound`.
    @Test func aWrapperOfAFaultLoadsItOrFailsWithTheTypedError() throws {
        let stack = try stack()
        let container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
        try container.perform { context in
            for title in ["Eden", "Solaris"] { try context.insert(Work(title: title)) }
        }
        try container.perform { context in
            let works = try context.fetch(Work.all.sort(\.title))
            try context.instance.refresh(works[0].instance, mergeChanges: false)
            #expect(works[0].instance.isFault)
            #expect(try works[0].decode().title == "Eden")
            #expect(!works[0].instance.isFault)
            try context.instance.refresh(works[0].instance, mergeChanges: false)
            #expect(try works[0].decode(\.title) == "Eden")

            try context.instance.refresh(works[1].instance, mergeChanges: false)
            let other = stack.newBackgroundContext()
            try other.performAndWait {
                try other.delete(try other.existingObject(with: works[1].objectID))
                try other.save()
            }
            let whole = #expect(throws: SkerryError.self) { try works[1].decode() }
            #expect(whole?.code == .objectNotFound)
            let one = #expect(throws: SkerryError.self) { try works[1].decode(\.title) }
            #expect(one?.code == .objectNotFound)
        }
    }
}

/// A model type related to itself.
private struct Colleague: ManagedObjectConvertible {
    var name = ""
    static let entityName = "Colleague"
    static let attributes: Set<Attribute<Colleague>> = [Attribute(\.name, "name")]
    struct Relations {
        let mentor = ToOneRelation<Colleague>("mentor")
    }
    static let relations = Relations()
}
