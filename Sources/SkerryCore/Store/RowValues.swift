import Foundation

/// The attribute values of a row being written (``RowInsert/values``), read where they lie: in
/// the saved object's value storage, never copied into an array first (a bulk insert would
/// otherwise build and destroy one array of ``AttributeValue``s per row), or, for values a merge
/// policy put together, in an array.
///
/// A random-access collection of ``AttributeValue``s indexed like the entity's attributes, each
/// made as it is read (no allocation for numbers), plus typed reads (``integer(at:)``,
/// ``double(at:)``, ``string(at:)``) for a store that encodes values itself.
///
/// It holds the object, so its storage stays alive; the context changes no object while a save
/// writes, so the values are those of the save. Meant to be read during the
/// ``ObjectStore/write(_:resolving:then:)`` that receives it.
package struct RowValues: RandomAccessCollection {
    private enum Source {
        /// An object's values, in its storage (loaded: not nil), laid out by its entity's layout.
        /// (One reference, so that a bulk insert's rows stay small.)
        case object(EntityObject)
        case array([AttributeValue])
    }

    private let source: Source
    package let endIndex: Int

    /// The values of `object` as they are in its storage (none, for a fault: an object being
    /// inserted never is one).
    init(_ object: EntityObject) {
        let count = object.entity.valueLayout.count
        guard object.storage != nil else {
            self.init(Array(repeating: .null, count: count))
            return
        }
        self.init(source: .object(object), count: count)
    }

    /// `values`, indexed like the entity's attributes.
    package init(_ values: [AttributeValue]) {
        self.init(source: .array(values), count: values.count)
    }

    private init(source: Source, count: Int) {
        self.source = source
        endIndex = count
    }

    package var startIndex: Int { 0 }

    /// The value of attribute `index` (`.null` for none).
    package subscript(index: Int) -> AttributeValue {
        precondition(UInt(bitPattern: index) < UInt(endIndex), "RowValues index out of range")
        switch source {
        case .object: return withStorage { base, layout in layout.load(base, index) } ?? .null
        case .array(let values): return values[index]
        }
    }

    /// Runs `body` with the storage the values lie in and its layout, borrowed; nil (without
    /// running it) when they lie in an array.
    @inline(__always)
    func withStorage<R>(_ body: (UnsafeRawPointer, ValueLayout) -> R) -> R? {
        guard case .object(let object) = source, let base = object.storage else { return nil }
        // Borrowed: the object holds its entity, which holds the layout.
        return Unmanaged.passUnretained(object.entity.valueLayout)._withUnsafeGuaranteedRef { layout in body(base, layout) }
    }

    /// The value of attribute `index` when it is an integer or a Boolean (as 0 or 1); nil when it
    /// has no value or another type.
    package func integer(at index: Int) -> Int64? {
        precondition(UInt(bitPattern: index) < UInt(endIndex), "RowValues index out of range")
        switch source {
        case .object:
            return withStorage { base, layout in layout.slot(at: index) == .integer ? layout.loadInteger(base, index) : nil } ?? nil
        case .array(let values):
            switch values[index] {
            case .int(let value): return value
            case .bool(let value): return value ? 1 : 0
            default: return nil
            }
        }
    }

    /// The value of attribute `index` when it is a floating-point number or a date (as seconds
    /// since the reference date); nil when it has no value or another type.
    package func double(at index: Int) -> Double? {
        precondition(UInt(bitPattern: index) < UInt(endIndex), "RowValues index out of range")
        switch source {
        case .object:
            return withStorage { base, layout in layout.slot(at: index) == .double ? layout.loadDouble(base, index) : nil } ?? nil
        case .array(let values):
            switch values[index] {
            case .double(let value): return value
            case .date(let value): return value.timeIntervalSinceReferenceDate
            default: return nil
            }
        }
    }

    /// The value of attribute `index` when it is a string; nil when it has no value or another
    /// type.
    package func string(at index: Int) -> String? {
        precondition(UInt(bitPattern: index) < UInt(endIndex), "RowValues index out of range")
        switch source {
        case .object:
            return withStorage { base, layout in layout.slot(at: index) == .string ? layout.loadString(base, index) : nil } ?? nil
        case .array(let values):
            if case .string(let value) = values[index] { return value }
            return nil
        }
    }
}
