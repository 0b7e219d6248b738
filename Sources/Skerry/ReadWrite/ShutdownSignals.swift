import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The write end of the self-pipe the signal handler writes to.
// `nonisolated(unsafe)`: set once, under `ShutdownSignals.lock`, before any handler that reads it
// is installed, and never changed after; the handler only reads it (an async-signal-safe load).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The signal handler: writes the signal's number to the self-pipe (`write` is async-signal-safe).
private func writeSignalToPipe(_ number: Int32) {
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWriteEnd, &byte, 1)
}

/// Runs a handler when the process receives one of some signals, then lets the signal take its
/// default effect (ending the process).
///
/// A signal handler may do almost nothing safely, so the handler only writes the signal's number
/// to a pipe; a watcher thread reads it, runs the work (a save), restores the default action and
/// raises the signal again. There is one per process: ``shared``.
///
/// `@unchecked Sendable`: `work`, `started` and `watcher` are only touched while `lock` is held.
final class ShutdownSignals: @unchecked Sendable {
    /// The process's one instance (signal handlers are per process).
    static let shared = ShutdownSignals()

    private let lock = NSLock()
    private var started = false
    private var work: [Int32: @Sendable () -> Void] = [:]
    /// The watcher thread, kept: a started `Thread` that nothing references may be released (and
    /// its block with it) before it runs.
    private var watcher: Thread?

    /// Installs `handler` for those of `signals` that are shutdown signals (SIGTERM, SIGINT,
    /// SIGHUP, SIGQUIT), replacing an earlier handler for the same signals.
    func install(_ signals: [Int32], _ handler: @escaping @Sendable () -> Void) {
        lock.withLock {
            if !started {
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { return }
                signalPipeWriteEnd = ends[1]
                started = true
                let readEnd = ends[0]
                let thread = Thread { self.watch(readEnd) }
                thread.name = "skerry.shutdown-signals"
                watcher = thread
                thread.start()
            }
            for number in signals where Self.supportedSignals.contains(number) {
                work[number] = handler
                Self.setDisposition(number, handler: writeSignalToPipe)
            }
        }
    }

    /// The signals a shutdown handler can be installed for.
    static let supportedSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT]

    /// Installs `handler` for `number` with `sigaction` (`signal` leaves the semantics to the
    /// platform): the handler stays installed after it runs, system calls it interrupts restart.
    /// A nil handler restores the default action.
    static func setDisposition(_ number: Int32, handler: (@convention(c) (Int32) -> Void)?) {
        var action = sigaction()
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        #if canImport(Darwin)
            action.__sigaction_u.__sa_handler = handler ?? SIG_DFL
        #else
            action.__sigaction_handler.sa_handler = handler ?? SIG_DFL
        #endif
        sigaction(number, &action, nil)
    }

    private func watch(_ readEnd: Int32) {
        // Threads inherit their creator's signal mask; this one accepts the shutdown signals, so
        // that a signal sent to the process reaches it even where every other thread blocks them.
        var accepted = sigset_t()
        sigemptyset(&accepted)
        for number in Self.supportedSignals { sigaddset(&accepted, number) }
        pthread_sigmask(SIG_UNBLOCK, &accepted, nil)
        Self.readSignals(from: readEnd) { number in
            let handler = lock.withLock { work[number] }
            handler?()
            Self.setDisposition(number, handler: nil)
            raise(number)
        }
    }

    /// Reads signal numbers from the pipe's read end and hands each to `handle`, until the pipe
    /// ends (`read` returns 0: every write end is closed) or fails with anything but an
    /// interruption. Never spins: each turn blocks in `read`.
    static func readSignals(from readEnd: Int32, _ handle: (Int32) -> Void) {
        while true {
            var byte: UInt8 = 0
            let count = read(readEnd, &byte, 1)
            if count == 1 {
                handle(Int32(byte))
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return // end of the pipe, or an error that would repeat
            }
        }
    }
}
