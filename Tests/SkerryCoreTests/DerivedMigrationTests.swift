import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Derived attributes that a migration adds, or whose derivation it changes, get their values in
/// the rows the store already has (Core Data computes them when an object is saved; a migrated
/// row is not saved again): in place for an optional one, in a migration step otherwise, on SQLite
/// files and PostgreSQL. A derivation Skerry cannot compute for existing rows fails the migration.
@Suite struct DerivedMigrationTests {
    /// A model of authors and books, with `author` and `book` holding more attributes.
    static func model(_ directory: TemporaryDirectory, _ name: String, author: String = "", book: String = "") throws -> ObjectModel {
        let folder = directory.file("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23D56" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Author" representedClassName="Author" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                \(author)
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            </entity>
            <entity name="Book" representedClassName="Book" syncable="YES">
                <attribute name="pages" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="title" optional="YES" attributeType="String"/>
                \(book)
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            </entity>
        </model>
        """.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try XcodeModel(contentsOf: folder).loadCurrentVersion().model
    }

    static func description(_ kind: StoreKind, _ directory: TemporaryDirectory) throws -> StoreDescription {
        kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("Books.sqlite"))
    }

    /// A store of `model` with two authors (one with two books, one with none) and a book
    /// without an author.
    static func populate(_ description: StoreDescription, _ model: ObjectModel) throws {
        let stack = PersistentStack(name: "Books", model: model)
        stack.persistentStoreDescriptions = [description]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let ann = try context.insert(entityName: "Author")
            try ann.setValue("Ann Émile", forKey: "name")
            try context.insert(entityName: "Author").setValue("Bob", forKey: "name")
            for (title, pages, author) in [("Été", 120, ann), ("Winter", 80, ann), ("Loose", 10, nil)] as [(String, Int64, EntityObject?)] {
                let book = try context.insert(entityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setRelatedObject(author, forKey: "author")
            }
            try context.save()
        }
    }

    static func open(_ description: StoreDescription, _ model: ObjectModel, plan: MigrationPlan? = nil) throws -> ObjectContext {
        let stack = PersistentStack(name: "Books", model: model)
        var migrating = description
        migrating.migrationPlan = plan
        stack.persistentStoreDescriptions = [migrating]
        try stack.loadPersistentStores()
        return stack.newBackgroundContext()
    }

    static let added = (
        author: """
        <attribute name="bookCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="books.@count" usesScalarValueType="YES"/>
        <attribute name="checkedAt" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()" usesScalarValueType="NO"/>
        """,
        book: """
        <attribute name="authorName" optional="YES" attributeType="String" derived="YES" derivationExpression="author.name"/>
        <attribute name="searchTitle" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(title)"/>
        """
    )

    /// Optional derived attributes added by a version (the load adds them in place): key paths
    /// through a to-one relationship, `@count` of a to-many one, `canonical:` and `now()` are
    /// computed for every existing row, as a save computes them.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func optionalDerivedAttributesAddedInPlaceGetTheirValues(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let description = try Self.description(kind, directory)
        try Self.populate(description, try Self.model(directory, "Books"))
        let before = Date()
        let context = try Self.open(description, try Self.model(directory, "Books2", author: Self.added.author, book: Self.added.book))
        try context.performAndWait {
            let authors = try context.fetch(FetchRequest(entityName: "Author", sortKeys: [SortKey("name")]))
            #expect(try authors.map { try $0.value(forKey: "bookCount", as: Int64?.self) } == [2, 0])
            for author in authors { #expect(try author.value(forKey: "checkedAt", as: Date.self) >= before.addingTimeInterval(-1)) }
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
            #expect(try books.map { try $0.value(forKey: "authorName", as: String?.self) } == [nil, "Ann Émile", "Ann Émile"])
            #expect(try books.map { try $0.value(forKey: "searchTitle", as: String?.self) } == ["loose", "winter", "ete"])
            // The values are stored: a fetch can filter by them.
            let found = try context.fetch(FetchRequest(entityName: "Book", predicate: AttributeKey("searchTitle") == "ete"))
            #expect(found == [books[2]])
        }
    }

    /// A required derived attribute added by a version (SwiftGen's `now()` one, which its
    /// migration refused for want of a value) makes a migration step, which computes it; so does
    /// a derivation changed between two versions of a plan.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aRequiredOrChangedDerivedAttributeIsComputedByTheStep(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let description = try Self.description(kind, directory)
        let v1 = try Self.model(directory, "Books")
        try Self.populate(description, v1)
        let v2 = try Self.model(
            directory, "Books2",
            book: """
                <attribute name="stamp" attributeType="Double" derived="YES" derivationExpression="now()" usesScalarValueType="YES"/>
                <attribute name="shout" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(title)"/>
                """)
        let v3 = try Self.model(
            directory, "Books3",
            book: """
                <attribute name="stamp" attributeType="Double" derived="YES" derivationExpression="now()" usesScalarValueType="YES"/>
                <attribute name="shout" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(title)"/>
                """)
        let before = Date().timeIntervalSinceReferenceDate
        let context = try Self.open(description, v3, plan: MigrationPlan(versions: [v1, v2, v3]))
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
            for book in books { #expect(try book.value(forKey: "stamp", as: Double.self) >= before - 1) }
            #expect(try books.map { try $0.value(forKey: "shout", as: String?.self) } == ["LOOSE", "WINTER", "ÉTÉ"])
        }
    }

    /// Derived values that read other rows (`@count`, a key path through a relationship) or
    /// values a step changes are computed again by a step whose code leaves rows out or changes
    /// them (Core Data's migration saves every object it makes, which computes them): the count
    /// without the book left out, no author name for books whose author was left out, the
    /// author's name as the step's transformRow changed it.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func derivedValuesAreComputedAgainWhenAStepLeavesOutOrChangesRows(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let author = """
            <attribute name="bookCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="books.@count" usesScalarValueType="YES"/>
            """
        let book = """
            <attribute name="authorName" optional="YES" attributeType="String" derived="YES" derivationExpression="author.name"/>
            """
        let v1 = try Self.model(directory, "Books", author: author, book: book)
        let v2 = try Self.model(
            directory, "Books2", author: author, book: book + "<attribute name=\"isbn\" optional=\"YES\" attributeType=\"String\"/>")
        let steps: [(MigrationStep, counts: [Int64?], names: [String?])] = [
            (MigrationStep(from: 0, keepsRow: { entity, row in row["title"] != .string("Winter") }), [1, 0], [nil, "Ann Émile"]),
            (MigrationStep(from: 0, keepsRow: { entity, row in row["name"] != .string("Ann Émile") }), [0], [nil, nil, nil]),
            (
                MigrationStep(
                    from: 0,
                    transformRow: { entity, _, row in
                        if entity == "Author", case .string(let name) = row["name"] { row["name"] = .string(name.uppercased()) }
                    }), [2, 0], [nil, "ANN ÉMILE", "ANN ÉMILE"]
            ),
        ]
        for (index, (step, counts, names)) in steps.enumerated() {
            let description =
                kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("Books-\(index).sqlite"))
            try Self.populate(description, v1)
            let context = try Self.open(description, v2, plan: MigrationPlan(versions: [v1, v2], steps: [step]))
            try context.performAndWait {
                let authors = try context.fetch(FetchRequest(entityName: "Author", sortKeys: [SortKey("name")]))
                #expect(try authors.map { try $0.value(forKey: "bookCount", as: Int64?.self) } == counts, "step \(index)")
                let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
                #expect(try books.map { try $0.value(forKey: "authorName", as: String?.self) } == names, "step \(index)")
            }
        }
    }

    /// Unchanged derived attributes that a step's code makes Skerry compute again are computed
    /// from the values the step left, converted as a save converts them: an Integer 16 key path
    /// into an Integer 64 attribute (in SQL), an Integer 64 into an Integer 16 and a count into a
    /// Double (in Swift; they kept their stale values before). A value the attribute cannot hold
    /// fails the step, as a save of its object would; so does a derivation Skerry cannot compute
    /// for stored rows (a key path to a transient attribute), rather than keeping stale values.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func anUnchangedDerivationAStepComputesAgainIsConvertedAsASaveConvertsIt(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let author = """
            <attribute name="age" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            <attribute name="bookTotal" optional="YES" attributeType="Double" derived="YES" derivationExpression="books.@count" usesScalarValueType="YES"/>
            """
        let book = """
            <attribute name="authorAge" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="author.age" usesScalarValueType="YES"/>
            <attribute name="shortPages" optional="YES" attributeType="Integer 16" derived="YES" derivationExpression="pages" usesScalarValueType="YES"/>
            """
        let v1 = try Self.model(directory, "Books", author: author, book: book)
        let v2 = try Self.model(
            directory, "Books2", author: author, book: book + "<attribute name=\"isbn\" optional=\"YES\" attributeType=\"String\"/>")
        func migrated(_ name: String, pages: Int64) throws -> ObjectContext {
            let description =
                kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("\(name).sqlite"))
            try Self.populate(description, v1)
            let step = MigrationStep(
                from: 0, keepsRow: { _, row in row["title"] != .string("Winter") },
                transformRow: { entity, _, row in
                    if entity == "Author", row["name"] == .string("Ann Émile") { row["age"] = .int(40) }
                    if entity == "Book", row["title"] == .string("Été") { row["pages"] = .int(pages) }
                })
            return try Self.open(description, v2, plan: MigrationPlan(versions: [v1, v2], steps: [step]))
        }
        let context = try migrated("Converted", pages: 150)
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
            #expect(try books.map { try $0.value(forKey: "authorAge", as: Int64?.self) } == [nil, 40])
            #expect(try books.map { try $0.value(forKey: "shortPages", as: Int64?.self) } == [10, 150])
            let authors = try context.fetch(FetchRequest(entityName: "Author", sortKeys: [SortKey("name")]))
            #expect(try authors.map { try $0.value(forKey: "bookTotal", as: Double?.self) } == [1, 0])
        }

        let tooLong = expectError(.migrationWouldLoseData) { _ = try migrated("TooLong", pages: 40_000) }
        #expect(tooLong?.message.contains("'Book.shortPages' (pages) computes 40000 for row") == true, "\(tooLong?.message ?? "")")

        // A key path to a transient attribute: a save computes it from the object in memory; a
        // migration has no value to compute it from.
        let nick = """
            <attribute name="nick" optional="YES" attributeType="String" transient="YES"/>
            <attribute name="nickname" optional="YES" attributeType="String" derived="YES" derivationExpression="nick"/>
            """
        let t1 = try Self.model(directory, "Nick", author: nick)
        let t2 = try Self.model(
            directory, "Nick2", author: nick, book: "<attribute name=\"isbn\" optional=\"YES\" attributeType=\"String\"/>")
        let description =
            kind == .postgres ? try PostgresTestStore.newDescription() : StoreDescription(url: directory.file("Nick.sqlite"))
        try Self.populate(description, t1)
        let step = MigrationStep(from: 0, transformRow: { _, _, _ in })
        let stale = expectError(.modelMismatch) {
            _ = try Self.open(description, t2, plan: MigrationPlan(versions: [t1, t2], steps: [step]))
        }
        #expect(
            stale?.message.contains("'Author.nickname' (nick) reads values the step's code may have changed") == true,
            "\(stale?.message ?? "")")
    }

    /// Runs `sql` on the store of `kind` (the SQLite file `Books.sqlite` of `directory`, or the
    /// PostgreSQL `schema`), outside Skerry, to set up rows faster than saving objects.
    static func execute(_ sql: String, _ kind: StoreKind, _ directory: TemporaryDirectory, schema: String) throws {
        if kind == .postgres {
            let connection = try PostgresConnection(connectionString: PostgresTestServer.require())
            try connection.execute("SET search_path TO \(SQLBuilder.quote(schema)); \(sql)")
        } else {
            try rawSQL(directory.file("Books.sqlite"), sql)
        }
    }

    /// A count an Integer 16 attribute cannot hold (Ann's 32,768 books, most inserted in SQL)
    /// fails the migration that adds it with `.migrationWouldLoseData` naming the attribute and
    /// the row, as a save of Ann fails, and leaves the store as it was; SQLite stored the count
    /// as is, and PostgreSQL failed with a generic "smallint out of range" error.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aCountTheAttributeCannotHoldFailsTheMigration(kind: StoreKind) throws {
        let directory = TemporaryDirectory(), schema = PostgresTestServer.newSchema()
        let description =
            kind == .postgres ? try PostgresTestStore.newDescription(schema: schema) : StoreDescription(url: directory.file("Books.sqlite"))
        let v1 = try Self.model(directory, "Books")
        try Self.populate(description, v1)
        try Self.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 32766)
            INSERT INTO "Book" ("_pk", "pages", "title", "author") SELECT 1000 + i, 1, 'More', "author" FROM n, "Book" WHERE "title" = 'Winter'
            """, kind, directory, schema: schema)
        let v2 = try Self.model(
            directory, "Books2",
            author: """
                <attribute name="bookCount" optional="YES" attributeType="Integer 16" derived="YES" derivationExpression="books.@count" usesScalarValueType="YES"/>
                """)
        let error = expectError(.migrationWouldLoseData) { _ = try Self.open(description, v2) }
        #expect(error?.message.contains("'Author.bookCount' (books.@count) computes 32768 for row") == true, "\(error?.message ?? "")")
        #expect(error?.entityName == "Author" && error?.key == "bookCount")
        // Still readable with the model it was written with, every book there.
        let context = try Self.open(description, v1)
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 32_769)
    }

    /// A value converted in Swift (an Integer 64 key path into an Integer 16 attribute a
    /// migration adds) is computed for every row of a table read in pages and written in
    /// batches: 2,503 books, over two pages.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aValueConvertedInSwiftIsComputedForEveryRowOfALargeTable(kind: StoreKind) throws {
        let directory = TemporaryDirectory(), schema = PostgresTestServer.newSchema()
        let description =
            kind == .postgres ? try PostgresTestStore.newDescription(schema: schema) : StoreDescription(url: directory.file("Books.sqlite"))
        let v1 = try Self.model(directory, "Books")
        try Self.populate(description, v1)
        try Self.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
            INSERT INTO "Book" ("_pk", "pages", "title") SELECT 1000 + i, 1000 + i, 'More' FROM n
            """, kind, directory, schema: schema)
        let v2 = try Self.model(
            directory, "Books2",
            book: """
                <attribute name="shortPages" optional="YES" attributeType="Integer 16" derived="YES" derivationExpression="pages" usesScalarValueType="YES"/>
                """)
        let context = try Self.open(description, v2)
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
            let values = try books.map { try $0.value(forKey: "shortPages", as: Int64?.self) }
            #expect(values == [10, 80, 120] + (1001...3500).map { Int64($0) })
        }
    }

    /// A Double key path into a Decimal or an integer attribute that a migration adds is
    /// converted from the exact stored Double, as a save converts it: 0.30000000000000004 stays
    /// that in a Decimal, and 2.9999999999999996 into an Integer 64 fails the migration (a save
    /// refuses it). Read as text, SQLite gave 15 digits: 0.3 and 3.
    @Test(arguments: HierarchyConstraintTests.lastingKinds)
    func aDoubleKeyPathIsConvertedFromItsExactValue(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let description = try Self.description(kind, directory)
        let weight = "<attribute name=\"weight\" optional=\"YES\" attributeType=\"Double\" usesScalarValueType=\"YES\"/>"
        let v1 = try Self.model(directory, "Books", book: weight)
        try Self.populate(description, v1)
        do {
            let stack = PersistentStack(name: "Books", model: v1)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
                // Été is the first row in key order, where the migration's conversion fails.
                try books[2].setValue(2.9999999999999996, forKey: "weight")
                try books[1].setValue(0.30000000000000004, forKey: "weight")
                try context.save()
            }
            try stack.persistentStoreCoordinator.remove(stack.persistentStoreCoordinator.persistentStores[0])
        }
        let exact = """
            <attribute name="exactWeight" optional="YES" attributeType="Decimal" derived="YES" derivationExpression="weight"/>
            """
        let v2 = try Self.model(directory, "Books2", book: weight + exact)
        let context = try Self.open(description, v2)
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
            #expect(
                try books.map { try $0.value(forKey: "exactWeight", as: Decimal?.self) } == [
                    nil, Decimal(string: "0.30000000000000004"), Decimal(string: "2.9999999999999996"),
                ])
        }
        let v3 = try Self.model(
            directory, "Books3",
            book: weight + exact + """
                <attribute name="wholeWeight" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="weight" usesScalarValueType="YES"/>
                """)
        let error = expectError(.migrationWouldLoseData) { _ = try Self.open(description, v3) }
        #expect(
            error?.message.contains("'Book.wholeWeight' (weight) computes 2.9999999999999996 for row 1,") == true,
            "\(error?.message ?? "")")
    }

    /// A derivation Skerry cannot compute for existing rows (`@sum`) fails the migration naming
    /// it, and the store is left as it was.
    @Test func aDerivationThatCannotBeComputedForExistingRowsFailsTheMigration() throws {
        let directory = TemporaryDirectory()
        let description = try Self.description(.file, directory)
        let v1 = try Self.model(directory, "Books")
        try Self.populate(description, v1)
        let v2 = try Self.model(
            directory, "Books2",
            author: """
                <attribute name="pageTotal" optional="YES" attributeType="Decimal" derived="YES" derivationExpression="books.@sum.pages"/>
                """)
        let error = expectError(.modelMismatch) { _ = try Self.open(description, v2) }
        #expect(error?.message.contains("'Author.pageTotal' (books.@sum.pages)") == true, "\(error?.message ?? "")")
        #expect(
            try rawSQL(directory.file("Books.sqlite"), "SELECT count(*) FROM pragma_table_info('Author') WHERE name = 'pageTotal'") == [
                ["0"]
            ])
        // Still readable with the model it was written with.
        let context = try Self.open(description, v1)
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 3)
    }
}
