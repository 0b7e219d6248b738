import Foundation
import Skerry
import Testing

@Suite struct AttributeTests {
    @Test func everyPrimitiveReadWrite() throws {
        try TestDB.perform(with: DataModels.attributes) { pc in
            let sourceInstance = EveryPrimitive(
                flag: .random(),
                int: .random(in: .min ... .max),
                int16: .random(in: .min ... .max),
                int32: .random(in: .min ... .max),
                int64: .random(in: .min ... .max),
                float: 100.5,
                double: -0.25,
                decimal: Decimal(string: "12345678901234567890.123")!,
                date: Bool.random() ? Date(timeIntervalSinceReferenceDate: 712_345_678.5) : nil,
                text: Bool.random() ? "\(Int.random(in: .min ... .max))" : nil,
                blob: Bool.random() ? Data(repeating: .random(in: .min ... .max), count: 16) : nil,
                uuid: Bool.random() ? .init() : nil,
                link: Bool.random() ? URL(string: "https://swift.org/documentation") : nil
            )

            try pc.perform { ctx in
                try ctx.insert(sourceInstance)
            }

            let destinationInstance = try pc.perform { ctx in
                try ctx.fetchOne(EveryPrimitive.all)?.decode()
            }

            #expect(sourceInstance == destinationInstance)
        }
    }

    @Test func everyOptionalPrimitiveSetAndCleared() throws {
        try TestDB.perform(with: DataModels.attributes) { pc in
            let full = EveryPrimitive(
                date: Date(timeIntervalSinceReferenceDate: 1), text: "text", blob: Data([1, 2, 3]),
                uuid: UUID(), link: URL(string: "file:///tmp/x")
            )
            try pc.perform { ctx in
                try ctx.insert(full)
            }
            #expect(try pc.perform { ctx in try ctx.fetchOne(EveryPrimitive.all)?.decode() } == full)

            try pc.perform { ctx in
                try ctx.fetchOne(EveryPrimitive.all)?.encode(EveryPrimitive())
            }
            #expect(try pc.perform { ctx in try ctx.fetchOne(EveryPrimitive.all)?.decode() } == EveryPrimitive())
        }
    }

    @Test func customAttributesReadWrite() throws {
        try TestDB.perform(with: DataModels.attributes) { pc in
            let sourceInstances = [
                Painted(
                    asJSON: .init(.init(from: 1, to: 2)),
                    asText: .init(.init(from: 3, to: 4)),
                    first: .init(from: 5, to: 6),
                    second: nil,
                    colour: .green,
                    accent: .blue
                ),
                Painted(
                    asJSON: .init(.init(from: 6, to: 5)),
                    asText: .init(.init(from: 4, to: 3)),
                    first: nil,
                    second: .init(from: 2, to: 1),
                    colour: .blue,
                    accent: .green
                ),
            ]

            try pc.perform { ctx in
                try sourceInstances.forEach {
                    try ctx.insert($0)
                }
            }

            let destinationInstances = try pc.perform { ctx in
                try ctx.fetch(Painted.all.sort(\.colour))
                    .map { try $0.decode() }
            }

            #expect(sourceInstances == destinationInstances)
        }
    }

    @Test func referenceTypeReadWrite() throws {
        try TestDB.perform(with: DataModels.attributes) { pc in
            let first = Counter()
            first.value = 10

            let second = Counter()
            second.limit = 10

            try pc.perform { ctx in
                try ctx.insert(first)
                try ctx.insert(second)
            }

            let destinationInstances = try pc.perform { ctx in
                try ctx.fetch(Counter.all.sort(\.value, ascending: false))
                    .map { try $0.decode() }
            }

            #expect([first, second] == destinationInstances)
        }
    }

    @Test func singleAttributesEncodeAndDecode() throws {
        try TestDB.perform(with: DataModels.attributes) { pc in
            try pc.perform { ctx in
                let object = try ctx.insert(Painted())
                object.encode(\.colour, .blue).encode(\.first, .init(from: 7, to: 8))
            }

            let (colour, first, second) = try pc.perform { ctx in
                let object = try ctx.fetchOne(Painted.all)
                return (try object?.decode(\.colour), try object?.decode(\.first), try object?.decode(\.second))
            }

            #expect(colour == .blue)
            #expect(first == .init(from: 7, to: 8))
            #expect(second == nil)
        }
    }

    /// A stored value the type cannot be made from fails the decode with an error naming the
    /// entity and attribute; the decoder's own error is part of it.
    @Test func undecodableValueFailsTheDecode() throws {
        try TestDB.perform(with: DataModels.attributes) { pc in
            try pc.perform { ctx in
                try ctx.insert(Painted())
            }
            try pc.perform { ctx in
                try ctx.fetchOne(Painted.all)?.instance.setValue("not a stroke", forKey: "asText")
            }

            let error = #expect(throws: SkerryError.self) {
                try pc.perform { ctx in
                    try ctx.fetchOne(Painted.all)?.decode()
                }
            }
            #expect(error?.code == .undecodableValue)
            #expect(error?.entityName == "Painted")
            #expect(error?.key == "asText")
            #expect(error?.message.contains("AttributeError.badInput(not a stroke)") == true)
        }
    }
}
