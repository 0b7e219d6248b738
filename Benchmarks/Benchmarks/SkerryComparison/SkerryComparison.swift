import BenchSupport
// The comparative benchmarks in ordo-one/benchmark: wall clock, throughput, mallocs and peak
// resident memory for every scenario x shape x implementation (the scenarios of `BenchSupport`,
// the same as `skerry-bench`'s). Each iteration builds and fills a fresh in-memory database
// before `startMeasurement()` and checks it after `stopMeasurement()`; only the scenario's work is
// measured. Throughput counts whole scenario runs per second.
//
//     swift package --disable-sandbox benchmark                          # everything, full sizes
//     swift package --disable-sandbox benchmark --filter 'fetch .*int10'
//     SKERRY_BENCH_QUICK=1 swift package --disable-sandbox benchmark     # tiny sizes
//
// Sizes come from the environment (see `Sizes.fromEnvironment()`); `SKERRY_BENCH_ITERATIONS`
// sets the iterations per benchmark (default 5, after one warm-up).
import Benchmark
import Foundation

let benchmarks: @Sendable () -> Void = {
    let sizes = Sizes.fromEnvironment()
    let iterations = ProcessInfo.processInfo.environment["SKERRY_BENCH_ITERATIONS"].flatMap { Int($0) } ?? 5
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 1,
        maxDuration: .seconds(60),
        maxIterations: iterations
    )
    for scenario in Scenario.allCases {
        for shape in Shape.allCases {
            for implementation in Implementation.allCases {
                let name = "\(scenario.rawValue) \(shape.rawValue) \(implementation.rawValue)"
                Benchmark(name, configuration: configuration) { benchmark in
                    let work = try prepare(scenario, implementation, shape, sizes)
                    // The setup's freed memory goes back to the system first, so that the peak
                    // resident size is the scenario's own, not the setup's (a prefill of 200,000
                    // objects through the implementation itself).
                    releaseFreeMemory()
                    benchmark.startMeasurement()
                    try work.run()
                    benchmark.stopMeasurement()
                    try work.verify()
                }
            }
        }
    }
}
