import Foundation
import Testing

@testable import SkerryCore

/// Four versions of a library model: 2 changes a type (custom step), 3 scales a value (custom
/// step), 4 adds an entity (automatic).
enum LibraryVersions {
    static func book(year: AttributeType, extra: [AttributeDescription] = []) -> EntityDescription {
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("title", .string),
                AttributeDescription("year", year),
                AttributeDescription("price", .double),
                AttributeDescription("isbn", .string, isOptional: true),
            ] + extra, relationships: [RelationshipDescription("author", destination: "Author", inverse: "books")],
            uniquenessConstraints: [["isbn"]])
    }
    static let author = EntityDescription(
        name: "Author", attributes: [AttributeDescription("name", .string)],
        relationships: [RelationshipDescription("books", destination: "Book", inverse: "author", toMany: true)])
    static let v1 = try! ObjectModel(entities: [book(year: .integer16), author])
    static let v2 = try! ObjectModel(entities: [book(year: .string), author])
    static let v3 = try! ObjectModel(entities: [book(year: .string), author], versionHashModifier: "Book.price=euros")
    static let v4 = try! ObjectModel(entities: [
        book(year: .string), author,
        EntityDescription(name: "Publisher", attributes: [AttributeDescription("name", .string)]),
    ])

    static func plan(progress: (@Sendable (Int, Int) -> Void)? = nil, failInStep3: Bool = false) -> MigrationPlan {
        MigrationPlan(
            versions: [v1, v2, v3, v4],
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { entity, old, new in
                        if entity == "Book", case .int(let year) = old["year"] { new["year"] = .string(String(year)) }
                    }),
                MigrationStep(
                    from: 1,
                    transformRow: { entity, old, new in
                        guard entity == "Book", case .double(let cents) = old["price"] else { return }
                        if failInStep3 { throw SkerryError(.invalidArgument, "refused on purpose") }
                        new["price"] = .double(cents / 100)
                    }),
            ], progress: progress)
    }

    static func populate(_ context: ObjectContext) throws {
        let author = try context.insert(entityName: "Author")
        try author.setValue("Herbert", forKey: "name")
        for (title, year, cents) in [("Dune", 1965, 995.0), ("Dune Messiah", 1969, 799.0)] as [(String, Int16, Double)] {
            let book = try context.insert(entityName: "Book")
            try book.setValue(title, forKey: "title")
            try book.setValue(year, forKey: "year")
            try book.setValue(cents, forKey: "price")
            try book.setRelatedObject(author, forKey: "author")
        }
        try context.save()
    }
}

@Suite struct ProgressiveMigrationTests {
    private func books(_ context: ObjectContext) throws -> [String] {
        try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])).map { book in
            let year = try book.value(forKey: "year", as: AttributeValue.self)
            let price = try book.value(forKey: "price", as: Double.self)
            let author = try book.relatedObject(forKey: "author")?.value(forKey: "name", as: String.self) ?? "-"
            return "\(try book.value(forKey: "title", as: String.self))|\(year)|\(price)|\(author)"
        }
    }

    @Test func aStoreMigratesStepByStepWithEachStepChecked() throws {
        let directory = TemporaryDirectory()
        // doc: migration-tester
        let tester = MigrationTester(plan: LibraryVersions.plan(), directory: directory.url)
        var seen: [Int: [String]] = [:]
        try tester.migrateStepByStep(populate: LibraryVersions.populate) { version, context in
            seen[version] = try books(context) // what the store holds after each step
            if version == 3 {
                let publisher = try context.insert(entityName: "Publisher")
                try publisher.setValue("Ace", forKey: "name")
                try context.save()
            }
        }
        // doc: end
        #expect(seen[1] == ["Dune|\"1965\"|995.0|Herbert", "Dune Messiah|\"1969\"|799.0|Herbert"])
        #expect(seen[2] == ["Dune|\"1965\"|9.95|Herbert", "Dune Messiah|\"1969\"|7.99|Herbert"])
        #expect(seen[3] == seen[2])
    }

    @Test func aStoreMigratesAtOnceAndReportsProgress() throws {
        let directory = TemporaryDirectory()
        let steps = Locked<[String]>([])
        let tester = MigrationTester(
            plan: LibraryVersions.plan(progress: { step, count in steps.append("\(step)/\(count)") }),
            directory: directory.url)
        var result: [String] = []
        try tester.migrateAtOnce(populate: LibraryVersions.populate) { context in
            result = try books(context)
            #expect(try context.count(for: FetchRequest(entityName: "Publisher")) == 0)
        }
        #expect(result == ["Dune|\"1965\"|9.95|Herbert", "Dune Messiah|\"1969\"|7.99|Herbert"])
        #expect(steps.value == ["1/3", "2/3", "3/3"])
    }

    @Test func aFailedStepLeavesTheOriginalStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        do {
            let stack = PersistentStack(name: "Library", model: LibraryVersions.v1)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait { try LibraryVersions.populate(context) }
        }
        let before = try rawSQL(url, "SELECT title, year, price FROM Book ORDER BY title")
        let stack = PersistentStack(name: "Library", model: LibraryVersions.v4)
        var description = StoreDescription(url: url)
        description.migrationPlan = LibraryVersions.plan(failInStep3: true)
        stack.persistentStoreDescriptions = [description]
        let error = expectError(.modelMismatch) { try stack.loadPersistentStores() }
        #expect(error?.message.contains("refused on purpose") == true)
        #expect(try rawSQL(url, "SELECT title, year, price FROM Book ORDER BY title") == before)
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migrating"))
        // The original still opens with its own version.
        let original = PersistentStack(name: "Library", model: LibraryVersions.v1)
        original.persistentStoreDescriptions = [StoreDescription(url: url)]
        try original.loadPersistentStores()
    }

    @Test func aRenamedAttributeKeepsItsValues() throws {
        let directory = TemporaryDirectory()
        let old = try ObjectModel(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)])])
        let new = try ObjectModel(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription("body", .string)])])
        let plan = MigrationPlan(versions: [old, new], steps: [MigrationStep(from: 0, renamedAttributes: ["Note.body": "text"])])
        var bodies: [String] = []
        try MigrationTester(plan: plan, directory: directory.url).migrateAtOnce(
            populate: { context in
                try context.insert(entityName: "Note").setValue("Remember the milk", forKey: "text")
                try context.save()
            },
            check: { context in
                bodies = try context.fetch(FetchRequest(entityName: "Note")).map { try $0.value(forKey: "body", as: String.self) }
            })
        #expect(bodies == ["Remember the milk"])
    }

    @Test func aStepWithoutACustomTransformFailsOnValuesThatDoNotFit() throws {
        let directory = TemporaryDirectory()
        // Integer 16 -> String with no step: the required year gets no value, and the step says so.
        let plan = MigrationPlan(versions: [LibraryVersions.v1, LibraryVersions.v2])
        let error = expectError(.modelMismatch) {
            try MigrationTester(plan: plan, directory: directory.url).migrateAtOnce(populate: LibraryVersions.populate, check: { _ in })
        }
        #expect(error?.message.contains("Book.year") == true)
    }

    @Test func theVersionsOfAnXcodeModelMigrateProgressively() throws {
        let fixture = FixtureFiles.url("Library.xcdatamodeld")
        let versions = try XcodeModel(contentsOf: fixture).loadAllVersions().map(\.model)
        let plan = MigrationPlan(
            versions: versions,
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { entity, old, new in // Integer 16 -> String
                        if entity == "Book", case .int(let year) = old["year"] { new["year"] = .string(String(year)) }
                    }),
                MigrationStep(
                    from: 1,
                    transformRow: { entity, old, new in // cents -> euros
                        if entity == "Book", case .double(let cents) = old["price"] { new["price"] = .double(cents / 100) }
                    }),
            ])
        let directory = TemporaryDirectory()
        var rows: [String] = []
        try MigrationTester(plan: plan, directory: directory.url).migrateStepByStep(
            populate: { context in
                let book = try context.insert(entityName: "Book")
                try book.setValue("Dune", forKey: "title")
                try book.setValue(Int16(1965), forKey: "year")
                try book.setValue(995.0, forKey: "price")
                try context.save()
            },
            check: { version, context in
                let book = try context.fetch(FetchRequest(entityName: "Book"))[0]
                rows.append(
                    "\(version): \(try book.value(forKey: "year", as: String.self)) \(try book.value(forKey: "price", as: Double.self))")
            })
        #expect(rows == ["1: 1965 995.0", "2: 1965 9.95", "3: 1965 9.95"])
    }

    @Test func renamesDeclaredInAnXcodeModelMigrateWithoutACustomStep() throws {
        let fixture = FixtureFiles.url("Notes.xcdatamodeld")
        let plan = MigrationPlan(xcodeVersions: try XcodeModel(contentsOf: fixture).loadAllVersions())
        #expect(plan.steps[0]?.renamedAttributes == ["Note.body": "text"])
        let directory = TemporaryDirectory()
        var bodies: [String] = []
        try MigrationTester(plan: plan, directory: directory.url).migrateAtOnce(
            populate: { context in
                try context.insert(entityName: "Note").setValue("Remember the milk", forKey: "text")
                try context.save()
            },
            check: { context in
                bodies = try context.fetch(FetchRequest(entityName: "Note")).map { try $0.value(forKey: "body", as: String.self) }
            })
        #expect(bodies == ["Remember the milk"])
    }
}
