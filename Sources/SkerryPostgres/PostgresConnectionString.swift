import CLibPQ

/// Connection strings as libpq reads them: `key=value` pairs or `postgresql://` URIs.
enum PostgresConnectionString {
    /// The parameters `connectionString` sets explicitly (environment defaults not included).
    /// - Throws: ``PostgresError`` with ``SQLState/unableToConnect`` and libpq's explanation when
    ///   the string is malformed or names an unknown parameter.
    static func parameters(_ connectionString: String) throws(PostgresError) -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            let message =
                errorMessage.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
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

    /// `connectionString` with `option` (`-c name=value`) after the libpq `options` it has: libpq
    /// keeps a keyword's last value, so another `options` appended to the string would drop them.
    /// Written as `key=value` pairs, whatever the string's form (pairs or a URI).
    /// - Throws: ``PostgresError`` with ``SQLState/unableToConnect`` when the string is malformed.
    static func adding(option: String, to connectionString: String) throws(PostgresError) -> String {
        var parameters = try parameters(connectionString)
        parameters["options"] = [parameters["options"], option].compactMap { $0 }.joined(separator: " ")
        return written(parameters)
    }

    /// `connectionString` fit to print: the password, if any, replaced by `***`, and the
    /// parameters in a stable order. A malformed string prints as `<invalid connection string>`.
    static func redacted(_ connectionString: String) -> String {
        guard let parameters = try? parameters(connectionString) else { return "<invalid connection string>" }
        return written(parameters, redactingPassword: true)
    }

    /// `parameters` as a `key=value` connection string, in a stable order (by key), the password
    /// replaced by `***` when `redactingPassword`.
    private static func written(_ parameters: [String: String], redactingPassword: Bool = false) -> String {
        parameters.sorted { $0.key < $1.key }
            .map { key, value in "\(key)=\(redactingPassword && key == "password" ? "***" : quoted(value))" }
            .joined(separator: " ")
    }

    /// A value as written in a `key=value` connection string.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "'" || $0 == "\\" }) else { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

/// SQL text as the stores write it, made ready for PostgreSQL.
enum PostgresSQL {
    /// `sql` with each `?` parameter marker numbered (`$1`, `$2`, …), as PostgreSQL's protocol
    /// needs (the stores write `?` for both databases), how many there were, and whether any `?`
    /// was followed by a digit (SQLite's `?NNN`, which this numbering would misread). Markers
    /// inside string literals, quoted identifiers, dollar-quoted strings and comments are left
    /// alone. Complexity: O(length of `sql`).
    static func scanParameters(_ sql: String) -> (text: String, count: Int, numbered: Bool) {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return (sql, 0, false) }
        var numbered = false
        var output: [UInt8] = []
        output.reserveCapacity(sql.utf8.count + 16)
        let bytes = Array(sql.utf8)
        var index = 0, parameter = 0
        func copy(until end: Int) {
            output.append(contentsOf: bytes[index..<min(end, bytes.count)])
            index = min(end, bytes.count)
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // Up to the closing quote; a doubled quote is part of the text.
                var end = index + 1
                while end < bytes.count {
                    if bytes[end] == byte {
                        if end + 1 < bytes.count && bytes[end + 1] == byte {
                            end += 2
                            continue
                        }
                        break
                    }
                    end += 1
                }
                copy(until: end + 1)
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                var end = index
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                copy(until: end)
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                var end = index + 2
                while end + 1 < bytes.count && !(bytes[end] == UInt8(ascii: "*") && bytes[end + 1] == UInt8(ascii: "/")) { end += 1 }
                copy(until: end + 2)
            case UInt8(ascii: "$"):
                // A dollar quote `$tag$ ... $tag$` (a `$` followed by digits is a parameter).
                var tagEnd = index + 1
                while tagEnd < bytes.count,
                    bytes[tagEnd] == UInt8(ascii: "_")
                        || (bytes[tagEnd] | 0x20 >= UInt8(ascii: "a") && bytes[tagEnd] | 0x20 <= UInt8(ascii: "z"))
                {
                    tagEnd += 1
                }
                guard tagEnd < bytes.count, bytes[tagEnd] == UInt8(ascii: "$") else {
                    copy(until: index + 1)
                    continue
                }
                let tag = Array(bytes[index...tagEnd])
                var end = tagEnd + 1
                while end + tag.count <= bytes.count && Array(bytes[end..<(end + tag.count)]) != tag { end += 1 }
                copy(until: end + tag.count)
            case UInt8(ascii: "?"):
                if index + 1 < bytes.count, bytes[index + 1] >= UInt8(ascii: "0"), bytes[index + 1] <= UInt8(ascii: "9") { numbered = true }
                parameter += 1
                output.append(contentsOf: "$\(parameter)".utf8)
                index += 1
            default:
                output.append(byte)
                index += 1
            }
        }
        return (String(decoding: output, as: UTF8.self), parameter, numbered)
    }
}
