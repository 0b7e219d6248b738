// libFuzzer's entry points. SwiftPM names an executable's entry `FuzzPredicates_main`; it hands
// control to libFuzzer's driver, which calls `LLVMFuzzerTestOneInput` with each input.
import SkerryCore

/// Parses one input as a format string: it must parse or fail with `.invalidPredicateFormat`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let format = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try FetchPredicate(format: format, argumentArray: ["year", 1, 2.5])
    } catch {
        if error.code != .invalidPredicateFormat { fatalError("unexpected error \(error)") }
    }
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("FuzzPredicates_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { data, size in fuzzOne(data, size) }
}
