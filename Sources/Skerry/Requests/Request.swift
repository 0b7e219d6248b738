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
    /// The sort keys' names (or the error met naming one), in order.
    var sortDescriptors: [(key: Result<String, SkerryError>, ascending: Bool)] = []

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

    /// Only the objects for which a predicate in Core Data's format language holds, with its
    /// arguments: Sworm's `where(raw:)`.
    ///
    /// ```swift
    /// Book.all.where(raw: "year BETWEEN {%d, %d} AND genre != %@", 1960, 1969, Genre.poetry)
    /// ```
    ///
    /// Arguments may be values of the model's attribute types (enums included), ``ManagedObject``s,
    /// nil, or arrays of these; a malformed format makes the fetch throw
    /// `SkerryError.Code.invalidPredicateFormat`.
    public func `where`(raw format: String, _ arguments: Any...) -> Request {
        `where`(Predicate(format: format, argumentArray: arguments))
    }

    /// Only the objects for which a predicate in Core Data's format language holds (a `String`
    /// used as a predicate, as Sworm allows).
    public func `where`(_ format: String) -> Request {
        `where`(Predicate(format: format))
    }

    /// Only the objects for which a raw SQL condition holds: the escape hatch. The condition names
    /// the entity's attributes as columns and has a `?` for each argument; the arguments are always
    /// bound as parameters, never spliced into the text. It must be one expression that reads only
    /// the entity's attribute columns (see `FetchPredicate.sql(_:_:)`).
    ///
    /// ```swift
    /// Book.all.where(sql: "year BETWEEN ? AND ? OR title LIKE ?", 1960, 1969, "Dune%")
    /// ```
    public func `where`(sql condition: String, _ arguments: any SupportedAttributeType...) -> Request {
        var copy = self
        copy.predicate = Predicate { () throws(SkerryError) in
            var values: [AttributeValue] = []
            for argument in arguments {
                do {
                    values.append(try argument.encodePrimitiveValue().attributeValue)
                } catch {
                    throw SkerryError(
                        .wrongValueType, "An argument of a raw condition cannot be encoded: \(error)",
                        entityName: PlainObject.entityName)
                }
            }
            return .sql(condition, values)
        }
        return copy
    }

    /// Sorts by `keyPath` after the sorts already given.
    public func sort<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value>, ascending: Bool = true) -> Request {
        sorted(Self.name(keyPath), ascending)
    }

    /// Sorts by an optional attribute (objects with no value first when ascending).
    public func sort<Value: SupportedAttributeType>(_ keyPath: KeyPath<PlainObject, Value?>, ascending: Bool = true) -> Request {
        sorted(Self.name(keyPath), ascending)
    }

    /// Sorts by an attribute of the object a to-one relation leads to (`author.name`); objects
    /// without one sort as nil (first when ascending). In SQL and for unsaved objects alike.
    ///
    /// ```swift
    /// Work.all.sort(\.writer, \Writer.name)
    /// ```
    public func sort<Destination: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ relation: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, _ keyPath: KeyPath<Destination, Value>,
        ascending: Bool = true
    ) -> Request {
        sorted(Self.name(relation, keyPath), ascending)
    }

    /// Sorts by an optional attribute of the object a to-one relation leads to.
    public func sort<Destination: ManagedObjectConvertible, Value: SupportedAttributeType>(
        _ relation: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, _ keyPath: KeyPath<Destination, Value?>,
        ascending: Bool = true
    ) -> Request {
        sorted(Self.name(relation, keyPath), ascending)
    }

    private func sorted(_ key: Result<String, SkerryError>, _ ascending: Bool) -> Request {
        var copy = self
        copy.sortDescriptors.append((key, ascending))
        return copy
    }

    private static func name(_ keyPath: PartialKeyPath<PlainObject>) -> Result<String, SkerryError> {
        Result { () throws(SkerryError) in try PlainObject.attributeName(keyPath) }
    }

    private static func name<Destination: ManagedObjectConvertible>(
        _ relation: KeyPath<PlainObject.Relations, ToOneRelation<Destination>>, _ keyPath: PartialKeyPath<Destination>
    ) -> Result<String, SkerryError> {
        Result { () throws(SkerryError) in
            PlainObject.relations[keyPath: relation].name + "." + (try Destination.attributeName(keyPath))
        }
    }

    /// The engine's fetch request.
    /// - Throws: an error met while building a predicate, or a sort on an undeclared key path.
    public func fetchRequest() throws(SkerryError) -> FetchRequest {
        var request = FetchRequest(entityName: PlainObject.entityName, predicate: try predicate?.fetchPredicate())
        for sort in sortDescriptors {
            request.sortKeys.append(SortKey(try sort.key.get(), ascending: sort.ascending))
        }
        request.fetchLimit = fetchLimit ?? 0
        request.fetchOffset = fetchOffset ?? 0
        return request
    }
}
