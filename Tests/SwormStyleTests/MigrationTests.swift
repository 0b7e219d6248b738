import Foundation
import Skerry
import Testing

@Suite struct MigrationTests {
    @Test func progressiveMigrations() throws {
        let plan = try MigratingModels.plan()

        // all together

        try MigrationHarness.test(
            plan: plan,
            preAction: {
                let db = PersistentContainer(managedObjectContext: $0.newBackgroundContext)
                do {
                    try db.perform { context in
                        try context.insert(Migrating.Ticket(number: 1, holder: "foo"))
                        try context.insert(Migrating.Ticket(number: 2, holder: "bar"))
                    }
                } catch {
                    Issue.record(error)
                    return
                }
            },
            postAction: {
                let db = PersistentContainer(managedObjectContext: $0.newBackgroundContext)
                do {
                    let tokens = try db.perform { context in
                        try context.fetch(Migrating.Token.all)
                            .map { try $0.decode() }
                            .sorted()
                    }

                    #expect(tokens.count == 2)
                    #expect(tokens.first == .init(serial: 10, holder: "foo"))
                    #expect(tokens.last == .init(serial: 20, holder: "bar"))
                } catch {
                    Issue.record(error)
                    return
                }

                do {
                    try db.perform { context in
                        try context.insert(Migrating.Stamp(motif: "foo"))
                        try context.insert(Migrating.Stamp(motif: "bar"))
                    }
                } catch {
                    Issue.record(error)
                    return
                }

                do {
                    let stamps = try db.perform { context in
                        try context.fetch(Migrating.Stamp.all)
                            .map { try $0.decode() }
                            .sorted()
                    }

                    #expect(stamps == [.init(motif: "bar"), .init(motif: "foo")])
                } catch {
                    Issue.record(error)
                    return
                }
            }
        )

        // step by step

        try MigrationHarness.testStepByStep(
            plan: plan,
            actions: [
                0: {
                    let db = PersistentContainer(managedObjectContext: $0.newBackgroundContext)
                    do {
                        try db.perform { context in
                            try context.insert(Migrating.Ticket(number: 1, holder: "foo"))
                            try context.insert(Migrating.Ticket(number: 2, holder: "bar"))
                        }
                    } catch {
                        Issue.record(error)
                        return
                    }
                },
                1: {
                    let db = PersistentContainer(managedObjectContext: $0.newBackgroundContext)
                    do {
                        let tokens = try db.perform { context in
                            try context.fetch(Migrating.Token.all)
                                .map { try $0.decode() }
                                .sorted()
                        }

                        #expect(tokens == [.init(serial: 1, holder: "foo"), .init(serial: 2, holder: "bar")])
                    } catch {
                        Issue.record(error)
                        return
                    }
                },
                2: {
                    let db = PersistentContainer(managedObjectContext: $0.newBackgroundContext)
                    do {
                        let tokens = try db.perform { context in
                            try context.fetch(Migrating.Token.all)
                                .map { try $0.decode() }
                                .sorted()
                        }

                        #expect(tokens == [.init(serial: 10, holder: "foo"), .init(serial: 20, holder: "bar")])
                    } catch {
                        Issue.record(error)
                        return
                    }
                },
                3: {
                    let db = PersistentContainer(managedObjectContext: $0.newBackgroundContext)
                    do {
                        try db.perform { context in
                            try context.insert(Migrating.Stamp(motif: "foo"))
                            try context.insert(Migrating.Stamp(motif: "bar"))
                        }

                        let stamps = try db.perform { context in
                            try context.fetch(Migrating.Stamp.all)
                                .map { try $0.decode() }
                                .sorted()
                        }

                        #expect(stamps == [.init(motif: "bar"), .init(motif: "foo")])
                    } catch {
                        Issue.record(error)
                        return
                    }
                },
            ]
        )
    }
}
