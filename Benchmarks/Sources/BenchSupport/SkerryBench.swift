import Skerry
import SkerryCore

/// A Skerry stack with one entity of the shape, in memory unless `store` says otherwise.
func makeStack(_ model: ObjectModel, store: StoreDescription = .inMemory()) throws -> PersistentStack {
    let stack = PersistentStack(name: "Bench", model: model)
    stack.persistentStoreDescriptions = [store]
    try stack.loadPersistentStores()
    return stack
}

/// Reads the whole table back through the engine (untimed checks).
func engineState<Item: BenchShape>(_ stack: PersistentStack, _: Item.Type) throws -> (count: Int, sum: Int64) {
    let context = stack.newBackgroundContext()
    return try context.performAndWait {
        var sum: Int64 = 0
        let objects = try context.fetch(FetchRequest(entityName: Item.entityName))
        for object in objects {
            sum += try object.value(forKey: Item.columns[Item.updatedColumnIndex].name, as: Int64.self)
        }
        return (objects.count, sum)
    }
}

/// The rows of a prefill in chunks of 10,000, each inserted by its own context, so that the
/// setup's memory (a context holding every inserted object until its save) stays below what the
/// scenario itself holds: the ordo-one suite's peak resident size covers the setup too.
func prefillChunks<Item>(_ items: [Item]) -> [ArraySlice<Item>] {
    stride(from: 0, to: items.count, by: 10_000).map { items[$0..<min($0 + 10_000, items.count)] }
}

// MARK: - Engine

/// Skerry's engine: an `ObjectContext` per scenario (a new background context, as an app would
/// use), objects read and written by attribute index. In memory, or in the store `store` describes.
final class EngineBench<Item: BenchShape> {
    let stack: PersistentStack
    let entity: EntityDescription

    init(store: StoreDescription) throws {
        let model = try ObjectModel(entities: [Item.engineEntity()])
        stack = try makeStack(model, store: store)
        entity = model.entity(named: Item.entityName)!
    }

    static func prepare(_ scenario: Scenario, _ sizes: Sizes, store: StoreDescription = .inMemory()) throws -> Work {
        let engine = try EngineBench(store: store)
        let prefill = sizes.prefill(scenario)
        if prefill > 0 { for chunk in prefillChunks(makeItems(prefill) as [Item]) { try engine.insert(Array(chunk)) } }
        let request = FetchRequest(entityName: Item.entityName)
        let column = Item.updatedColumnIndex
        switch scenario {
        case .insert:
            let items: [Item] = makeItems(sizes.insert)
            return Work(
                { try engine.insert(items) },
                verify: { try expect(engineState(engine.stack, Item.self).count == items.count, "engine insert") })
        case .fetch:
            return Work {
                let context = engine.stack.newBackgroundContext()
                let items = try context.performAndWait {
                    var items: [Item] = []
                    let objects = try context.fetch(request)
                    items.reserveCapacity(objects.count)
                    for object in objects { items.append(try Item(object: object)) }
                    return items
                }
                expect(items.count == sizes.fetch, "engine fetch")
            }
        case .update:
            return Work(
                {
                    let context = engine.stack.newBackgroundContext()
                    let count = try context.performAndWait {
                        let objects = try context.fetch(request)
                        for object in objects {
                            let value = try object.value(at: column, as: Int64.self)
                            try object.setValue(.int(value + 1), at: column)
                        }
                        try context.save()
                        return objects.count
                    }
                    expect(count == sizes.update, "engine update")
                },
                verify: {
                    try expect(engineState(engine.stack, Item.self).sum == expectedSum(Item.self, sizes.update), "engine update sum")
                })
        case .fetchByID:
            let context = engine.stack.newBackgroundContext()
            let all = try context.performAndWait { try context.fetchObjectIDs(request) }
            let ids = randomSelection(all, count: sizes.fetchByID)
            return Work {
                let context = engine.stack.newBackgroundContext()
                let items = try context.performAndWait {
                    var items: [Item] = []
                    items.reserveCapacity(ids.count)
                    for id in ids { items.append(try Item(object: try context.existingObject(with: id))) }
                    return items
                }
                expect(items.count == ids.count, "engine fetch by ID")
            }
        case .deleteBatch:
            return Work(
                {
                    let context = engine.stack.newBackgroundContext()
                    let count = try context.performAndWait {
                        // A count-only result, like GRDB's `deleteAll` and Core Data's default: the
                        // `.objectIDs` form also selects the keys so that contexts can merge them.
                        var request = BatchDeleteRequest(entityName: Item.entityName)
                        request.resultType = .count
                        return try context.execute(request).count
                    }
                    expect(count == sizes.delete, "engine batch delete")
                }, verify: { try expect(engineState(engine.stack, Item.self).count == 0, "engine batch delete left rows") })
        case .deleteEach:
            return Work(
                {
                    let context = engine.stack.newBackgroundContext()
                    let count = try context.performAndWait {
                        let objects = try context.fetch(request)
                        for object in objects { try context.delete(object) }
                        try context.save()
                        return objects.count
                    }
                    expect(count == sizes.delete, "engine delete each")
                }, verify: { try expect(engineState(engine.stack, Item.self).count == 0, "engine delete each left rows") })
        }
    }

    func insert(_ items: [Item]) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for item in items { try item.write(to: try context.insert(entity)) }
            try context.save()
        }
    }
}

// MARK: - Typed layer

/// Skerry's typed layer: a `PersistentContainer` whose contexts are new background contexts
/// (cleaned up after each perform, the default), the shape as its `ManagedObjectConvertible`
/// model. Each scenario is one `perform`, which saves.
final class TypedBench<Item: BenchShape> {
    let stack: PersistentStack
    let container: PersistentContainer

    init(store: StoreDescription) throws {
        let stack = try makeStack(try ObjectModel(types: [Item.self]), store: store)
        self.stack = stack
        container = PersistentContainer(managedObjectContext: { stack.newBackgroundContext() })
    }

    static func prepare(_ scenario: Scenario, _ sizes: Sizes, store: StoreDescription = .inMemory()) throws -> Work {
        let typed = try TypedBench(store: store)
        let container = typed.container
        let prefill = sizes.prefill(scenario)
        if prefill > 0 { for chunk in prefillChunks(makeItems(prefill) as [Item]) { try typed.insert(Array(chunk)) } }
        let keyPath = Item.updatedKeyPath
        switch scenario {
        case .insert:
            let items: [Item] = makeItems(sizes.insert)
            return Work(
                { try typed.insert(items) },
                verify: { try expect(engineState(typed.stack, Item.self).count == items.count, "typed insert") })
        case .fetch:
            return Work {
                let items = try container.perform { context in try context.fetch(Item.all).map { try $0.decode() } }
                expect(items.count == sizes.fetch, "typed fetch")
            }
        case .update:
            return Work(
                {
                    let count = try container.perform { context in
                        let objects = try context.fetch(Item.all)
                        for object in objects { object.encode(keyPath, try object.decode(keyPath) + 1) }
                        return objects.count
                    }
                    expect(count == sizes.update, "typed update")
                },
                verify: {
                    try expect(engineState(typed.stack, Item.self).sum == expectedSum(Item.self, sizes.update), "typed update sum")
                })
        case .fetchByID:
            // The typed layer finds an object of another perform with `inContext(_:)`, by its ID:
            // the handles of an earlier perform (reset since, so holding only their IDs) serve.
            let all = try container.perform { context in try context.fetch(Item.all) }
            let handles = randomSelection(all, count: sizes.fetchByID)
            return Work {
                let items = try container.perform { context in
                    var items: [Item] = []
                    items.reserveCapacity(handles.count)
                    for handle in handles {
                        guard let object = handle.inContext(context) else { preconditionFailure("typed: no object \(handle.objectID)") }
                        items.append(try object.decode())
                    }
                    return items
                }
                expect(items.count == handles.count, "typed fetch by ID")
            }
        case .deleteBatch:
            return Work(
                {
                    let count = try container.perform { context in try context.batchDelete(Item.all) }
                    expect(count == sizes.delete, "typed batch delete")
                }, verify: { try expect(engineState(typed.stack, Item.self).count == 0, "typed batch delete left rows") })
        case .deleteEach:
            return Work(
                {
                    let count = try container.perform { context in
                        let objects = try context.fetch(Item.all)
                        for object in objects { context.delete(object) }
                        return objects.count
                    }
                    expect(count == sizes.delete, "typed delete each")
                }, verify: { try expect(engineState(typed.stack, Item.self).count == 0, "typed delete each left rows") })
        }
    }

    func insert(_ items: [Item]) throws {
        try container.perform { context in
            for item in items { try context.insert(item) }
        }
    }
}
