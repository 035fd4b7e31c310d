/// Text that came from elsewhere (an LMS's answer, a page's ids) made safe to print and to store:
/// a terminal must not read any of it as a command.
public enum RemoteText {
    /// `text` without control characters: C0 (tabs and line breaks become spaces), DEL, C1,
    /// whole ANSI escape sequences (CSI, OSC and the rest, so no `[31m` is left behind), Unicode
    /// bidirectional overrides and line separators; at most `limit` characters.
    public static func clean(_ text: String, limit: Int = 300) -> String {
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var kept = 0
        while kept < limit, let scalar = scalars.next() {
            switch scalar.value {
            case 0x1B:
                skipEscape(&scalars)
            case 0x9B:
                skipControlSequence(&scalars)
            case 0x9D, 0x90, 0x9E, 0x9F:
                skipString(&scalars)
            case 0x09, 0x0A, 0x0D:
                out.append(" ")
                kept += 1
            case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                continue
            default:
                out.append(scalar)
                kept += 1
            }
        }
        return String(out)
    }

    /// Each line of `text` cleaned as `clean` cleans it, with no length limit: what a command
    /// prints, whose lines hold names and ids from course content, a server's manifest or the LMS.
    public static func printable(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { clean(String($0), limit: .max) }.joined(separator: "\n")
    }

    /// After ESC: `[` starts a control sequence, `]` `P` `^` `_` a string ended by BEL or ST;
    /// anything else is a two-character escape.
    private static func skipEscape(_ scalars: inout String.UnicodeScalarView.Iterator) {
        guard let next = scalars.next() else { return }
        switch next {
        case "[": skipControlSequence(&scalars)
        case "]", "P", "^", "_", "X": skipString(&scalars)
        case " "..."/":
            // Intermediate bytes (a character set's designation, `ESC ( B`) up to a final one.
            while let scalar = scalars.next(), (0x20...0x2F).contains(scalar.value) {}
        default: return
        }
    }

    /// Parameters and intermediates up to a final byte (0x40–0x7E).
    private static func skipControlSequence(_ scalars: inout String.UnicodeScalarView.Iterator) {
        while let scalar = scalars.next() {
            if (0x40...0x7E).contains(scalar.value) || scalar.value > 0x7E { return }
        }
    }

    /// Up to BEL, ST (ESC `\` or 0x9C), or the end.
    private static func skipString(_ scalars: inout String.UnicodeScalarView.Iterator) {
        while let scalar = scalars.next() {
            switch scalar.value {
            case 0x07, 0x9C: return
            case 0x1B:
                _ = scalars.next()
                return
            default: continue
            }
        }
    }
}
