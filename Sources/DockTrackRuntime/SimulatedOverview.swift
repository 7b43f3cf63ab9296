import DockTrackCore
import DockTrackFraming
import DockTrackMedia
import DockTrackTracking

/// A fixed overview camera in a simulated scene: it sees a part of the scene (all of it by
/// default) from a pose of its own, never moving; its own pipeline tracks the people in it.
package struct SimulatedOverview {
    /// The overview's view of the scene: its share and picture size.
    package var camera: VirtualCamera
    /// Where it looks, as a pose of the scene (the dock's home is the scene's middle).
    package var pose: DockOrientation
    package var pipeline: TrackingPipeline

    package init(sceneSize: ImageSize, sceneFieldOfView: Double, share: Double = 1, pose: DockOrientation = .zero,
                 width: Int? = nil, pipeline: TrackingPipeline) {
        camera = VirtualCamera(sceneSize: sceneSize, sceneFieldOfView: sceneFieldOfView, zoom: share, viewWidth: width)
        self.pose = pose
        self.pipeline = pipeline
    }

    /// What the overview sees of `scene`.
    package func view(of scene: Image) throws(OpenCVError) -> Image { try camera.view(of: scene, at: pose) }
}

/// Calibration over one frame of a scene: the dock's camera sees the crop its pose points at,
/// the overview its fixed view.
package struct SceneCalibrationRig: CalibrationRig {
    package var scene: Image
    package var dockCamera: VirtualCamera
    package var overview: SimulatedOverview

    package init(scene: Image, dockCamera: VirtualCamera, overview: SimulatedOverview) {
        self.scene = scene
        self.dockCamera = dockCamera
        self.overview = overview
    }

    package func look(at pose: DockOrientation) throws -> (dockView: Image, overview: Image) {
        (try dockCamera.view(of: scene, at: pose), try overview.view(of: scene))
    }
}
