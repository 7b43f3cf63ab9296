import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One end of an audio route: a PipeWire node the sound goes into or comes out of.
package struct AudioPort: Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        /// A capture device (a microphone, a virtual source).
        case input
        /// A playback device (speakers, headphones, a virtual sink).
        case output
        /// What an output plays, captured (the default input of a graph without a microphone).
        case monitor
    }

    /// The node's name: what opens it (`pw-record --target NAME`).
    package var name: String
    /// What a person reads.
    package var label: String
    package var kind: Kind
    /// The kind of device (built-in, headphones, USB…), as the graph's properties say.
    package var type: AudioPortType

    package init(name: String, label: String, kind: Kind, type: AudioPortType = .unknown) {
        self.name = name
        self.label = label
        self.kind = kind
        self.type = type
    }

    package var description: String { label.isEmpty || label == name ? name : "\(label) (\(name))" }

    var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("name", name)
        line.add("description", label)
        line.add("kind", kind.rawValue)
        line.add("type", type.rawValue)
        return line
    }
}

/// Where sound comes in and goes out now (AVAudioSession's current route): the default input
/// and output of the audio graph.
package struct AudioSessionRoute: Sendable, Hashable, CustomStringConvertible {
    package var inputs: [AudioPort]
    package var outputs: [AudioPort]

    package init(inputs: [AudioPort] = [], outputs: [AudioPort] = []) {
        self.inputs = inputs
        self.outputs = outputs
    }

    package var description: String {
        func list(_ ports: [AudioPort]) -> String { ports.isEmpty ? "none" : ports.map(\.description).joined(separator: ", ") }
        return "in: \(list(inputs)); out: \(list(outputs))"
    }

    var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("inputs", array: inputs.map(\.jsonLine))
        line.add("outputs", array: outputs.map(\.jsonLine))
        return line
    }

    /// `{"type":"audioRoute","inputs":[…],"outputs":[…]}`: the answer to `getAudioRoute`.
    package var audioRouteLine: String {
        var line = JSONLine()
        line.add("type", "audioRoute")
        line.add("inputs", array: inputs.map(\.jsonLine))
        line.add("outputs", array: outputs.map(\.jsonLine))
        return line.text
    }
}

/// A change of the route (AVAudioSession's route-change notification): why, the route before
/// and the route now.
package struct AudioSessionRouteChange: Sendable, Equatable, CustomStringConvertible {
    /// `newDeviceAvailable`: the route moved to a device that appeared; `oldDeviceUnavailable`:
    /// a device of the route went away; `override`: the route moved to a device that was
    /// there already (a person chose it).
    package var reason: AudioRouteChange.Reason
    package var previous: AudioSessionRoute
    package var current: AudioSessionRoute
    package var time: Double

    package init(reason: AudioRouteChange.Reason, previous: AudioSessionRoute, current: AudioSessionRoute, time: Double) {
        self.reason = reason
        self.previous = previous
        self.current = current
        self.time = time
    }

    package var description: String {
        "audio route changed at \(String(format: "%.2f", time)) s (\(reason.rawValue)): \(previous) -> \(current)"
    }

    /// `{"type":"audioRouteChange","time":…,"reason":"…","previous":{"inputs":[…],"outputs":[…]},"current":{…}}`
    package var jsonLine: String {
        var line = JSONLine()
        line.add("type", "audioRouteChange")
        line.add("time", time, digits: 3)
        line.add("reason", reason.rawValue)
        line.add("previous", object: previous.jsonLine)
        line.add("current", object: current.jsonLine)
        return line.text
    }
}

/// The audio part of a PipeWire graph as `pw-dump` shows it: the audio nodes and the defaults
/// the session manager chose (the `default` metadata's `default.audio.sink` and
/// `default.audio.source`). Fed the arrays of objects `pw-dump --monitor` prints: a whole graph
/// first, then the objects that changed (a removed one is `{"id":N,"info":null}`; metadata
/// updates name only the keys that changed).
