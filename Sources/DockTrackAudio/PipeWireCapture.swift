import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sound from PipeWire's default input, through `pw-record` (pipewire-bin): 16-bit mono at
/// `sampleRate`, raw on a pipe. The stream names no target, so the session manager moves it
/// to whatever input becomes the default: the sound follows the route
/// (``PipeWireRouteWatcher`` tells the changes).
package final class PipeWireCaptureSource: AudioSource {
    package let name = "pipewire"
    package let sampleRate: Int
    private let process: Process
    private let fd: Int32
    private let pipe: Pipe
    private let clock: @Sendable () -> Double
    private let clockOrigin: Double
    private var pending: [UInt8] = []

    package init(sampleRate: Int = VoiceActivityDetector.sampleRate, clockOrigin: Double = 0,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now) throws(AudioError) {
        guard let record = PipeWireRouteWatcher.find("pw-record") else {
            throw .deviceUnavailable(name: "pipewire", reason: "pw-record is not installed (Debian: pipewire-bin)")
        }
        self.sampleRate = sampleRate
        self.clock = clock
        self.clockOrigin = clockOrigin
        // Unbuffered (stdbuf): a block of its C library's buffer is 128 ms of this sound.
        let (process, pipe) = try PipeWireRouteWatcher.start(
            record, ["--rate", "\(sampleRate)", "--channels", "1", "--format", "s16", "--latency", "20ms",
                     "-P", "{ node.name=docktrack-sound node.description=\"DockTrack speaking detection\" }", "-"], runtimeDirectory: nil)
        self.process = process
        self.pipe = pipe
        fd = pipe.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// What has arrived, without waiting (a graph without an input sends nothing, and a frame
    /// must not wait for it: 20 ms a frame made the emulated camera's run miss people); the
    /// chunk's time is when its last sample arrived, less its length. `deviceGone` when
    /// pw-record ended (the daemon went away).
    package func read(maximum: Int) throws(AudioError) -> AudioChunk? {
        var buffer = [UInt8](repeating: 0, count: max(2, maximum * 2 - pending.count))
        let n = Glibc.read(fd, &buffer, buffer.count)
        if n == 0 { throw .deviceGone(name: name) }
        if n > 0 { pending += buffer[0..<n] }
        let count = min(maximum, pending.count / 2)
        var samples = [Float](repeating: 0, count: count)
        for i in 0..<count {
            samples[i] = Float(Int16(bitPattern: UInt16(pending[2 * i]) | UInt16(pending[2 * i + 1]) << 8)) / 32768
        }
        pending.removeFirst(count * 2)
        let end = clock() - clockOrigin
        return AudioChunk(startTime: end - Double(count) / Double(sampleRate), samples: samples)
    }
}

/// PipeWire as the system of inputs: one input, the default (``PipeWireCaptureSource``
/// follows it as it changes).
package final class PipeWireInputSystem: AudioInputSystem {
    package let clockOrigin: Double
    package static let defaultInput = AudioDevice(id: "pipewire", name: "PipeWire's default input")
    package init(clockOrigin: Double = MonotonicClock.now()) { self.clockOrigin = clockOrigin }
    package func availableInputs() -> [AudioDevice] { [Self.defaultInput] }
    package func open(_ device: AudioDevice) throws(AudioError) -> any AudioSource {
        try PipeWireCaptureSource(clockOrigin: clockOrigin)
    }
}
