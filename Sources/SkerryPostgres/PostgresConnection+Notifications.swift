import CLibPQ
import Foundation
import SkerryCore

extension PostgresConnection {
    /// Starts listening on `channel` (`LISTEN`): the server queues the payloads of every
    /// `NOTIFY` on it committed from now on, for ``waitForNotifications(timeout:)``.
    func listen(_ channel: String) throws(PostgresError) {
        try execute("LISTEN \(SQLBuilder.quote(channel))")
    }

    /// Waits up to `timeout` seconds for notifications and returns the payloads received (none
    /// when the time ran out).
    /// - Throws: ``PostgresError`` when the connection broke.
    func waitForNotifications(timeout: Double) throws(PostgresError) -> [String] {
        var payloads = try takeNotifications()
        guard payloads.isEmpty else { return payloads }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw error(nil, sql: nil) }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(max(0, timeout * 1000)))
        guard ready > 0 else { return [] } // timed out (or interrupted by a signal: the caller waits again)
        payloads = try takeNotifications()
        return payloads
    }

    /// Reads what the server sent and returns the notifications it carried.
    private func takeNotifications() throws(PostgresError) -> [String] {
        guard PQconsumeInput(handle) == 1 else { throw error(nil, sql: nil) }
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
        return payloads
    }
}
