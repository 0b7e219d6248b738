#if CommandLineTool
    import ArgumentParser
    import Foundation
    import SkerryCore

    /// `skerry model check PATH`: loads every version of an Xcode model and reports what Skerry reads,
    /// what it ignores and what it cannot use.
    struct ModelCheckCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check an Xcode data model: what Skerry reads from each version, and what it ignores or cannot use.",
            discussion: "Exits with status 1 when a version cannot be used.")

        @Argument(help: "The model: a .xcdatamodeld package or a single .xcdatamodel version.", completion: .file())
        var path: String

        func run() throws {
            let url = URL(fileURLWithPath: path)
            let xcodeModel: XcodeModel
            do {
                xcodeModel = try XcodeModel(contentsOf: url)
            } catch {
                say("\(path): cannot be read: \(error.message)")
                throw ExitCode.failure
            }
            let count = xcodeModel.versionNames.count
            let current =
                xcodeModel.currentVersionName.isEmpty ? "no current version named" : "current \"\(xcodeModel.currentVersionName)\""
            say("\(url.lastPathComponent): \(count) version\(count == 1 ? "" : "s"), \(current)")
            var failures = 0
            for name in xcodeModel.versionNames {
                let current = name == xcodeModel.currentVersionName ? " (current)" : ""
                do {
                    let version = try xcodeModel.load(version: name)
                    say()
                    say("version \"\(name)\"\(current): usable, model version hash \(version.model.versionHash)")
                    for line in ModelReport.lines(for: version) { say("  " + line) }
                } catch {
                    failures += 1
                    say()
                    say("version \"\(name)\"\(current): CANNOT BE USED")
                    say("  \(error.message)")
                }
                let ignored = IgnoredModelElements.count(
                    inVersionAt: url.pathExtension == "xcdatamodel"
                        ? url
                        : url.appendingPathComponent("\(name).xcdatamodel"))
                if !ignored.isEmpty {
                    say("  ignored (does not change what a store holds): " + ignored.joined(separator: ", "))
                }
            }
            say()
            if failures > 0 {
                say("\(failures) of \(count) version\(count == 1 ? "" : "s") cannot be used.")
                throw ExitCode.failure
            }
            say("Every version can be used.")
        }
    }

    /// The lines describing what Skerry read from one model version.
    enum ModelReport {
        static func lines(for version: XcodeModelVersion) -> [String] {
            var lines: [String] = []
            for entity in version.model.entities {
                lines.append("entity \(entity.name)")
                for attribute in entity.attributes {
                    var text = "  \(attribute.name): \(attribute.type)\(attribute.isOptional ? "?" : "")"
                    if !attribute.defaultValue.isNull { text += " = \(attribute.defaultValue)" }
                    lines.append(text)
                }
                for relationship in entity.relationships {
                    let kind = relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one"
                    let inverse = relationship.inverseName.map { ", inverse \($0)" } ?? ""
                    lines.append(
                        "  \(relationship.name): \(kind) \(relationship.destinationEntityName)\(inverse), delete rule \(relationship.deleteRule)"
                    )
                }
                for constraint in entity.uniquenessConstraints {
                    lines.append("  unique (\(constraint.joined(separator: ", ")))")
                }
                for index in entity.indexes {
                    lines.append("  index (\(index.attributeNames.joined(separator: ", ")))")
                }
            }
            if !version.abstractEntityNames.isEmpty {
                lines.append("abstract entities: \(version.abstractEntityNames.joined(separator: ", "))")
            }
            for (name, members) in version.configurations.sorted(by: { $0.key < $1.key }) {
                lines.append("configuration \(name): \(members.joined(separator: ", "))")
            }
            let renames = version.renamingIdentifiers.filter { key, old in key.split(separator: ".").last.map(String.init) != old }
            for (key, old) in renames.sorted(by: { $0.key < $1.key }) {
                lines.append("renamed: \(key) was \(old)")
            }
            return lines
        }
    }
#endif
