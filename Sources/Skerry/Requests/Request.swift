import SkerryCore

extension ManagedObjectConvertible {
    /// Every object of the type: the start of every request.
    public static var all: Request<Self> { Request() }
}

/// A fetch of a model type: which objects, in what order, how many. Sworm's `Request`.
///
/// ```swift
/// let request = Book.all.where(\Book.year < 1970).sort(\Book.year).sort(\Book.title).limit(10)
/// ```
///
/// `@unchecked Sendable`: an immutable value; its key paths are immutable (not `Sendable` in
/// Swift 6 only because their root type might not be).
public struct Request<PlainObject: ManagedObjectConvertible>: @unchecked Sendable {
    var fetchLimit: Int?
    var fetchOffset: Int?
    var predicate: Predicate?
    var sortDescriptors: [(keyPath: PartialKeyPath<PlainObject>, ascending: Bool)] = []

    init() {}

    /// At most `value` objects.
    public func limit(_ value: Int) -> Request {
        var copy = self
        copy.fetchLimit = value
        return copy
    }

    /// Skips the first `value` matching objects.
    public func offset(_ value: Int) -> Request {
        var copy = self
        copy.fetchOffset = value
        return copy
    }

    /// Only the objects for which `predicate` holds (replacing any earlier condition, as in Sworm).
    public func `where`(_ predicate: Predicate) -> Request {
        var copy = self
        copy.predicate = predicate
        return copy
    }

    /// Only the objects for which a raw SQL condition holds: the escape hatch. The condition names
    /// the entity's attributes as columns and has a `?` for each argument; the arguments are always
    /// bound as parameters, never spliced into the text. (Sworm's `where(raw:)` takes NSPredicate
    /// syntax; this one takes SQL.)
    ///
    /// ```swift
    /// Book.all.where(raw: "year BETWEEN ? AND ? OR title LIKE ?", 1960, 1969, "Dune%")
    /// ```
    public func `where`(raw condition: String, _ arguments: any SupportedAttributeType...) -> Request {
        var copy = self
        copy.predicate = Predicate { () throws(SkerryError) in
            var values: [AttributeValue] = []
            for argument in arguments {
                do {
                    values.append(try argument.encodePrimitiveValue().attributeValue)
                } catch {
                    throw SkerryError(.wrongValueType, "An argument of a raw condition cannot be encoded: \(error)",
                                      entityName: PlainObject.entityName)
                }
            }
            return .sql(condition, values)
        }
        return copy
    }

    /// Sorts by `keyPath` after the sorts already given.
    public func sort<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>, ascending: Bool = true) -> Request {
        var copy = self
        copy.sortDescriptors.append((keyPath, ascending))
        return copy
    }

    /// Sorts by an optional attribute (objects with no value first when ascending).
    public func sort<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>, ascending: Bool = true) -> Request {
        var copy = self
        copy.sortDescriptors.append((keyPath, ascending))
        return copy
    }

    /// The engine's fetch request.
    /// - Throws: an error met while building a predicate, or a sort on an undeclared key path.
    public func fetchRequest() throws(SkerryError) -> FetchRequest {
        var request = FetchRequest(entityName: PlainObject.entityName, predicate: try predicate?.fetchPredicate())
        for sort in sortDescriptors {
            request.sortKeys.append(SortKey(try PlainObject.attributeName(sort.keyPath), ascending: sort.ascending))
        }
        request.fetchLimit = fetchLimit ?? 0
        request.fetchOffset = fetchOffset ?? 0
        return request
    }
}
