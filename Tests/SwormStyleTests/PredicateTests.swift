import Foundation
import Skerry
import Testing

@Suite struct PredicateTests {
    /// String predicates in Core Data's format language, alone and combined with typed ones.
    @Test func typedAndUntypedQueryCombination() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = [
                Gauge(low: 1, high: 3, label: "first"),
                Gauge(low: 2, high: 5, label: nil),
                Gauge(low: 4, high: 6, label: "fourth"),
                Gauge(low: 5, high: 3, label: "fifth"),
            ]

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            do {
                let predicate: Predicate =
                    (\Gauge.low == 1 || \Gauge.low == 2) && (\Gauge.high == 3 || \Gauge.low == 4) && !"label == nil"

                let lows = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(predicate).sort(\.low), \.low)
                }

                #expect(lows == [1])
            }

            do {
                let predicate: Predicate = "high >= 5" || \Gauge.label == "fifth"

                let lows = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(predicate).sort(\.low), \.low)
                }

                #expect(lows == [2, 4, 5])
            }

            do {
                let lows = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(raw: "low > %d AND label BEGINSWITH[c] %@", 1, "F").sort(\.low), \.low)
                }

                #expect(lows == [4, 5])
            }
        }
    }

    /// Sworm's example of a raw predicate through a relation: `!"foo.bars.@count > 0"`.
    @Test func rawPredicateThroughARelation() throws {
        try TestDB.perform(with: DataModels.shelf) { pc in
            try pc.perform { ctx in
                let busy = try ctx.insert(Shelf.Writer(name: "busy"))
                busy.novels.add(try ctx.insert(Shelf.Novel(title: "one")))
                try ctx.insert(Shelf.Writer(name: "idle"))
            }

            let idle = try pc.perform { ctx in
                try ctx.fetch(Shelf.Writer.all.where(!"novels.@count > 0"), \.name)
            }
            let busy = try pc.perform { ctx in
                try ctx.fetch(Shelf.Writer.all.where(\Shelf.Writer.born == 0 && "ANY novels.title == 'one'"), \.name)
            }

            #expect(idle == ["idle"])
            #expect(busy == ["busy"])
        }
    }

    @Test func equalityAndComparability() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = [
                Gauge(low: 10, high: 20),
                Gauge(low: 30, high: 40),
                Gauge(low: 50, high: 60),
                Gauge(low: 70, high: 80),
                Gauge(low: 90, high: 100),
            ]

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            do {
                let query: Predicate = \Gauge.low < 50 && \Gauge.high > 20 || \Gauge.high >= 100

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 30, high: 40),
                        Gauge(low: 90, high: 100),
                    ])
            }

            do {
                let query: Predicate = (\Gauge.low < 50 && \Gauge.high > 20 || \Gauge.high >= 100) && \Gauge.high != 40

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 90, high: 100)
                    ])
            }

            do {
                let query: Predicate = !(\Gauge.low <= 30) && Query.lessThanOrEqualTo(\Gauge.high, 80)

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low, ascending: false), \.low)
                }

                #expect(destinationEntries == [70, 50])
            }
        }
    }

    @Test func nilComparison() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = [
                Gauge(low: 10, high: 20, label: nil),
                Gauge(low: 30, high: 40, label: "foo"),
                Gauge(low: 50, high: 60, label: nil),
                Gauge(low: 70, high: 80, label: "bar"),
            ]

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            do {
                let query: Predicate = \Gauge.label != nil && \Gauge.low > 30

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 70, high: 80, label: "bar")
                    ])
            }

            do {
                let query: Predicate = \Gauge.label == nil && \Gauge.low < 50

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 10, high: 20, label: nil)
                    ])
            }
        }
    }

    @Test func nonPrimitiveAttributeQuery() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = [
                Gauge(low: 1, mood: .calm),
                Gauge(low: 2, mood: .stormy),
                Gauge(low: 3, mood: .stormy),
                Gauge(low: 4, mood: nil),
            ]

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            do {
                let query: Predicate = \Gauge.mood == .stormy

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 2, mood: .stormy),
                        Gauge(low: 3, mood: .stormy),
                    ])
            }

            do {
                let query: Predicate = \Gauge.mood != .stormy || \Gauge.mood == nil

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 1, mood: .calm),
                        Gauge(low: 4, mood: nil),
                    ])
            }
        }
    }

    @Test func uuidAndURLQuery() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let ids: [UUID] = [.init(), .init(), .init()]
            let links: [URL?] = [
                URL(string: "https://one.example"),
                URL(string: "https://two.example"),
                URL(string: "https://three.example"),
            ]

            try pc.perform { ctx in
                try zip(ids, links).forEach {
                    try ctx.insert(Locator(id: $0.0, link: $0.1))
                }
            }

            do {
                let query: Predicate = \Locator.link == links[0]

                let destinationEntity = try pc.perform { ctx in
                    try ctx.fetchOne(Locator.all.where(query))?.decode()
                }

                #expect(destinationEntity?.id == ids[0])
            }

            do {
                let query: Predicate = \Locator.id == ids[1]

                let destinationEntity = try pc.perform { ctx in
                    try ctx.fetchOne(Locator.all.where(query))?.decode()
                }

                #expect(destinationEntity?.link == links[1])
            }
        }
    }

    @Test func inLittle() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = [
                Gauge(low: 1, label: "a"),
                Gauge(low: 2, label: "b"),
                Gauge(low: 3, label: "c"),
                Gauge(low: 4, label: "d"),
            ]

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            do {
                let query: Predicate = \Gauge.label === ["a", "d"]

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 1, label: "a"),
                        Gauge(low: 4, label: "d"),
                    ])
            }

            do {
                let query: Predicate = \Gauge.label === ["a", "d"] || \Gauge.low === [1, 2]

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query).sort(\.low)).map { try $0.decode() }
                }

                #expect(
                    destinationEntries == [
                        Gauge(low: 1, label: "a"),
                        Gauge(low: 2, label: "b"),
                        Gauge(low: 4, label: "d"),
                    ])
            }
        }
    }

    @Test func inBig() throws {
        let N = 400

        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = (0..<N).map { _ in
                Locator(id: .init())
            }

            let ids = Array(sourceEntries.prefix(N / 2).map(\.id))

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            let query: Predicate = \Locator.id === ids

            let destinationIDs = try pc.perform { ctx in
                try ctx.fetch(Locator.all.where(query), \.id)
            }

            #expect(Set(destinationIDs) == Set(ids))
        }
    }

    @Test func stringComparability() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            let sourceEntries = [
                Gauge(label: "fOo1baR"),
                Gauge(label: "foO2bAr"),
                Gauge(label: "BaR1Foo"),
                Gauge(label: "Bar2fOO"),
                Gauge(label: "Fóo3"),
            ]

            try pc.perform { ctx in
                try sourceEntries.forEach {
                    try ctx.insert($0)
                }
            }

            do {
                let query: Predicate = Query.beginsWith(\Gauge.label, "foo")

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query)).map { try $0.decode(\.label) }
                }

                #expect(Set(destinationEntries) == ["fOo1baR", "foO2bAr", "Fóo3"])
            }

            do {
                let query: Predicate = Query.endsWith(\Gauge.label, "foo")

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query)).map { try $0.decode(\.label) }
                }

                #expect(Set(destinationEntries) == ["BaR1Foo", "Bar2fOO"])
            }

            do {
                let query: Predicate = Query.contains(\Gauge.label, "1")

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query)).map { try $0.decode(\.label) }
                }

                #expect(Set(destinationEntries) == ["fOo1baR", "BaR1Foo"])
            }

            do {
                let query: Predicate = Query.beginsWith(\Gauge.label, "foo", caseInsensitive: false)

                let destinationEntries = try pc.perform { ctx in
                    try ctx.fetch(Gauge.all.where(query)).map { try $0.decode(\.label) }
                }

                #expect(destinationEntries.isEmpty)
            }
        }
    }

    /// Unsaved inserts and changes of the perform's own context take part in its fetches.
    @Test func unsavedChangesTakePart() throws {
        try TestDB.perform(with: DataModels.predicates) { pc in
            try pc.perform { ctx in
                try ctx.insert(Gauge(low: 1))
            }
            let lows = try pc.perform { ctx in
                try ctx.insert(Gauge(low: 5))
                try ctx.fetchOne(Gauge.all.where(\Gauge.low == 1))?.encode(\.low, 9)
                return try ctx.fetch(Gauge.all.where(\Gauge.low > 2).sort(\.low), \.low)
            }
            #expect(lows == [5, 9])
        }
    }
}
