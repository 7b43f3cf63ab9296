import CDockAudio
import Foundation

/// A video file joined with the sound of another (FFmpeg, packets copied, nothing re-encoded):
/// how `reframe` gives its output the input's audio track.
package enum SoundCopy {
    /// What became of the sound.
    package enum Outcome: Sendable, Equatable {
        case copied
        /// The video alone was written: the source had no sound, or the container cannot hold it.
        case videoOnly(reason: String)
    }

    /// Writes `output` (container from its name) with the video of `video` and the sound of
    /// `soundSource` from `start` seconds up to `end` (`nil`: its end), moved to start at 0.
    package static func mux(video: String, soundFrom soundSource: String, start: Double = 0, end: Double? = nil,
                           to output: String) throws(AudioError) -> Outcome {
        var status = daudio_status()
        let result = daudio_mux(video, soundSource, max(0, start.isFinite ? start : 0), end.map { $0.isFinite ? $0 : 0 } ?? 0,
                                output, &status)
        let message = AudioFileSource.message(status)
        switch result {
        case 1: return .copied
        case 0: return .videoOnly(reason: message)
        default: throw .failed(name: output, reason: message)
        }
    }
}
