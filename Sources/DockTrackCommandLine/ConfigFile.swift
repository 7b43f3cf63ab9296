import DockTrackSystem
import Foundation

/// A saved setup for a command (`docktrack track --config FILE`), in TOML: each key is one of the
/// command's long options without its dashes, and says what the command line would.
///
/// ```toml
/// input = "/dev/video0"        # the command's argument (a file or a camera)
/// dock = "unix:/run/docksim.sock"
/// detector = "fast"
/// mode = "center"
/// max-pan-speed = 1.2
/// http = "0.0.0.0:8080"
/// http-token-file = "/etc/docktrack/token"
/// no-face-cues = true          # a flag: true gives it, false leaves it out
/// object = ["0.1,0.2,0.1,0.1"] # a repeatable option: each value once
/// ```
///
/// The command line overrides the file: an option given there leaves the file's out (its `no-`
/// form too), and any input given there (an argument, `--camera`, `--observations`) leaves out
/// the file's `input`, `camera` and `observations` (and, for a video file, the file's camera
/// settings: `size`, `fps`, ...). Sections, dotted keys, inline tables, dates and nested
/// arrays are refused (see ``FlatTOML``), as is a key the command does not know (the command's
/// own parser says so).
package struct ConfigFile: Sendable {
    /// What is wrong with a config file, with the file's path.
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
        /// One line, whatever the file holds (a key or a TOML error may carry line breaks).
        init(_ path: String, _ problem: String) { description = TerminalText.line("--config \(path): \(problem)") }
    }

    /// A file larger than this is not a setup (1 MiB).
    package static let maximumSize = 1 << 20
    /// The keys that name the run's input: any input on the command line leaves all of them out.
    package static let inputKeys: Set<String> = ["input", "camera", "observations"]

    package let path: String
    /// Each key with the arguments it stands for, in the file's order, `input` apart.
    package let options: [(key: String, arguments: [String])]
    /// The command's argument (`input = "…"`).
    package let input: String?

    /// Reads and checks the file at `path`: a regular file of at most ``maximumSize`` bytes, UTF-8, TOML.
    package init(contentsOf path: String) throws(Invalid) {
        let text: String
        do { text = try SmallTextFile.read(path, largest: Self.maximumSize) } catch {
            throw Invalid(path, error.reason.hasPrefix("larger") ? "\(error.reason): not a setup" : error.reason)
        }
        try self.init(toml: text, path: path)
    }

    /// Parses `toml` (the text of the file at `path`), the part of TOML ``FlatTOML`` reads.
    package init(toml: String, path: String) throws(Invalid) {
        self.path = path
        let entries: [FlatTOML.Entry]
        do {
            entries = try FlatTOML.entries(toml)
        } catch {
            throw Invalid(path, "line \(error.line), column \(error.column): \(error.message)")
        }
        var options: [(key: String, arguments: [String])] = []
        var input: String?
        for (key, value, line) in entries.map({ ($0.key, $0.value, $0.line) }) {
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }), !key.hasPrefix("-") else {
                throw Invalid(path, "line \(line): '\(FlatTOML.quoted(key))' is not an option's name (write it as on the command line, without the dashes)")
            }
            if key == "config" { throw Invalid(path, "line \(line): a config file cannot name another (config)") }
            if key == "input" {
                guard case .string(let text) = value else { throw Invalid(path, "line \(line): input: a path in quotes, such as \"/dev/video0\"") }
                input = text
                continue
            }
            guard let arguments = Self.arguments(key, value) else {
                throw Invalid(path, "line \(line): \(key): a list of strings or numbers")
            }
            options.append((key, arguments))
        }
        self.options = options
        self.input = input
    }

    /// The arguments one key stands for; nil for a list that holds anything but strings and numbers.
    private static func arguments(_ key: String, _ value: FlatTOML.Value) -> [String]? {
        switch value {
        case .boolean(let given):
            return given ? ["--\(key)"] : []
        case .array(let elements):
            var arguments: [String] = []
            for element in elements {
                guard let text = scalar(element) else { return nil }
                arguments.append("--\(key)=\(text)")
            }
            return arguments
        default:
            return scalar(value).map { ["--\(key)=\($0)"] }
        }
    }

    /// A string or a number as the command line spells it; nil for anything else.
    private static func scalar(_ value: FlatTOML.Value) -> String? {
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .float(let number): return "\(number)"
        case .boolean, .array: return nil
        }
    }

    /// The option names a command line gives (`--name`, `--name=value`, and short ones through
    /// `shortNames`), with each one's `no-` partner: the options the file must leave out.
    package static func namesGiven(by commandLine: [String], shortNames: [Character: String]) -> Set<String> {
        var names: Set<String> = []
        for token in commandLine {
            var name: String?
            if token.hasPrefix("--"), token.count > 2 {
                name = String(token.dropFirst(2).prefix { $0 != "=" })
            } else if token.hasPrefix("-"), token.count == 2, let short = token.last {
                name = shortNames[short]
            }
            guard let name else { continue }
            names.insert(name)
            names.insert(name.hasPrefix("no-") ? String(name.dropFirst(3)) : "no-\(name)")
        }
        return names
    }

    /// The input a command line gives, as far as the file's options care.
    package enum CommandLineInput: Sendable {
        /// None: the file's `input` (or `camera`, `observations`) is the run's.
        case none
        /// A camera or a stream: the file's camera settings still apply.
        case live
        /// A file: the file's camera settings (``cameraSettingKeys``) are left out too.
        case file
    }

    /// Settings that only a camera or a stream takes.
    package static let cameraSettingKeys: Set<String> = ["size", "fps", "pixel-format", "reconnect", "duration"]

    /// The file's arguments for a command line that gave the options `names` and `input`: they
    /// go before the command line's, the file's input (the command's argument) last. Values go
    /// as `--name=value`, so that one starting with a dash is not taken for an option.
    package func arguments(leavingOut names: Set<String>, commandLineInput input: CommandLineInput) -> [String] {
        var arguments: [String] = []
        for (key, values) in options where !names.contains(key) {
            if input != .none && Self.inputKeys.contains(key) { continue }
            if input == .file && Self.cameraSettingKeys.contains(key) { continue }
            arguments += values
        }
        if let file = self.input, input == .none { arguments.append(file) }
        return arguments
    }
}
