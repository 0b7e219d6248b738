import Foundation
import Skerry
import SkerryCore
import Testing

/// Stored primitives (read and written alone in their slots), a computed property and a JSON
/// value (through their codecs).
private struct Gauge: ManagedObjectConvertible, Equatable {
    var label = ""
    var value = 0.0
    var at = Date(timeIntervalSinceReferenceDate: 0)
    var count: Int64 = 0
    var note: String?
    var size: Dimensions?
    var alias: String {
        get { label.uppercased() }
        set { label = newValue.lowercased() }
    }

    static let entityName = "Gauge"
    static let attributes: Set<Attribute<Gauge>> = [
        Attribute(\.label, "label"), Attribute(\.value, "value"), Attribute(\.at, "at"), Attribute(\.count, "count"),
        Attribute(\.note, "note"), Attribute(\.size, "size"), Attribute(\.alias, "alias"),
    ]
    static let relations: Void = ()
}

/// Properties narrower or wider than their entity's attributes (a model not made from the type).
private struct Widths: ManagedObjectConvertible, Equatable {
    var small: Int32 = 0
    var count = 0
    var rank: Int64 = 0

    static let entityName = "Widths"
    static let attributes: Set<Attribute<Widths>> = [
        Attribute(\.small, "small"), Attribute(\.count, "count"), Attribute(\.rank, "rank"),
    ]
    static let relations: Void = ()
}

/// `decode(_:)` and `encode(_:_:)` of one attribute by key path must behave exactly as the
/// whole-object `decode()` and `encode(_:)` and the codecs do, whichever path a property takes.
@Suite struct SingleAttributeTests {
    private func container(_ model: ObjectModel) throws -> (PersistentContainer, PersistentStack) {
        let stack = PersistentStack(name: "Single", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        return (PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }), stack)
    }

    /// Every property of `value` written alone to `object`.
    private func encodeOneByOne(_ value: AllTypes, to object: ManagedObject<AllTypes>) {
        object.encode(\.bool, value.bool).encode(\.int, value.int).encode(\.int16, value.int16).encode(\.int32, value.int32)
            .encode(\.int64, value.int64).encode(\.float, value.float).encode(\.double, value.double)
            .encode(\.decimal, value.decimal).encode(\.date, value.date).encode(\.string, value.string)
            .encode(\.data, value.data).encode(\.uuid, value.uuid).encode(\.url, value.url)
            .encode(\.optionalBool, value.optionalBool).encode(\.optionalInt, value.optionalInt)
            .encode(\.optionalDouble, value.optionalDouble).encode(\.optionalString, value.optionalString)
            .encode(\.optionalDate, value.optionalDate).encode(\.optionalData, value.optionalData)
            .encode(\.optionalUUID, value.optionalUUID).encode(\.optionalURL, value.optionalURL)
            .encode(\.optionalDecimal, value.optionalDecimal)
    }

    /// Every property of `object` read alone.
    private func decodeOneByOne(_ object: ManagedObject<AllTypes>) throws -> AllTypes {
        var value = AllTypes()
        value.bool = try object.decode(\.bool)
        value.int = try object.decode(\.int)
        value.int16 = try object.decode(\.int16)
        value.int32 = try object.decode(\.int32)
        value.int64 = try object.decode(\.int64)
        value.float = try object.decode(\.float)
        value.double = try object.decode(\.double)
        value.decimal = try object.decode(\.decimal)
        value.date = try object.decode(\.date)
        value.string = try object.decode(\.string)
        value.data = try object.decode(\.data)
        value.uuid = try object.decode(\.uuid)
        value.url = try object.decode(\.url)
        value.optionalBool = try object.decode(\.optionalBool)
        value.optionalInt = try object.decode(\.optionalInt)
        value.optionalDouble = try object.decode(\.optionalDouble)
        value.optionalString = try object.decode(\.optionalString)
        value.optionalDate = try object.decode(\.optionalDate)
        value.optionalData = try object.decode(\.optionalData)
        value.optionalUUID = try object.decode(\.optionalUUID)
        value.optionalURL = try object.decode(\.optionalURL)
        value.optionalDecimal = try object.decode(\.optionalDecimal)
        return value
    }

    @Test(arguments: AllTypesSample.allCases)
    func everyPropertyWrittenAndReadAloneRoundTripsAndIsSaved(sample: AllTypesSample) throws {
        let (container, _) = try container(try ObjectModel(types: [AllTypes.self]))
        let original = sample.value
        // Over a saved object whose every optional holds a value, so that nil must clear it.
        let start = AllTypesSample.maxima.value
        try container.perform { try $0.insert(start) }

        let (whole, alone) = try container.perform { context in
            let object = try #require(try context.fetchOne(AllTypes.all))
            encodeOneByOne(original, to: object)
            return (try object.decode(), try decodeOneByOne(object))
        }
        #expect(whole == original)
        #expect(alone == original)

        let saved = try container.perform { context in try decodeOneByOne(try #require(try context.fetchOne(AllTypes.all))) }
        #expect(saved == original)
        #expect(try container.perform { try #require(try $0.fetchOne(AllTypes.all)).decode() } == original)
    }

    @Test func writingTheValueAnAttributeHasLeavesTheObjectUnchanged() throws {
        let (container, _) = try container(try ObjectModel(types: [Gauge.self]))
        try container.perform { try $0.insert(Gauge(label: "same", count: 3)) }
        let (same, changed) = try container.perform { context in
            let object = try #require(try context.fetchOne(Gauge.all))
            object.encode(\.count, 3).encode(\.label, "same").encode(\.note, nil)
            let same = object.instance.hasChanges
            object.encode(\.count, 4)
            return (same, object.instance.hasChanges)
        }
        #expect(!same)
        #expect(changed)
        #expect(try container.perform { try $0.fetch(Gauge.all, \Gauge.count) } == [4])
    }

    @Test func computedAndCodedPropertiesGoThroughTheirAccessorsAndCodecs() throws {
        let (container, _) = try container(try ObjectModel(types: [Gauge.self]))
        let size = Dimensions(width: 2, height: 3)
        let (alias, decodedSize) = try container.perform { context in
            let object = try context.insert(Gauge(label: "probe"))
            // Stored as given; read back through the property's setter, then its getter.
            object.encode(\.alias, "Probe").encode(\.size, size)
            return (try object.decode(\.alias), try object.decode(\.size))
        }
        #expect(alias == "PROBE")
        #expect(decodedSize == size)
        #expect(try container.perform { try $0.fetch(Gauge.all, \Gauge.size) } == [size])
    }

    @Test func aKeyPathEqualToADeclaredOneNamesTheSameAttribute() throws {
        let (container, _) = try container(try ObjectModel(types: [Gauge.self]))
        // A key path made at run time: equal to `\Gauge.count`, not the same instance.
        let count = (\Gauge.self).appending(path: \Gauge.count)
        let value = try container.perform { context in
            let object = try context.insert(Gauge())
            object.encode(count, 42)
            return try object.decode(count)
        }
        #expect(value == 42)
        #expect(try container.perform { try $0.fetch(Gauge.all, \Gauge.count) } == [42])

        // Many such key paths, made and dropped one after another, each naming its own attribute.
        let (counts, notes) = try container.perform { context in
            let object = try #require(try context.fetchOne(Gauge.all))
            var counts: [Int64] = []
            var notes: [String?] = []
            for n in 0..<20 {
                object.encode((\Gauge.self).appending(path: \Gauge.count), Int64(n))
                object.encode((\Gauge.self).appending(path: \Gauge.note), "note \(n)")
                counts.append(try object.decode((\Gauge.self).appending(path: \Gauge.count)))
                notes.append(try object.decode((\Gauge.self).appending(path: \Gauge.note)))
            }
            return (counts, notes)
        }
        #expect(counts == (0..<20).map { Int64($0) })
        #expect(notes == (0..<20).map { "note \($0)" })
    }

    @Test func aNaNWrittenAloneFailsThePerformNamingItsAttributeAndSavesNothing() throws {
        let (container, _) = try container(try ObjectModel(types: [Gauge.self]))
        try container.perform { try $0.insert(Gauge(label: "kept", value: 1)) }
        for key in ["value", "at"] {
            let error = #expect(throws: SkerryError.self) {
                try container.perform { context in
                    let object = try #require(try context.fetchOne(Gauge.all))
                    object.encode(\.label, "changed")
                    if key == "value" {
                        object.encode(\.value, .nan)
                    } else {
                        object.encode(\.at, Date(timeIntervalSinceReferenceDate: .nan))
                    }
                }
            }
            #expect(error?.code == .wrongValueType)
            #expect(error?.entityName == "Gauge")
            #expect(error?.key == key)
        }
        #expect(try container.perform { try $0.fetch(Gauge.all).map { try $0.decode() } } == [Gauge(label: "kept", value: 1)])
    }

    @Test func propertiesOfOtherWidthsThanTheirAttributesAreReadAndWrittenAlone() throws {
        let (container, _) = try container(try widthsModel())
        try container.perform { try $0.insert(Widths()) }
        let read = try container.perform { context in
            let object = try #require(try context.fetchOne(Widths.all))
            object.encode(\.small, .min).encode(\.count, Int(Int32.max)).encode(\.rank, 7)
            return (try object.decode(\.small), try object.decode(\.count), try object.decode(\.rank))
        }
        #expect(read.0 == .min && read.1 == Int(Int32.max) && read.2 == 7)
        #expect(
            try container.perform { try #require(try $0.fetchOne(Widths.all)).decode() }
                == Widths(small: .min, count: Int(Int32.max), rank: 7))
    }

    @Test func aStoredValueTheSmallerPropertyCannotHoldIsAnErrorNamingIt() throws {
        let (container, _) = try container(try widthsModel())
        try container.perform { context in
            let object = try context.insert(Widths())
            try object.instance.setValue(Int64(Int32.max) + 1, forKey: "small")
            try object.instance.setValue(Optional<Int64>.none, forKey: "rank")
        }
        try container.perform { context in
            let object = try #require(try context.fetchOne(Widths.all))
            let tooWide = #expect(throws: SkerryError.self) { try object.decode(\.small) }
            #expect(tooWide?.code == .undecodableValue)
            #expect(tooWide?.entityName == "Widths")
            #expect(tooWide?.key == "small")
            // `rank` is optional in the model, required in the type.
            let missing = #expect(throws: SkerryError.self) { try object.decode(\.rank) }
            #expect(missing?.code == .undecodableValue)
            #expect(missing?.key == "rank")
            #expect(try object.decode(\.count) == 0)
        }
    }

    @Test func anObjectOfAnEndedPerformIsRefused() throws {
        let (container, _) = try container(try ObjectModel(types: [Gauge.self]))
        let stale = try container.perform { try $0.insert(Gauge(label: "kept")) }
        let error = #expect(throws: SkerryError.self) { try stale.decode(\.label) }
        #expect(error?.code == .objectNotInContext)
    }

    /// The `Widths` entity with attributes of other widths than the properties, `rank` optional.
    private func widthsModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Widths",
                attributes: [
                    AttributeDescription("small", .integer64), AttributeDescription("count", .integer32),
                    AttributeDescription("rank", .integer64, isOptional: true),
                ])
        ])
    }
}
