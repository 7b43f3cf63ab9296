import Foundation

/// The subjects of one frame: one line of `docktrack track --states`, and (as
/// `{"type":"trackingState",…}`) what `track --serve` streams to its client, DockKit's
/// tracking state.
public struct SubjectStatesRecord: Sendable, Equatable, CustomStringConvertible {
    public var frame: Int
    public var time: Double
    public var subjects: [TrackedSubject]
    /// The wall time the state was made (DockKit's `TrackingState.time`), when the tracker says
    /// it (`track --serve`): `time` is on the run's own clock (the frame's capture time).
    public var date: Date?
    /// The gestures recognized on this frame (written only when there are some).
    public var gestures: [GestureEvent]

    public init(frame: Int, time: Double, subjects: [TrackedSubject], date: Date? = nil, gestures: [GestureEvent] = []) {
        self.frame = frame
        self.time = time
        self.subjects = subjects
        self.date = date
        self.gestures = gestures
    }

    /// `{"frame":12,"time":0.4,"subjects":[{"identifier":"…","kind":"person","rect":{…},"saliencyRank":1,"timeInView":2.5,
    /// "speakingConfidence":0.8,"lookingAtCameraConfidence":0.9,"faceRect":{…}}]}`, with
    /// `"gestures":[{"gesture":"followMe","subject":"…","time":12.4,"hand":{…}}]` after the
    /// subjects on a frame a gesture was recognized on.
    public var jsonLine: String { line(type: nil).text }

    /// The line itself (DockKit's tracking state has a description too).
    public var description: String { jsonLine }

    /// The same with `"type":"trackingState"` first: a line of the dock protocol.
    public var trackingStateLine: String { line(type: "trackingState").text }

    private func line(type: String?) -> JSONLine {
        var line = JSONLine()
        if let type { line.add("type", type) }
        line.add("frame", frame)
        line.add("time", time, digits: 3)
        if let date { line.add("date", date.timeIntervalSince1970, digits: 3) }
        line.add("subjects", array: subjects.map { subject in
            var item = JSONLine()
            item.add("identifier", subject.id.uuidString)
            item.add("kind", subject.kind.rawValue)
            item.add("rect", object: subject.rect.jsonLine)
            item.add("saliencyRank", subject.saliencyRank)
            item.add("timeInView", subject.timeInView, digits: 3)
            if subject.kind == .person {
                item.add("speakingConfidence", subject.speakingConfidence, digits: 3)
                item.add("lookingAtCameraConfidence", subject.lookingAtCameraConfidence, digits: 3)
                if let face = subject.faceRect { item.add("faceRect", object: face.jsonLine) }
            }
            return item
        })
        if !gestures.isEmpty {
            line.add("gestures", array: gestures.map { gesture in
                var item = JSONLine()
                gesture.add(to: &item)
                return item
            })
        }
        return line
    }
}

extension SubjectStatesRecord: Decodable {
    private enum Keys: String, CodingKey { case frame, time, date, subjects, gestures }
    private struct Subject: Decodable {
        var identifier: UUID
        var kind: TrackedSubject.Kind
        var rect: UnitRect
        var saliencyRank: Int?
        var speakingConfidence: Double?
        var lookingAtCameraConfidence: Double?
        var faceRect: UnitRect?
        var timeInView: Double?
    }

    private struct Gesture: Decodable {
        var gesture: GestureEvent.Kind
        var subject: UUID
        var time: Double
        var hand: UnitRect
    }

    /// Reads a line of either form back (the observed flag is not on the line: observed; a time
    /// in view left out, by an older writer, is 0).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        frame = try c.decode(Int.self, forKey: .frame)
        time = try c.decode(Double.self, forKey: .time)
        date = try c.decodeIfPresent(Double.self, forKey: .date).flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
        subjects = try c.decode([Subject].self, forKey: .subjects).map {
            TrackedSubject(id: $0.identifier, kind: $0.kind, rect: $0.rect, faceRect: $0.faceRect, saliencyRank: $0.saliencyRank,
                           speakingConfidence: $0.speakingConfidence, lookingAtCameraConfidence: $0.lookingAtCameraConfidence,
                           timeInView: $0.timeInView.flatMap { $0.isFinite ? max(0, $0) : nil } ?? 0)
        }
        gestures = try c.decodeIfPresent([Gesture].self, forKey: .gestures)?.map {
            GestureEvent(kind: $0.gesture, subject: $0.subject, time: $0.time, hand: $0.hand)
        } ?? []
    }
}
