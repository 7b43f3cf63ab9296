import DockTrackCore
import DockTrackMedia
import Foundation

/// A camera on a simulated dock looking into a wide recorded scene: it sees the crop of each
/// scene frame that its pan and tilt point at, so a closed loop can run over real video.
///
/// The scene spans `sceneFieldOfView` horizontally; the camera sees `zoom` of it (its own field
/// of view is that share). Pan moves the crop sideways and tilt up and down, linearly in angle;
/// the dock's range is limited to keep the crop inside the scene.
package struct VirtualCamera: Sendable {
    package var sceneSize: ImageSize
    /// Radians the whole scene spans horizontally.
    package var sceneFieldOfView: Double
    /// The share of the scene's width and height the camera sees (0...1).
    package var zoom: Double
    /// The size of the rendered view.
    package var viewSize: ImageSize

    package init(sceneSize: ImageSize, sceneFieldOfView: Double = 100 * .pi / 180, zoom: Double = 0.55, viewWidth: Int? = nil) {
        self.sceneSize = sceneSize
        self.sceneFieldOfView = sceneFieldOfView
        self.zoom = zoom
        let width = viewWidth ?? Int((Double(sceneSize.width) * zoom).rounded())
        viewSize = ImageSize(width: width, height: Int((Double(width) * Double(sceneSize.height) / Double(sceneSize.width)).rounded()))
    }

    /// Radians the scene spans vertically (same angle per pixel as horizontally).
    package var sceneVerticalFieldOfView: Double { sceneFieldOfView * Double(sceneSize.height) / Double(sceneSize.width) }

    /// The camera as the framing controller sees it (angles per unit of the view, linear).
    package var camera: CameraModel {
        CameraModel(horizontalFieldOfView: sceneFieldOfView * zoom, verticalFieldOfView: sceneVerticalFieldOfView * zoom)
    }

    /// Dock limits that keep the view inside the scene, with the given speeds.
    package func limits(from base: DockLimits = .standard) -> DockLimits {
        var limits = base
        let pan = (1 - zoom) / 2 * sceneFieldOfView, tilt = (1 - zoom) / 2 * sceneVerticalFieldOfView
        limits.yaw.range = -pan...pan
        limits.pitch.range = -tilt...tilt
        return limits
    }

    /// The part of the scene (pixels, top-left origin) seen at `pose`.
    package func crop(at pose: DockOrientation) -> PixelRect {
        let w = Double(sceneSize.width) * zoom, h = Double(sceneSize.height) * zoom
        let centerX = Double(sceneSize.width) * (0.5 + pose.y / sceneFieldOfView)
        let centerY = Double(sceneSize.height) * (0.5 + pose.x / sceneVerticalFieldOfView)
        return PixelRect(x: centerX - w / 2, y: centerY - h / 2, width: w, height: h)
    }

    /// What the camera sees of `scene` at `pose`.
    package func view(of scene: Image, at pose: DockOrientation) throws(OpenCVError) -> Image {
        try scene.cropped(to: crop(at: pose), size: viewSize)
    }
}
