import Foundation

/// The process's resident memory, from /proc/self/status (Linux); 0 where it is not available.
enum ProcessMemory {
    /// Resident memory now, in bytes.
    static var resident: Int { field("VmRSS:") }
    /// The most resident memory so far, in bytes.
    static var peakResident: Int { field("VmHWM:") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) })
        else { return 0 }
        let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
        return kilobytes * 1024
    }
}
