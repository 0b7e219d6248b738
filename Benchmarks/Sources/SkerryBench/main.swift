// Bulk insert and bulk fetch, raw SQLite C API versus the Skerry engine, in-memory databases,
// 10 integer columns. Prints each scenario's median time and its ratio to raw SQLite.
//
//     swift run -c release skerry-bench [--repeat N] [--insert N] [--fetch N]
import Foundation
import SkerryCore

func argument(_ name: String, default value: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count,
          let parsed = Int(CommandLine.arguments[index + 1]) else { return value }
    return parsed
}

let repeats = argument("--repeat", default: 5)
let insertCount = argument("--insert", default: 50_000)
let fetchCount = argument("--fetch", default: 200_000)

/// Median wall time of `repeats` runs of `body`; `setUp` runs untimed before each.
func measure<State>(_ setUp: () throws -> State, _ body: (State) throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<repeats {
        let state = try setUp()
        let start = DispatchTime.now().uptimeNanoseconds
        try body(state)
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return times.sorted()[times.count / 2]
}

let columns = (0..<10).map { "i\($0)" }
let model = try ObjectModel(entities: [
    EntityDescription(name: "Item", attributes: columns.map { AttributeDescription($0, .integer64) }),
])

func engineStack(prefill: Int) throws -> PersistentStack {
    let stack = PersistentStack(name: "Bench", model: model)
    stack.persistentStoreDescriptions = [.inMemory()]
    try stack.loadPersistentStores()
    if prefill > 0 { try engineInsert(stack, prefill) }
    return stack
}

func engineInsert(_ stack: PersistentStack, _ count: Int) throws {
    let context = stack.newBackgroundContext()
    try context.performAndWait {
        let entity = model.entity(named: "Item")!
        for row in 0..<count {
            let item = try context.insert(entity)
            for column in 0..<10 { try item.setValue(.int(Int64(row + column)), at: column) }
        }
        try context.save()
    }
}

var results: [(String, Double, Double)] = []

let rawInsert = measure({ RawSQLite() }) { raw in raw.insert(insertCount); raw.close() }
let engineInsertTime = try measure({ try engineStack(prefill: 0) }) { stack in try engineInsert(stack, insertCount) }
results.append(("insert \(insertCount) rows", rawInsert, engineInsertTime))

let rawFetch = measure({ () -> RawSQLite in let raw = RawSQLite(); raw.insert(fetchCount); return raw }) { raw in
    precondition(raw.fetchAll().count == fetchCount)
    raw.close()
}
let engineFetch = try measure({ try engineStack(prefill: fetchCount) }) { stack in
    let context = stack.newBackgroundContext()
    try context.performAndWait {
        var sum: Int64 = 0
        let objects = try context.fetch(FetchRequest(entityName: "Item"))
        for object in objects { sum &+= try object.value(at: 9, as: Int64.self) }
        precondition(objects.count == fetchCount && sum != 0)
    }
}
results.append(("fetch \(fetchCount) objects", rawFetch, engineFetch))

print("scenario                       raw SQLite    engine   engine/raw")
for (name, raw, engine) in results {
    print(name.padding(toLength: 28, withPad: " ", startingAt: 0),
          String(format: "%10.4fs %9.4fs %9.2fx", raw, engine, engine / raw))
}
