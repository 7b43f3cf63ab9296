import DockTrackCore
import Foundation

/// Fuses voice activity with each face's mouth motion into `speakingConfidence`.
///
/// Sound alone cannot tell who speaks, and lips alone are unreliable when hard to see. Each
/// person with a visible face gets a score: half the visual speaking signal, half how well their
/// mouth openness follows the sound's level over the last second (correlation). While there is
/// voice activity, the best-scoring person is the speaker (confidence = voice activity) and the
/// others are scaled down by their score against the best; without voice activity, nobody's
/// confidence rises above it. Without any audio (``hasAudio`` false) the visual signal stands.
package struct AudioVisualSpeaking: Sendable {
    package struct Params: Sendable, Equatable {
        /// Voice activity is averaged over this long before the frame (s).
        package var activityWindow = 0.3
        /// Mouth and sound are compared over this long (s).
        package var syncWindow = 1.0
        /// A best score below this still makes a speaker of that person, scaled by it.
        package var minimumBestScore = 0.25

        package init() {}
    }

    package let params: Params
    private var windows: [VoiceActivity] = []
    /// Whether audio arrived recently (else the visual signal is used alone).
    package private(set) var hasAudio = false
    private var lastAudioTime = -Double.infinity

    package init(params: Params = Params()) {
        self.params = params
    }

    /// Adds analysed windows of the sound (from ``VoiceActivityDetector``).
    package mutating func add(_ activity: [VoiceActivity]) {
        guard let last = activity.last else { return }
        windows += activity
        lastAudioTime = last.time
        hasAudio = true
        let keep = last.time - max(params.syncWindow, params.activityWindow) - 1
        if let first = windows.firstIndex(where: { $0.time >= keep }), first > 0 { windows.removeFirst(first) }
    }

    /// The audio went away (route lost): visual only from now on.
    package mutating func audioLost() {
        hasAudio = false
        windows = []
    }

    /// Voice activity around `time`: the mean probability over the activity window.
    package func voiceActivity(at time: Double) -> Double? {
        let recent = windows.filter { $0.time > time - params.activityWindow && $0.time <= time + 0.02 }
        guard !recent.isEmpty else { return nil }
        return recent.map { $0.isSpeech ? max($0.probability, 0.9) : $0.probability }.reduce(0, +) / Double(recent.count)
    }

    /// Replaces the persons' `speakingConfidence` by the fused value at `time`. `mouth` gives a
    /// person's recent mouth-openness samples.
    package func fuse(_ subjects: inout [TrackedSubject], time: Double,
                     mouth: (UUID) -> [(time: Double, openness: Double)]) {
        guard hasAudio, let activity = voiceActivity(at: time) else { return }
        var scores: [Int: Double] = [:]
        for (i, subject) in subjects.enumerated() where subject.kind == .person {
            guard let visual = subject.speakingConfidence else { continue }
            scores[i] = 0.5 * visual + 0.5 * max(0, sync(mouth(subject.id), time: time))
        }
        guard let best = scores.values.max() else { return }
        let scale = max(best, params.minimumBestScore)
        for (i, score) in scores {
            let relative = score / scale
            subjects[i].speakingConfidence = activity * relative * relative
        }
    }

    /// Pearson correlation of the mouth openness with the sound's level at the same times.
    func sync(_ samples: [(time: Double, openness: Double)], time: Double) -> Double {
        let recent = samples.filter { $0.time > time - params.syncWindow }
        var pairs: [(Double, Double)] = []
        for sample in recent {
            let near = windows.filter { abs($0.time - sample.time) <= 0.02 }
            guard !near.isEmpty else { continue }
            pairs.append((sample.openness, near.map(\.level).reduce(0, +) / Double(near.count)))
        }
        guard pairs.count >= 4 else { return 0 }
        let n = Double(pairs.count)
        let mx = pairs.map(\.0).reduce(0, +) / n, my = pairs.map(\.1).reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (x, y) in pairs {
            sxy += (x - mx) * (y - my)
            sxx += (x - mx) * (x - mx)
            syy += (y - my) * (y - my)
        }
        guard sxx > 1e-12, syy > 1e-12 else { return 0 }
        return sxy / sqrt(sxx * syy)
    }
}
