import DockTrackCore
import DockTrackAudio
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fake audio system behind the same seam as ALSA: inputs come and go as the test says; each
/// input plays a recording up to the time on `clock`.
public final class FakeAudioSystem: AudioInputSystem {
    public var inputs: [AudioDevice]
    public let recording: AudioChunk
    /// The time the inputs have played up to.
    public let clock: ManualClock
    public private(set) var opened: [String] = []

    public init(inputs: [AudioDevice], recording: AudioChunk, clock: ManualClock = ManualClock()) {
        self.clock = clock
        self.inputs = inputs
        self.recording = recording
    }

    public func availableInputs() -> [AudioDevice] { inputs }

    public func open(_ device: AudioDevice) throws(AudioError) -> any AudioSource {
        guard inputs.contains(device) else { throw .deviceUnavailable(name: device.id, reason: "no such device") }
        opened.append(device.id)
        return Microphone(system: self, device: device)
    }

    public final class Microphone: AudioSource {
        public unowned let system: FakeAudioSystem
        public let device: AudioDevice
        public var name: String { device.id }
        public let sampleRate = 16_000
        private var position: Int

        init(system: FakeAudioSystem, device: AudioDevice) {
            self.system = system
            self.device = device
            position = max(0, Int(system.clock.now() * 16_000))
        }

        public func read(maximum: Int) throws(AudioError) -> AudioChunk? {
            guard system.inputs.contains(device) else { throw .deviceGone(name: device.id) }
            let now = system.clock.now()
            let end = min(system.recording.samples.count, Int(now * 16_000), position + maximum)
            guard end > position else { return AudioChunk(startTime: now, samples: []) }
            defer { position = end }
            return AudioChunk(startTime: Double(position) / 16_000, samples: Array(system.recording.samples[position..<end]))
        }
    }
}
