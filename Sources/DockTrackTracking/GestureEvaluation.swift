import DockTrackCore
import Foundation

/// What hands do in a clip, labelled by hand (`samples/gestures/gestures.tsv`): tab-separated
/// `clip`, `first`, `last` (frames from 0, both included), `kind` (`palm-spread` is the "follow
/// me" palm; `fist`, `counting`, `palm-flat`, `pointing`, `thumb`, `moving`, `none` are not).
/// Lines starting with `#` are comments.
package struct GestureLabels: Sendable, Equatable {
    package struct Interval: Sendable, Equatable {
        package var first: Int
        package var last: Int
        package var kind: String
    }

    /// Each clip's intervals, by the clip's file name.
    package var clips: [String: [Interval]] = [:]

    /// A line that is not four fields with 0 <= first <= last is an error naming it.
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    package init(tsv text: String) throws(Malformed) {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let fields = line.split(separator: "\t").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 4, let first = Int(fields[1]), let last = Int(fields[2]), first >= 0, last >= first else {
                throw Malformed(description: "line \(number + 1): expected clip<TAB>first<TAB>last<TAB>kind with 0 <= first <= last: \(line.prefix(80))")
            }
            clips[fields[0], default: []].append(Interval(first: first, last: last, kind: fields[3]))
        }
    }
}

/// A clip's gestures scored against its labels: each labelled "follow me" palm held at least
/// `hold` seconds should be recognized within `within` seconds of its first frame; a gesture
/// that is not within a labelled spread palm (or `within` after its end) is false.
package struct GestureScore: Sendable, Equatable {
    package var frames = 0
    /// The labelled palms held long enough to be one.
    package var heldPalms = 0
    /// Of those, recognized in time.
    package var recognized = 0
    /// Gestures on no labelled palm.
    package var falseGestures = 0
    /// Every gesture's time (seconds).
    package var times: [Double] = []

    /// `gestures` made over `frames` frames at `framesPerSecond`, against `intervals` (none: a
    /// clip where nobody makes the gesture).
    package init(gestures: [GestureEvent], frames: Int, framesPerSecond: Double, intervals: [GestureLabels.Interval],
                 hold: Double = 0.4, within: Double = 1) {
        self.frames = frames
        times = gestures.map(\.time)
        let fps = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 30
        let palms = intervals.filter { $0.kind == "palm-spread" && $0.first < frames }
        let held = palms.filter { Double($0.last - $0.first + 1) / fps >= hold }
        heldPalms = held.count
        recognized = held.filter { palm in
            let onset = Double(palm.first) / fps
            return times.contains { $0 >= onset && $0 <= onset + within }
        }.count
        falseGestures = times.filter { time in
            !palms.contains { time >= Double($0.first) / fps && time <= Double($0.last + 1) / fps + within }
        }.count
    }

    /// `{"frames":180,"heldPalms":2,"recognized":2,"gestures":2,"falseGestures":0,"times":[0.4,1.93]}`
    /// (the caller puts the clip's name first).
    package var jsonLine: String {
        var line = JSONLine()
        line.add("frames", frames)
        line.add("heldPalms", heldPalms)
        line.add("recognized", recognized)
        line.add("gestures", times.count)
        line.add("falseGestures", falseGestures)
        line.add("times", numbers: times, digits: 2)
        return line.text
    }
}
