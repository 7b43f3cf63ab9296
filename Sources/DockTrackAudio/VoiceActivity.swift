import DockTrackCore
import Foundation

/// One analysis window's verdict.
package struct VoiceActivity: Sendable, Equatable {
    /// The window's centre, seconds.
    package var time: Double
    /// How likely the window holds speech, 0...1 (before hangover).
    package var probability: Double
    /// The decision after smoothing and hangover.
    package var isSpeech: Bool
    /// The window's level, dB relative to full scale.
    package var level: Double

    package init(time: Double, probability: Double, isSpeech: Bool, level: Double) {
        self.time = time
        self.probability = probability
        self.isSpeech = isSpeech
        self.level = level
    }
}

/// A stretch of speech, seconds.
package struct SpeechSegment: Sendable, Equatable, Codable {
    package var start: Double
    package var end: Double

    package init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }
}

/// Voice activity detection on mono audio at 16 kHz: energy above an adaptive noise floor,
/// the speech band's share of the spectrum, voicing (periodicity at speech pitch), and the
/// syllable-rate modulation of the level that speech has and steady noise, tones and hum do not;
/// combined into a per-window probability, then smoothed and held over short pauses (hangover).
///
/// Feed samples in order with ``process(_:)``; every 10 ms window yields one ``VoiceActivity``.
public struct VoiceActivityDetector: Sendable {
    public static let sampleRate = 16_000

    public struct Params: Sendable, Equatable {
        /// Analysis window and hop, samples.
        public var window = 512
        public var hop = 160
        /// Level above the noise floor (dB) at which the level term is one half.
        public var snrMidpoint = 9.0
        /// Standard deviation of the level over `modulationWindow` (dB) at which the
        /// modulation term is one half.
        public var modulationMidpoint = 3.0
        public var modulationWindow = 0.5
        /// Normalized autocorrelation at speech pitch (80...400 Hz) at which voicing is one half.
        public var voicingMidpoint = 0.35
        /// Share of energy in 250...3800 Hz at which the band term is one half.
        public var bandMidpoint = 0.45
        /// The noise floor follows a falling level at once and a rising one at this many dB/s.
        public var floorRise = 3.0
        /// Decision threshold on the smoothed probability, smoothing time constant (s).
        public var threshold = 0.3
        public var smoothing = 0.05
        /// Speech is held this long after the last speech window (s).
        public var hangover = 0.25
        /// The noise floor starts this far (dB) under the first window's level.
        public var initialMargin = 10.0
        /// Levels below this (dBFS) are silence whatever else.
        public var silence = -60.0

        public init() {}
    }

    public let params: Params
    private var buffer: [Float] = []
    private var bufferStart = 0.0
    private var started = false
    private var floor: Double?
    private var levels: [Double] = []
    private var smoothed = 0.0
    private var lastSpeech = -Double.infinity
    private let fft: RealFFT
    private let hann: [Float]

    public init(params: Params = Params()) {
        self.params = params
        fft = RealFFT(size: params.window)
        hann = (0..<params.window).map { Float(0.5 - 0.5 * cos(2 * .pi * Double($0) / Double(params.window - 1))) }
    }

    /// Analyses `chunk` (16 kHz mono) after what came before; a gap in time restarts the buffer.
    package mutating func process(_ chunk: AudioChunk) -> [VoiceActivity] {
        let rate = Double(Self.sampleRate)
        let expected = bufferStart + Double(buffer.count) / rate
        if !started || abs(chunk.startTime - expected) > 0.05 {
            buffer = []
            bufferStart = chunk.startTime
            started = true
        }
        buffer += chunk.samples
        var results: [VoiceActivity] = []
        var offset = 0
        while offset + params.window <= buffer.count {
            let time = bufferStart + (Double(offset) + Double(params.window) / 2) / rate
            results.append(analyse(buffer[offset..<(offset + params.window)], time: time))
            offset += params.hop
        }
        buffer.removeFirst(offset)
        bufferStart += Double(offset) / rate
        return results
    }

    private mutating func analyse(_ frame: ArraySlice<Float>, time: Double) -> VoiceActivity {
        let hopSeconds = Double(params.hop) / Double(Self.sampleRate)
        let power = frame.reduce(0) { $0 + Double($1) * Double($1) } / Double(frame.count)
        let level = 10 * log10(power + 1e-12)
        // Noise floor: down at once, up slowly (a steady sound becomes the floor in seconds).
        // (It starts `initialMargin` under the first window's level, so speech at the very start counts.)
        let currentFloor = floor.map { level < $0 ? level : $0 + min(level - $0, params.floorRise * hopSeconds) } ?? level - params.initialMargin
        floor = currentFloor
        levels.append(level)
        let keep = max(2, Int(params.modulationWindow / hopSeconds))
        if levels.count > keep { levels.removeFirst(levels.count - keep) }

        let windowed = zip(frame, hann).map { $0 * $1 }
        let spectrum = fft.powerSpectrum(windowed)
        let binHz = Double(Self.sampleRate) / Double(params.window)
        let total = spectrum.reduce(0, +) + 1e-12
        let speechBand = spectrum[Int(250 / binHz)...Int(3800 / binHz)].reduce(0, +)
        let bandShare = speechBand / total

        let snr = level - currentFloor
        let modulation = Statistics.standardDeviation(levels)
        let pLevel = Self.sigmoid((snr - params.snrMidpoint) / 2.5)
        let pModulation = Self.sigmoid((modulation - params.modulationMidpoint) / 0.8)
        let pBand = Self.sigmoid((bandShare - params.bandMidpoint) / 0.08)
        // Voicing (the costly term) only where the others leave a chance of speech.
        let others = pLevel * pModulation * pBand
        let pVoicing = others < 0.01 ? 0 : Self.sigmoid((Self.voicing(frame) - params.voicingMidpoint) / 0.08)
        var probability = others * (0.25 + 0.75 * pVoicing)
        if level < params.silence { probability = 0 }

        let alpha = min(1, hopSeconds / params.smoothing)
        smoothed += alpha * (probability - smoothed)
        if smoothed >= params.threshold { lastSpeech = time }
        return VoiceActivity(time: time, probability: probability, isSpeech: time - lastSpeech <= params.hangover, level: level)
    }

    /// The largest normalized autocorrelation at lags of 80...400 Hz pitch.
    static func voicing(_ frame: ArraySlice<Float>) -> Double {
        let x = Array(frame)
        let mean = x.reduce(0, +) / Float(x.count)
        let centred = x.map { Double($0 - mean) }
        let energy = centred.reduce(0) { $0 + $1 * $1 }
        guard energy > 1e-9 else { return 0 }
        var best = 0.0
        for lag in stride(from: sampleRate / 400, through: sampleRate / 80, by: 1) {
            var sum = 0.0, e1 = 0.0, e2 = 0.0
            for i in 0..<(centred.count - lag) {
                sum += centred[i] * centred[i + lag]
                e1 += centred[i] * centred[i]
                e2 += centred[i + lag] * centred[i + lag]
            }
            best = max(best, sum / (sqrt(e1 * e2) + 1e-12))
        }
        return best
    }

    static func sigmoid(_ x: Double) -> Double { 1 / (1 + exp(-x)) }

    /// Speech segments from windows in time order: runs of `isSpeech`, joined across gaps shorter
    /// than `joinGap`, those shorter than `minimumLength` dropped.
    package static func segments(_ windows: [VoiceActivity], joinGap: Double = 0.2, minimumLength: Double = 0.15) -> [SpeechSegment] {
        var segments: [SpeechSegment] = []
        var current: SpeechSegment?
        for window in windows {
            if window.isSpeech {
                if var open = current {
                    open.end = window.time
                    current = open
                } else if let last = segments.last, window.time - last.end < joinGap {
                    current = segments.removeLast()
                    current!.end = window.time
                } else {
                    current = SpeechSegment(start: window.time, end: window.time)
                }
            } else if let open = current {
                segments.append(open)
                current = nil
            }
        }
        if let open = current { segments.append(open) }
        return segments.filter { $0.end - $0.start >= minimumLength }
    }
}

/// A radix-2 FFT of real frames (power spectrum only), sized once.
struct RealFFT: Sendable {
    let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosines = (0..<size / 2).map { cos(-2 * .pi * Double($0) / Double(size)) }
        sines = (0..<size / 2).map { sin(-2 * .pi * Double($0) / Double(size)) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    /// |X(k)|² for k = 0...size/2.
    func powerSpectrum(_ frame: [Float]) -> [Double] {
        var re = [Double](repeating: 0, count: size), im = [Double](repeating: 0, count: size)
        for i in 0..<min(size, frame.count) { re[reversed[i]] = Double(frame[i]) }
        var length = 2
        while length <= size {
            let half = length / 2, step = size / length
            for start in stride(from: 0, to: size, by: length) {
                for k in 0..<half {
                    let c = cosines[k * step], s = sines[k * step]
                    let a = start + k, b = a + half
                    let tr = re[b] * c - im[b] * s, ti = re[b] * s + im[b] * c
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                }
            }
            length *= 2
        }
        return (0...size / 2).map { re[$0] * re[$0] + im[$0] * im[$0] }
    }
}
