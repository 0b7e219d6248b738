import Foundation
import Hummingbird
import Skerry

/// A book of the catalogue: the model (an entity of the store) and the JSON the API speaks.
struct Book: ManagedObjectConvertible, Codable, ResponseEncodable, Equatable {
    init() {}

    init(isbn: String, title: String, author: String, year: Int?, copies: Int) {
        self.isbn = isbn
        self.title = title
        self.author = author
        self.year = year
        self.copies = copies
    }

    var isbn = ""
    var title = ""
    var author = ""
    var year: Int?
    var copies = 1
    /// How often the book was looked up: counted in memory and saved in batches (and on shutdown).
    var views = 0

    static let entityName = "Book"
    static let attributes: Set<Attribute<Book>> = [
        Attribute(\.isbn, "isbn"),
        Attribute(\.title, "title"),
        Attribute(\.author, "author"),
        Attribute(\.year, "year"),
        Attribute(\.copies, "copies"),
        Attribute(\.views, "views"),
    ]
    static let relations: Void = ()
    static let entityOptions = EntityOptions<Book>()
        .unique(\Book.isbn)
        .index(\Book.author)
}

extension Book {
    enum CodingKeys: String, CodingKey { case isbn, title, author, year, copies, views }

    /// Decodes a book sent by a client: `isbn`, `title` and `author` are required, `year` is
    /// optional, `copies` defaults to 1, and `views` is the service's to count (ignored).
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isbn = try container.decode(String.self, forKey: .isbn)
        title = try container.decode(String.self, forKey: .title)
        author = try container.decode(String.self, forKey: .author)
        year = try container.decodeIfPresent(Int.self, forKey: .year)
        copies = try container.decodeIfPresent(Int.self, forKey: .copies) ?? 1
        views = 0
    }
}

/// The fields a client may change: all optional.
struct BookChanges: Codable {
    var title: String?
    var author: String?
    var year: Int?
    var copies: Int?
}

/// A page of books.
struct BookList: Codable, ResponseEncodable {
    var books: [Book]
    var total: Int
}

/// What the store did, for `/stats`.
struct Stats: Codable, ResponseEncodable {
    var books: Int
    var statementsExecuted: Int
    var rowsRead: Int
    var rowsWritten: Int
    var residentMemoryBytes: Int
}
