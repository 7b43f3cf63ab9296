import DockTrackCore
import DockTrackSystem
import CDockAudio
import Foundation

/// Samples of one mono audio signal starting at `startTime` (seconds on the same clock as the
/// video frames it goes with).
public struct AudioChunk: Sendable, Equatable {
    public var startTime: Double
    public var samples: [Float]

    public init(startTime: Double, samples: [Float]) {
        self.startTime = startTime
        self.samples = samples
    }
}

/// Why audio could not be read. One line each, naming the input.
public enum AudioError: Error, Sendable, Equatable, CustomStringConvertible {
    case fileNotFound(path: String)
    /// A media file without an audio track.
    case noAudioTrack(path: String)
    case unreadable(path: String, reason: String)
    /// A capture device that cannot be opened (missing, busy, no permission).
    case deviceUnavailable(name: String, reason: String)
    /// A capture device that went away while being read.
    case deviceGone(name: String)
    case failed(name: String, reason: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path): "\(path): no such file"
        case .noAudioTrack(let path): "\(path): has no audio track"
        case .unreadable(let path, let reason): "\(path): audio cannot be read (\(reason))"
        case .deviceUnavailable(let name, let reason): "audio input \(name): cannot be opened (\(reason))"
        case .deviceGone(let name): "audio input \(name): went away"
        case .failed(let name, let reason): "\(name): audio reading failed (\(reason))"
        }
    }
}

/// Where audio comes from: a media file's audio track, a capture device, a test's fake.
public protocol AudioSource: AnyObject {
    var name: String { get }
    /// Samples per second of what ``read(maximum:)`` returns (mono).
    var sampleRate: Int { get }
    /// Up to `maximum` samples: `nil` at the end of the input; an empty chunk when a live
    /// input has nothing yet.
    func read(maximum: Int) throws(AudioError) -> AudioChunk?
}

/// The audio track of a media file (any container and codec FFmpeg reads), mono at `sampleRate`.
public final class AudioFileSource: AudioSource {
    public let name: String
    public let sampleRate: Int
    private let handle: OpaquePointer
    /// The track's own rate and channels, and its duration in seconds (0 when unknown).
    public let sourceRate: Int
    public let sourceChannels: Int
    public let duration: Double

    /// A named pipe (FIFO) is read once a writer has sent something into it; meanwhile `waiting`
    /// is told once and `stopping` ends the wait (as ``MediaFile/open(_:waiting:stopping:)``).
    public init(path: String, sampleRate: Int = VoiceActivityDetector.sampleRate,
                waiting: ((String) -> Void)? = nil,
                stopping: () -> Bool = { false }) throws(AudioError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path: path) }
        let heldOpen: Int32?
        do { heldOpen = try NamedPipeInput.heldForWriter(path, waiting: waiting ?? NamedPipeInput.tellOnStandardError, stopping: stopping) } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        // Held until FFmpeg has the pipe open itself: the writer never sees it readerless.
        defer { if let heldOpen { close(heldOpen) } }
        OutputFile.registerInput(path)
        name = path
        self.sampleRate = sampleRate
        var status = daudio_status()
        guard let handle = daudio_file_open(path, Int32(sampleRate), &status) else {
            let reason = Self.message(status)
            throw status.code == Int32(DAUDIO_ERR_NO_AUDIO.rawValue) ? .noAudioTrack(path: path) : .unreadable(path: path, reason: reason)
        }
        self.handle = handle
        sourceRate = Int(daudio_file_source_rate(handle))
        sourceChannels = Int(daudio_file_source_channels(handle))
        duration = daudio_file_duration(handle)
    }

    deinit { daudio_file_close(handle) }

    public func read(maximum: Int) throws(AudioError) -> AudioChunk? {
        var samples = [Float](repeating: 0, count: maximum)
        var start = 0.0
        var status = daudio_status()
        let count = samples.withUnsafeMutableBufferPointer { daudio_file_read(handle, $0.baseAddress, maximum, &start, &status) }
        if count < 0 { throw .unreadable(path: name, reason: Self.message(status)) }
        if count == 0 { return nil }
        samples.removeSubrange(count...)
        return AudioChunk(startTime: start, samples: samples)
    }

    /// Every sample of the file's audio track.
    public static func readAll(path: String, sampleRate: Int = VoiceActivityDetector.sampleRate) throws(AudioError) -> AudioChunk {
        let source = try AudioFileSource(path: path, sampleRate: sampleRate)
        var all: [Float] = []
        var start: Double?
        while let chunk = try source.read(maximum: 8192) {
            if start == nil { start = chunk.startTime }
            all += chunk.samples
        }
        return AudioChunk(startTime: start ?? 0, samples: all)
    }

    static func message(_ status: daudio_status) -> String {
        withUnsafeBytes(of: status.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

/// Live capture from an ALSA PCM device ("default", "hw:1,0", "null", ...), mono at `sampleRate`.
/// Times are seconds on `clock` (the monotonic clock, less `clockOrigin`), like camera frames.
public final class ALSACaptureSource: AudioSource {
    public let name: String
    public let sampleRate: Int
    private let handle: OpaquePointer
    private let clock: @Sendable () -> Double
    private let clockOrigin: Double
    /// Samples lost to overruns (the reader was too slow).
    public private(set) var lostSamples = 0

    public init(device: String, sampleRate: Int = VoiceActivityDetector.sampleRate, clockOrigin: Double = 0,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now) throws(AudioError) {
        name = device
        self.sampleRate = sampleRate
        self.clock = clock
        self.clockOrigin = clockOrigin
        var status = daudio_status()
        guard let handle = daudio_capture_open(device, Int32(sampleRate), &status) else {
            throw .deviceUnavailable(name: device, reason: AudioFileSource.message(status))
        }
        self.handle = handle
    }

    deinit { daudio_capture_close(handle) }

    /// Waits up to 20 ms; the chunk's time is when its last sample arrived, less its length.
    public func read(maximum: Int) throws(AudioError) -> AudioChunk? {
        var samples = [Float](repeating: 0, count: maximum)
        var status = daudio_status()
        var lost = 0
        let count = samples.withUnsafeMutableBufferPointer { daudio_capture_read(handle, $0.baseAddress, maximum, 20, &lost, &status) }
        lostSamples += lost
        if count < 0 {
            if status.code == Int32(DAUDIO_ERR_GONE.rawValue) { throw .deviceGone(name: name) }
            throw .failed(name: name, reason: AudioFileSource.message(status))
        }
        samples.removeSubrange(count...)
        let end = clock() - clockOrigin
        return AudioChunk(startTime: end - Double(count) / Double(sampleRate), samples: samples)
    }

    /// The ALSA PCM devices that can capture.
    public static func inputs() -> [AudioDevice] {
        var buffer = [CChar](repeating: 0, count: 65536)
        _ = daudio_capture_devices(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "\n").map { line in
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            return AudioDevice(id: parts[0], name: parts.count > 1 ? parts[1] : parts[0])
        }
    }
}
