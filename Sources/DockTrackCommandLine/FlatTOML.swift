import Foundation

/// The part of TOML (v1.0) a setup file uses, read strictly: top-level `key = value` lines, with
/// strings (basic, literal, multi-line), integers (decimal, hex, octal, binary), floats, booleans
/// and arrays of them. Every other thing a TOML file can hold is refused with its line and
/// column rather than read: a `[section]` header, a dotted key, an inline table, a date.
///
/// DockTrack reads these files itself: TOMLKit 0.6.0 compiles toml++ with its assertions on,
/// and toml++ aborted (`track --config` exit 134) on malformed values such as `detector = [}a"`
/// instead of refusing them (found by the config-file fuzz target).
struct FlatTOML {
    /// A value as the file wrote it.
    enum Value: Equatable {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        case array([Value])
    }

    /// One `key = value` line.
    struct Entry: Equatable {
        var key: String
        var value: Value
        var line: Int
    }

    /// Where the file stops being a setup, and why.
    struct Problem: Error, Equatable {
        var line: Int
        var column: Int
        var message: String
    }

    /// Arrays inside arrays deeper than this are refused (a setup has none; a file of `[` must not
    /// take the stack).
    static let deepestArray = 16

    /// The entries of `text`, in the file's order; a key given twice is refused.
    static func entries(_ text: String) throws(Problem) -> [Entry] {
        var reader = FlatTOML(text)
        return try reader.readEntries()
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    /// The key whose value is being read, as messages quote it.
    private var key = ""

    private init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    // MARK: Lines

    private mutating func readEntries() throws(Problem) -> [Entry] {
        var entries: [Entry] = []
        var seen: Set<String> = []
        while let next = peek() {
            switch next {
            case " ", "\t": index += 1
            case "\n", "\r": try lineBreak()
            case "#": skipComment()
            case "[":
                let header = restOfLine().trimmingCharacters(in: .whitespaces)
                throw problem("\(header): sections are not read; write every option at the top level (key = value)")
            default:
                let keyLine = line, keyColumn = column
                let name = try readKey()
                key = Self.quoted(name)
                skipSpaces()
                guard peek() == "=" else { throw problem("after the key '\(key)', an = and its value") }
                index += 1
                skipSpaces()
                let value = try readValue(depth: 0)
                try endOfLine()
                guard seen.insert(name).inserted else {
                    throw Problem(line: keyLine, column: keyColumn, message: "'\(key)' is given twice")
                }
                entries.append(Entry(key: name, value: value, line: keyLine))
            }
        }
        return entries
    }

    /// A bare key (letters, digits, `_`, `-`) or a quoted one; a dotted key is a section.
    private mutating func readKey() throws(Problem) -> String {
        let name: String
        switch peek() {
        case "\"": name = try readString(quote: "\"")
        case "'": name = try readString(quote: "'")
        default:
            let start = index
            while let next = peek(), Self.isBareKeyCharacter(next) { index += 1 }
            guard index > start else {
                throw problem("'\(restOfLine())' is not a key = value line")
            }
            name = String(String.UnicodeScalarView(scalars[start..<index]))
        }
        skipSpaces()
        if peek() == "." {
            throw problem("'\(Self.quoted(name)).…': a dotted key is a section; sections are not read, write every option at the top level (key = value)")
        }
        return name
    }

    private static func isBareKeyCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": return true
        default: return false
        }
    }

    /// After a value: spaces, perhaps a comment, then the line's end or the file's.
    private mutating func endOfLine() throws(Problem) {
        skipSpaces()
        if peek() == "#" { skipComment() }
        guard let next = peek() else { return }
        guard next == "\n" || next == "\r" else {
            throw problem("after \(key)'s value, a line break or a # comment (found '\(restOfLine())')")
        }
        try lineBreak()
    }

    private mutating func lineBreak() throws(Problem) {
        if peek() == "\r" {
            index += 1
            guard peek() == "\n" else { throw problem("a carriage return without a line feed") }
        }
        index += 1
        line += 1
        lineStart = index
    }

    private mutating func skipSpaces() {
        while let next = peek(), next == " " || next == "\t" { index += 1 }
    }

    private mutating func skipComment() {
        while let next = peek(), next != "\n", next != "\r" { index += 1 }
    }

    /// Spaces, line breaks and comments, as an array may hold between its values.
    private mutating func skipBlankLines() throws(Problem) {
        while let next = peek() {
            switch next {
            case " ", "\t": index += 1
            case "\n", "\r": try lineBreak()
            case "#": skipComment()
            default: return
            }
        }
    }

    // MARK: Values

    private mutating func readValue(depth: Int) throws(Problem) -> Value {
        guard let next = peek(), next != "\n", next != "\r", next != "#" else {
            throw problem("\(key): no value after the =")
        }
        switch next {
        case "\"":
            return .string(starts(with: "\"\"\"") ? try readMultilineString(quote: "\"") : try readString(quote: "\""))
        case "'":
            return .string(starts(with: "'''") ? try readMultilineString(quote: "'") : try readString(quote: "'"))
        case "[":
            return try readArray(depth: depth)
        case "{":
            throw problem("\(key): a table is not an option's value; sections are not read, write every option at the top level (key = value)")
        default:
            return try readBareValue()
        }
    }

    private mutating func readArray(depth: Int) throws(Problem) -> Value {
        guard depth < Self.deepestArray else { throw problem("\(key): arrays nested deeper than \(Self.deepestArray)") }
        index += 1  // [
        var values: [Value] = []
        while true {
            try skipBlankLines()
            guard let next = peek() else { throw problem("\(key): a list without its closing ]") }
            if next == "]" { index += 1; return .array(values) }
            values.append(try readValue(depth: depth + 1))
            try skipBlankLines()
            switch peek() {
            case ",": index += 1
            case "]": index += 1; return .array(values)
            case nil: throw problem("\(key): a list without its closing ]")
            default: throw problem("\(key): in a list, a comma or ] after each value")
            }
        }
    }

    /// `true`, `false`, a number, or a date (refused).
    private mutating func readBareValue() throws(Problem) -> Value {
        let start = index, startColumn = column
        while let next = peek(), Self.isBareValueCharacter(next) { index += 1 }
        let word = String(String.UnicodeScalarView(scalars[start..<index]))
        func refuse(_ message: String) -> Problem { Problem(line: line, column: startColumn, message: message) }
        switch word {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "": throw problem("\(key): '\(restOfLine())' is not a value (a string in quotes, a number, true or false, or a list)")
        default: break
        }
        if ["inf", "+inf", "-inf", "nan", "+nan", "-nan"].contains(word) { throw refuse("\(key): not a finite number") }
        if Self.matches(Self.date, word) {
            throw refuse("\(key): a date is not an option's value (a string, a number, true or false, or a list)")
        }
        if Self.matches(Self.decimalInteger, word) {
            guard let number = Int(word.replacingOccurrences(of: "_", with: "")) else { throw refuse("\(key): \(Self.quoted(word)) does not fit in 64 bits") }
            return .integer(number)
        }
        for (prefix, radix, pattern) in [("0x", 16, Self.hexadecimal), ("0o", 8, Self.octal), ("0b", 2, Self.binary)] where word.hasPrefix(prefix) {
            guard Self.matches(pattern, word) else { break }
            guard let number = Int(word.dropFirst(2).replacingOccurrences(of: "_", with: ""), radix: radix) else {
                throw refuse("\(key): \(Self.quoted(word)) does not fit in 64 bits")
            }
            return .integer(number)
        }
        if Self.matches(Self.float, word), let number = Double(word.replacingOccurrences(of: "_", with: "")) {
            guard number.isFinite else { throw refuse("\(key): not a finite number") }
            return .float(number)
        }
        throw refuse("\(key): '\(Self.quoted(word))' is not a value (a string in quotes, a number, true or false, or a list)")
    }

    private static func isBareValueCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-", "+", ".", ":": return true
        default: return false
        }
    }

    private static let decimalInteger = pattern(#"[+-]?(0|[1-9](_?[0-9])*)"#)
    private static let hexadecimal = pattern(#"0x[0-9A-Fa-f](_?[0-9A-Fa-f])*"#)
    private static let octal = pattern(#"0o[0-7](_?[0-7])*"#)
    private static let binary = pattern(#"0b[01](_?[01])*"#)
    private static let float = pattern(#"[+-]?(0|[1-9](_?[0-9])*)((\.[0-9](_?[0-9])*)([eE][+-]?[0-9](_?[0-9])*)?|[eE][+-]?[0-9](_?[0-9])*)"#)
    /// A local date, a time, or the start of a date-time: `1979-05-27`, `07:32:00`.
    private static let date = pattern(#"[0-9]{4}-[0-9]{2}-[0-9]{2}.*|[0-9]{2}:[0-9]{2}.*"#)

    private static func pattern(_ text: String) -> NSRegularExpression {
        try! NSRegularExpression(pattern: "^(?:\(text))$")
    }

    private static func matches(_ expression: NSRegularExpression, _ word: String) -> Bool {
        expression.firstMatch(in: word, range: NSRange(word.startIndex..., in: word)) != nil
    }

    // MARK: Strings

    /// `"…"` (with TOML's escapes) or `'…'` (as written) on one line.
    private mutating func readString(quote: Unicode.Scalar) throws(Problem) -> String {
        let openLine = line, openColumn = column
        index += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let next = peek(), next != "\n", next != "\r" else {
                throw Problem(line: openLine, column: openColumn, message: "a string without its closing quote")
            }
            index += 1
            if next == quote { return String(text) }
            if next == "\\", quote == "\"" {
                text.append(try readEscape())
                continue
            }
            try refuseControl(next)
            text.append(next)
        }
    }

    /// `"""…"""` (with escapes) or `'''…'''` (as written) over lines: a line break just after
    /// the opening quotes is left out; in the first kind, a backslash at a line's end joins it to
    /// the next line's first character that is not a space.
    private mutating func readMultilineString(quote: Unicode.Scalar) throws(Problem) -> String {
        let openLine = line, openColumn = column
        let delimiter = String(repeating: Character(quote), count: 3)
        index += 3
        try leaveOutFirstLineBreak()
        var text = String.UnicodeScalarView()
        while true {
            guard let next = peek() else {
                throw Problem(line: openLine, column: openColumn, message: "a multi-line string without its closing \(delimiter)")
            }
            if next == quote, starts(with: delimiter) {
                return String(text) + closingQuotes(of: quote)
            }
            if next == "\n" || next == "\r" {
                try lineBreak()
                text.append("\n")
                continue
            }
            index += 1
            if next == "\\", quote == "\"" {
                if lineEndsAfterSpaces() {
                    try skipBlankSpace()
                } else {
                    text.append(try readEscape())
                }
                continue
            }
            try refuseControl(next)
            text.append(next)
        }
    }

    private mutating func leaveOutFirstLineBreak() throws(Problem) {
        if peek() == "\n" || peek() == "\r" { try lineBreak() }
    }

    /// At three or more quotes that close a multi-line string: up to two of them belong to the
    /// string (`""""a"""""` is `"a""`); the rest close it.
    private mutating func closingQuotes(of quote: Unicode.Scalar) -> String {
        var count = 0
        while peek() == quote, count < 5 { index += 1; count += 1 }
        return String(repeating: Character(quote), count: count - 3)
    }

    /// Whether only spaces stand between here and the line's end (a line-ending backslash).
    private func lineEndsAfterSpaces() -> Bool {
        var position = index
        while position < scalars.count, scalars[position] == " " || scalars[position] == "\t" { position += 1 }
        return position < scalars.count && (scalars[position] == "\n" || scalars[position] == "\r")
    }

    private mutating func skipBlankSpace() throws(Problem) {
        while let next = peek() {
            switch next {
            case " ", "\t": index += 1
            case "\n", "\r": try lineBreak()
            default: return
            }
        }
    }

    /// After a backslash: `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`.
    private mutating func readEscape() throws(Problem) -> Unicode.Scalar {
        guard let letter = peek() else { throw problem("a string without its closing quote") }
        index += 1
        switch letter {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let length = letter == "u" ? 4 : 8
            guard index + length <= scalars.count else { throw problem("\\\(letter) takes \(length) hexadecimal digits") }
            let digits = String(String.UnicodeScalarView(scalars[index..<index + length]))
            guard digits.allSatisfy(\.isHexDigit), let code = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(code) else {
                throw problem("\\\(letter)\(digits) is not a Unicode character")
            }
            index += length
            return scalar
        default:
            throw problem("\\\(letter) is not an escape TOML knows (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)")
        }
    }

    /// TOML keeps control characters other than tab out of strings: they are written as escapes.
    private func refuseControl(_ scalar: Unicode.Scalar) throws(Problem) {
        if (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F {
            throw problem("a control character (U+\(String(scalar.value, radix: 16, uppercase: true))) inside a string; write it as an escape")
        }
    }

    // MARK: Position

    private func peek() -> Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func starts(with text: String) -> Bool {
        let wanted = Array(text.unicodeScalars)
        return index + wanted.count <= scalars.count && Array(scalars[index..<index + wanted.count]) == wanted
    }

    private var column: Int { index - lineStart + 1 }

    /// The line from here, to quote in a message: at most ``quotedLength`` characters of it.
    private func restOfLine() -> String {
        var end = index
        while end < scalars.count, scalars[end] != "\n", scalars[end] != "\r" { end += 1 }
        return Self.quoted(String(String.UnicodeScalarView(scalars[index..<end])))
    }

    static let quotedLength = 40

    /// `text` shortened to ``quotedLength`` characters for a message.
    static func quoted(_ text: String) -> String {
        text.count <= quotedLength ? text : text.prefix(quotedLength) + "…"
    }

    private func problem(_ message: String) -> Problem { Problem(line: line, column: column, message: message) }
}
