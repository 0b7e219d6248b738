import Foundation
import Testing

@testable import SkerryCore

/// Random and mutated format strings: each parses, or fails with a typed error that says where;
/// what parses, fetches or fails with a typed error. Nothing crashes. Bounded in count.
@Suite struct PredicateFuzzTests {
    private static let seeds = [
        "year > 1960 AND title BEGINSWITH[cd] 'du'",
        "ANY tags.text == 'sf' OR NOT (writer.name IN {'Lem', \"Herbert\"})",
        "SUBQUERY(books, $b, $b.year BETWEEN {1, 2} && $b.tags.@count > 0).@count >= 1",
        "books.@sum.pages > 3 || books.@avg.rating == nil || @max.books.year < 0x10",
        "title MATCHES[c] 'a.*\\\\d' AND title LIKE '*?' AND rating => -1.5e3",
        "TRUEPREDICATE AND FALSEPREDICATE OR SELF != nil AND $VAR == 'x\\u00e9'",
        "%K == %@ AND year == %d AND rating < %f",
    ]
    private static let pieces = [
        "(", ")", "{", "}", ",", ".", "[c]", "[cd]", "[", "]", " ", "'", "\"", "\\", "$x", "$", "%@", "%K", "%d", "%",
        "@count", "@sum", "@", "AND", "OR", "NOT", "!", "&&", "||", "==", "=", "!=", "<>", "<", "<=", "=>", ">",
        "ANY", "ALL", "NONE", "SOME", "IN", "BETWEEN", "LIKE", "MATCHES", "CONTAINS", "SUBQUERY", "SELF", "nil",
        "YES", "NO", "title", "year", "books", "tags", "writer", "0", "1.5", "-", "0x", "1e", "#", "é", "🙂", "\n", "e\u{301}", "\u{301}",
        "🇫🇷",
    ]

    private static func check(_ format: String, _ context: ObjectContext, arguments: [Any]) {
        do {
            let predicate = try FetchPredicate(format: format, argumentArray: arguments)
            do {
                _ = try context.fetch(FetchRequest(entityName: "Writer", predicate: predicate))
            } catch {
                #expect(error.code != .sqlite || error.message.contains("parser stack"), "\(format): \(error)")
            }
        } catch {
            #expect(error.code == .invalidPredicateFormat, "\(format): \(error)")
            if let syntax = error.predicateSyntax {
                #expect(syntax.offset >= 0 && syntax.offset <= format.count, "\(format): \(syntax)")
            }
        }
    }

    @Test func randomAndMutatedFormatsNeverCrash() throws {
        let stack = try makeMemoryStack(model: LibraryFixtures.model())
        let context = stack.newBackgroundContext()
        var random = SeededGenerator(seed: 42)
        let arguments: [Any] = ["year", 1, 2.5]
        try context.performAndWait {
            try LibraryFixtures.fill(context)
            for _ in 0..<1_500 { // random sequences of the language's pieces
                let format = (0..<(1 + random.below(14))).map { _ in Self.pieces[random.below(Self.pieces.count)] }.joined(
                    separator: random.chance(70) ? " " : "")
                Self.check(format, context, arguments: arguments)
            }
            for _ in 0..<1_500 { // valid formats with characters inserted, removed or replaced
                var scalars = Array(Self.seeds[random.below(Self.seeds.count)].unicodeScalars)
                for _ in 0..<(1 + random.below(4)) {
                    let position = random.below(scalars.count + 1)
                    let piece = Array(Self.pieces[random.below(Self.pieces.count)].unicodeScalars)
                    switch random.below(3) {
                    case 0: scalars.insert(contentsOf: piece, at: position)
                    case 1: if position < scalars.count { scalars.remove(at: position) }
                    default: if position < scalars.count { scalars.replaceSubrange(position...position, with: piece) }
                    }
                }
                var format = ""
                format.unicodeScalars.append(contentsOf: scalars)
                Self.check(format, context, arguments: arguments)
            }
        }
    }
}
