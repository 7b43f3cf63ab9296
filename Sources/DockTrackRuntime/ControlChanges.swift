import Foundation
import DockTrackCore
import DockTrackDock
import DockTrackTracking
import DockTrackFraming

/// The frame loop's settings that a control client may change between frames.
package struct LoopSettings {
    /// Whether the framing controller drives the dock (``FrameLoop/systemTracking``).
    package var systemTracking: Bool
    /// A custom-tracking client's subjects and when they were seen (``FrameLoop/customSubjects``).
    package var customSubjects: (subjects: [TrackedSubject], time: Double)?
    /// The framing: mode, region of interest, camera, limits.
    package var params: FramingController.Params
}

/// A command a client gave the dock, and where the dock's answer to it goes.
package struct DockOrder {
    package var command: DockCommand
    /// Told `nil` once the dock took the command, its refusal otherwise (an unreachable dock's
    /// error included).
    package var answered: @Sendable (DockError?) -> Void
}

/// What the control requests since the last frame change in a run (``TrackControl/changes(to:dockPosition:pipeline:customTracking:at:)``):
/// the loop's settings as the requests leave them and the commands they give the dock, in the
/// order they were asked. The run merges them into its loop in one place, ``FrameLoop/merge(_:at:)``.
package struct ControlChanges {
    package var settings: LoopSettings
    package var dockOrders: [DockOrder] = []
    /// The limits a client set, when one did: the base a camera's zoom narrows.
    package var clientLimits: DockLimits?
    /// People chosen in the overview camera's picture, for the run's overview to find.
    package var overviewSelections: [OverviewSelection] = []
    /// Whether people were chosen in the dock camera's picture (or ranking made automatic
    /// again): a choice made in the overview gives way.
    package var choseInDockPicture = false
}

/// A person chosen at a point of the overview camera's picture (upper-left origin, as a tap),
/// and where the answer goes: the person's identifier, or why there is none.
package struct OverviewSelection {
    package var x: Double
    package var y: Double
    package var answered: @Sendable (Result<UUID, DockError>) -> Void
}

extension FrameLoop where F == FramingController {
    /// The settings a control client may change, as they are now.
    package var settings: LoopSettings {
        LoopSettings(systemTracking: systemTracking, customSubjects: customSubjects, params: controller.params)
    }

    /// Takes what the control asked since the last frame, at `time`: its settings, then its
    /// commands to the dock in the order they were given, each answered where it asked.
    /// People chosen in the overview's picture go to `overview`; a run without one answers them
    /// `notSupported`.
    package mutating func merge(_ changes: ControlChanges, at time: Double, overview: ((OverviewSelection) -> Void)? = nil) {
        for selection in changes.overviewSelections {
            if let overview { overview(selection) } else { selection.answered(.failure(.notSupported("no overview camera: track --overview"))) }
        }
        systemTracking = changes.settings.systemTracking
        customSubjects = changes.settings.customSubjects
        controller.params = changes.settings.params
        for order in changes.dockOrders {
            do {
                try dock.perform(order.command, at: time, answered: order.answered)
            } catch {
                order.answered(error as? DockError ?? .invalidRequest("\(error)"))
            }
        }
    }
}

extension TrackControl {
    /// ``changes(to:dockPosition:pipeline:customTracking:at:)`` for `loop`, whose dock is asked
    /// where it points only for a relative move.
    package func changes(for loop: inout FrameLoop<FramingController, AnyDock>, pipeline: TrackingPipeline,
                         customTracking: TrackingPipeline, at time: Double) -> ControlChanges {
        changes(to: loop.settings, dockPosition: { try loop.dock.motion(at: time).position },
                pipeline: pipeline, customTracking: customTracking, at: time)
    }
}
