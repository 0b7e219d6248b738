// The comparative benchmarks, plain runner: every scenario x shape x implementation, each run
// `--repeat` times on a fresh in-memory database (setup untimed), medians, and each
// implementation's median divided by raw SQLite's from the same run.
//
//     swift run -c release skerry-bench [--quick] [--repeat N] [--markdown]
//         [--insert N] [--fetch N] [--update N] [--by-id N] [--by-id-table N] [--delete N]
//         [--scenarios insert,fetch,...] [--shapes int10,mixed] [--implementations raw,engine,...]
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
                        [--scenarios LIST] [--shapes LIST] [--implementations LIST]
      --quick             tiny sizes, one run each (CI smoke)
      --repeat N          runs per scenario, shape and implementation; the median is reported (default 5)
      --markdown          print Markdown tables only (no progress, no header)
      scenarios:          \(Scenario.allCases.map(\.rawValue).joined(separator: ","))
      shapes:             \(Shape.allCases.map(\.rawValue).joined(separator: ","))
      implementations:    \(Implementation.allCases.map(\.rawValue).joined(separator: ","))
      default sizes:      insert 50,000; fetch 200,000; update 50,000; by-id 10,000 of 50,000; delete 50,000
    """

func list<T: RawRepresentable & Equatable>(_ text: String, _ all: [T]) -> [T] where T.RawValue == String {
    text.split(separator: ",").map { name in
        guard let value = T(rawValue: String(name)) else { fail("unknown name '\(name)'\n\(usage)") }
        return value
    }.sorted { a, b in all.firstIndex(of: a)! < all.firstIndex(of: b)! }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var sizes = arguments.contains("--quick") ? Sizes.quick : Sizes.full
var repeats = arguments.contains("--quick") ? 1 : 5
var markdownOnly = false
var scenarios = Scenario.allCases
var shapes = Shape.allCases
var implementations = Implementation.allCases
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
    case "--implementations": implementations = list(value(), Implementation.allCases)
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

@MainActor func progress(_ text: String) {
    if !markdownOnly { FileHandle.standardError.write(Data(text.utf8)) }
}

struct Result {
    let scenario: Scenario
    let shape: Shape
    var medians: [Implementation: Double]
}

var results: [Result] = []
let started = DispatchTime.now().uptimeNanoseconds
for scenario in scenarios {
    for shape in shapes {
        progress("\(scenario.title(sizes)), \(shape.title): ")
        var times: [Implementation: [Double]] = [:]
        for run in 0..<repeats {
            // Rotated each run, so that no implementation always runs first (or right after another).
            let order = (0..<implementations.count).map { implementations[($0 + run) % implementations.count] }
            for implementation in order {
                do {
                    let work = try prepare(scenario, implementation, shape, sizes)
                    let start = DispatchTime.now().uptimeNanoseconds
                    try work.run()
                    let end = DispatchTime.now().uptimeNanoseconds
                    try work.verify()
                    times[implementation, default: []].append(Double(end - start) / 1e9)
                } catch {
                    fail("\(scenario.rawValue) \(shape.rawValue) \(implementation.rawValue): \(error)")
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

let others = implementations.filter { $0 != .raw }
if !markdownOnly {
    print(
        """
        Skerry comparative benchmarks: in-memory databases, release build, SQLite \(sqliteVersion), \
        \(ProcessInfo.processInfo.activeProcessorCount) cores; median of \(repeats) run\(repeats == 1 ? "" : "s") \
        per cell (\(String(format: "%.0f", elapsed)) s in all).
        """)
    print("")
}
if implementations.contains(.raw) {
    if !markdownOnly { print("Median time / raw SQLite median (same run):") }
    print("")
    print("| scenario | shape | raw SQLite | " + others.map(\.title).joined(separator: " | ") + " |")
    print("|---|---|---:|" + others.map { _ in "---:|" }.joined())
    for result in results {
        let raw = result.medians[.raw]!
        let ratios = others.map { String(format: "%.2fx", result.medians[$0]! / raw) }
        print(
            "| \(result.scenario.title(sizes)) | \(result.shape.title) | \(milliseconds(raw)) | " + ratios.joined(separator: " | ") + " |")
    }
    print("")
}
if !markdownOnly { print("Median times:") }
print("")
print("| scenario | shape | " + implementations.map(\.title).joined(separator: " | ") + " |")
print("|---|---|" + implementations.map { _ in "---:|" }.joined())
for result in results {
    let cells = implementations.map { milliseconds(result.medians[$0]!) }
    print("| \(result.scenario.title(sizes)) | \(result.shape.title) | " + cells.joined(separator: " | ") + " |")
}
