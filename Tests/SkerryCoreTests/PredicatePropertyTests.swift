import Foundation
import Testing

@testable import SkerryCore

/// A deterministic random generator (SplitMix64), so that a failure repeats.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// Random predicates, each built twice — in code and as a format string with arguments — fetched
/// from SQL (saved data), from memory (unsaved data) and through pending changes (saved data, then
/// unsaved changes), against the same data saved: every way must find the same objects. (Through
/// pending changes, only the fetched entity's changed objects are matched again in memory, as in
/// Core Data: conditions on *other* novels, through `writer.books`, are left out of that check.)
@Suite struct PredicatePropertyTests {
    typealias Case = (code: FetchPredicate, format: String, arguments: [Any])

    private static let operators: [ComparisonOperator] = [
        .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual,
    ]

    private static func atom(_ random: inout SeededGenerator) -> Case {
        let op = operators[random.below(operators.count)]
        let year = Int64(1950 + random.below(21))
        let count = random.below(3)
        switch random.below(20) {
        case 0: return (.comparison(key: "year", op, .int(year)), "year \(op.rawValue) %d", [year])
        case 1: return (.comparison(key: "year", random.chance(50) ? .equal : .notEqual, .null), "", [])
        case 2: return (AttributeKey("rating") > Double(random.below(6)), "", [])
        case 3:
            let price = Decimal(random.below(10)) + Decimal(string: "0.5")!
            return (.comparison(key: "price", op, .decimal(price)), "price \(op.rawValue) %@", [price])
        case 4:
            let ops: [(StringOperator, String)] = [
                (.beginsWith, "BEGINSWITH"), (.endsWith, "ENDSWITH"), (.contains, "CONTAINS"),
                (.like, "LIKE"), (.matches, "MATCHES"), (.equal, "=="),
            ]
            let (sop, word) = ops[random.below(ops.count)]
            let patterns: [StringOperator: [String]] = [
                .beginsWith: ["n1", "N"], .endsWith: ["1", "x"], .contains: ["1", "0"],
                .like: ["n?", "*1*"], .matches: ["n[0-5]+", "N1.*"], .equal: ["n3", "N10"],
            ]
            let pattern = patterns[sop]![random.below(2)]
            let options: StringComparisonOptions = random.chance(50) ? .caseInsensitive : []
            let format = "title \(word)\(options.isEmpty ? (sop == .equal ? "[d]" : "") : "[c]") %@"
            return (.string(key: "title", sop, pattern, options), format, [pattern])
        case 5: return (AttributeKey("year").between(1955...1965), "year BETWEEN {1955, 1965}", [])
        case 6: return (AttributeKey("year").isIn([Int64(1950), year, 1960]), "year IN %@", [[Int64(1950), year, 1960]])
        case 7: return (AttributeKey("writer.name") == "W\(count)", "writer.name == 'W\(count)'", [])
        case 8: return (.comparison(key: "writer.born", op, .int(1900 + Int64(random.below(4)))), "", [])
        case 9: return (.comparison(key: "writer", .equal, .null), "writer == nil", [])
        case 10: return (RelationshipKey("tags").any(AttributeKey("text") == "L\(count)"), "ANY tags.text == %@", ["L\(count)"])
        case 11: return (RelationshipKey("tags").all(AttributeKey("text") != "L\(count)"), "ALL tags.text != 'L\(count)'", [])
        case 12: return (.not(RelationshipKey("tags").any(AttributeKey("text") == "L\(count)")), "NONE tags.text == 'L\(count)'", [])
        case 13: return (.count(relationship: "tags", op, count), "tags.@count \(op.rawValue) \(count)", [])
        case 14: return (.count(relationship: "writer.books", op, count + 1), "writer.books.@count \(op.rawValue) %ld", [count + 1])
        case 15:
            let functions: [(AggregateFunction, String, Int64)] = [
                (.sum, "pages", 500), (.average, "year", 1960), (.min, "year", 1955), (.max, "pages", 300),
            ]
            let (function, key, value) = functions[random.below(functions.count)]
            return (
                .aggregate(function, keyPath: "writer.books.\(key)", op, .int(value)),
                "writer.books.@\(function.rawValue).\(key) \(op.rawValue) \(value)", []
            )
        case 16:
            return (
                .countMatching(relationship: "tags", AttributeKey("text") != "L\(count)", op, 1),
                "SUBQUERY(tags, $t, $t.text != 'L\(count)').@count \(op.rawValue) 1", []
            )
        case 17: return (.sql("year > ? OR pages < ?", [.int(year), .int(200)]), "", [])
        case 18: return (.constant(random.chance(50)), "", [])
        default: return (AttributeKey("inPrint") == random.chance(50), "", [])
        }
    }

    /// A random predicate up to `depth` levels of AND/OR/NOT; the format mirrors the code
    /// (atoms without a format use the code's own description as a stand-in and are compared
    /// across stores only).
    private static func predicate(_ random: inout SeededGenerator, depth: Int) -> Case {
        guard depth > 0, random.chance(60) else { return atom(&random) }
        switch random.below(3) {
        case 0:
            let inner = predicate(&random, depth: depth - 1)
            return (.not(inner.code), inner.format.isEmpty ? "" : "NOT (\(inner.format))", inner.arguments)
        default:
            let (a, b) = (predicate(&random, depth: depth - 1), predicate(&random, depth: depth - 1))
            let isAnd = random.chance(50)
            let code: FetchPredicate = isAnd ? .and([a.code, b.code]) : .or([a.code, b.code])
            let format = a.format.isEmpty || b.format.isEmpty ? "" : "(\(a.format)) \(isAnd ? "AND" : "||") (\(b.format))"
            return (code, format, a.arguments + b.arguments)
        }
    }

    /// Novels with random values, writers, labels.
    private static func fill(_ context: ObjectContext, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let writers = try (0..<4).map { index -> EntityObject in
            let writer = try context.insertNamed("Writer", "W\(index)")
            try writer.setValue(index == 3 ? nil : Int32(1900 + index), forKey: "born")
            return writer
        }
        let labels = try (0..<3).map { try context.insertNamed("Label", "L\($0)") }
        for index in 0..<14 {
            let novel = try context.insertNamed("Novel", index % 3 == 0 ? "N\(index)" : "n\(index)")
            try novel.setValue(random.chance(80) ? Int32(1950 + random.below(21)) : nil, forKey: "year")
            try novel.setValue(random.chance(80) ? Int64(100 + random.below(300)) : nil, forKey: "pages")
            try novel.setValue(random.chance(80) ? Double(random.below(6)) : nil, forKey: "rating")
            try novel.setValue(random.chance(80) ? Decimal(random.below(10)) + Decimal(string: "0.25")! : nil, forKey: "price")
            try novel.setValue(random.chance(70), forKey: "inPrint")
            if random.chance(85) { try novel.setRelatedObject(writers[random.below(writers.count)], forKey: "writer") }
            for label in labels where random.chance(40) { try novel.addRelatedObject(label, forKey: "tags") }
        }
    }

    /// Unsaved changes to novels: values, writers, tags, an insert and a delete.
    private static func change(_ context: ObjectContext, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed ^ 0xFFFF)
        let novels = try context.fetch(FetchRequest(entityName: "Novel", sortKeys: [SortKey("title")]))
        let writers = try context.fetch(FetchRequest(entityName: "Writer", sortKeys: [SortKey("name")]))
        let labels = try context.fetch(FetchRequest(entityName: "Label", sortKeys: [SortKey("text")]))
        for novel in novels where random.chance(40) {
            try novel.setValue(random.chance(80) ? Int32(1950 + random.below(21)) : nil, forKey: "year")
            try novel.setValue(random.chance(80) ? Int64(100 + random.below(300)) : nil, forKey: "pages")
            if random.chance(50) {
                try novel.setRelatedObject(random.chance(80) ? writers[random.below(writers.count)] : nil, forKey: "writer")
            }
            let label = labels[random.below(labels.count)]
            if random.chance(50) {
                try novel.addRelatedObject(label, forKey: "tags")
            } else {
                try novel.removeRelatedObject(label, forKey: "tags")
            }
        }
        let added = try context.insertNamed("Novel", "n99")
        try added.setValue(Int32(1960), forKey: "year")
        try added.setRelatedObject(writers[0], forKey: "writer")
        try added.addRelatedObject(labels[1], forKey: "tags")
        try context.delete(novels[random.below(novels.count)])
    }

    private static func titles(_ context: ObjectContext, _ predicate: FetchPredicate) throws -> [String] {
        try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Novel", predicate: predicate)).map(\.label).sorted()
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func codeAndFormatFindTheSameFromSQLMemoryAndPendingChanges(seed: UInt64) throws {
        let model = LibraryFixtures.model()
        func context(save: Bool, thenChange: Bool, saveChanges: Bool) throws -> (ObjectContext, PersistentStack) {
            let stack = try makeMemoryStack(model: model)
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                try Self.fill(context, seed: seed)
                if save {
                    try context.save()
                    context.reset()
                }
                if thenChange { try Self.change(context, seed: seed) }
                if saveChanges {
                    try context.save()
                    context.reset()
                }
            }
            return (context, stack)
        }
        let saved = try context(save: true, thenChange: false, saveChanges: false)
        let unsaved = try context(save: false, thenChange: false, saveChanges: false)
        let pending = try context(save: true, thenChange: true, saveChanges: false)
        let changedThenSaved = try context(save: true, thenChange: true, saveChanges: true)
        var random = SeededGenerator(seed: seed)
        var telling = 0 // predicates that find some novels but not all: the check means something
        for _ in 0..<150 {
            let generated = Self.predicate(&random, depth: 3)
            let readsOtherNovels = "\(generated.code)".contains("writer.books")
            var predicates = [generated.code]
            if !generated.format.isEmpty {
                let parsed = try FetchPredicate(format: generated.format, argumentArray: generated.arguments)
                predicates.append(parsed)
            }
            for predicate in predicates {
                let fromSQL = try Self.titles(saved.0, predicate)
                if !fromSQL.isEmpty && fromSQL.count < 14 { telling += 1 }
                #expect(try Self.titles(unsaved.0, predicate) == fromSQL, "unsaved vs SQL: \(generated.format) \(predicate)")
                if readsOtherNovels { continue }
                let expected = try Self.titles(changedThenSaved.0, predicate)
                #expect(try Self.titles(pending.0, predicate) == expected, "pending vs SQL: \(generated.format) \(predicate)")
            }
        }
        #expect(telling >= 30, "only \(telling) predicates told novels apart")
        _ = (saved.1, unsaved.1, pending.1, changedThenSaved.1)
    }
}
