import ArgumentParser

/// `serve` and `search` as `coursepack` and `coursepack-sync` list them in their help: both hand
/// these commands to `coursepack-device`, which declares their arguments.
public enum DeviceCommand {
    public static let names = ["serve", "search"]

    public struct Search: ParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "search", abstract: "Search the courses of a synced folder offline: ranked blocks with a snippet and their page.")
        public init() {}
    }

    public struct Serve: ParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "serve", abstract: "Serve a synced folder over HTTP (course list and outlines at /, Range for video).")
        public init() {}
    }
}

/// The synced folder every client command (`status`, `open`, `answers`, `serve`, `search`)
/// names first.
public struct TargetFolder: ParsableArguments {
    @Argument(help: "A folder kept by `coursepack sync`.")
    public var target: String

    public init() {}
}
