import Foundation
import Skerry

/// A `Codable` value stored as JSON, as Sworm's users write such a wrapper.
struct Coded<T: Codable>: SupportedAttributeType {
    init(_ value: T) {
        self.value = value
    }

    var value: T

    static func decode(primitiveValue: Data) throws -> Coded<T> {
        .init(try JSONDecoder().decode(T.self, from: primitiveValue))
    }

    func encodePrimitiveValue() -> Data {
        // Sworm's encoder cannot throw; the values stored here are plain structs of integers,
        // which JSONEncoder always encodes.
        try! JSONEncoder().encode(self.value)
    }
}

extension Coded: Equatable where T: Equatable {}

/// A value stored as its description.
struct Spelled<T: LosslessStringConvertible>: SupportedAttributeType {
    init(_ value: T) {
        self.value = value
    }

    var value: T

    static func decode(primitiveValue: String) throws -> Spelled<T> {
        guard let value = T(primitiveValue) else {
            throw AttributeError.badInput(primitiveValue)
        }
        return .init(value)
    }

    func encodePrimitiveValue() -> String {
        self.value.description
    }
}

extension Spelled: Equatable where T: Equatable {}
