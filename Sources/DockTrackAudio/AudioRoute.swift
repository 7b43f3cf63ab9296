import DockTrackCore
import Foundation

/// The audio inputs a system has, and how to open one: ALSA on Linux (``ALSAInputSystem``), a
/// fake in tests. ``AudioRouter`` asks it which inputs exist and notices when that changes.
public protocol AudioInputSystem: AnyObject {
    func availableInputs() -> [AudioDevice]
    func open(_ device: AudioDevice) throws(AudioError) -> any AudioSource
}

/// ALSA's capture PCMs; samples timed on the monotonic clock less `clockOrigin` (a camera's).
public final class ALSAInputSystem: AudioInputSystem {
    public let clockOrigin: Double
    public init(clockOrigin: Double = MonotonicClock.now()) { self.clockOrigin = clockOrigin }
    public func availableInputs() -> [AudioDevice] { ALSACaptureSource.inputs() }
    public func open(_ device: AudioDevice) throws(AudioError) -> any AudioSource {
        try ALSACaptureSource(device: device.id, clockOrigin: clockOrigin)
    }
}

/// A change of the audio input in use, as a system reports it.
public struct AudioRouteChange: Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        /// An input appeared and the route moved to it.
        case newDeviceAvailable
        /// The input in use disappeared (or failed); the route moved to another, or to none.
        case oldDeviceUnavailable
        /// The route moved to a device that was there already: a person chose it (PipeWire's
        /// default changed).
        case override
    }

    public var reason: Reason
    public var previous: AudioDevice?
    /// `nil`: no audio input; speaking is judged from the picture alone.
    public var current: AudioDevice?
    public var time: Double

    public var description: String {
        "audio route changed at \(String(format: "%.2f", time)) s (\(reason.rawValue)): \(previous?.description ?? "none") -> \(current?.description ?? "none, visual only")"
    }

    /// `{"event":"audioRouteChange","time":…,"reason":"…","previous":"…","current":null}`.
    public var jsonLine: String {
        var line = JSONLine()
        line.add("event", "audioRouteChange")
        line.add("time", time, digits: 3)
        line.add("reason", reason.rawValue)
        line.add("previous", previous?.id)
        line.add("current", current?.id)
        return line.text
    }
}

/// Keeps one audio input open, follows the system's inputs as they come and go, and reads.
///
/// Policy (what a person expects of a laptop): a newly plugged input takes over; when the input
/// in use goes away or fails, the route moves to another available one, or to none (visual only);
/// nothing here throws, so tracking never stops because of audio.
public final class AudioRouter {
    private let system: any AudioInputSystem
    private let pollInterval: Double
    private var known: [AudioDevice] = []
    private var failed: Set<AudioDevice> = []
    private var lastPoll = -Double.infinity
    private var source: (any AudioSource)?
    public private(set) var current: AudioDevice?

    /// Opens `preferred` (an input id) when available, else the first input.
    public init(system: any AudioInputSystem, preferred: String? = nil, pollInterval: Double = 1.0) {
        self.system = system
        self.pollInterval = pollInterval
        known = system.availableInputs()
        let first = known.first { $0.id == preferred } ?? (preferred == nil ? known.first : nil)
        if let first { _ = switchTo(first) }
    }

    /// Checks the inputs (every `pollInterval` s) and reads what the current input has.
    public func update(at time: Double) -> (chunks: [AudioChunk], changes: [AudioRouteChange]) {
        var changes: [AudioRouteChange] = []
        if time - lastPoll >= pollInterval {
            lastPoll = time
            let now = system.availableInputs()
            let added = now.filter { !known.contains($0) }
            let removed = known.filter { !now.contains($0) }
            known = now
            failed.subtract(removed)
            if let current, removed.contains(current) {
                changes.append(moveAway(from: current, reason: .oldDeviceUnavailable, time: time, preferring: added))
            } else if let newest = added.last {
                let previous = current
                if switchTo(newest) {
                    changes.append(AudioRouteChange(reason: .newDeviceAvailable, previous: previous, current: newest, time: time))
                }
            }
        }
        var chunks: [AudioChunk] = []
        while let source, let device = current {
            do {
                guard let chunk = try source.read(maximum: 4096) else {
                    failed.insert(device)
                    changes.append(moveAway(from: device, reason: .oldDeviceUnavailable, time: time, preferring: []))
                    break
                }
                if chunk.samples.isEmpty { break }
                chunks.append(chunk)
                if chunk.startTime + Double(chunk.samples.count) / Double(source.sampleRate) >= time { break }
            } catch {
                failed.insert(device)
                changes.append(moveAway(from: device, reason: .oldDeviceUnavailable, time: time, preferring: []))
                break
            }
        }
        return (chunks, changes)
    }

    private func moveAway(from device: AudioDevice, reason: AudioRouteChange.Reason, time: Double,
                          preferring: [AudioDevice]) -> AudioRouteChange {
        source = nil
        current = nil
        for candidate in preferring.reversed() + known where candidate != device && !failed.contains(candidate) {
            if switchTo(candidate) { break }
        }
        return AudioRouteChange(reason: reason, previous: device, current: current, time: time)
    }

    private func switchTo(_ device: AudioDevice) -> Bool {
        do {
            source = try system.open(device)
            current = device
            return true
        } catch {
            failed.insert(device)
            return false
        }
    }
}

/// The sound's part in the pipeline: reads audio up to each frame's time (from a media file's
/// own track, or live through an ``AudioRouter``), detects voice activity, announces route
/// changes, and fuses it with the faces' mouth motion into `speakingConfidence`.
public final class SpeechListener {
    public enum Input {
        case file(AudioFileSource)
        case live(AudioRouter)
    }

    private let input: Input
    private var detector = VoiceActivityDetector()
    package private(set) var fusion = AudioVisualSpeaking()
    private var fileEnded = false
    private let onRouteChange: (AudioRouteChange) -> Void

    public init(_ input: Input, onRouteChange: @escaping (AudioRouteChange) -> Void = { _ in }) {
        self.input = input
        self.onRouteChange = onRouteChange
    }

    /// The input in use now (a file's path or a device), `nil` when visual only.
    public var currentInput: String? {
        switch input {
        case .file(let source): fileEnded ? nil : source.name
        case .live(let router): router.current?.description
        }
    }

    /// Reads and analyses the sound up to `time` (seconds on the frames' clock).
    public func listen(until time: Double) {
        switch input {
        case .file(let source):
            while !fileEnded {
                do {
                    guard let chunk = try source.read(maximum: 1600) else {
                        fileEnded = true
                        break
                    }
                    fusion.add(detector.process(chunk))
                    if chunk.startTime + Double(chunk.samples.count) / Double(source.sampleRate) >= time { break }
                } catch {
                    fileEnded = true
                }
            }
            if fileEnded { fusion.audioLost() }
        case .live(let router):
            let (chunks, changes) = router.update(at: time)
            for change in changes {
                onRouteChange(change)
                detector = VoiceActivityDetector()
                fusion.audioLost()
            }
            for chunk in chunks { fusion.add(detector.process(chunk)) }
        }
    }

    /// Fuses voice activity into the persons' speaking confidence at `time`.
    public func fuse(_ subjects: inout [TrackedSubject], time: Double, mouth: (UUID) -> [(time: Double, openness: Double)]) {
        fusion.fuse(&subjects, time: time, mouth: mouth)
    }
}
