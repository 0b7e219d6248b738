/// One step of a migration, as both stores run it: the schema the store has before it, the
/// entities it holds after it, and the plan step's code, if any.
package struct MigrationStepSpec {
    package let source: StoredSchema
    /// The entities of the version left, for a plan step's `finish` (empty for an inferred step).
    package let sourceEntities: [EntityDescription]
    package let destination: [EntityDescription]
    package let model: ObjectModel
    package let custom: MigrationStep?
    /// 1-based, for messages.
    package let number: Int

    package init(
        source: StoredSchema, sourceEntities: [EntityDescription], destination: [EntityDescription], model: ObjectModel,
        custom: MigrationStep?, number: Int
    ) {
        self.source = source
        self.sourceEntities = sourceEntities
        self.destination = destination
        self.model = model
        self.custom = custom
        self.number = number
    }

    /// The steps of `plan` from the version whose hash the store recorded to the plan's last
    /// version, and the schema they reach; none when the store was not written with one of the
    /// plan's versions (an inferred step then goes straight to the current model).
    package static func planSteps(
        _ plan: MigrationPlan?, recordedHash: String?, from stored: StoredSchema, description: StoreDescription
    ) -> (steps: [MigrationStepSpec], reached: StoredSchema) {
        guard let plan, let recordedHash,
            let start = plan.versions.firstIndex(where: { $0.versionHash == recordedHash }), start < plan.versions.count - 1
        else { return ([], stored) }
        let held = { (model: ObjectModel) in model.entities.filter { description.holds($0, of: model) } }
        var steps: [MigrationStepSpec] = []
        var schema = stored
        for index in start..<(plan.versions.count - 1) {
            let destination = held(plan.versions[index + 1])
            steps.append(
                MigrationStepSpec(
                    source: schema, sourceEntities: held(plan.versions[index]), destination: destination,
                    model: plan.versions[index + 1], custom: plan.steps[index], number: index + 1))
            schema = StoredSchema(entities: destination)
        }
        return (steps, schema)
    }

    /// Runs `steps` in order through `run`, the store's way of running one: before each, the
    /// plan's progress handler hears its position; after each, `events` hear a `.migrationStep`
    /// event with its versions and duration. The first error `run` throws ends the walk.
    /// - Parameters:
    ///   - fromVersionHash: the version hash the store recorded before the first step.
    package static func runAll(
        _ steps: [MigrationStepSpec], description: StoreDescription, events: EventHub?, fromVersionHash: String?,
        _ run: (MigrationStepSpec) throws -> Void
    ) throws {
        var fromHash = fromVersionHash
        for (position, step) in steps.enumerated() {
            description.migrationPlan?.progress?(position + 1, steps.count)
            let started = ContinuousClock.now
            try run(step)
            events?.emit(
                .migrationStep(
                    MigrationStepEvent(
                        store: description, step: position + 1, stepCount: steps.count,
                        fromVersionHash: fromHash, toVersionHash: step.model.versionHash,
                        summary: step.custom == nil
                            ? "lightweight migration (inferred mapping)"
                            : "version \(step.number) to \(step.number + 1), custom step",
                        duration: .now - started)))
            fromHash = step.model.versionHash
        }
    }
}
