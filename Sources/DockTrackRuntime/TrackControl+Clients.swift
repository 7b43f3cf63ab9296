import DockTrackAudio
import DockTrackClient
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackTracking
import Foundation
import Synchronization
import DockTrackSystem

/// Each client of the control path: it comes (``subscribe()``), is told the tracking states, the
/// dock's news and the answers to its own requests, and goes (``unsubscribe(_:)``), giving back
/// what it changed.
extension TrackControl {
    /// A new client: from now on it gets the tracking states, the dock's news and the answers
    /// to its requests (``takePending(for:)``).
    package func subscribe() -> Client {
        state.withLock { state in
            let client = Client(number: state.nextClient)
            state.nextClient += 1
            state.outboxes[client] = []
            return client
        }
    }

    /// The client went; its lines are dropped, and what it changed is given back at the next
    /// frame, as the run had it before any client changed it: system tracking (back on when
    /// this client switched it off; custom tracking ends with it), framing mode, region of
    /// interest, limits (the dock's too), the subjects chosen (ranking automatic again). A
    /// setting another client changed after it stays that client's. Returns what was given back.
    @discardableResult
    package func unsubscribe(_ client: Client) -> [String] {
        state.withLock { state in
            state.outboxes[client] = nil
            var givenBack: [(String, Change)] = []
            if state.trackingOffBy == client, !state.systemTracking {
                state.systemTracking = true
                state.trackingOffBy = nil
                state.broadcast(TrackerSetting.systemTracking(true).jsonLine)
                givenBack.append(("system tracking back on", .systemTracking(true)))
            }
            if let claim = state.claims.framingMode, claim.owner == client {
                state.claims.framingMode = nil
                state.framingMode = claim.before
                givenBack.append(("framing mode back to \(claim.before.rawValue)", .tracking(.setFramingMode(claim.before))))
            }
            if let claim = state.claims.regionOfInterest, claim.owner == client {
                state.claims.regionOfInterest = nil
                state.regionOfInterest = claim.before
                givenBack.append(("region of interest back", .tracking(.setRegionOfInterest(upperLeft: claim.before))))
            }
            if let claim = state.claims.limits, claim.owner == client {
                state.claims.limits = nil
                // What a client reads from now on; the dock is told at the next frame.
                state.limits = claim.before
                givenBack.append(("limits back", .command(.setLimits(claim.before))))
            }
            if let claim = state.claims.selection, claim.owner == client {
                state.claims.selection = nil
                givenBack.append(("subjects chosen back", .tracking(.selectSubjects(claim.before))))
            }
            for (_, change) in givenBack { state.waiting.append(Waiting(change: change, id: nil, line: 0, client: nil)) }
            return givenBack.map(\.0)
        }
    }

    /// The lines that came up for `client` since the last call.
    package func takePending(for client: Client) -> [String] {
        state.withLock { state in
            defer { if state.outboxes[client] != nil { state.outboxes[client] = [] } }
            return (state.outboxes[client] ?? []).map(\.line)
        }
    }

    /// What the dock behind the tracker said of itself since the last call (``DockNews``) goes
    /// to the client as the dock sent it, and is what the hello and `getBattery` say from then
    /// on; `accessory`: the dock's latest hello (what it can do).
    package func relay(_ news: [DockNews], accessory: DockAccessory) {
        // Of the dock's capabilities, those a client of the tracker meets: its battery, its
        // buttons' events, animations it plays when told (the motors are the tracker's own).
        let relayed = [DockCapability.battery, .buttons, .animations].filter { accessory.capabilities.contains($0.rawValue) }
        state.withLock { state in
            state.dock.capabilities = relayed
            for item in news {
                switch item.message {
                case .dockEvent(let event) where event == "docked" || event == "undocked":
                    state.dock.docked = event == "docked"
                case .trackingButton(let enabled):
                    state.dock.trackingButtonEnabled = enabled
                case .battery(let battery):
                    if let i = state.dock.batteries.firstIndex(where: { $0.name == battery.name }) {
                        state.dock.batteries[i].line = item.line
                    } else {
                        state.dock.batteries.append((battery.name, item.line))
                    }
                default: break
                }
                state.broadcast(item.line)
            }
        }
    }

    /// A change of the audio route goes to every client, and the route now is what
    /// `getAudioRoute` answers from then on.
    package func relay(audioRouteChange change: AudioSessionRouteChange) {
        state.withLock { state in
            state.audioRouteLine = change.current.audioRouteLine
            state.broadcast(change.jsonLine)
        }
    }

    /// The audio route as the run starts to follow it: what `getAudioRoute` answers.
    package func relay(audioRoute route: AudioSessionRoute) {
        state.withLock { $0.audioRouteLine = route.audioRouteLine }
    }

    /// The audio route as last heard, as a `getAudioRoute` answer; `nil` while no route is followed.
    var audioRouteLine: String? { state.withLock { $0.audioRouteLine } }

    /// After a frame: its subjects go to the client as a tracking state, and the dock's
    /// motion is what queries read until the next frame.
    /// While custom tracking's subjects are fresh, the tracking state reports them (what the
    /// dock frames) instead of the frame's own.
    package func publish(_ record: SubjectStatesRecord, motion: MotionState) {
        let maximumPending = self.maximumPending
        let now = wallClock()
        state.withLock { state in
            // What the client reads is what a dock within its limits can do (the loop's motion is
            // a prediction past the dock's last report).
            state.motion = state.limits.bounding(motion)
            state.motion.date = now
            guard !state.outboxes.isEmpty else { return }
            var record = record
            record.date = now
            if let custom = state.custom, state.appliedAt - custom.time <= Self.customFreshness { record.subjects = custom.subjects }
            state.broadcast(Outgoing(line: record.trackingStateLine, isTrackingState: true))
            // A client too far behind loses its oldest tracking states (answers stay).
            for client in state.outboxes.keys {
                while state.outboxes[client]!.count > maximumPending,
                      let old = state.outboxes[client]!.firstIndex(where: \.isTrackingState) {
                    state.outboxes[client]!.remove(at: old)
                }
            }
        }
    }

    /// Answers go to the client whose request it was (nobody's: the run's own change).
    func answer(_ lines: [String], to client: Client?) {
        guard !lines.isEmpty, let client else { return }
        state.withLock { state in
            if state.outboxes[client] != nil { state.outboxes[client]! += lines.map { Outgoing(line: $0) } }
        }
    }
}

extension TrackControl {
    /// Whether the run watches for gestures: the hello says so (``DockCapability/gestures``).
    package var watchesGestures: Bool {
        get { state.withLock { $0.gestures } }
        set { state.withLock { $0.gestures = newValue } }
    }

    /// A gesture recognized on a frame: every client hears of it (an accessory event); a
    /// "follow me" turns system tracking back on when it was off (the person asked to be
    /// followed), from the next frame.
    package func announce(_ gesture: GestureEvent) {
        state.withLock { $0.broadcast(gesture.accessoryEventLine) }
        if gesture.kind == .followMe && !systemTracking { enqueue(.systemTracking(true), id: nil, line: 0) }
    }
}
