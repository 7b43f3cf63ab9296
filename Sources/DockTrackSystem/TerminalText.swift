/// Text from a peer (a camera's SOAP fault, a server's error) made safe to print: one line, no
/// control characters (no ANSI or OSC escape sequence reaches the terminal), at most a few
/// hundred characters.
package enum TerminalText {
    /// The longest remote text printed.
    package static let maximumCharacters = 300

    /// `text` on one line: control characters (C0, DEL, C1) become spaces, runs of spaces one,
    /// and a text over `limit` characters is cut with "…".
    package static func line(_ text: some StringProtocol, limit: Int = maximumCharacters) -> String {
        var out = ""
        var count = 0
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            let isControl = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
            let isSpace = isControl || scalar == " "
            if isSpace {
                if lastWasSpace { continue }
                lastWasSpace = true
                out.unicodeScalars.append(" ")
            } else {
                lastWasSpace = false
                out.unicodeScalars.append(scalar)
            }
            count += 1
            if count >= limit {
                out += "…"
                break
            }
        }
        while out.hasSuffix(" ") { out.removeLast() }
        return out
    }
}
