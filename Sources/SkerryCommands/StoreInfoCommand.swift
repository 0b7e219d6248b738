#if CommandLineTool
    import ArgumentParser
    import Foundation
    import SkerryCore

    /// `skerry store info FILE`: what a store file holds, read-only.
    struct StoreInfoCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Show a store's model version hash, entities, row counts and indexes (read-only).")

        @Argument(help: "The SQLite store file.", completion: .file())
        var file: String

        func run() throws {
            let summary: StoreSummary
            do {
                summary = try StoreSummary(contentsOf: URL(fileURLWithPath: file))
            } catch {
                say("\(file): \(error.message)")
                throw ExitCode.failure
            }
            for line in Self.lines(for: summary) { say(line) }
        }

        static func lines(for summary: StoreSummary) -> [String] {
            var lines = [
                "store: \(summary.url.path)",
                "identifier: \(summary.storeIdentifier)",
                "model version hash: \(summary.modelVersionHash)",
                "format: \(summary.formatVersion), journal mode: \(summary.journalMode), file size: \(summary.fileSize) bytes",
                "entities: \(summary.entities.count), rows: \(summary.entities.reduce(0) { $0 + $1.rowCount })",
            ]
            for entity in summary.entities {
                lines.append("")
                lines.append("\(entity.name): \(entity.rowCount) row\(entity.rowCount == 1 ? "" : "s")")
                lines.append(
                    "  attributes: " + entity.attributes.map { "\($0.name) \($0.type)\($0.isOptional ? "?" : "")" }.joined(separator: ", "))
                if !entity.relationships.isEmpty {
                    lines.append(
                        "  relationships: "
                            + entity.relationships.map { relationship in
                                let kind = relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one"
                                return "\(relationship.name) (\(kind) \(relationship.destination))"
                            }.joined(separator: ", "))
                }
                for constraint in entity.uniquenessConstraints {
                    lines.append("  unique index (\(constraint.joined(separator: ", ")))")
                }
                for index in entity.indexes {
                    lines.append("  index (\(index.joined(separator: ", ")))")
                }
            }
            return lines
        }
    }
#endif
