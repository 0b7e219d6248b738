import SkerryCore
import Testing

/// Expects `body` to throw a `SkerryError` with `code`; returns the error for further checks.
@discardableResult
public func expectError(
    _ code: SkerryError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> SkerryError? {
    do {
        try body()
        Issue.record("Expected SkerryError.\(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as SkerryError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("Expected SkerryError.\(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
