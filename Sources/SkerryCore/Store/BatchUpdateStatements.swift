/// The SQL of a batch update (``BatchUpdateRequest``) of one table, in a dialect, shared by the
/// stores of this package: the checks of the values computed from the rows, the read of the keys
/// of the rows updated, and the `UPDATE`, which bumps each row's version (as a save's update does,
/// so that a context holding the row as it was gets a conflict when it saves it).
package struct BatchUpdateStatements {
    /// A check that no row matching the update gets a value its attribute cannot hold: a query
    /// of the key of one such row, if any.
    package struct Check {
        /// What a row found does not hold.
        package enum Kind {
            /// A value (a required attribute computed from a row without one).
            case missingValue
            /// A value in the attribute's range (an integer's width, a `float`'s range).
            case range
        }

        package let attribute: AttributeDescription
        package let kind: Kind
        package let sql: BoundSQL

        /// The error of a batch update of `entity` that found the row `key` (of `store`).
        package func error(entity: EntityDescription, key: Int64, store: StoreIdentity) -> SkerryError {
            let objectID = ObjectID(store: store, entity: entity, primaryKey: key)
            let name = "'\(entity.name).\(attribute.name)'"
            switch kind {
            case .missingValue:
                return SkerryError(
                    .missingRequiredValue,
                    "The batch update would leave the required attribute \(name) of \(objectID) without a value (the value it computes is nil). Nothing was updated.",
                    entityName: entity.name, key: attribute.name, objectID: objectID)
            case .range:
                return SkerryError(
                    .wrongValueType,
                    "The batch update computes a value out of the range of \(name), which is \(attribute.type), for \(objectID). Nothing was updated.",
                    entityName: entity.name, key: attribute.name, objectID: objectID)
            }
        }
    }

    /// The table's entity.
    package let entity: EntityDescription
    /// The checks of the values computed from the rows, in order: the SQLite store runs their
    /// queries before the update (under its write lock: the rows cannot change in between); the
    /// PostgreSQL store checks the values its update returns instead, in the same statement.
    package let checks: [Check]
    /// `SELECT _pk FROM <table> WHERE <predicate>`.
    package let selectKeys: BoundSQL
    /// `UPDATE <table> SET _version = _version + 1, <assignments> WHERE <predicate>`.
    package let update: BoundSQL

    /// The statements of the update of `entity`'s own table (one member of the entities a batch
    /// update reaches) with `assignments`, for the rows matching `predicate`.
    package init(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, assignments: [BatchUpdateAssignment], layout: SQLiteStoreLayout,
        dialect: SQLDialect
    ) {
        let q = SQLBuilder.quote
        let table = q(entity.name)
        self.entity = entity
        // " WHERE <predicate>", or nothing.
        let condition = SQLBuilder.query(
            "", StoreQuery(entity: entity, predicate: predicate, sortKeys: []), layout: layout, ordered: false, dialect: dialect)
        selectKeys = BoundSQL(text: "SELECT \(q(SQLBuilder.primaryKeyColumn)) FROM \(table)" + condition.text, bindings: condition.bindings)

        var update = BoundSQL(text: "UPDATE \(table) SET \(q(SQLBuilder.versionColumn)) = \(q(SQLBuilder.versionColumn)) + 1", bindings: [])
        var checks: [Check] = []
        for assignment in assignments {
            let attribute = assignment.attribute
            let value = Self.expression(assignment.value, table: table, type: attribute.type, dialect: dialect, topLevel: true)
            update.text += ", \(q(attribute.name)) = " + value.text
            update.bindings += value.bindings
            if case .constant = assignment.value { continue }
            // Computed from each row: checked first, on the rows as they are.
            var violations: [(Check.Kind, BoundSQL)] = []
            if !attribute.isOptional { violations.append((.missingValue, Self.condition("? IS NULL", value))) }
            if case .arithmetic = assignment.value, let range = Self.rangeViolation(attribute.type, dialect: dialect) {
                violations.append((.range, Self.condition(range, value)))
            }
            for (kind, violation) in violations {
                let head = "SELECT \(q(SQLBuilder.primaryKeyColumn)) FROM \(table) WHERE "
                var check =
                    condition.text.isEmpty
                    ? BoundSQL(text: head, bindings: [])
                    : BoundSQL(
                        text: head + "(" + String(condition.text.dropFirst(" WHERE ".count)) + ") AND ", bindings: condition.bindings)
                check.text += "(" + violation.text + ") LIMIT 1"
                check.bindings += violation.bindings
                checks.append(Check(attribute: attribute, kind: kind, sql: check))
            }
        }
        update.text += condition.text
        update.bindings += condition.bindings
        self.checks = checks
        self.update = update
    }

    /// The SQL of `value` computed for an attribute of `type` on the row of `table`. A constant
    /// is a parameter; in arithmetic (not `topLevel`), PostgreSQL's is typed as the arithmetic's
    /// (`bigint` or `double precision`), so that it is not taken for a narrower column's type.
    private static func expression(
        _ value: BatchUpdateAssignment.Value, table: String, type: AttributeType, dialect: SQLDialect, topLevel: Bool
    ) -> BoundSQL {
        switch value {
        case .constant(let constant):
            guard !topLevel, dialect == .postgres else { return BoundSQL(text: "?", bindings: [constant]) }
            return BoundSQL(text: type.isInteger ? "?::bigint" : "?::double precision", bindings: [constant])
        case .column(let attribute):
            return BoundSQL(text: "\(table).\(SQLBuilder.quote(attribute.name))", bindings: [])
        case .arithmetic(let op, let left, let right):
            let left = expression(left, table: table, type: type, dialect: dialect, topLevel: false)
            let right = expression(right, table: table, type: type, dialect: dialect, topLevel: false)
            return BoundSQL(text: "(\(left.text) \(op.rawValue) \(right.text))", bindings: left.bindings + right.bindings)
        }
    }

    /// `template` with each `?` replaced by `value` (its text and bindings, once per `?`).
    private static func condition(_ template: String, _ value: BoundSQL) -> BoundSQL {
        var result = BoundSQL(text: "", bindings: [])
        for (index, part) in template.split(separator: "?", omittingEmptySubsequences: false).enumerated() {
            if index > 0 {
                result.text += value.text
                result.bindings += value.bindings
            }
            result.text += part
        }
        return result
    }

    /// The condition (a template of ``condition(_:_:)``) under which a value computed for an
    /// attribute of `type` is out of its range, or nil when the database keeps it in range
    /// itself (PostgreSQL refuses an integer or `double` out of range: `22003`).
    private static func rangeViolation(_ type: AttributeType, dialect: SQLDialect) -> String? {
        switch type {
        case .integer16, .integer32:
            let range = type.integerRange
            // SQLite computes an integer overflow as a REAL.
            let real = dialect == .sqlite ? "typeof(?) <> 'integer' OR " : ""
            return "? IS NOT NULL AND (\(real)? < \(range.lowerBound) OR ? > \(range.upperBound))"
        case .integer64:
            return dialect == .sqlite ? "? IS NOT NULL AND typeof(?) <> 'integer'" : nil
        case .float:
            return "abs(?) > \(Double(Float.greatestFiniteMagnitude))"
        default:
            return nil
        }
    }
}
