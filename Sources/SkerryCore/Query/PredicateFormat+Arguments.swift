import Foundation

/// Conversions of the arguments of a format string (`%@`, `%d`, `%f`…) and of substitution
/// variables' values to what a predicate holds.
///
/// Accepted: strings, integers of every width, floating-point numbers, `Bool`, `Date`, `Decimal`,
/// `UUID`, `Data`, `URL`, ``AttributeValue``, any ``AttributeValueConvertible``, nil, ``ObjectID``
/// and ``EntityObject`` (for `SELF` and relationship comparisons), and arrays or sets of these
/// (for `IN` and `BETWEEN`); the Foundation objects that bridge to them (`NSString`, `NSNumber`,
/// `NSDate`, `NSUUID`, `NSData`, `NSURL`, `NSDecimalNumber`, `NSArray`, `NSSet`, `NSNull`).
enum FormatArgument {
    /// An argument that does not fit its specifier.
    struct Mismatch: Error {
        let wanted: String
    }

    /// The expression `%@` (or a variable) stands for.
    static func expression(_ argument: Any) throws(Mismatch) -> FormatExpression {
        if let optional = argument as? any OptionalArgument {
            guard let wrapped = optional.wrappedArgument else { return .value(.null) }
            return try expression(wrapped)
        }
        switch argument {
        case let value as AttributeValue: return .value(value)
        case let id as ObjectID: return .objects([id])
        case let object as EntityObject: return .objects([object.objectID])
        case let text as Substring: return .value(.string(String(text)))
        case let character as Character: return .value(.string(String(character)))
        case let number as UInt: return .value(.int(try integer(number)))
        case let number as UInt64: return .value(.int(try integer(number)))
        case let number as UInt32: return .value(.int(Int64(number)))
        case let number as UInt16: return .value(.int(Int64(number)))
        case let number as UInt8: return .value(.int(Int64(number)))
        case let number as Int8: return .value(.int(Int64(number)))
        case let convertible as any AttributeValueConvertible:
            let value = convertible.attributeValue
            if value.isNaN { throw Mismatch(wanted: "a number (not NaN)") }
            return .value(value)
        case let array as [Any]:
            var elements: [FormatExpression] = []
            for element in array { elements.append(try expression(element)) }
            return .list(elements)
        case let set as Set<AnyHashable>:
            var elements: [FormatExpression] = []
            for element in set { elements.append(try expression(element.base)) }
            return .list(elements)
        case let object as NSObject:
            guard let value = bridged(object) else { throw unsupported }
            return try expression(value)
        default:
            throw unsupported
        }
    }

    /// A Foundation object as the Swift value it stands for (`id as NSUUID`, `date as NSDate`,
    /// `NSNumber(value:)`, `NSNull()`… as code written for Core Data passes them); nil for other
    /// objects. `NSNull` is `Optional<Any>.none`.
    private static func bridged(_ object: NSObject) -> Any? {
        switch object {
        case let uuid as NSUUID: return uuid as UUID
        case let date as NSDate: return date as Date
        case let decimal as NSDecimalNumber: return decimal.decimalValue
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "c", "B": return number.int64Value == 0 || number.int64Value == 1 ? number.boolValue : number.int64Value
            case "f", "d": return number.doubleValue
            case "Q", "L", "I", "S", "C": return number.uint64Value
            default: return number.int64Value
            }
        case let string as NSString: return string as String
        case let data as NSData: return data as Data
        case let url as NSURL: return url as URL
        case let array as NSArray: return array.map { $0 }
        case let set as NSSet: return set.allObjects
        case is NSNull: return Optional<Any>.none as Any
        default: return nil
        }
    }

    /// The error for an argument of a type a predicate cannot hold.
    private static var unsupported: Mismatch {
        Mismatch(
            wanted:
                "a value Skerry can compare (String, number, Bool, Date, Decimal, UUID, Data, URL, ObjectID, EntityObject, nil, or an array of these)"
        )
    }

    /// An integer for `%d`, `%i`, `%ld`, `%u`, `%x`…
    static func integer(_ argument: Any) throws(Mismatch) -> Int64 {
        switch argument {
        case let n as Int: return Int64(n)
        case let n as Int64: return n
        case let n as Int32: return Int64(n)
        case let n as Int16: return Int64(n)
        case let n as Int8: return Int64(n)
        case let n as UInt: return try integer(UInt64(n))
        case let n as UInt64:
            guard let value = Int64(exactly: n) else { throw Mismatch(wanted: "an integer that fits in Int64") }
            return value
        case let n as UInt32: return Int64(n)
        case let n as UInt16: return Int64(n)
        case let n as UInt8: return Int64(n)
        case let b as Bool: return b ? 1 : 0
        case AttributeValue.int(let n): return n
        case AttributeValue.bool(let b): return b ? 1 : 0
        default: throw Mismatch(wanted: "an integer")
        }
    }

    /// A number for `%f`, `%g`, `%e`…
    static func double(_ argument: Any) throws(Mismatch) -> Double {
        let value: Double
        switch argument {
        case let n as Double: value = n
        case let n as Float: value = Double(n)
        case let n as Decimal: value = NSDecimalNumber(decimal: n).doubleValue
        case AttributeValue.double(let n): value = n
        case AttributeValue.decimal(let n): value = NSDecimalNumber(decimal: n).doubleValue
        default:
            do {
                value = Double(try integer(argument))
            } catch {
                throw Mismatch(wanted: "a number")
            }
        }
        guard !value.isNaN else { throw Mismatch(wanted: "a number (not NaN)") }
        return value
    }
}

/// Lets an `Optional` passed as `Any` be unwrapped.
protocol OptionalArgument {
    var wrappedArgument: Any? { get }
}

extension Optional: OptionalArgument {
    var wrappedArgument: Any? {
        switch self {
        case .some(let wrapped): return wrapped
        case .none: return nil
        }
    }
}
