#if CommandLineTool
    import ArgumentParser

    /// `skerry`: checks Xcode models and inspects and migrates SQLite stores.
    public struct SkerryCommand: ParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "skerry",
            abstract: "Check Xcode data models, inspect and migrate Skerry's SQLite stores.",
            discussion: """
                Examples:
                  skerry model check Library.xcdatamodeld
                  skerry store info Library.sqlite
                  skerry store migrate Library.sqlite --model Library.xcdatamodeld --dry-run
                """,
            subcommands: [ModelCommand.self, StoreCommand.self])

        public init() {}
    }

    /// `skerry model ...`
    struct ModelCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "model", abstract: "Work with Xcode data models (.xcdatamodeld, .xcdatamodel).",
            subcommands: [ModelCheckCommand.self])
    }

    /// `skerry store ...`
    struct StoreCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store", abstract: "Work with Skerry's SQLite store files.",
            subcommands: [StoreInfoCommand.self, StoreMigrateCommand.self])
    }
#endif
