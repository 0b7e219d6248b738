import Foundation
import SkerryCore

/// Records the SQL a stack's stores run, through the public trace hook
/// (``PersistentStack/addEventObserver(statements:_:)`` with `.all`), as GRDB's tests record
/// `sqlQueries`: run the code under test inside ``record(_:)`` and compare the statements.
final class SQLRecorder: Sendable {
    private let statements = Locked<[StatementTrace]>([])
    private let observation: EventObservation

    init(_ stack: PersistentStack) {
        let statements = statements
        observation = stack.addEventObserver(statements: .all) { event in
            if case .statement(let trace) = event { statements.append(trace) }
        }
    }

    deinit { observation.cancel() }

    /// Runs `body` and returns the SQL of the statements the stores ran meanwhile, in order.
    func record(_ body: () throws -> Void) rethrows -> [String] {
        try traces(body).map(\.sql)
    }

    /// Runs `body` and returns the traces of the statements the stores ran meanwhile, in order.
    func traces(_ body: () throws -> Void) rethrows -> [StatementTrace] {
        statements.set([])
        try body()
        return statements.value
    }
}
