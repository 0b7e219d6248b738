import Foundation
import Skerry
import SkerryCore

enum Genre: String, SupportedAttributeType, CaseIterable {
    case fiction, poetry, essay
}

struct Dimensions: JSONAttribute, Equatable {
    var width = 0.0
    var height = 0.0
}

/// A user-defined conversion to a primitive: stored as the number of cents.
struct Money: SupportedAttributeType, Equatable {
    var cents: Int64
    func encodePrimitiveValue() -> Int64 { cents }
    static func decode(primitiveValue: Int64) -> Money { Money(cents: primitiveValue) }
}

struct Book: ManagedObjectConvertible, Equatable {
    var title = ""
    var year: Int?
    var isbn: String?
    var genre = Genre.fiction
    var dimensions: Dimensions?
    var price = Money(cents: 0)
    var inPrint = true

    static let entityName = "Book"
    static let attributes: Set<Attribute<Book>> = [
        Attribute(\.title, "title"),
        Attribute(\.year, "year"),
        Attribute(\.isbn, "isbn"),
        Attribute(\.genre, "genre"),
        Attribute(\.dimensions, "dimensions"),
        Attribute(\.price, "price"),
        Attribute(\.inPrint, "inPrint"),
    ]
    static let relations: Void = ()
    static let entityOptions = EntityOptions<Book>()
        .unique(\Book.isbn)
        .index(\Book.year)
        .defaultValue(\Book.inPrint, true)
}

/// Every primitive attribute type, required and optional.
struct AllTypes: ManagedObjectConvertible, Equatable {
    var bool = false, int = 0, int16: Int16 = 0, int32: Int32 = 0, int64: Int64 = 0
    var float: Float = 0, double = 0.0, decimal = Decimal(0), date = Date(timeIntervalSinceReferenceDate: 0)
    var string = "", data = Data(), uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var url = URL(string: "https://example.com")!
    var optionalBool: Bool?, optionalInt: Int?, optionalDouble: Double?, optionalString: String?
    var optionalDate: Date?, optionalData: Data?, optionalUUID: UUID?, optionalURL: URL?, optionalDecimal: Decimal?

    static let entityName = "AllTypes"
    static let attributes: Set<Attribute<AllTypes>> = [
        Attribute(\.bool, "bool"), Attribute(\.int, "int"), Attribute(\.int16, "int16"), Attribute(\.int32, "int32"),
        Attribute(\.int64, "int64"), Attribute(\.float, "float"), Attribute(\.double, "double"),
        Attribute(\.decimal, "decimal"), Attribute(\.date, "date"), Attribute(\.string, "string"),
        Attribute(\.data, "data"), Attribute(\.uuid, "uuid"), Attribute(\.url, "url"),
        Attribute(\.optionalBool, "optionalBool"), Attribute(\.optionalInt, "optionalInt"),
        Attribute(\.optionalDouble, "optionalDouble"), Attribute(\.optionalString, "optionalString"),
        Attribute(\.optionalDate, "optionalDate"), Attribute(\.optionalData, "optionalData"),
        Attribute(\.optionalUUID, "optionalUUID"), Attribute(\.optionalURL, "optionalURL"),
        Attribute(\.optionalDecimal, "optionalDecimal"),
    ]
    static let relations: Void = ()
}

/// A stack with the test models over an in-memory store, or a file in `directory`.
func makeStack(in directory: URL? = nil) throws -> PersistentStack {
    let stack = PersistentStack(name: "Library", model: try ObjectModel(types: [Book.self, AllTypes.self]))
    stack.persistentStoreDescriptions = [
        directory.map { StoreDescription(url: $0.appendingPathComponent("Library.sqlite")) } ?? .inMemory()
    ]
    try stack.loadPersistentStores()
    return stack
}

/// A temporary folder, removed when released.
