extension PostgresStore {
    /// Creates (or replaces) the SQL functions the store's generated SQL relies on, in the
    /// store's schema.
    ///
    /// `skerry_string_match(op, options, value, pattern)` answers Core Data's string operators
    /// (``SkerryCore/StringOperator``: begins with, ends with, contains, LIKE with `*` and `?`,
    /// MATCHES, equal) under ``SkerryCore/StringComparisonOptions`` (`[c]`, `[d]`), as the
    /// SQLite store's function of the same name does with Foundation. Differences, documented in
    /// the PostgreSQL guide: case folding is `lower()` (Unicode-aware under an ICU or UTF-8
    /// collation; ASCII only under the C collation), diacritics are folded for the Latin letters
    /// of Latin-1 and Latin Extended-A, and MATCHES uses PostgreSQL's regular expressions (ARE),
    /// which agree with ICU's on the common syntax.
    static func createFunctions(_ connection: PostgresConnection) throws {
        let accented = "ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖòóôõöÙÚÛÜùúûüÝýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž"
        let plain = "AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOoooooUUUUuuuuYyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZz"
        precondition(accented.count == plain.count, "the diacritic table pairs each letter with one plain letter")
        try connection.execute("""
            CREATE OR REPLACE FUNCTION skerry_fold_diacritics(value text) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT translate(value, '\(accented)', '\(plain)') $f$;
            CREATE OR REPLACE FUNCTION skerry_string_match(op integer, options integer, value text, pattern text) RETURNS boolean
            LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
            DECLARE
                v text := value;
                p text := pattern;
                like_pattern text;
            BEGIN
                IF value IS NULL OR pattern IS NULL OR op IS NULL THEN
                    RETURN NULL;
                END IF;
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
                    v := lower(v);
                    p := lower(p);
                END IF;
                CASE op
                    WHEN 1 THEN RETURN starts_with(v, p);
                    WHEN 2 THEN RETURN length(p) <= length(v) AND right(v, length(p)) = p;
                    WHEN 3 THEN RETURN strpos(v, p) > 0 OR p = '';
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
