import Foundation
import Skerry
import SkerryCore
import Testing

/// A plain type whose properties take both of the typed layer's paths: stored primitives are
/// copied slot to slot, the computed `alias` and the JSON `size` go through their codecs.
private struct Reading: ManagedObjectConvertible, Equatable {
    var label = ""
    var value = 0.0
    var at = Date(timeIntervalSinceReferenceDate: 0)
    var count: Int64 = 0
    var note: String?
    var size: Dimensions?
    var alias: String {
        get { label }
        set { label = newValue }
    }

    static let entityName = "Reading"
    static let attributes: Set<Attribute<Reading>> = [
        Attribute(\.value, "value"), Attribute(\.at, "at"), Attribute(\.count, "count"), Attribute(\.note, "note"),
        Attribute(\.size, "size"), Attribute(\.alias, "alias"),
    ]
    static let relations: Void = ()
}

/// Properties narrower or wider than their entity's attributes (a model not made from the type).
private struct Widths: ManagedObjectConvertible, Equatable {
    var small: Int32 = 0
    var count = 0
    var rank: Int64 = 0
    var flag = false

    static let entityName = "Widths"
    static let attributes: Set<Attribute<Widths>> = [
        Attribute(\.small, "small"), Attribute(\.count, "count"), Attribute(\.rank, "rank"), Attribute(\.flag, "flag"),
    ]
    static let relations: Void = ()
}

/// The typed layer reads and writes whole objects: what it copies straight between a value and an
/// object's slots must behave exactly as the checked, attribute-by-attribute path does.
@Suite struct WholeObjectCopyTests {
    private func container(_ model: ObjectModel) throws -> (PersistentContainer, PersistentStack) {
        let stack = PersistentStack(name: "Copies", model: model)
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        return (PersistentContainer(managedObjectContext: { stack.newBackgroundContext() }), stack)
    }

    /// The `Widths` entity with attributes of other widths than the properties, `rank` optional.
    private func widthsModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Widths",
                attributes: [
                    AttributeDescription("small", .integer64), AttributeDescription("count", .integer32),
                    AttributeDescription("rank", .integer64, isOptional: true), AttributeDescription("flag", .boolean),
                ])
        ])
    }

    @Test func valuesOfBothPathsRoundTripAndUpdatesAreSaved() throws {
        let (container, _) = try container(try ObjectModel(types: [Reading.self]))
        var reading = Reading(
            label: "probe ñ 📡", value: -0.5, at: Date(timeIntervalSinceReferenceDate: 12.25), count: .max, note: nil,
            size: Dimensions(width: 2, height: 3))
        #expect(try container.perform { try $0.insert(reading).decode() } == reading)
        #expect(try container.perform { try $0.fetch(Reading.all).map { try $0.decode() } } == [reading])

        // A whole value written over a saved object is a pending change, saved by the perform.
        reading.note = "a note"
        reading.count = -1
        reading.label = "renamed"
        let updated = try container.perform { context in
            let object = try #require(try context.fetch(Reading.all).first)
            object.encode(reading)
            return object.instance.isUpdated
        }
        #expect(updated)
        #expect(try container.perform { try $0.fetch(Reading.all).map { try $0.decode() } } == [reading])

        // And an optional set back to nil is cleared.
        reading.note = nil
        try container.perform { context in try #require(try context.fetch(Reading.all).first).encode(reading) }
        #expect(try container.perform { try $0.fetch(Reading.all, \Reading.note) } == [nil])
    }

    @Test(arguments: ["value", "at"])
    func aNaNIsRefusedNamingItsAttributeAndNothingIsInserted(key: String) throws {
        let (container, _) = try container(try ObjectModel(types: [Reading.self]))
        var reading = Reading(label: "bad")
        if key == "value" { reading.value = .nan } else { reading.at = Date(timeIntervalSinceReferenceDate: .nan) }
        let error = #expect(throws: SkerryError.self) {
            try container.perform { try $0.insert(reading) }
        }
        #expect(error?.code == .wrongValueType)
        #expect(error?.entityName == "Reading")
        #expect(error?.key == key)
        #expect(try container.perform { try $0.count(of: Reading.all) } == 0)
    }

    @Test func propertiesOfOtherWidthsThanTheirAttributesRoundTrip() throws {
        let (container, _) = try container(try widthsModel())
        let value = Widths(small: .min, count: Int(Int32.max), rank: 7, flag: true)
        try container.perform { try $0.insert(value) }
        #expect(try container.perform { try $0.fetch(Widths.all).map { try $0.decode() } } == [value])
    }

    @Test func aStoredValueTheSmallerPropertyCannotHoldIsAnErrorNamingIt() throws {
        let (container, _) = try container(try widthsModel())
        try container.perform { context in
            let object = try context.insert(Widths())
            try object.instance.setValue(Int64(Int32.max) + 1, forKey: "small")
        }
        let error = #expect(throws: SkerryError.self) {
            try container.perform { try $0.fetch(Widths.all).map { try $0.decode() } }
        }
        #expect(error?.code == .undecodableValue)
        #expect(error?.entityName == "Widths")
        #expect(error?.key == "small")
    }

    @Test func aMissingValueOfARequiredPropertyIsAnErrorNamingIt() throws {
        let (container, _) = try container(try widthsModel())
        // `rank` is optional in the model, required in the type: an object saved without it
        // cannot be decoded.
        try container.perform { context in
            let object = try context.insert(Widths())
            try object.instance.setValue(Optional<Int64>.none, forKey: "rank")
        }
        let error = #expect(throws: SkerryError.self) {
            try container.perform { try $0.fetch(Widths.all).map { try $0.decode() } }
        }
        #expect(error?.code == .undecodableValue)
        #expect(error?.key == "rank")
    }

    @Test func anObjectOfAnotherContextsPerformIsRefused() throws {
        let (container, _) = try container(try ObjectModel(types: [Reading.self]))
        let stale = try container.perform { try $0.insert(Reading(label: "kept")) }
        // The perform ended: its context was reset, the object invalidated.
        let error = #expect(throws: SkerryError.self) { try stale.decode() }
        #expect(error?.code == .objectNotInContext)
    }
}
