import Foundation

/// The type of an attribute, as declared in the model.
///
/// Each type has one storage form in SQLite (see ``AttributeValue``):
///
/// | type | stored as |
/// |---|---|
/// | `boolean`, `integer16`, `integer32`, `integer64` | INTEGER |
/// | `float`, `double` | REAL |
/// | `decimal` | TEXT (exact decimal digits) |
/// | `date` | REAL, seconds since 2001-01-01 00:00:00 UTC (Foundation's and Core Data's reference date: exact) |
/// | `string`, `url` | TEXT |
/// | `binary` | BLOB |
/// | `uuid` | BLOB of 16 bytes |
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    case boolean
    case integer16
    case integer32
    case integer64
    case float
    case double
    case decimal
    case date
    case string
    case binary
    case uuid
    case url

    /// Whether the type is one of the integer types.
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: return true
        default: return false
        }
    }

    /// Whether the type is a number: Boolean, an integer, Float, Double or Decimal.
    var isNumber: Bool {
        switch self {
        case .boolean, .integer16, .integer32, .integer64, .float, .double, .decimal: return true
        default: return false
        }
    }

    /// The range of values an integer attribute of this type can hold.
    package var integerRange: ClosedRange<Int64> {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        default: return Int64.min...Int64.max
        }
    }
}
