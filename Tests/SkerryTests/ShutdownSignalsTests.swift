import Foundation
import Testing

@testable import Skerry

#if !os(Windows)
    /// The watcher behind `DataAccessLayer.saveOnShutdown`.
    @Suite struct ShutdownSignalsTests {
        @Test func theWatcherStopsWhenItsPipeEndsInsteadOfSpinning() throws {
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            var byte = UInt8(SIGTERM)
            try #require(write(ends[1], &byte, 1) == 1)
            close(ends[1]) // every write end closed: read returns 0
            let seen = Locked<[Int32]>([])
            let returned = DispatchSemaphore(value: 0)
            let readEnd = ends[0]
            Thread {
                ShutdownSignals.readSignals(from: readEnd) { seen.append($0) }
                returned.signal()
            }.start()
            // The deadline only guards against a hang (the loop used to spin on end of file forever).
            #expect(returned.wait(timeout: .now() + 30) == .success)
            #expect(seen.value == [SIGTERM])
            close(readEnd)
        }

        @Test func handlersAreInstalledWithSigactionAndStayInstalled() async {
            await #expect(processExitsWith: .success) {
                ShutdownSignals.setDisposition(SIGHUP) { _ in }
                var installed = sigaction()
                sigaction(SIGHUP, nil, &installed)
                // SA_RESTART: a signal does not make other threads' blocking calls fail; no SA_RESETHAND:
                // a second signal finds the handler still there.
                guard installed.sa_flags & SA_RESTART != 0, installed.sa_flags & Int32(bitPattern: UInt32(SA_RESETHAND)) == 0 else {
                    exit(1)
                }
                raise(SIGHUP)
                raise(SIGHUP) // would end the process if the handler were gone
                exit(0)
            }
        }
    }

    /// A value shared between threads, guarded by a lock.
    ///
    /// `@unchecked Sendable`: `stored` is only read or written while `lock` is held.
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value { lock.withLock { stored } }
        func append<Element>(_ element: Element) where Value == [Element] { lock.withLock { stored.append(element) } }
    }
#endif
