import Foundation

/// A gesture a tracked person made: a line's item in `track --states` (`"gestures"`), and an
/// accessory event for the dock protocol's clients.
public struct GestureEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, Codable {
        /// An open palm, fingers spread, raised near the head and held still about half a
        /// second: "follow me" (or, from the person already followed, "let me go").
        case followMe
    }

    public var kind: Kind
    /// The tracked person whose hand it was.
    public var subject: UUID
    /// When the gesture was recognized (the frame's time, seconds).
    public var time: Double
    /// Where the hand was (unit coordinates, lower-left origin; the box around its points).
    public var hand: UnitRect

    public init(kind: Kind, subject: UUID, time: Double, hand: UnitRect) {
        self.kind = kind
        self.subject = subject
        self.time = time
        self.hand = hand
    }

    /// `"gesture":"followMe","subject":"…","time":1.234,"hand":{…}`: the fields both lines share.
    public func add(to line: inout JSONLine) {
        line.add("gesture", kind.rawValue)
        line.add("subject", subject.uuidString)
        line.add("time", time, digits: 3)
        line.add("hand", object: hand.jsonLine)
    }

    /// `{"type":"accessoryEvent","event":"gesture","gesture":"followMe","subject":"…","time":…,"hand":{…}}`:
    /// the event the dock protocol's clients read (DockKit's accessory events have buttons; a
    /// gesture is one more kind).
    public var accessoryEventLine: String {
        var line = JSONLine()
        line.add("type", "accessoryEvent")
        line.add("event", "gesture")
        add(to: &line)
        return line.text
    }
}
