// The `skerry` command-line tool; see `skerry --help`. Built with the CommandLineTool trait:
//     swift run --traits CommandLineTool skerry --help
#if CommandLineTool
    import SkerryCommands

    SkerryCommand.main()
#else
    import Foundation

    FileHandle.standardError.write(
        Data("skerry was built without its trait: run `swift run --traits CommandLineTool skerry --help`.\n".utf8))
    exit(2)
#endif
