import Foundation
import SkerryCore
import SkerryPostgres

/// `--move`: the study's SQLite store (M books by M/20 authors) moves into PostgreSQL with
/// `StoreCoordinator.migratePersistentStore(_:to:)`; prints the copy's wall-clock time and the
/// process's resident memory before and at its peak, and checks that every object arrived.
func runMove(_ options: StudyOptions, output: URL) throws {
    guard let postgres = options.postgres else { throw StudyError("--move needs --postgres CONNINFO") }
    let file = output.appendingPathComponent("move.sqlite")
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
    print("Skerry store move: \(options.objects) books by \(max(1, options.objects / 20)) authors, SQLite -> PostgreSQL")
    try populate(StoreDescription(url: file), objects: options.objects, progress: progress("  store"))
    let stack = try studyStack(StoreDescription(url: file))
    let coordinator = stack.persistentStoreCoordinator
    let count = { (entity: String) throws -> Int in
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest(entityName: entity)) }
    }
    let objects = try count("Book") + count("Author")
    // A schema of its own, new: the destination of a move holds no objects.
    let schema = options.schema + "_move_\(Int(Date().timeIntervalSince1970))"
    let residentBefore = ProcessMemory.resident
    let start = DispatchTime.now().uptimeNanoseconds
    try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: .postgres(postgres, schema: schema))
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let moved = try count("Book") + count("Author")
    guard moved == objects else { throw StudyError("\(moved) of \(objects) objects arrived") }
    print(
        String(
            format: "moved %d objects (%d links) in %.2f s: %.0f objects/s", objects, options.objects, seconds, Double(objects) / seconds))
    print("resident memory: \(residentBefore / 1_048_576) MB before the move, peak \(ProcessMemory.peakResident / 1_048_576) MB")
    print("schema: \(schema) (drop it with DROP SCHEMA \(schema) CASCADE)")
}
