import CLibPQ

/// Connection strings as libpq reads them: `key=value` pairs or `postgresql://` URIs.
enum PostgresConnectionString {
    /// The parameters `connectionString` sets explicitly (environment defaults not included).
    /// - Throws: ``PostgresError`` with ``SQLState/unableToConnect`` and libpq's explanation when
    ///   the string is malformed or names an unknown parameter.
    static func parameters(_ connectionString: String) throws(PostgresError) -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            let message = errorMessage.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
                ?? "out of memory"
            PQfreemem(errorMessage)
            throw PostgresError(sqlState: .unableToConnect, message: "Invalid PostgreSQL connection string: \(message)")
        }
        defer { PQconninfoFree(options) }
        var parameters: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parameters[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return parameters
    }

    /// Checks that `connectionString` is well formed.
    static func validate(_ connectionString: String) throws(PostgresError) {
        _ = try parameters(connectionString)
    }

    /// `connectionString` fit to print: the password, if any, replaced by `***`, and the
    /// parameters in a stable order. A malformed string prints as `<invalid connection string>`.
    static func redacted(_ connectionString: String) -> String {
        guard let parameters = try? parameters(connectionString) else { return "<invalid connection string>" }
        return parameters.sorted { $0.key < $1.key }
            .map { key, value in "\(key)=\(key == "password" ? "***" : quoted(value))" }
            .joined(separator: " ")
    }

    /// A value as written in a `key=value` connection string.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "'" || $0 == "\\" }) else { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
