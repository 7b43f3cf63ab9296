import DockTrack
import DockTrackCommandLine
import Foundation
import Testing

/// The TOML a setup file holds, read by DockTrack's own reader: what TOML means is what the
/// command line gets, and everything else is refused with its line and column, never an abort.
@Suite(.onTestThreads) struct FlatTOMLTests {
    static func arguments(_ file: ConfigFile) -> [String: [String]] {
        var arguments: [String: [String]] = [:]
        for (key, values) in file.options { arguments[key] = values }
        return arguments
    }

    /// Every kind of string with its escapes, every kind of number, comments, a byte-order mark,
    /// CRLF line ends, a quoted key, a list over lines with a comment and a trailing comma.
    @Test func everyValueASetupCanHoldIsRead() throws {
        let lines = [
            "\u{FEFF}# the rig\r",
            #"a = "tab\there \u00E9\U0001F600 \"q\"" # comment"# + "\r",
            #"b = 'C:\path\no escapes'"#,
            #"c = """"#, "line one", #"  line \"#, #"    two""""""#,
            "d = '''", #"raw \n'''"#,
            "e = 1_000", "g = 0xff", "h = 0o17", "i = 0b101", "j = +1.5e3", "k = -0.25", "l = true", "m = false",
            #""quoted-key" = 3"#,
            "n = [", #"  "x", # first"#, "  2,", "  3.5,", "]",
            "o = []",
        ]
        let file = try ConfigFile(toml: lines.joined(separator: "\n"), path: "t.toml")
        let got = Self.arguments(file)
        #expect(got["a"] == ["--a=tab\there \u{E9}\u{1F600} \"q\""])
        #expect(got["b"] == [#"--b=C:\path\no escapes"#])
        #expect(got["c"] == ["--c=line one\n  line two\"\""], "the line break after the quotes left out, the backslash joins, two quotes before the closing three")
        #expect(got["d"] == [#"--d=raw \n"#])
        #expect(got["e"] == ["--e=1000"] && got["g"] == ["--g=255"] && got["h"] == ["--h=15"] && got["i"] == ["--i=5"])
        #expect(got["j"] == ["--j=1500.0"] && got["k"] == ["--k=-0.25"] && got["l"] == ["--l"] && got["m"] == [])
        #expect(got["quoted-key"] == ["--quoted-key=3"])
        #expect(got["n"] == ["--n=x", "--n=2", "--n=3.5"] && got["o"] == [])
        #expect(file.options.map { $0.key } == ["a", "b", "c", "d", "e", "g", "h", "i", "j", "k", "l", "m", "quoted-key", "n", "o"], "the file's order")
    }

    /// Malformed values (toml++ aborted `track --config` on the first, `detector = [}a"`) are
    /// refused in one line with where they are, whatever they hold.
    @Test(arguments: [
        (#"detector = [}a""#, #"line 1, column 13: detector: '}a"' is not a value"#),
        ("x = 1\ndetector = \"a", "line 2, column 12: a string without its closing quote"),
        ("a = \"\"\"\nnever closed", "line 1, column 5: a multi-line string without its closing"),
        ("a = [1, 2", "a: a list without its closing ]"),
        ("a = [1 2]", "a: in a list, a comma or ] after each value"),
        (#"a = "\q""#, #"\q is not an escape"#),
        (#"a = "\uD800""#, #"\uD800 is not a Unicode character"#),
        ("a = \"bell\u{07}\"", "a control character (U+7)"),
        ("a = 1\na = 2", "line 2, column 1: 'a' is given twice"),
        ("a.b = 1", "a dotted key is a section"),
        ("a = { b = 1 }", "a: a table is not an option's value"),
        ("a = 1 2", "after a's value, a line break or a # comment"),
        ("a =", "a: no value after the ="),
        ("a = -0x10", "'-0x10' is not a value"),
        ("a = 9223372036854775808", "does not fit in 64 bits"),
        ("a = 1e999", "a: not a finite number"),
        ("a = -inf", "a: not a finite number"),
        ("a = 07", "'07' is not a value"),
        ("a = 1__0", "'1__0' is not a value"),
        ("a = .5", "'.5' is not a value"),
        ("a = 07:32:00", "a: a date"),
        ("a = 1979-05-27T07:32:00Z", "a: a date"),
        ("a = 1\rb = 2", "a carriage return without a line feed"),
        ("= 1", "'= 1' is not a key = value line"),
        ("a_b = 1", "'a_b' is not an option's name"),
        ("a = [true]", "a: a list of strings or numbers"),
        (String(repeating: "[", count: 100_000), "sections are not read"),
        ("a = " + String(repeating: "[", count: 100_000), "arrays nested deeper than 16"),
        (String(repeating: "k", count: 100_000) + " = nan", "kkkk…: not a finite number"),
    ])
    func aMalformedValueIsRefusedWithWhereItIs(text: String, words: String) {
        do throws(ConfigFile.Invalid) {
            let file = try ConfigFile(toml: text, path: "t.toml")
            Issue.record("read \(file.options) from \(text.prefix(40))")
        } catch {
            #expect(error.description.hasPrefix("--config t.toml: ") && error.description.contains(words), "\(error.description.prefix(300))")
            #expect(!error.description.contains("\n"), "one line")
        }
    }
}
