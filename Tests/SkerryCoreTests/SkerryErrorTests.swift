import Foundation
import Testing

@testable import SkerryCore

/// Errors keep what caused them, and match by code in `catch` patterns.
@Suite struct SkerryErrorTests {
    struct StepFailure: Error, Equatable {
        let row: String
    }

    @Test func aCodeIsACatchPattern() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let caught: String = try context.performAndWait {
            _ = try context.insert(entityName: "Book") // no title: required
            do {
                try context.save()
                return "saved"
            } catch SkerryError.Code.constraintViolation {
                return "constraint"
            } catch SkerryError.Code.missingRequiredValue {
                return "missing"
            }
        }
        #expect(caught == "missing")
    }

    @Test func aSQLiteResultCodeIsACatchPatternForSkerryErrorsToo() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("Junk.sqlite")
        try Data(repeating: 0x5A, count: 8192).write(to: file)
        let stack = PersistentStack(name: "Junk", model: Fixtures.model())
        stack.persistentStoreDescriptions = [StoreDescription(url: file)]
        var matched: [String] = []
        do {
            try stack.loadPersistentStores()
        } catch SQLiteError.ResultCode.constraint {
            matched.append("constraint")
        } catch SQLiteError.ResultCode.notADatabase {
            matched.append("notADatabase")
        } catch {
            matched.append("other: \(error)")
        }
        #expect(matched == ["notADatabase"])
        #expect(SQLiteError.ResultCode.constraint.matches(.constraintUnique)) // a primary code covers its extended codes
        #expect(!SQLiteError.ResultCode.constraintUnique.matches(.constraintNotNull))
        #expect(SQLiteError.ResultCode.busy.description.contains("locked")) // SQLite's own name
    }

    @Test func aMigrationStepsOwnErrorIsKeptUnderneath() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Library.sqlite")
        do {
            let stack = PersistentStack(name: "Library", model: LibraryVersions.v1)
            stack.persistentStoreDescriptions = [StoreDescription(url: url)]
            try stack.loadPersistentStores()
            let context = stack.newBackgroundContext()
            try context.performAndWait { try LibraryVersions.populate(context) }
        }
        var description = StoreDescription(url: url)
        description.migrationPlan = MigrationPlan(
            versions: [LibraryVersions.v1, LibraryVersions.v2],
            steps: [
                MigrationStep(
                    from: 0,
                    transformRow: { entity, old, _ in
                        if entity == "Book", case .string(let title) = old["title"] { throw StepFailure(row: title) }
                    })
            ])
        let stack = PersistentStack(name: "Library", model: LibraryVersions.v2)
        stack.persistentStoreDescriptions = [description]
        let error = expectError(.modelMismatch) { try stack.loadPersistentStores() }
        #expect(error?.underlyingError is StepFailure)
        #expect(error?.code != .sqlite)
    }

    @Test func aForeignErrorIsWrappedWithItsOwnCodeAndKept() {
        let wrapped = SkerryError.converting(StepFailure(row: "Dune"))
        #expect(wrapped.code == .underlyingError)
        #expect(wrapped.underlyingError as? StepFailure == StepFailure(row: "Dune"))
        #expect(wrapped.sqlite == nil)
        let sqlite = SQLiteError(extendedResultCode: SQLiteError.ResultCode.busyTimeout.rawValue, message: "database is locked")
        let fromSQLite = SkerryError.converting(sqlite)
        #expect(fromSQLite.code == .sqlite && fromSQLite.underlyingError as? SQLiteError == sqlite)
        #expect(sqlite.code == .busyTimeout && sqlite.code.primaryResultCode == .busy)
    }
}
