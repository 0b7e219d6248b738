import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SkerryCore
import SkerryPostgres
import SkerryServiceLifecycle

/// The service's command line: where to listen, where the store is.
@main
struct LibraryService: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library-service",
        abstract: "A library catalogue as an HTTP JSON API over a Skerry store (SQLite or PostgreSQL).",
        discussion: """
            Routes: GET /health, GET /books?author=&limit=&offset=, GET /books/{isbn}, POST /books, \
            PUT /books/{isbn}, DELETE /books/{isbn}, GET /stats. SIGTERM or SIGINT stops it gracefully: \
            requests in flight finish, then the pending view counts are saved.
            """)

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port; the chosen one is logged).")
    var port = 8080

    @Option(help: "The SQLite store file (created if missing).")
    var store = "library.sqlite"

    @Option(help: "A PostgreSQL connection string (libpq form or URI): the catalogue lives there instead of in --store.")
    var postgres: String?

    @Option(help: "Books to insert when the catalogue is empty.")
    var seed = 0

    @Option(help: "The log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel = "info"

    func run() async throws {
        let logger = {
            var logger = Logger(label: "library-service")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return logger
        }()
        let description = postgres.map { StoreDescription.postgres($0) } ?? StoreDescription(url: URL(fileURLWithPath: store))
        let catalogue = try Catalogue(store: description, logger: logger)
        try catalogue.seed(seed)

        let app = Application(
            router: Routes.router(catalogue),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "library-service"),
            onServerRunning: { channel in
                logger.notice(
                    "listening",
                    metadata: [
                        "address": "\(channel.localAddress.map { "\($0)" } ?? "?")",
                        "pid": "\(getpid())",
                    ])
            },
            logger: logger)
        // Shut down in reverse order: the HTTP server finishes its requests, then the counts are saved.
        let saving = SaveOnShutdownService(logger: logger) { try catalogue.views.flush() }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [saving, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.notice("stopped")
    }
}
