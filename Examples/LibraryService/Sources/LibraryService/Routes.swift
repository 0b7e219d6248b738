import Foundation
import Hummingbird
import SkerryCore

/// The HTTP routes over the catalogue.
enum Routes {
    static func router(_ catalogue: Catalogue) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorMapping())
        router.get("/health") { _, _ in "ok" }
        router.get("/stats") { _, _ in try await catalogue.stats() }
        router.get("/books") { request, _ -> BookList in
            let limit = min(max(request.uri.queryParameters.get("limit", as: Int.self) ?? 20, 0), 500)
            let offset = max(request.uri.queryParameters.get("offset", as: Int.self) ?? 0, 0)
            return try await catalogue.list(author: request.uri.queryParameters.get("author"), limit: limit, offset: offset)
        }
        router.get("/books/{isbn}") { _, context -> Book in
            let isbn = try context.parameters.require("isbn")
            guard let book = try await catalogue.book(isbn: isbn) else { throw HTTPError(.notFound, message: "No book \(isbn).") }
            return book
        }
        router.post("/books") { request, context -> EditedResponse<Book> in
            let book = try await request.decode(as: Book.self, context: context)
            guard !book.isbn.isEmpty else { throw HTTPError(.badRequest, message: "A book needs an isbn.") }
            return EditedResponse(status: .created, response: try await catalogue.add(book))
        }
        router.put("/books/{isbn}") { request, context -> Book in
            let isbn = try context.parameters.require("isbn")
            let changes = try await request.decode(as: BookChanges.self, context: context)
            guard let book = try await catalogue.update(isbn: isbn, with: changes) else {
                throw HTTPError(.notFound, message: "No book \(isbn).")
            }
            return book
        }
        router.delete("/books/{isbn}") { _, context -> HTTPResponse.Status in
            let isbn = try context.parameters.require("isbn")
            guard try await catalogue.remove(isbn: isbn) else { throw HTTPError(.notFound, message: "No book \(isbn).") }
            return .noContent
        }
        return router
    }
}

/// Turns Skerry's typed errors into HTTP statuses: a taken ISBN is a conflict, invalid values a
/// bad request; anything else stays a server error (the container has logged it).
struct ErrorMapping: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as SkerryError {
            switch error.code {
            case .constraintViolation, .mergeConflict:
                throw HTTPError(.conflict, message: error.message)
            case .missingRequiredValue, .wrongValueType, .invalidArgument:
                throw HTTPError(.badRequest, message: error.message)
            default:
                throw error
            }
        }
    }
}
