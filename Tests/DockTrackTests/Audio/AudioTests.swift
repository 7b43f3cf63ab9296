import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// Sound: decoding, voice activity on real speech and on synthetic noise, fusion with mouth
/// motion, and audio route changes while the pipeline runs.
@Suite(.onTestThreads) struct AudioTests {
    /// Megamind.avi's speech, read by hand off its spectrogram (samples/Megamind.speech.json).
    static func handCheckedSpeech() throws -> [SpeechSegment] {
        struct Reference: Decodable { var speech: [[Double]] }
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.sample("Megamind.speech.json")))
        return try JSONDecoder().decode(Reference.self, from: data).speech.map { SpeechSegment(start: $0[0], end: $0[1]) }
    }

    static func activity(of chunk: AudioChunk) -> [VoiceActivity] {
        var detector = VoiceActivityDetector()
        var results: [VoiceActivity] = []
        // Fed in 100 ms pieces, as a live input delivers it.
        for start in stride(from: 0, to: chunk.samples.count, by: 1600) {
            let piece = Array(chunk.samples[start..<min(start + 1600, chunk.samples.count)])
            results += detector.process(AudioChunk(startTime: chunk.startTime + Double(start) / 16_000, samples: piece))
        }
        return results
    }

    @Test func theAudioTrackOfAVideoIsDecodedMonoAt16kHz() throws {
        let audio = try AudioFileSource.readAll(path: Fixtures.sample("Megamind.avi"))
        #expect(abs(Double(audio.samples.count) / 16_000 - 11.23) < 0.1, "\(Double(audio.samples.count) / 16_000) s")
        #expect(audio.startTime < 0.05)
        let source = try AudioFileSource(path: Fixtures.sample("Megamind.avi"))
        #expect(source.sourceRate == 48_000 && source.sourceChannels == 2)
        #expect(audio.samples.allSatisfy { abs($0) <= 1.01 } && audio.samples.contains { abs($0) > 0.1 })
        #expect(throws: AudioError.noAudioTrack(path: Fixtures.sample("vtest.avi"))) { _ = try AudioFileSource(path: Fixtures.sample("vtest.avi")) }
        #expect(throws: AudioError.fileNotFound(path: "/nonexistent.wav")) { _ = try AudioFileSource(path: "/nonexistent.wav") }
    }

    @Test func voiceActivityMatchesTheHandCheckedSpeechOfMegamind() throws {
        let audio = try AudioFileSource.readAll(path: Fixtures.sample("Megamind.avi"))
        let found = VoiceActivityDetector.segments(Self.activity(of: audio))
        let truth = try Self.handCheckedSpeech()
        func inside(_ t: Double, _ segments: [SpeechSegment]) -> Bool { segments.contains { $0.start <= t && t < $0.end } }
        var tp = 0, fp = 0, fn = 0
        for i in 0..<1123 {
            let t = Double(i) / 100
            switch (inside(t, truth), inside(t, found)) {
            case (true, true): tp += 1
            case (false, true): fp += 1
            case (true, false): fn += 1
            default: break
            }
        }
        let precision = Double(tp) / Double(tp + fp), recall = Double(tp) / Double(tp + fn)
        #expect(precision >= 0.8 && recall >= 0.85, "precision \(precision), recall \(recall): \(found)")
        // 8.0...9.4 s holds only the score's steady tones: no speech there.
        #expect(!found.contains { $0.end > 8.3 && $0.start < 9.3 }, "\(found)")
    }

    @Test func vadPrintsSegmentsAndSaysWhatIsWrong() throws {
        let run = try ToolRun.docktrack(["vad", Fixtures.sample("Megamind.avi")])
        #expect(run.status == 0, "\(run.stderr)")
        let segments = try run.lines.map { try JSONDecoder().decode(SpeechSegment.self, from: Data($0.utf8)) }
        #expect(segments.count >= 3 && segments.allSatisfy { $0.end > $0.start } && segments.last!.end > 10.5, "\(run.stdout)")
        let silent = try ToolRun.docktrack(["vad", Fixtures.sample("vtest.avi")])
        #expect(silent.status == 1 && silent.stderr == "docktrack: \(Fixtures.sample("vtest.avi")): has no audio track\n", "\(silent.stderr)")
        let missing = try ToolRun.docktrack(["vad", "/nonexistent.wav"])
        #expect(missing.status == 1 && missing.stderr.contains("no such file"))
    }

    @Test func steadyToneNoiseAndHumAreNotSpeech() {
        let rate = 16_000.0
        var generator = SystemRandomNumberGenerator()
        let tone = (0..<80_000).map { Float(0.3 * sin(2 * .pi * 440 * Double($0) / rate)) }
        let noise = (0..<80_000).map { _ in Float.random(in: -0.3...0.3, using: &generator) }
        // Mains hum with harmonics, slowly beating, like a badly grounded amplifier or an organ note.
        let hum = (0..<80_000).map { i -> Float in
            let t = Double(i) / rate
            let partials = [1.0, 2, 3, 4, 6].enumerated().map { 0.12 / Double($0.offset + 1) * sin(2 * .pi * 100 * $0.element * t) }
            return Float(partials.reduce(0, +) * (1 + 0.1 * sin(2 * .pi * 0.7 * t)))
        }
        for (name, samples) in [("tone", tone), ("noise", noise), ("hum", hum)] {
            let activity = Self.activity(of: AudioChunk(startTime: 0, samples: samples))
            let speech = VoiceActivityDetector.segments(activity)
            #expect(speech.isEmpty, "\(name): \(speech)")
            #expect(activity.filter(\.isSpeech).count < 10, "\(name): \(activity.filter(\.isSpeech).count) windows")
        }
        // Silence too.
        #expect(VoiceActivityDetector.segments(Self.activity(of: AudioChunk(startTime: 0, samples: [Float](repeating: 0, count: 32_000)))).isEmpty)
    }

    @Test func theSpeakerIsThePersonWhoseMouthMovesWithTheSound() {
        var fusion = AudioVisualSpeaking()
        // Sound: syllables every 0.25 s for 2 s, the level swinging 20 dB.
        let windows = stride(from: 0.0, to: 2.0, by: 0.01).map { t in
            VoiceActivity(time: t, probability: 0.9, isSpeech: true, level: -40 + 20 * max(0, sin(2 * .pi * 4 * t)))
        }
        fusion.add(windows)
        let a = UUID(), b = UUID()
        // A's mouth opens with the syllables; B's moves as much, out of step.
        let frames = stride(from: 1.0, to: 2.0, by: 1.0 / 30)
        let mouthA = frames.map { (time: $0, openness: 0.1 + 0.1 * max(0, sin(2 * .pi * 4 * $0))) }
        let mouthB = frames.map { (time: $0, openness: 0.1 + 0.1 * max(0, sin(2 * .pi * 4 * $0 + .pi))) }
        func subjects() -> [TrackedSubject] {
            [TrackedSubject(id: a, kind: .person, rect: UnitRect(x: 0.1, y: 0.3, width: 0.2, height: 0.4), speakingConfidence: 0.6),
             TrackedSubject(id: b, kind: .person, rect: UnitRect(x: 0.6, y: 0.3, width: 0.2, height: 0.4), speakingConfidence: 0.6)]
        }
        var both = subjects()
        fusion.fuse(&both, time: 1.95) { $0 == a ? mouthA : mouthB }
        #expect(both[0].speakingConfidence! > 0.8, "\(both)")
        #expect(both[1].speakingConfidence! < 0.3, "\(both)")
        // No voice: nobody's confidence is high, whatever the lips do.
        var quiet = AudioVisualSpeaking()
        quiet.add(stride(from: 0.0, to: 2.0, by: 0.01).map { VoiceActivity(time: $0, probability: 0.02, isSpeech: false, level: -70) })
        var silent = subjects()
        quiet.fuse(&silent, time: 1.95) { $0 == a ? mouthA : mouthB }
        #expect(silent.allSatisfy { $0.speakingConfidence! < 0.1 }, "\(silent)")
        // No audio at all: the visual signal stands.
        var visual = subjects()
        AudioVisualSpeaking().fuse(&visual, time: 1.95) { _ in mouthA }
        #expect(visual.map(\.speakingConfidence) == [0.6, 0.6])
    }

    @Test func megamindSpeaksWhileThereIsSpeechAndNotInTheSilence() throws {
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make("default", models: Fixtures.models),
                                        cues: FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: Fixtures.models)),
                                        identifiers: .sequential)
        pipeline.listener = SpeechListener(.file(try AudioFileSource(path: Fixtures.sample("Megamind.avi"))))
        var source = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        let truth = try Self.handCheckedSpeech()
        var speaking: [Double] = [], silent: [Double] = []
        while let frame = try source.nextFrame() {
            let subjects = try pipeline.process(frame)
            guard let confidence = subjects.compactMap(\.speakingConfidence).max() else { continue }
            if truth.contains(where: { $0.start + 0.3 <= frame.time && frame.time < $0.end }) { speaking.append(confidence) }
            if frame.time > 8.3 && frame.time < 9.3 { silent.append(confidence) }
        }
        let meanSpeaking = speaking.reduce(0, +) / Double(max(1, speaking.count))
        #expect(speaking.count > 100 && silent.count > 20)
        #expect(meanSpeaking > 0.55, "mean speaking confidence during speech \(meanSpeaking)")
        #expect(silent.allSatisfy { $0 < 0.5 }, "during the silence: \(silent)")
    }
}


@Suite(.onTestThreads) struct AudioRouteTests {
    @Test func inputsComingAndGoingAreAnnouncedAndTrackingNeverStops() throws {
        let micA = AudioDevice(id: "hw:1,0", name: "USB microphone"), headset = AudioDevice(id: "hw:2,0", name: "Headset")
        let system = FakeAudioSystem(inputs: [micA], recording: try AudioFileSource.readAll(path: Fixtures.sample("Megamind.avi")))
        var changes: [AudioRouteChange] = []
        let listener = SpeechListener(.live(AudioRouter(system: system, pollInterval: 0.2)), onRouteChange: { changes.append($0) })
        #expect(listener.currentInput == micA.description)
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make("default", models: Fixtures.models),
                                        cues: FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: Fixtures.models)),
                                        identifiers: .sequential)
        pipeline.listener = listener
        var source = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        var processed = 0, withSpeakingCue = 0
        var inputs: [Int: String?] = [:]
        while let frame = try source.nextFrame() {
            system.clock.set(to: frame.time)
            switch frame.index {
            case 48: system.inputs.append(headset)        // a headset is plugged in: the route moves to it
            case 96: system.inputs.removeAll { $0 == headset }   // and pulled out: back to the microphone
            case 150: system.inputs = []                   // the microphone goes too: visual only
            case 200: system.inputs = [micA]               // it is back
            default: break
            }
            let subjects = try pipeline.process(frame)
            processed += 1
            if subjects.contains(where: { $0.speakingConfidence != nil }) { withSpeakingCue += 1 }
            inputs[frame.index] = listener.currentInput
        }
        #expect(processed == 270, "every frame was tracked")
        #expect(withSpeakingCue > 200, "speaking confidence went on, visual only in between: \(withSpeakingCue)")
        #expect(changes.map(\.reason) == [.newDeviceAvailable, .oldDeviceUnavailable, .oldDeviceUnavailable, .newDeviceAvailable], "\(changes)")
        #expect(changes.map(\.previous) == [micA, headset, micA, nil])
        #expect(changes.map(\.current) == [headset, micA, nil, micA])
        #expect(changes.map(\.time).allSatisfy { $0 > 1.9 && $0 < 10 })
        #expect(inputs[120] == headset.description || inputs[120] == micA.description)
        #expect(inputs[170] == .some(nil) && inputs[260] == micA.description)
        #expect(changes[2].jsonLine.contains("\"reason\":\"oldDeviceUnavailable\",\"previous\":\"hw:1,0\",\"current\":null"), "\(changes[2].jsonLine)")
    }

    @Test func alsaCaptureThroughTheRealLibrary() throws {
        // alsa-lib's "null" PCM captures silence on any machine: the real capture path, no speech.
        let null = try ALSACaptureSource(device: "null")
        var detector = VoiceActivityDetector()
        var samples = 0, speech = 0
        for _ in 0..<20 {
            guard let chunk = try null.read(maximum: 1600) else { break }
            samples += chunk.samples.count
            speech += detector.process(chunk).filter(\.isSpeech).count
        }
        #expect(samples > 0 && samples <= 20 * 1600, "the null device gave its silence, no more than asked for: \(samples)")
        #expect(speech == 0)
        #expect(throws: AudioError.self) { _ = try ALSACaptureSource(device: "hw:97,0") }
        do {
            _ = try ALSACaptureSource(device: "hw:97,0")
        } catch {
            #expect(error.description.hasPrefix("audio input hw:97,0: cannot be opened"), "\(error)")
        }
    }
}
