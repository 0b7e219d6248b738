import Foundation
import Testing

@testable import SkerryCore

/// Core Data's predicate format language: what it parses to, what it finds (the same from SQL and
/// from memory), and its errors.
@Suite struct PredicateFormatTests {
    // MARK: The same predicates as code

    @Test func formatsParseToThePredicatesCodeBuilds() throws {
        let cases: [(String, [Any], FetchPredicate)] = [
            ("year > 1960", [], AttributeKey("year") > 1960),
            ("year => 1960", [], AttributeKey("year") >= 1960),
            ("year =< 1960", [], AttributeKey("year") <= 1960),
            ("year <> 1960", [], AttributeKey("year") != 1960),
            ("year = %d", [1965], AttributeKey("year") == 1965),
            ("1960 < year", [], AttributeKey("year") > 1960),
            ("title == %@ AND year < %ld", ["Dune", 1970], AttributeKey("title") == "Dune" && AttributeKey("year") < 1970),
            (
                "title == 'Dune' && year < 1970 && inPrint == YES", [],
                .and([AttributeKey("title") == "Dune", AttributeKey("year") < 1970, AttributeKey("inPrint") == true])
            ),
            (
                "title == \"Dune\" OR title == 'Emma' || NOT inPrint == no", [],
                .or([AttributeKey("title") == "Dune", AttributeKey("title") == "Emma", !(AttributeKey("inPrint") == false)])
            ),
            ("year == nil", [], AttributeKey("year").isNil),
            ("year != NULL", [], AttributeKey("year").isNotNil),
            ("year BETWEEN {1960, 1970}", [], AttributeKey("year").between(1960...1970)),
            ("year IN {1961, 1965}", [], AttributeKey("year").isIn([1961, 1965])),
            ("title IN %@", [["Dune", "Emma"]], AttributeKey("title").isIn(["Dune", "Emma"])),
            (
                "title BEGINSWITH[cd] %@", ["du"],
                AttributeKey("title").beginsWith("du", options: [.caseInsensitive, .diacriticInsensitive])
            ),
            ("title endswith[c] 'E'", [], AttributeKey("title").endsWith("E", options: .caseInsensitive)),
            ("title CONTAINS[d] 'e'", [], AttributeKey("title").contains("e", options: .diacriticInsensitive)),
            ("title LIKE 'D?ne*'", [], AttributeKey("title").like("D?ne*")),
            ("%K > %f", ["rating", 4.25], AttributeKey("rating") > 4.25),
            ("writer.name == 'Lem'", [], AttributeKey("writer.name") == "Lem"),
            ("books.@count >= 2", [], RelationshipKey("books").count >= 2),
            ("ANY books.title == 'Dune'", [], RelationshipKey("books").any(AttributeKey("title") == "Dune")),
            ("SOME books.title == 'Dune'", [], RelationshipKey("books").any(AttributeKey("title") == "Dune")),
            ("ALL books.year > 1900", [], RelationshipKey("books").all(AttributeKey("year") > 1900)),
            ("NONE books.year > 1900", [], !RelationshipKey("books").any(AttributeKey("year") > 1900)),
            ("TRUEPREDICATE", [], .constant(true)),
            ("FalsePredicate", [], .constant(false)),
            ("not not year > 1", [], AttributeKey("year") > 1),
            ("#size == 1", [], AttributeKey("size") == 1),
            (
                "year == 0x10 OR year == 0b11 OR year == 0o17 OR year == -2", [],
                .or([AttributeKey("year") == 16, AttributeKey("year") == 3, AttributeKey("year") == 15, AttributeKey("year") == -2])
            ),
            ("rating > 1.5e1", [], AttributeKey("rating") > 15.0),
        ]
        for (format, arguments, expected) in cases {
            #expect(try FetchPredicate(format: format, argumentArray: arguments) == expected, "\(format)")
        }
    }

    @Test func stringLiteralsTakeEitherQuoteAndEscapes() throws {
        #expect(try FetchPredicate(format: #"title == 'it\'s'"#) == (AttributeKey("title") == "it's"))
        #expect(try FetchPredicate(format: #"title == "say \"hi\"""#) == (AttributeKey("title") == "say \"hi\""))
        #expect(try FetchPredicate(format: #"title == 'a"b'"#) == (AttributeKey("title") == "a\"b"))
        #expect(
            try FetchPredicate(format: #"title == "tab\there\nand \u00e9 \x41 \101""#) == (AttributeKey("title") == "tab\there\nand é A A"))
        // Quoted specifiers are text, not arguments.
        #expect(try FetchPredicate(format: "title == '%@'") == (AttributeKey("title") == "%@"))
    }

    @Test func argumentsOfEveryKind() throws {
        let date = Date(timeIntervalSince1970: 0)
        let id = UUID()
        let none: String? = nil
        #expect(try FetchPredicate(format: "published < %@", date) == (AttributeKey("published") < date))
        #expect(try FetchPredicate(format: "key == %@", id) == .comparison(key: "key", .equal, .uuid(id)))
        #expect(try FetchPredicate(format: "title == %@", none as Any) == AttributeKey("title").isNil)
        #expect(
            try FetchPredicate(format: "price >= %@", Decimal(string: "7.5")!)
                == .comparison(key: "price", .greaterThanOrEqual, .decimal(Decimal(string: "7.5")!)))
        #expect(
            try FetchPredicate(format: "year == %i OR year == %lld OR year == %u OR year == %hd", 1, Int64(2), UInt32(3), Int16(4))
                == .or([AttributeKey("year") == 1, AttributeKey("year") == 2, AttributeKey("year") == 3, AttributeKey("year") == 4]))
        #expect(try FetchPredicate(format: "rating > %g", 2) == (AttributeKey("rating") > 2.0))
        #expect(try FetchPredicate(format: "%K.%K == %@", "writer", "name", "Lem") == (AttributeKey("writer.name") == "Lem"))
        #expect(try FetchPredicate(format: "title IN %@", ["a", "b"]) == AttributeKey("title").isIn(["a", "b"]))
    }

    // MARK: Variables

    @Test func variablesAreSubstitutedLikeNSPredicates() throws {
        // doc: format-variables
        let template = try FetchPredicate(format: "year >= $FROM AND year < $TO")
        let sixties = try template.withSubstitutionVariables(["FROM": 1960, "TO": 1970])
        // doc: end
        #expect(sixties == (AttributeKey("year") >= 1960 && AttributeKey("year") < 1970))
        guard case .unsubstituted(let parsed) = template else {
            Issue.record("not a template")
            return
        }
        #expect(parsed.variableNames == ["FROM", "TO"])
        let error = expectError(.invalidPredicateFormat) { _ = try template.withSubstitutionVariables(["FROM": 1960]) }
        #expect(error?.message.contains("$TO") == true)
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let unbound = expectError(.invalidPredicateFormat) {
            try context.performAndWait { _ = try context.fetch(FetchRequest(entityName: "Book", predicate: template)) }
        }
        #expect(unbound?.message.contains("$FROM, $TO") == true)
        #expect(
            try FetchPredicate(format: "title IN {$A, 'x'}").withSubstitutionVariables(["A": "y"])
                == AttributeKey("title").isIn(["y", "x"]))
    }

    // MARK: Errors

    @Test func malformedFormatsSayWhereAndWhatWasExpected() throws {
        let cases: [(String, Int, String)] = [
            ("year >", 6, "a key path or a value"),
            ("year > 1 AND", 12, "a key path or a value"),
            ("(year > 1", 9, "')'"),
            ("year > 1)", 8, "'AND', 'OR' or the end of the format"),
            ("year ~ 1", 5, "a key path, a value or an operator"),
            ("year 1", 5, "a comparison operator"),
            ("title == 'open", 9, "a closing ' for the string that starts here"),
            ("year + 1 > 2", 5, "a comparison operator (arithmetic and assignment are not supported)"),
            ("title LIKE[x] 'a'", 11, "comparison options (c, d, cd)"),
            ("year < [c] 1", 5, "an operator that takes [c]/[d] options"),
            ("books.@median > 1", 6, "@count, @sum, @avg, @min or @max"),
            ("SUBQUERY(books, $b, $b.year > 1) > 0", 33, "'.@count' after SUBQUERY(…) (the supported form)"),
            ("é == %z", 5, "a format specifier"),
        ]
        for (format, offset, expected) in cases {
            let error = expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: format) }
            #expect(error?.predicateSyntax?.offset == offset, "\(format): \(String(describing: error))")
            #expect(error?.predicateSyntax?.expected.hasPrefix(expected) == true, "\(format): \(String(describing: error))")
        }
    }

    @Test func argumentsMustMatchTheirSpecifiers() {
        let missing = expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "year == %d AND title == %@", 1) }
        #expect(missing?.predicateSyntax?.offset == 24)
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "year == %d", 1, 2) }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "year == %d", "one") }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "%K == 1", 7) }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "rating == %@", Double.nan) }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "year == %@", [1: 2] as [Int: Int]) }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "year == title") }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "1 == 1") }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "year BETWEEN {1, 2, 3}") }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "SELF == 'x'") }
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: "ANY title == 'x'") }
    }

    @Test func deepNestingIsATypedErrorOrWorksNeverACrash() throws {
        let deepParentheses = String(repeating: "(", count: 1_000) + "year > 1" + String(repeating: ")", count: 1_000)
        let error = expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: deepParentheses) }
        #expect(error?.predicateSyntax?.expected == "at most \(FetchPredicate.maximumDepth) levels of nesting")
        let deepNot = String(repeating: "NOT ", count: 1_000) + "year > 1"
        #expect(try FetchPredicate(format: deepNot) == (AttributeKey("year") > 1)) // an even number of NOTs
        let longAnd = (0..<1_000).map { "year != \($0)" }.joined(separator: " AND ")
        guard case .and(let parts) = try FetchPredicate(format: longAnd) else {
            Issue.record("not an AND")
            return
        }
        #expect(parts.count == 1_000)
        expectError(.invalidPredicateFormat) { _ = try FetchPredicate(format: String(repeating: "{", count: 1_000)) }
        expectError(.invalidPredicateFormat) {
            _ = try FetchPredicate(format: String(repeating: "SUBQUERY(books, $b, ", count: 1_000))
        }
    }

    // MARK: What they find, from SQL and from memory alike

    @Test(arguments: StoreKind.allCases)
    func formatPredicatesFindTheSameFromSQLAndMemory(kind: StoreKind) throws {
        let library = try LibraryStacks(kind)
        let cases: [(String, String, [Any], [String])] = [
            ("Novel", "year BETWEEN {1960, 1969}", [], ["Dune", "Dune Messiah", "Solaris"]),
            ("Novel", "title MATCHES 'Dune( .*)?'", [], ["Dune", "Dune Messiah"]),
            ("Novel", "title MATCHES[c] 'dune'", [], ["Dune"]),
            ("Novel", "title MATCHES 'Dun'", [], []),
            ("Novel", "title ==[c] 'EMMA'", [], ["Emma"]),
            ("Novel", "title !=[c] 'EMMA'", [], ["Dune", "Dune Messiah", "Persuasion", "Solaris"]),
            ("Novel", "title LIKE[c] '*s*'", [], ["Dune Messiah", "Persuasion", "Solaris"]),
            ("Novel", "writer.name == 'Lem' OR writer.agency == nil", [], ["Emma", "Persuasion", "Solaris"]),
            ("Novel", "writer.agency.name == 'Ace' AND NOT (year < 1965)", [], ["Dune", "Dune Messiah"]),
            ("Novel", "ANY tags.text == 'classic'", [], ["Emma", "Solaris"]),
            ("Novel", "tags.text == 'classic'", [], ["Emma", "Solaris"]),
            ("Novel", "'sf' IN tags.text", [], ["Dune", "Dune Messiah", "Solaris"]),
            ("Novel", "NONE tags.text == 'sf'", [], ["Emma", "Persuasion"]),
            ("Novel", "ALL tags.text == 'sf'", [], ["Dune", "Dune Messiah", "Persuasion"]),
            ("Novel", "tags.@count == 0", [], ["Persuasion"]),
            ("Novel", "writer.books.@count > 1", [], ["Dune", "Dune Messiah", "Emma", "Persuasion"]),
            ("Writer", "books.@count BETWEEN {1, 1}", [], ["Lem"]),
            ("Writer", "books.@sum.pages > 600", [], ["Herbert"]),
            ("Writer", "books.@sum.pages == 0", [], ["Nobody"]),
            ("Writer", "@sum.books.pages == 474", [], ["Austen"]),
            ("Writer", "books.@avg.rating >= 4", [], ["Austen", "Herbert", "Lem"]),
            ("Writer", "books.@avg.rating == nil", [], ["Nobody"]),
            ("Writer", "books.@min.year < 1900", [], ["Austen"]),
            ("Writer", "books.@max.year IN {1969, 1961}", [], ["Herbert", "Lem"]),
            ("Writer", "books.@max.price > 9", [], ["Herbert"]),
            ("Writer", "books.@max.published > %@", [Date(timeIntervalSince1970: -2 * 31_557_600)], ["Herbert"]),
            ("Writer", "ANY books.tags.text == 'classic'", [], ["Austen", "Lem"]),
            ("Writer", "SUBQUERY(books, $b, $b.year > 1960 AND $b.tags.@count > 0).@count == 2", [], ["Herbert"]),
            ("Writer", "SUBQUERY(books, $b, ANY $b.tags.text == 'classic').@count > 0", [], ["Austen", "Lem"]),
            ("Writer", "SUBQUERY(books, $b, SUBQUERY($b.tags, $t, $t.text BEGINSWITH 'c').@count > 0).@count >= 1", [], ["Austen", "Lem"]),
            ("Writer", "SUBQUERY(books, $b, year == nil).@count == 1", [], ["Austen"]),
            ("Writer", "agency.writers.@count == 2", [], ["Herbert", "Lem"]),
            ("Writer", "born == nil AND books.@count > 0", [], ["Austen"]),
            ("Label", "novels.@count == 0 OR ANY novels.writer.name == 'Lem'", [], ["classic", "sf", "unused"]),
            ("Agency", "ALL writers.born > 1920", [], []),
            ("Agency", "SUBQUERY(writers, $w, $w.books.@count > 1).@count > 0", [], ["Ace"]),
        ]
        for (entity, format, arguments, expected) in cases {
            #expect(try library.labels(entity, try FetchPredicate(format: format, argumentArray: arguments)) == expected, "\(format)")
        }
    }

    @Test func selfAndRelationshipsCompareWithObjects() throws {
        let stack = try makeMemoryStack(model: LibraryFixtures.model())
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try LibraryFixtures.fill(context)
            try context.save()
            let lem = try context.fetch(FetchRequest(entityName: "Writer", predicate: try FetchPredicate(format: "name == 'Lem'")))[0]
            let herbert = try context.fetch(FetchRequest(entityName: "Writer", predicate: try FetchPredicate(format: "name == 'Herbert'")))[
                0]
            func titles(_ format: String, _ arguments: Any...) throws -> [String] {
                try context.fetch(
                    FetchRequest(entityName: "Novel", predicate: try FetchPredicate(format: format, argumentArray: arguments))
                ).map(\.label).sorted()
            }
            func writers(_ format: String, _ arguments: Any...) throws -> [String] {
                try context.fetch(
                    FetchRequest(entityName: "Writer", predicate: try FetchPredicate(format: format, argumentArray: arguments))
                ).map(\.label).sorted()
            }
            // Saved: answered in SQL.
            #expect(try titles("writer == %@", lem) == ["Solaris"])
            #expect(try titles("writer IN %@", [lem.objectID, herbert.objectID]) == ["Dune", "Dune Messiah", "Solaris"])
            #expect(try titles("writer != %@", lem) == ["Dune", "Dune Messiah", "Emma", "Persuasion"])
            #expect(try writers("SELF == %@", lem) == ["Lem"])
            #expect(try writers("SELF IN %@ AND born > 1920", [lem, herbert]) == ["Lem"])
            let solaris = try lem.relatedObjects(forKey: "books")[0]
            #expect(try writers("ANY books == %@", solaris) == ["Lem"])
            #expect(try writers("books CONTAINS %@", solaris) == ["Lem"])
            #expect(try writers("%@ IN books", solaris) == ["Lem"])
            #expect(try writers("NONE books == %@", solaris) == ["Austen", "Herbert", "Nobody"])
            // Unsaved changes: answered in memory, the same way.
            let newcomer = try context.insertNamed("Writer", "Newcomer")
            try solaris.setRelatedObject(newcomer, forKey: "writer")
            #expect(try titles("writer == %@", newcomer) == ["Solaris"])
            #expect(try writers("SELF IN %@", [newcomer, lem]) == ["Lem", "Newcomer"])
            #expect(try writers("ANY books == %@", solaris) == ["Newcomer"])
            #expect(try writers("books.@count == 0") == ["Lem", "Nobody"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func sortKeysGoThroughToOneRelationships(kind: StoreKind) throws {
        let library = try LibraryStacks(kind)
        var request = FetchRequest(
            entityName: "Novel", sortKeys: [SortKey("writer.agency.name", ascending: false), SortKey("writer.name"), SortKey("title")])
        let expected = ["Dune", "Dune Messiah", "Solaris", "Emma", "Persuasion"] // Ace's writers first, then none
        #expect(try library.saved.performAndWait { try library.saved.fetch(request).map(\.label) } == expected)
        #expect(try library.unsaved.performAndWait { try library.unsaved.fetch(request).map(\.label) } == expected)
        request.fetchLimit = 2
        request.fetchOffset = 1
        #expect(try library.unsaved.performAndWait { try library.unsaved.fetch(request).map(\.label) } == ["Dune Messiah", "Solaris"])
    }

    @Test func anInvalidRegularExpressionIsATypedError() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        context.performAndWait {
            expectError(.invalidArgument) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "title MATCHES '('")))
            }
            expectError(.invalidArgument) {
                _ = try context.fetch(FetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "title MATCHES 'a)(b'")))
            }
        }
    }

    @Test func documentedExample() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune", year: 1965)
            try context.insertBook("Emma", year: 1815)
            try context.save()
            // doc: format-predicate
            let request = FetchRequest(
                entityName: "Book",
                predicate: try FetchPredicate(format: "year >= %d AND title BEGINSWITH[cd] %@", 1960, "du"))
            let books = try context.fetch(request)
            // doc: end
            #expect(books.count == 1)
        }
    }
}
