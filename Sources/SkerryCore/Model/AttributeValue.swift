import Foundation

/// A value of an attribute, in the form the engine keeps it in memory and in the store.
///
/// Integer attributes of every width share ``int(_:)``, `float` and `double` attributes share
/// ``double(_:)``; the attribute's ``AttributeType`` says which width applies. ``null`` is the
/// absence of a value (an optional attribute with no value).
///
/// Equality is storage identity: two doubles are equal when their bit patterns are, so that an
/// attribute holding `.nan` is not reported as changed on every save. Predicates compare values
/// numerically instead (see ``FetchPredicate``).
public enum AttributeValue: Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case date(Date)
    case string(String)
    case data(Data)
    case uuid(UUID)
    case url(URL)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether the value is a NaN double, date or decimal, which SQLite cannot store (it would
    /// store NULL) and which compares unequal to itself.
    var isNaN: Bool {
        switch self {
        case .double(let v): return v.isNaN
        case .date(let v): return v.timeIntervalSinceReferenceDate.isNaN
        case .decimal(let v): return v.isNaN
        default: return false
        }
    }

    /// Whether a value of this form can be stored in an attribute of `type`.
    ///
    /// `null` fits every type (optionality is checked separately); an integer must also lie in
    /// the range of the attribute's width, and a `float` attribute's value in a `Float`'s range.
    public func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _): return true
        case (.bool, .boolean): return true
        case (.int(let v), .integer16), (.int(let v), .integer32), (.int(let v), .integer64):
            return type.integerRange.contains(v)
        case (.double(let v), .float):
            // Beyond a Float's range a value would become infinity: out of range, as an integer
            // outside its width is.
            return v.isInfinite || !Float(v).isInfinite
        case (.double, .double): return true
        case (.decimal, .decimal), (.date, .date), (.string, .string), (.data, .binary),
            (.uuid, .uuid), (.url, .url):
            return true
        default: return false
        }
    }

    /// A short name of the value's form, used in error messages.
    var kindName: String {
        switch self {
        case .null: return "nil"
        case .bool: return "Bool"
        case .int: return "integer"
        case .double: return "floating-point number"
        case .decimal: return "Decimal"
        case .date: return "Date"
        case .string: return "String"
        case .data: return "Data"
        case .uuid: return "UUID"
        case .url: return "URL"
        }
    }

    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let v): return String(v)
        case .int(let v): return String(v)
        case .double(let v): return String(v)
        case .decimal(let v): return v.description
        case .date(let v): return v.description
        case .string(let v): return String(reflecting: v)
        case .data(let v): return "\(v.count) bytes"
        case .uuid(let v): return v.uuidString
        case .url(let v): return v.absoluteString
        }
    }
}

extension AttributeValue: Hashable {
    private static func hashBytes(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.decimal(let a), .decimal(let b)): return a == b
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        // By UTF-8 bytes, as SQLite compares them: Swift's `==` would call "café" written with a
        // combining accent equal to the precomposed one, and a change between them would be lost.
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.data(let a), .data(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.url(let a), .url(let b)): return a.absoluteString.utf8.elementsEqual(b.absoluteString.utf8)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let v):
            hasher.combine(1)
            hasher.combine(v)
        case .int(let v):
            hasher.combine(2)
            hasher.combine(v)
        case .double(let v):
            hasher.combine(3)
            hasher.combine(v.bitPattern)
        case .decimal(let v):
            hasher.combine(4)
            hasher.combine(v)
        case .date(let v):
            hasher.combine(5)
            hasher.combine(v.timeIntervalSinceReferenceDate.bitPattern)
        case .string(let v):
            hasher.combine(6)
            Self.hashBytes(v, into: &hasher)
        case .data(let v):
            hasher.combine(7)
            hasher.combine(v)
        case .uuid(let v):
            hasher.combine(8)
            hasher.combine(v)
        case .url(let v):
            hasher.combine(9)
            Self.hashBytes(v.absoluteString, into: &hasher)
        }
    }
}
