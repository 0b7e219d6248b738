// The comparative benchmarks, plain runner: every scenario x shape x implementation, each run
// `--repeat` times on a fresh in-memory database (setup untimed), medians, and each
// implementation's median divided by raw SQLite's from the same run.
//
//     swift run -c release skerry-bench [--quick] [--repeat N] [--markdown]
//         [--insert N] [--fetch N] [--update N] [--by-id N] [--by-id-table N] [--delete N]
//         [--scenarios insert,fetch,...] [--shapes int10,mixed] [--implementations raw,engine,...]
//         [--postgres CONNINFO]
//
// With `--postgres`, the same scenarios run against a PostgreSQL server instead: raw libpq (the
// baseline), the Skerry engine and typed layer on the PostgreSQL store, and Fluent when the
// package is built with `--traits Fluent` (scripts/postgres-benchmark.sh does all of it).
//
// The runs of one scenario and shape are interleaved (raw, GRDB, engine, typed, raw, ...), so
// that a load that comes and goes on a shared machine touches every implementation alike.
import BenchSupport
import Dispatch
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("skerry-bench: \(message)\n".utf8))
    exit(2)
}

let usage = """
    usage: skerry-bench [--quick] [--repeat N] [--markdown]
                        [--insert N] [--fetch N] [--update N] [--by-id N] [--by-id-table N] [--delete N]
                        [--scenarios LIST] [--shapes LIST] [--implementations LIST] [--postgres CONNINFO]
      --quick             tiny sizes, one run each (CI smoke)
      --repeat N          runs per scenario, shape and implementation; the median is reported (default 5)
      --markdown          print Markdown tables only (no progress, no header)
      scenarios:          \(Scenario.allCases.map(\.rawValue).joined(separator: ","))
      shapes:             \(Shape.allCases.map(\.rawValue).joined(separator: ","))
      implementations:    \(Implementation.allCases.map(\.rawValue).joined(separator: ","))
      default sizes:      insert 50,000; fetch 200,000; update 50,000; by-id 10,000 of 50,000; delete 50,000
      --postgres CONNINFO against this PostgreSQL server (a libpq connection string or URI) instead;
                          implementations \(PostgresImplementation.allCases.map(\.rawValue).joined(separator: ","))\
    \(PostgresImplementation.fluentIsBuilt ? "" : " (fluent: build with --traits Fluent)");
                          default sizes: insert 10,000; fetch 40,000; update 10,000; by-id 2,000 of 10,000; delete 10,000
    """

func list<T: RawRepresentable & Equatable>(_ text: String, _ all: [T]) -> [T] where T.RawValue == String {
    text.split(separator: ",").map { name in
        guard let value = T(rawValue: String(name)) else { fail("unknown name '\(name)'\n\(usage)") }
        return value
    }.sorted { a, b in all.firstIndex(of: a)! < all.firstIndex(of: b)! }
}

var arguments = Array(CommandLine.arguments.dropFirst())
/// The PostgreSQL server, when `--postgres` is given (the mode of the whole run).
let postgres: PostgresBenchServer? = arguments.firstIndex(of: "--postgres").map { index in
    guard index + 1 < arguments.count else { fail("--postgres needs a connection string\n\(usage)") }
    return PostgresBenchServer(connectionString: arguments[index + 1])
}
var sizes = arguments.contains("--quick") ? Sizes.quick : postgres != nil ? Sizes.postgres : Sizes.full
var repeats = arguments.contains("--quick") ? 1 : 5
var markdownOnly = false
var scenarios = Scenario.allCases
var shapes = Shape.allCases
var implementationsText: String?
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    func value() -> String {
        guard !arguments.isEmpty else { fail("\(option) needs a value\n\(usage)") }
        return arguments.removeFirst()
    }
    func number() -> Int {
        let text = value()
        guard let number = Int(text), number > 0 else { fail("\(option) needs a positive number, not '\(text)'") }
        return number
    }
    switch option {
    case "--quick": break
    case "--markdown": markdownOnly = true
    case "--repeat": repeats = number()
    case "--scenarios": scenarios = list(value(), Scenario.allCases)
    case "--shapes": shapes = list(value(), Shape.allCases)
    case "--implementations": implementationsText = value()
    case "--postgres": _ = value()
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        let name = String(option.dropFirst(2))
        guard option.hasPrefix("--"), Sizes.optionNames.contains(name) else { fail("unknown option '\(option)'\n\(usage)") }
        _ = sizes.set(name, number())
    }
}
if scenarios.contains(.fetchByID) && sizes.fetchByID > sizes.fetchByIDTable {
    fail("--by-id (\(sizes.fetchByID)) must not exceed --by-id-table (\(sizes.fetchByIDTable))")
}

/// One column of the table: an implementation, its title, how to prepare a run.
struct Contender {
    let name: String
    let title: String
    let prepare: (Scenario, Shape, Sizes) throws -> Work
}

/// The implementations of the run; the first is the baseline the ratios divide by.
let contenders: [Contender]
if let postgres {
    var chosen = implementationsText.map { list($0, PostgresImplementation.allCases) } ?? PostgresImplementation.available
    if !PostgresImplementation.fluentIsBuilt {
        if chosen.contains(.fluent) { fail("this build has no Fluent: build with `--traits Fluent`") }
        chosen.removeAll { $0 == .fluent }
    }
    contenders = chosen.map { implementation in
        Contender(name: implementation.rawValue, title: implementation.title) { scenario, shape, sizes in
            try postgres.prepare(scenario, implementation, shape, sizes)
        }
    }
} else {
    contenders = (implementationsText.map { list($0, Implementation.allCases) } ?? Implementation.allCases).map { implementation in
        Contender(name: implementation.rawValue, title: implementation.title) { scenario, shape, sizes in
            try prepare(scenario, implementation, shape, sizes)
        }
    }
}
let baseline =
    contenders.first?.name == (postgres != nil ? PostgresImplementation.raw.rawValue : Implementation.raw.rawValue)
    ? contenders.first : nil

@MainActor func progress(_ text: String) {
    if !markdownOnly { FileHandle.standardError.write(Data(text.utf8)) }
}

struct Result {
    let scenario: Scenario
    let shape: Shape
    var medians: [String: Double]
}

var results: [Result] = []
let started = DispatchTime.now().uptimeNanoseconds
for scenario in scenarios {
    for shape in shapes {
        progress("\(scenario.title(sizes)), \(shape.title): ")
        var times: [String: [Double]] = [:]
        for run in 0..<repeats {
            // Rotated each run, so that no implementation always runs first (or right after another).
            let order = (0..<contenders.count).map { contenders[($0 + run) % contenders.count] }
            for contender in order {
                do {
                    let work = try contender.prepare(scenario, shape, sizes)
                    let start = DispatchTime.now().uptimeNanoseconds
                    try work.run()
                    let end = DispatchTime.now().uptimeNanoseconds
                    try work.verify()
                    times[contender.name, default: []].append(Double(end - start) / 1e9)
                } catch {
                    fail("\(scenario.rawValue) \(shape.rawValue) \(contender.name): \(error)")
                }
            }
            progress(".")
        }
        progress("\n")
        results.append(Result(scenario: scenario, shape: shape, medians: times.mapValues { $0.sorted()[$0.count / 2] }))
    }
}
let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9

/// Milliseconds, three significant digits or more.
func milliseconds(_ value: Double) -> String {
    let ms = value * 1e3
    let format = ms >= 100 ? "%.0f ms" : ms >= 10 ? "%.1f ms" : ms >= 1 ? "%.2f ms" : "%.3f ms"
    return String(format: format, ms)
}

let others = contenders.filter { $0.name != baseline?.name }
#if DEBUG
    let buildKind = "debug build (a smoke test: times say nothing of speed)"
#else
    let buildKind = "release build"
#endif
if !markdownOnly {
    let setting = postgres.map { "PostgreSQL (\($0.versions))" } ?? "in-memory databases, SQLite \(sqliteVersion)"
    print(
        """
        Skerry comparative benchmarks: \(setting), \(buildKind), \
        \(ProcessInfo.processInfo.activeProcessorCount) cores; median of \(repeats) run\(repeats == 1 ? "" : "s") \
        per cell (\(String(format: "%.0f", elapsed)) s in all).
        """)
    print("")
}
if let baseline {
    if !markdownOnly { print("Median time / \(baseline.title) median (same run):") }
    print("")
    print("| scenario | shape | \(baseline.title) | " + others.map(\.title).joined(separator: " | ") + " |")
    print("|---|---|---:|" + others.map { _ in "---:|" }.joined())
    for result in results {
        let base = result.medians[baseline.name]!
        let ratios = others.map { String(format: "%.2fx", result.medians[$0.name]! / base) }
        print(
            "| \(result.scenario.title(sizes)) | \(result.shape.title) | \(milliseconds(base)) | " + ratios.joined(separator: " | ") + " |")
    }
    print("")
}
if !markdownOnly { print("Median times:") }
print("")
print("| scenario | shape | " + contenders.map(\.title).joined(separator: " | ") + " |")
print("|---|---|" + contenders.map { _ in "---:|" }.joined())
for result in results {
    let cells = contenders.map { milliseconds(result.medians[$0.name]!) }
    print("| \(result.scenario.title(sizes)) | \(result.shape.title) | " + cells.joined(separator: " | ") + " |")
}
