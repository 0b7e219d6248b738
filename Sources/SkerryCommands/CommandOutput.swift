import Foundation

/// Where the commands write: standard output by default; tests capture it by binding
/// ``CommandOutput/current`` around the command they run.
public struct CommandOutput: Sendable {
    private let writeLine: @Sendable (String) -> Void

    /// An output that hands each line to `writeLine`.
    public init(_ writeLine: @escaping @Sendable (String) -> Void) {
        self.writeLine = writeLine
    }

    /// Standard output, flushed after every line so that progress shows when it is a pipe or a
    /// file too.
    public static let standardOutput = CommandOutput { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8)) // unbuffered: one write per line
    }

    /// The output the commands of the current task write to.
    @TaskLocal public static var current: CommandOutput = .standardOutput

    /// Writes one line.
    public func line(_ text: String = "") { writeLine(text) }
}

/// Writes a line to the current output.
func say(_ text: String = "") { CommandOutput.current.line(text) }
