import DockTrackCore
import DockTrackMedia
import DockTrackDetection
import DockTrackAudio
import Foundation

/// Detection, tracking, face cues and ranking over a stream of frames: one call per frame.
///
/// The detector runs on every `detectEvery`-th frame; between, people move by their motion
/// model and objects by their visual tracker. Face cues (speaking, looking at the camera) are
/// read on every frame, since mouth motion needs consecutive frames.
public final class TrackingPipeline {
    public struct Params: Sendable, Equatable {
        /// Run the detector on every Nth frame.
        public var detectEvery = 1
        public var minimumConfidence = 0.5
        /// Seconds an object may go unfound by its visual tracker before it is dropped.
        public var objectLostAfter = 1.0
        /// Move the tracked boxes with the whole picture when the camera turns or shakes
        /// (``CameraShiftEstimator``), before they are predicted and matched.
        public var followsCameraMotion = true
        /// Adapt the detection interval instead of `detectEvery`: after a detection that left the
        /// tracked subjects as they were (the same identities, all observed), the interval
        /// doubles up to `maximumDetectionInterval`; after any change it is back to every frame.
        public var adaptiveDetection = false
        public var maximumDetectionInterval = 8
        /// Detect on a worker thread, newest frame wins (for live input): every frame is tracked
        /// at once by the motion model, and each finished detection is folded in at the frame
        /// in hand (it is one detection time old). The thread detects no more often than every
        /// `detectEvery` frames (the newest frame once that many have passed); adaptive detection
        /// is unused.
        public var asyncDetection = false
        /// A part of a combined detector (faces, bodies) that found nothing waits up to this
        /// many detection rounds before it runs again (``IdlePartSchedule``); 1 runs every part
        /// every round. 8 rather than 4, with `fullSearchInterval` 8: track with no options on
        /// Megamind at 1280x720 127 -> 162 fps, vtest.avi's labelled walks unchanged (17, 0).
        public var idlePartInterval = 8
        /// A part that found something looks only for things at least half the size of the
        /// smallest it found, and for everything every this many runs (``IdlePartSchedule``);
        /// 1 searches every size every run.
        public var fullSearchInterval = 8
        /// A part that found faces only runs every this many rounds (``IdlePartSchedule``):
        /// ``faceRoundIntervalWithRedetection`` when `redetector` looks for each tracked face on
        /// every frame between (track, reframe and bench set it with re-detection on); 1 runs it
        /// every round.
        public var faceRoundInterval = 1
        /// 4: the faces in view are followed and checked by O-Net on every frame, and the whole
        /// cascade looks for new ones every 4th round, 16 frames at track's schedule (0.53 s at
        /// 30 fps, 0.67 s at 24). A face much smaller than those in view waits for a full search
        /// (8 runs); the far person it belongs to is usually found sooner as a body, by the body
        /// part resting at most 8 rounds. `bench --resize 1280x720` on Megamind: 202 fps at 2,
        /// 240 at 4.
        public static let faceRoundIntervalWithRedetection = 4
        /// The most detection rounds in a row passed over because the picture did not move
        /// outside what the last look found (``IdlePartSchedule/lookIfNeeded(in:minimumConfidence:)``);
        /// 0 (the default) looks every round. Only for a pipeline whose re-detectors carry the
        /// people between looks (``redetect(models:)``): without them a person is lost on the
        /// rounds passed over (an overview camera's pipeline lost the person it showed, and the
        /// dock went searching). ``carriedNeedlessRest`` is what track, reframe, eval and bench use.
        public var longestNeedlessRest = 0
        public static let carriedNeedlessRest = 2
        public init() {}
    }

    public let params: Params
    /// `nil` for custom tracking, where the caller's observations are the detections
    /// (``process(observations:at:)``).
    public let detector: (any Detector)?
    /// The detector as the pipeline runs it: `detector` with its idle parts skipped.
    package let schedule: IdlePartSchedule?
    public var tracker: any SubjectTracker
    package let cues: FaceCueEstimator?
    /// The sound, fused with the faces' mouth motion into speaking confidence (needs `cues`).
    public var listener: SpeechListener?
    /// Looks again for the tracked faces where they are predicted, on every frame the detector
    /// skips (detecting every Nth frame, ahead, or on a worker thread); `nil`: faces move by
    /// their motion model alone until the next detection. Used on the thread that processes frames.
    public var redetector: (any Redetector)?
    /// Looks again for the tracked bodies where they are predicted, on the frames the detector
    /// skips, as `redetector` does for faces; `nil`: bodies move by their motion model alone.
    public var bodyRedetector: (any BodyRedetector)?
    /// Subjects found again by `redetector` or `bodyRedetector` so far.
    public private(set) var redetections = 0
    /// Where `redetector` saw each tracked face on the last frame it was detected in.
    private var faceReferences: [UUID: FacePlacement] = [:]
    /// Custom tracking's subjects by the caller's own identifiers: their identity and when
    /// each was first and last seen.
    private var identified: [Int: (id: UUID, firstSeen: Double, lastSeen: Double)] = [:]
    /// The five points `redetector` read in each tracked face's box on this frame: the face
    /// cues take them rather than reading the face again (O-Net once per face and frame, not
    /// twice: Megamind at 1280x720, bench 4.89x -> 5.50x).
    private var landmarksRead: [UUID: FaceLandmarks] = [:]
    /// Raised palms watched (``watchGestures(models:params:)``), and the gestures not yet taken.
    var hands: HandsWatching?
    var gesturesRecognized: [GestureEvent] = []
    /// The whole picture's motion frame to frame, which the tracker's boxes follow.
    private var cameraShift = CameraShiftEstimator()
    /// How each tracked body looked on the last frame it was detected in.
    private var bodyTemplates: [UUID: BodyTemplate] = [:]
    public var ranker: any SubjectRanker
    private var objects: [VisualObjectTracker] = []
    private var processed = 0
    /// Adaptive detection: frames between detections now, frames since the last one, and the
    /// subjects the last detection left.
    private var interval = 1
    private var sinceDetection = 0
    private var lastDetectedIDs: Set<UUID>?
    /// Frames on which the detector ran.
    public private(set) var detections = 0
    /// What the detector saw on the last frame it ran (for drawing), `nil` on frames it skipped.
    public private(set) var lastObservations: [Observation]?
    /// The subjects reported for the last frame.
    public private(set) var subjects: [TrackedSubject] = []
    /// CPU seconds spent so far in each stage the pipeline runs itself (the tracking thread's;
    /// detection is timed by its ``schedule``, on whichever thread runs it): for the bench's
    /// profile. OpenCV's own worker threads, when it has more than one, are not counted.
    public internal(set) var stageSeconds = StageSeconds()
    /// The re-identification signatures read so far, by why (`nil` when the tracker reads none).
    package var signatureReads: SignatureReads? {
        guard let people = tracker as? PersonTracker, people.signatures != nil else { return nil }
        return people.signatureReads
    }

    /// Where a pipeline's own time went.
    public struct StageSeconds: Sendable, Equatable {
        /// Measuring the camera's shift.
        public var cameraShift = 0.0
        /// The tracker's update (association, prediction), signatures apart.
        public var tracking = 0.0
        /// Reading people's re-identification signatures (on detection frames, in the
        /// tracker's update).
        public var identity = 0.0
        /// Looking again for each tracked face and body between detections, and taking the
        /// references for it on detection frames.
        public var redetection = 0.0
        /// Objects, face cues (landmarks, looking, speaking) and ranking.
        public var cuesAndRanking = 0.0
        /// Watching raised hands for gestures.
        public var gestures = 0.0
    }

    /// The pipeline with DockTrack's own tracker and ranker. Behind a detector that checks what
    /// it finds (``Detector/checksWhatItFinds``: the default's person network and MTCNN) a new
    /// body is reported at its first sighting: the second sighting filtered one-frame false
    /// hits, which the check already drops, and cost the people walking in, found 0.4 s later
    /// at vtest.avi's 10 fps (its first 300 frames: people from 50 px found on 0.925 of their
    /// frames rather than 0.891, false people 0.103 a frame rather than 0.117). A new face still waits
    /// for its second (``PersonTracker/Params/bodyHitsToConfirm``).
    package convenience init(detector: (any Detector)?, cues: FaceCueEstimator?, params: Params = Params(),
                            tracker: PersonTracker.Params = .init(), ranker: SaliencyRanker.Params = .init(),
                            identifiers: IdentifierSource = .random) {
        var tracker = tracker
        if detector?.checksWhatItFinds == true, tracker.bodyHitsToConfirm == nil { tracker.bodyHitsToConfirm = 1 }
        self.init(detector: detector, cues: cues, params: params,
                  tracking: PersonTracker(params: tracker, identifiers: identifiers), ranking: SaliencyRanker(params: ranker))
    }

    /// The pipeline with any tracker and ranker.
    package init(detector: (any Detector)?, cues: FaceCueEstimator?, params: Params = Params(),
                tracking tracker: any SubjectTracker, ranking ranker: any SubjectRanker) {
        self.detector = detector
        schedule = detector.map { IdlePartSchedule($0, maximumInterval: params.idlePartInterval, fullSearchInterval: params.fullSearchInterval,
                                                         faceInterval: params.faceRoundInterval,
                                                         longestNeedlessRest: params.longestNeedlessRest) }
        self.cues = cues
        self.params = params
        self.tracker = tracker
        self.ranker = ranker
        worker = params.asyncDetection ? schedule.map { DetectionWorker(detector: $0, minimumConfidence: params.minimumConfidence, every: params.detectEvery) } : nil
    }

    deinit { worker?.stop() }

    /// Starts following an object at `rect` (unit coordinates, lower-left origin) from `frame`.
    @discardableResult
    public func track(objectAt rect: UnitRect, in frame: Frame) throws(DetectorError) -> UUID {
        let id = tracker.newIdentifier()
        objects.append(try VisualObjectTracker(id: id, rect: rect, in: frame))
        return id
    }

    /// The frame (from 0) of a second detection at the start of an input, beside every Nth: a
    /// new person is reported once seen twice, so the people of the first frame are reported
    /// from the second on, not N frames later (DetectionAhead does the same).
    public static let secondLook = 1

    /// The detection thread when `asyncDetection` is set.
    package let worker: DetectionWorker?

    /// Processes one frame and returns the subjects in it, ranked.
    public func process(_ frame: Frame) throws(DetectorError) -> [TrackedSubject] {
        if let worker {
            worker.offer(frame)
            return try process(frame, detected: try worker.takeResults().last?.observations)
        }
        let detect = schedule != nil && (params.adaptiveDetection ? (lastDetectedIDs == nil || sinceDetection + 1 >= interval)
                                              : processed % max(1, params.detectEvery) == 0 || processed == Self.secondLook)
        processed += 1
        sinceDetection = detect ? 0 : sinceDetection + 1
        let observations = detect ? try schedule?.lookIfNeeded(in: frame.image, minimumConfidence: params.minimumConfidence) : nil
        if observations != nil { detections += 1 }
        lastObservations = observations
        let subjects = try tracked(frame, observations: observations)
        if params.adaptiveDetection && observations != nil {
            let ids = Set(subjects.map(\.id))
            let stable = ids == lastDetectedIDs && subjects.allSatisfy(\.isObserved)
            interval = stable ? min(interval * 2, max(1, params.maximumDetectionInterval)) : 1
            lastDetectedIDs = ids
        }
        return try finish(frame.time, image: frame.image, subjects: subjects)
    }

    /// Processes a frame whose detection ran elsewhere, with the observations found in it
    /// (`nil`: no detector ran on it): the frames of ``detectingAhead(of:selection:cuts:)``, and
    /// the detection thread's results. `startsShot`: a cut in the film leads into this frame,
    /// and the people tracked so far are forgotten (the next shot's people are found anew, none
    /// takes over the identity or the motion of someone from the last one).
    public func process(_ frame: Frame, detected observations: [Observation]?, startsShot: Bool = false) throws(DetectorError) -> [TrackedSubject] {
        if startsShot {
            cameraShift.reset()
            tracker.forgetSubjects()
            faceReferences = [:]
            bodyTemplates = [:]
            objects = []
        }
        processed += 1
        if observations != nil { detections += 1 }
        lastObservations = observations
        return try finish(frame.time, image: frame.image, subjects: try tracked(frame, observations: observations))
    }

    /// The tracker's subjects for `frame`: moved by `observations` when the detector ran on it,
    /// else by what the re-detectors find again.
    private func tracked(_ frame: Frame, observations: [Observation]?) throws(DetectorError) -> [TrackedSubject] {
        landmarksRead = [:]
        var mark = ThreadCPUClock.now()
        func lap(_ stage: WritableKeyPath<StageSeconds, Double>) {
            let now = ThreadCPUClock.now()
            stageSeconds[keyPath: stage] += now - mark
            mark = now
        }
        if params.followsCameraMotion {
            do {
                tracker.follow(try cameraShift.shift(to: frame.image))
            } catch {
                throw .failed(detector: "camera motion", reason: error.description)
            }
            lap(\.cameraShift)
        }
        let signatureSeconds = (tracker as? PersonTracker)?.signatureSeconds ?? 0
        let subjects = tracker.update(time: frame.time, observations: observations, image: frame.image)
        lap(\.tracking)
        let signing = ((tracker as? PersonTracker)?.signatureSeconds ?? 0) - signatureSeconds
        stageSeconds.tracking -= signing
        stageSeconds.identity += signing
        defer { lap(\.redetection) }
        return try observations == nil ? redetected(subjects, in: frame.image) : referenced(subjects, in: frame.image)
    }

    /// The subjects of a frame the detector ran on, unchanged; with `redetector`, its look at each
    /// face just detected is kept as the zero for re-detecting that face, and with
    /// `bodyRedetector` each body just detected as the template to find it again by.
    private func referenced(_ subjects: [TrackedSubject], in image: Image) throws(DetectorError) -> [TrackedSubject] {
        let skipsFrames = params.detectEvery > 1 || params.adaptiveDetection || params.asyncDetection
        guard redetector != nil || bodyRedetector != nil, skipsFrames else { return subjects }
        var references: [UUID: FacePlacement] = [:]
        var templates: [UUID: BodyTemplate] = [:]
        // New tracks too: found again between detections, they are where the next one looks.
        for subject in subjects + tracker.candidates() where subject.kind == .person {
            if let redetector, let face = subject.faceRect {
                var placement: FacePlacement?
                if subject.isObserved {
                    let look = try redetector.referenceReading(for: face, in: image)
                    placement = look.placement
                    landmarksRead[subject.id] = look.landmarks
                }
                if let placement {
                    references[subject.id] = placement
                } else if let kept = faceReferences[subject.id] {
                    references[subject.id] = kept
                }
            }
            if let bodyRedetector, let body = subject.bodyRect {
                if subject.isObserved, let template = try bodyRedetector.template(of: body, in: image) {
                    templates[subject.id] = template
                } else if let kept = bodyTemplates[subject.id] {
                    templates[subject.id] = kept
                }
            }
        }
        faceReferences = references
        bodyTemplates = templates
        return subjects
    }

    /// The subjects of a frame no detector ran on, with the faces `redetector` and the bodies
    /// `bodyRedetector` find again moved to where they were found.
    private func redetected(_ subjects: [TrackedSubject], in image: Image) throws(DetectorError) -> [TrackedSubject] {
        // New tracks too: a face found again where it is predicted confirms it (no waiting for
        // the next detection, which may be many frames away); a body found again moves it.
        guard redetector != nil || bodyRedetector != nil else { return subjects }
        let candidates = tracker.candidates()
        guard !subjects.isEmpty || !candidates.isEmpty else { return subjects }
        var sightings: [SubjectSighting] = []
        for subject in subjects + candidates where subject.kind == .person {
            var face: UnitRect?, body: UnitRect?
            if let redetector, let predicted = subject.faceRect {
                // The points are read in the predicted box, the face's box when it was not found
                // again; when it was, the box moved by a fraction of its size, and O-Net reads a
                // face that far off the middle of its crop about as well.
                let look = try redetector.redetectReading(face: predicted, reference: faceReferences[subject.id], in: image)
                face = look.found?.rect
                landmarksRead[subject.id] = look.landmarks
            }
            if let bodyRedetector, let predicted = subject.bodyRect, let template = bodyTemplates[subject.id] {
                body = try bodyRedetector.redetect(body: predicted, template: template, in: image)
            }
            if face != nil || body != nil { sightings.append(SubjectSighting(id: subject.id, face: face, body: body)) }
        }
        // Two faces or bodies found again on the same spot (one person passing another): neither is sure.
        func contested(_ part: KeyPath<SubjectSighting, UnitRect?>) -> Set<Int> {
            Set(sightings.indices.filter { i in
                guard let mine = sightings[i][keyPath: part] else { return false }
                return sightings.indices.contains { j in
                    j != i && (sightings[j][keyPath: part].map { mine.intersectionOverUnion($0) > 0.5 } ?? false)
                }
            })
        }
        let contestedFaces = contested(\.face), contestedBodies = contested(\.body)
        for i in sightings.indices {
            if contestedFaces.contains(i) { sightings[i].face = nil }
            if contestedBodies.contains(i) { sightings[i].body = nil }
        }
        sightings.removeAll { $0.face == nil && $0.body == nil }
        guard !sightings.isEmpty else { return subjects }
        redetections += sightings.count
        return tracker.refresh(sightings) ?? subjects
    }

    /// Custom tracking: observations made elsewhere (an app's own detector), at `time`, with no
    /// picture. People are tracked and everyone is ranked as for a frame; objects followed by
    /// their picture and face cues need one, and are left out.
    public func process(observations: [Observation], at time: Double) throws(DetectorError) -> [TrackedSubject] {
        processed += 1
        detections += 1
        lastObservations = observations
        // The caller's identifiers decide who is who (DockKit's custom tracking); observations
        // without one are tracked as a detector's are.
        let anonymous = observations.filter { $0.identifier == nil }
        let tracked = tracker.update(time: time, observations: anonymous)
        return try finish(time, image: nil, subjects: tracked + subjects(identifiedBy: observations.filter { $0.identifier != nil }, at: time))
    }

    /// A subject per caller identifier: the same identifier keeps its identity from call to
    /// call (forgotten after ``Params/objectLostAfter`` unseen); a face's yaw gives how much it
    /// looks at the camera (fully at 0, not at all from 45 degrees).
    private func subjects(identifiedBy observations: [Observation], at time: Double) -> [TrackedSubject] {
        identified = identified.filter { time - $0.value.lastSeen <= params.objectLostAfter }
        var subjects: [TrackedSubject] = []
        // One subject per identifier: its most confident observation this call.
        for observation in observations.sorted(by: { $0.confidence > $1.confidence }) {
            guard let key = observation.identifier, !subjects.contains(where: { $0.id == identified[key]?.id }) else { continue }
            var known = identified[key] ?? (tracker.newIdentifier(), time, time)
            known.lastSeen = time
            identified[key] = known
            let face = observation.type == .humanFace
            let looking = face ? observation.faceYaw.map { max(0, 1 - abs($0) / (.pi / 4)) } : nil
            subjects.append(TrackedSubject(id: known.id, kind: observation.type == .object ? .object : .person, rect: observation.rect,
                                           faceRect: face ? observation.rect : nil, lookingAtCameraConfidence: looking,
                                           timeInView: time - known.firstSeen, isObserved: true,
                                           bodyRect: observation.type == .humanBody ? observation.rect : nil))
        }
        return subjects
    }

    /// The frames of a file, decoded and detected every `detectEvery` frames ahead of this
    /// pipeline on threads of their own (``DetectionAhead``), with this pipeline's detector
    /// and schedule, which belong to the detection thread from then on: process its frames
    /// with ``process(_:detected:)``. Without `cuts` the results equal those of ``process(_:)``;
    /// with, the first frame of each shot of a film is a detection frame too.
    package func detectingAhead(of source: some FrameSource, selection: FrameSelection = FrameSelection(),
                               cuts: ShotBoundary? = nil) -> DetectionAhead {
        guard let schedule else { preconditionFailure("detecting ahead needs a pipeline with a detector") }
        return DetectionAhead(source: source, selection: selection, detector: schedule, every: params.detectEvery,
                              minimumConfidence: params.minimumConfidence, cuts: cuts)
    }

    /// Objects, face cues, sound and ranking on the tracked people of the frame at `time`
    /// (`image`: its picture, `nil` for custom tracking).
    private func finish(_ time: Double, image: Image?, subjects people: [TrackedSubject]) throws(DetectorError) -> [TrackedSubject] {
        let started = ThreadCPUClock.now()
        defer { stageSeconds.cuesAndRanking += ThreadCPUClock.now() - started }
        var subjects = people
        if let image {
            for object in objects {
                let found = try object.update(Frame(index: processed - 1, time: time, image: image))
                if found || time - object.lastSeen <= params.objectLostAfter {
                    subjects.append(TrackedSubject(id: object.id, kind: .object, rect: object.rect,
                                                   timeInView: time - object.firstSeen, isObserved: found))
                }
            }
            objects.removeAll { time - $0.lastSeen > params.objectLostAfter }
            try cues?.annotate(&subjects, image: image, time: time, read: landmarksRead)
            if let listener, let cues {
                listener.listen(until: time)
                listener.fuse(&subjects, time: time, mouth: cues.mouthSeries(of:))
            }
        }
        ranker.rank(&subjects)
        subjects.sort { ($0.saliencyRank ?? .max) < ($1.saliencyRank ?? .max) }
        self.subjects = subjects
        if let image { try watchHands(in: image, at: time) }
        return subjects
    }
}

extension TrackingPipeline {
    /// The ranker as one that takes a selection (DockTrack's own); others cannot.
    private func withSelectableRanker<T>(_ body: (inout SaliencyRanker) throws(DockError) -> T) throws(DockError) -> T {
        guard var saliency = ranker as? SaliencyRanker else { throw .notSupported("selecting subjects with this ranker") }
        defer { ranker = saliency }
        return try body(&saliency)
    }

    /// These subjects rank first, in this order, while they are in view; `[]`: automatic
    /// ranking again (DockKit's `selectSubjects`). From the next frame on. An identifier that
    /// is none of the last frame's subjects is `noSubjectFound`, and nothing changes.
    public func selectSubjects(_ identifiers: [UUID]) throws(DockError) {
        let known = Set(subjects.map(\.id))
        guard identifiers.allSatisfy(known.contains) else { throw .noSubjectFound }
        try withSelectableRanker { $0.selectSubjects(identifiers) }
    }

    /// Selects the subject of the last frame at (`x`, `y`) (unit coordinates, origin at the
    /// upper-left, as a tap on the picture) and returns its identifier; `noSubjectFound` when
    /// nobody is there.
    public func selectSubject(atX x: Double, y: Double) throws(DockError) -> UUID {
        let subjects = self.subjects
        return try withSelectableRanker { ranker throws(DockError) in
            do {
                return try ranker.selectSubject(atX: x, y: y, in: subjects)
            } catch {
                throw .noSubjectFound
            }
        }
    }

    /// Re-detection on the frames the detector skips: faces by MTCNN's O-Net (``FaceRedetector``),
    /// bodies by their look on their last detection frame (``TemplateBodyRedetector``).
    public func redetect(models: ModelStore) throws(DetectorError) {
        redetector = try FaceRedetector(models: models)
        bodyRedetector = TemplateBodyRedetector()
    }

    /// People told apart by their re-identification signatures (``ReidentificationNetwork``):
    /// two who crossed keep their identifiers, and someone lost or gone for up to
    /// ``ReidentificationParams/rememberFor`` seconds is known again. Only DockTrack's own
    /// tracker reads them, and only behind a detector with a person network (the bodies it
    /// reads from): a face detector's run neither loads nor compiles the network.
    public func reidentify(models: ModelStore) throws(DetectorError) {
        guard var person = tracker as? PersonTracker, Self.findsBodiesOfEveryone(detector) else { return }
        let network = try ReidentificationNetwork(models: models)
        try network.prepare()
        person.signatures = network
        tracker = person
    }

    /// Whether `detector` is, or has as a part, a person network (``Detector/findsEveryPerson``).
    static func findsBodiesOfEveryone(_ detector: (any Detector)?) -> Bool {
        guard let detector else { return false }
        if let combined = detector as? CombinedDetector { return combined.parts.contains { $0.findsEveryPerson } }
        return detector.findsEveryPerson
    }
}

extension TrackingPipeline {
    /// A pipeline as `docktrack track` runs it over a file: `detector` on every `detectEvery`-th
    /// frame, with `redetection` the faces and bodies found again between (and the face part
    /// every ``Params/faceRoundIntervalWithRedetection`` rounds), speaking and looking cues read
    /// from the faces.
    public static func overFile(detector: any Detector, models: ModelStore, detectEvery: Int, minimumConfidence: Double,
                                redetection: Bool = true, asyncDetection: Bool = false, followsCameraMotion: Bool = true,
                                longestNeedlessRest: Int = Params.carriedNeedlessRest, reidentification: Bool = true,
                                gestures: Bool = true, identifiers: IdentifierSource = .random) throws(DetectorError) -> TrackingPipeline {
        var params = Params()
        params.longestNeedlessRest = redetection ? max(0, longestNeedlessRest) : 0
        params.followsCameraMotion = followsCameraMotion
        params.faceRoundInterval = redetection ? Params.faceRoundIntervalWithRedetection : 1
        params.detectEvery = max(1, detectEvery)
        params.adaptiveDetection = detectEvery == 0
        params.asyncDetection = asyncDetection
        params.minimumConfidence = minimumConfidence
        let pipeline = TrackingPipeline(detector: detector, cues: FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models)),
                                        params: params, identifiers: identifiers)
        if redetection { try pipeline.redetect(models: models) }
        if reidentification { try pipeline.reidentify(models: models) }
        if gestures { try pipeline.watchGestures(models: models) }
        return pipeline
    }
}
