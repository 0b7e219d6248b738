import SkerryCore

extension PostgresStore {
    /// Creates (or replaces) the SQL functions the store's generated SQL relies on, in the
    /// store's schema.
    ///
    /// `skerry_string_match(op, options, value, pattern)` answers Core Data's string operators
    /// (``SkerryCore/StringOperator``: begins with, ends with, contains, LIKE with `*` and `?`,
    /// MATCHES, equal) under ``SkerryCore/StringComparisonOptions`` (`[c]`, `[d]`), as the
    /// SQLite store's function of the same name does with Foundation: canonically equivalent
    /// strings match, `[d]` removes combining marks after canonical decomposition, `[c]` compares
    /// `lower()` of both sides under a Unicode-aware collation. Differences, documented in the
    /// PostgreSQL guide: case folding is lowercasing plus "ß" to "ss" (Foundation's folding knows
    /// a few more full foldings, such as ligatures), LIKE's `?` is one code point rather than one
    /// grapheme cluster, and MATCHES uses PostgreSQL's regular expressions (ARE), which agree with ICU's on the
    /// common syntax. Needs a UTF-8 database (`normalize`).
    ///
    /// A function the schema already has with this definition (its arguments and body) is left
    /// as it is: a role that does not own it (an application role loading a current store) can
    /// load the store, and only a store made by another version of Skerry needs its owner.
    static func createFunctions(_ connection: PostgresConnection) throws {
        // Case folding needs a collation that knows Unicode: ICU's root locale where the server
        // has ICU, else a libc UTF-8 one, else the database's own (ASCII only under "C").
        let collations = try connection.query(
            "SELECT collname FROM pg_collation WHERE collname IN ('und-x-icu', 'C.utf8', 'C.UTF-8') ORDER BY collname = 'und-x-icu' DESC LIMIT 1"
        )
        let collate = collations.rowCount > 0 ? " COLLATE \(SQLBuilder.quote(collations.text(0, 0)))" : ""
        let functions = [
            (
                name: "skerry_fold_diacritics", arguments: "value text", returns: "text LANGUAGE sql IMMUTABLE PARALLEL SAFE",
                body: """

                    SELECT normalize(regexp_replace(normalize(value, NFD), '[\u{0300}-\u{036F}]', '', 'g'), NFC)

                """
            ),
            (
                name: "skerry_string_match", arguments: "op integer, options integer, value text, pattern text",
                returns: "boolean LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE", body: stringMatchBody(collate: collate)
            ),
        ]
        // The definitions there are: arguments and body, by name.
        let existing = try connection.textRows(
            """
            SELECT proname::text, pg_get_function_identity_arguments(oid), prosrc FROM pg_proc \
            WHERE pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND starts_with(proname::text, 'skerry_')
            """, [])
        let current = Set(existing.map { $0.joined(separator: "\u{1F}") })
        let statements = functions.filter { !current.contains([$0.name, $0.arguments, $0.body].joined(separator: "\u{1F}")) }.map {
            "CREATE OR REPLACE FUNCTION \($0.name)(\($0.arguments)) RETURNS \($0.returns) AS $f$\($0.body)$f$"
        }
        guard !statements.isEmpty else { return }
        try connection.execute(statements.joined(separator: ";\n"))
    }

    /// The body of `skerry_string_match`, with `collate` the clause that gives case folding a
    /// collation that knows Unicode (or nothing).
    private static func stringMatchBody(collate: String) -> String {
        """

        DECLARE
            v text;
            p text;
            like_pattern text;
        BEGIN
            IF value IS NULL OR pattern IS NULL OR op IS NULL THEN
                RETURN NULL;
            END IF;
            -- Canonically equivalent strings (a precomposed letter, or a letter and a combining mark) are equal.
            v := normalize(value, NFC);
            p := normalize(pattern, NFC);
            IF options & 2 = 2 THEN
                v := skerry_fold_diacritics(v);
                p := skerry_fold_diacritics(p);
            END IF;
            IF op = 5 THEN
                IF options & 1 = 1 THEN
                    RETURN v ~* ('^(?:' || p || ')$');
                END IF;
                RETURN v ~ ('^(?:' || p || ')$');
            END IF;
            IF options & 1 = 1 THEN
                -- Lowercasing, and the one full case folding common in text: German sharp s.
                v := replace(lower(v\(collate)), 'ß', 'ss');
                p := replace(lower(p\(collate)), 'ß', 'ss');
            END IF;
            CASE op
                WHEN 1 THEN RETURN starts_with(v, p);
                WHEN 2 THEN RETURN length(p) <= length(v) AND right(v, length(p)) = p;
                WHEN 3 THEN RETURN p = '' OR strpos(v, p) > 0;
                WHEN 4 THEN
                    like_pattern := replace(replace(replace(p, '\\', '\\\\'), '%', '\\%'), '_', '\\_');
                    like_pattern := replace(replace(like_pattern, '*', '%'), '?', '_');
                    RETURN v LIKE like_pattern ESCAPE '\\';
                WHEN 6 THEN RETURN v = p;
                ELSE RETURN NULL;
            END CASE;
        END

        """
    }
}
