// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DockTrack",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "docktrack", targets: ["docktrack"]),
        .executable(name: "docksim", targets: ["docksim"]),
        .library(name: "DockTrack", targets: ["DockTrack"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // OpenCV 4.6 from Debian, found through pkg-config. Only supplies include and link flags.
        .systemLibrary(
            name: "COpenCV",
            pkgConfig: "opencv4",
            providers: [.apt(["libopencv-dev"])]
        ),
        // The thin C shim: C++ inside, a C header outside (include/dockcv.h).
        .target(
            name: "CDockCV",
            dependencies: ["COpenCV"]
        ),
        // The thin V4L2 shim: a non-variadic ioctl, the VIDIOC_* request numbers, and
        // libv4lconvert (libv4l-dev) with its ioctls routed back to the caller's device.
        .target(
            name: "CV4L2",
            linkerSettings: [.linkedLibrary("v4lconvert")]
        ),
        // The thin audio shim: FFmpeg (libavformat-dev, libavcodec-dev, libswresample-dev) for the
        // audio track of a media file, ALSA (libasound2-dev) for capture; mono float samples out.
        .target(
            name: "CDockAudio",
            linkerSettings: [
                .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swresample"),
                .linkedLibrary("avutil"), .linkedLibrary("asound"),
            ]
        ),
        // Pipeline stages, value types and the OpenCV-backed implementations.
        .target(
            name: "DockTrack",
            dependencies: ["CDockCV", "CV4L2", "CDockAudio"]
        ),
        .executableTarget(
            name: "docktrack",
            dependencies: [
                "DockTrack",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "docksim",
            dependencies: [
                "DockTrack",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "DockTrackTests",
            dependencies: ["DockTrack"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
