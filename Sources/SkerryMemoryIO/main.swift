// The main job: what `cleanUpAfterExecution` trades, measured.
//
//     swift run -c release skerry-memory-io [OUTPUT-FOLDER] [--objects M] [--performs K] [--working-set W]
//         [--postgres CONNINFO [--schema NAME]]
//
// A PersistentContainer over a SQLite file (or, with --postgres, a PostgreSQL store in schema NAME,
// default skerry_memory_io, emptied first) with M books by M/20 authors runs K performs, each
// touching one author of a working set of W (reached by a fetch) and their books (reached through
// the relationship): once with cleanUpAfterExecution true, once false, each in its own process so
// that peak resident memory is the variant's own. It prints a table and writes memory-io.csv and
// memory-io.svg (memory and rows read over the performs, both variants) to the output folder.
//
//     swift run -c release skerry-memory-io --move --postgres CONNINFO [--objects M] [--schema NAME]
//
// moves a SQLite store of M books by M/20 authors into a new PostgreSQL schema (NAME_move_TIME)
// with migratePersistentStore and prints how long the copy took and the resident memory (Move.swift).
import Foundation
import Skerry
import SkerryCore

func parseOptions(_ arguments: [String]) throws -> StudyOptions {
    var options = StudyOptions()
    var index = 0
    func value() throws -> String {
        index += 1
        guard index < arguments.count else { throw StudyError("\(arguments[index - 1]) needs a value") }
        return arguments[index]
    }
    func number() throws -> Int {
        let text = try value()
        guard let parsed = Int(text), parsed > 0 else { throw StudyError("\(arguments[index - 1]) needs a positive number, not \(text)") }
        return parsed
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--objects": options.objects = try number()
        case "--performs": options.performs = try number()
        case "--working-set": options.workingSet = try number()
        case "--output": options.output = URL(fileURLWithPath: try value(), isDirectory: true)
        case "--variant": options.variant = try value()
        case "--store": options.store = URL(fileURLWithPath: try value())
        case "--postgres": options.postgres = try value()
        case "--schema": options.schema = try value()
        case "--move": options.move = true
        case "--help", "-h":
            print(
                "usage: skerry-memory-io [OUTPUT-FOLDER] [--objects M] [--performs K] [--working-set W] [--postgres CONNINFO [--schema NAME]]"
            )
            print("  --postgres CONNINFO  run on a PostgreSQL store (a libpq connection string or URI) instead of a SQLite file")
            print("  --schema NAME        the PostgreSQL schema of its tables (default skerry_memory_io; its rows are replaced)")
            print("  --move               move a SQLite store of M books into a new PostgreSQL schema instead (needs --postgres)")
            exit(0)
        case let argument where !argument.hasPrefix("-") && options.output == nil:
            options.output = URL(fileURLWithPath: argument, isDirectory: true)
        case let argument:
            throw StudyError("unknown argument \(argument); see --help")
        }
        index += 1
    }
    return options
}

struct StudyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Shows progress: on a terminal one line, rewritten; otherwise (a pipe, a CI log) a line at each
/// tenth of the way, so that a long run shows it is alive without flooding the log.
func progress(_ label: String) -> (Int, Int) -> Void {
    let interactive = isatty(STDERR_FILENO) == 1
    return { done, total in
        if interactive {
            FileHandle.standardError.write(Data("\r\(label): \(done)/\(total)   \(done == total ? "\n" : "")".utf8))
        } else if done == total || (done * 10 / total) != ((done - 1) * 10 / total) {
            FileHandle.standardError.write(Data("\(label): \(done)/\(total)\n".utf8))
        }
    }
}

/// Runs one variant in a child process and reads its samples and peak memory.
func runChild(_ variant: String, options: StudyOptions, store: URL, output: URL) throws -> VariantResult {
    let samplesURL = output.appendingPathComponent("samples-\(variant).csv")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    process.arguments =
        [
            "--variant", variant, "--store", store.path, "--performs", String(options.performs),
            "--working-set", String(options.workingSet), "--output", samplesURL.path,
        ]
        + (options.postgres.map { ["--postgres", $0, "--schema", options.schema] } ?? [])
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let report = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0, let peak = Int(report.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw StudyError("the \(variant) run failed (status \(process.terminationStatus))")
    }
    let samples = parseSamples(try String(contentsOf: samplesURL, encoding: .utf8))
    let name = variant == "cleanup" ? "cleanUpAfterExecution: true" : "cleanUpAfterExecution: false"
    return VariantResult(name: name, samples: samples, peakResidentBytes: peak)
}

do {
    let options = try parseOptions(Array(CommandLine.arguments.dropFirst()))
    if let variant = options.variant, let store = options.store, let samplesURL = options.output {
        // A child: one variant; samples to a file, peak resident memory to standard output.
        let samples = try runVariant(
            cleanUp: variant == "cleanup", store: options.storeDescription(file: store), performs: options.performs,
            workingSet: options.workingSet, progress: progress("  \(variant)"))
        try samplesCSV(samples).write(to: samplesURL, atomically: true, encoding: .utf8)
        print(ProcessMemory.peakResident)
        exit(0)
    }
    let output =
        options.output
        ?? FileManager.default.temporaryDirectory
        .appendingPathComponent("skerry-memory-io-\(Int(Date().timeIntervalSince1970))", isDirectory: true)
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    if options.move {
        try runMove(options, output: output)
        exit(0)
    }
    let store = output.appendingPathComponent("study.sqlite")
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
    print("Skerry memory versus I/O: \(options.objects) books, \(options.performs) performs, working set of \(options.workingSet) authors")
    if options.postgres != nil {
        print("Store: \(options.storeDescription(file: store))")
    }
    print("Output: \(output.path)")
    try populate(options.storeDescription(file: store), objects: options.objects, progress: progress("  store"))
    let results = try ["cleanup", "cache"].map { try runChild($0, options: options, store: store, output: output) }
    print(table(results))
    try combinedCSV(results).write(to: output.appendingPathComponent("memory-io.csv"), atomically: true, encoding: .utf8)
    let title =
        (options.postgres != nil ? "PostgreSQL, " : "")
        + "cleanUpAfterExecution: \(options.objects) books, \(options.performs) performs, working set \(options.workingSet)"
    try chartSVG(results, title: title).write(to: output.appendingPathComponent("memory-io.svg"), atomically: true, encoding: .utf8)
    print("Wrote memory-io.csv and memory-io.svg")
} catch {
    FileHandle.standardError.write(Data("skerry-memory-io: \(error)\n".utf8))
    exit(1)
}
