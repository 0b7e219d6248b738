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
    static func createFunctions(_ connection: PostgresConnection) throws {
        // Case folding needs a collation that knows Unicode: ICU's root locale where the server
        // has ICU, else a libc UTF-8 one, else the database's own (ASCII only under "C").
        let collations = try connection.query(
            "SELECT collname FROM pg_collation WHERE collname IN ('und-x-icu', 'C.utf8', 'C.UTF-8') ORDER BY collname = 'und-x-icu' DESC LIMIT 1"
        )
        let collate = collations.rowCount > 0 ? " COLLATE \(SQLBuilder.quote(collations.text(0, 0)))" : ""
        try connection.execute(
            """
            CREATE OR REPLACE FUNCTION skerry_fold_diacritics(value text) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
                SELECT normalize(regexp_replace(normalize(value, NFD), '[\u{0300}-\u{036F}]', '', 'g'), NFC)
            $f$;
            CREATE OR REPLACE FUNCTION skerry_string_match(op integer, options integer, value text, pattern text) RETURNS boolean
            LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
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
            $f$;
            """)
    }
}
