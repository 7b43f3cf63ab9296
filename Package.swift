// swift-tools-version:6.0
import PackageDescription

// OpenVINO's C headers, from the PyPI wheel that tools/install-openvino.sh unpacks into .openvino/
// (make deps runs it): the engine shim compiles against them and loads the library at run time.
let openVINOHeaders = Context.packageDirectory + "/.openvino/include"

let package = Package(
    name: "DockTrack",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "docktrack", targets: ["docktrack"]),
        .executable(name: "docksim", targets: ["docksim"]),
        .library(name: "DockTrack", targets: ["DockTrack"]),
        // What a program needs to speak to a running docktrack or docksim: no OpenCV, FFmpeg, V4L2 or ALSA.
        .library(name: "DockTrackClient", targets: ["DockTrackClient"]),
        // Fakes and a manual clock for testing against DockTrack without models or devices.
        .library(name: "DockTrackTestKit", targets: ["DockTrackTestKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The control page's HTTP and WebSocket server (track --http).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // The thin C shim: C++ inside, a C header outside (include/dockcv.h), over OpenCV 4.6
        // from Debian (libopencv-dev). It links the OpenCV modules it calls, not pkg-config's
        // `opencv4` list: that list (all 56 modules, viz's VTK, hdf, text...) made every start
        // of docktrack and docksim load 383 libraries and spend 0.25 s resolving their symbols.
        .target(
            name: "CDockCV",
            // Optimized in debug builds too: the HOG scorer (hog_scorer.cpp) at -O0 costs 84 ms
            // a level against 5 at -O2, 7 times OpenCV's own HOG, and the live tests of the debug
            // build then see a pipeline too slow to keep up with its camera.
            cxxSettings: [.unsafeFlags(["-I", "/usr/include/opencv4"]), .unsafeFlags(["-O2"], .when(configuration: .debug))],
            linkerSettings: ["core", "imgproc", "imgcodecs", "videoio", "highgui", "video", "tracking", "features2d", "calib3d",
                             "objdetect", "dnn"].map { .linkedLibrary("opencv_\($0)") }
        ),
        // The thin inference-engine shim: OpenVINO's C API (a PyPI wheel, pinned), loaded with
        // dlopen when a network first runs; non-variadic calls, opaque handles (include/dockengine.h).
        .target(
            name: "CDockEngine",
            cSettings: [.unsafeFlags(["-I", openVINOHeaders])]
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
        // The thin video file shim: FFmpeg's encoder API (libavformat-dev, libavcodec-dev,
        // libswscale-dev) for H.264 at a chosen x264 preset; BGR frames in.
        .target(
            name: "CDockVideo",
            linkerSettings: [
                .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swscale"), .linkedLibrary("avutil"),
            ]
        ),
        // The stages, each a module; a module imports only those above it in this list.
        // Value types, the stage protocols, the dock model and its wire format, clocks: no C.
        .target(name: "DockTrackCore"),
        // System calls retrying EINTR, Unix sockets, lines read from a descriptor.
        .target(name: "DockTrackSystem", dependencies: ["DockTrackCore"]),
        // The client API shaped like DockKit's (AccessoryManager, DockAccessory), discovery and the
        // messages a dock sends: what an app links to drive a dock through docktrack or docksim.
        .target(name: "DockTrackClient", dependencies: ["DockTrackCore", "DockTrackSystem"]),
        // Images, media files, V4L2 cameras, video and plot output.
        .target(name: "DockTrackMedia", dependencies: ["DockTrackCore", "DockTrackSystem", "CDockCV", "CV4L2", "CDockVideo"]),
        // Face, body and landmark detectors over OpenCV and the inference engine, and where their models are.
        .target(name: "DockTrackDetection", dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "CDockCV", "CDockEngine"]),
        // Sound: files and ALSA, voice activity, audio routes, speaking from sound and mouths.
        // Optimized in debug builds too: voice activity's spectra at -Onone cost the tests' runs
        // over Megamind.avi most of their own processor time (perf: VoiceActivityDetector.voicing
        // and RealFFT.powerSpectrum, 2% of the whole suite's).
        .target(name: "DockTrackAudio", dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "CDockAudio"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Identities over time, face cues, saliency ranking, the tracking pipeline.
        .target(name: "DockTrackTracking",
                dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "DockTrackDetection", "DockTrackAudio", "CDockCV"]),
        // Where the dock should point: the framing controller, and the virtual camera.
        .target(name: "DockTrackFraming", dependencies: ["DockTrackCore", "DockTrackMedia"]),
        // Docks: the simulator, the protocol session, VISCA and UVC back ends.
        .target(name: "DockTrackDock",
                dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackClient", "DockTrackMedia", "CV4L2"]),
        // The frame loop and what runs it: frame -> pipeline -> framer -> dock.
        .target(name: "DockTrackRuntime",
                dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "DockTrackDetection",
                               "DockTrackAudio", "DockTrackTracking", "DockTrackFraming", "DockTrackClient", "DockTrackDock"]),
        // The control page: a page any browser opens, served by a running track (--http).
        .target(name: "DockTrackPage",
                dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "DockTrackDock", "DockTrackRuntime", .product(name: "Hummingbird", package: "hummingbird"),
                               .product(name: "HummingbirdCore", package: "hummingbird"),
                               .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                               .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                               .product(name: "HTTPTypes", package: "swift-http-types")]),
        // Every module in one import.
        .target(name: "DockTrack",
                dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "DockTrackDetection",
                               "DockTrackAudio", "DockTrackTracking", "DockTrackFraming", "DockTrackDock",
                               "DockTrackRuntime", "DockTrackClient"]),
        // A manual clock, a scripted detector, fake camera, VISCA cameras and audio system.
        .target(name: "DockTrackTestKit",
                dependencies: ["DockTrackCore", "DockTrackSystem", "DockTrackMedia", "DockTrackDetection", "DockTrackAudio", "DockTrackDock", "CV4L2"]),
        // Command-line options both executables take.
        .target(name: "DockTrackCommandLine",
                dependencies: ["DockTrack", "DockTrackSystem", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // What the libFuzzer targets run on each input (Fuzz/, tools/fuzz.sh), type-checked by every build.
        .target(name: "DockTrackFuzzing", dependencies: ["DockTrackCore", "DockTrackClient", "DockTrackSystem", "DockTrackDock", "DockTrackFraming", "DockTrackMedia",
                                                         "DockTrackTracking", "DockTrackRuntime", "DockTrackCommandLine"]),
        .executableTarget(
            name: "docktrack",
            dependencies: [
                "DockTrack", "DockTrackCommandLine", "DockTrackPage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The client API as an app uses it (README: the dock protocol; run by the tests against docksim).
        .executableTarget(name: "dock-client-example", dependencies: ["DockTrackClient"], path: "Examples/DockClient"),
        .executableTarget(name: "dockkit-samples", dependencies: ["DockTrackClient"], path: "Examples/DockKitSamples"),
        .executableTarget(
            name: "docksim",
            dependencies: [
                "DockTrack", "DockTrackCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "DockTrackTests",
            dependencies: ["DockTrack", "DockTrackTestKit", "DockTrackFuzzing", "DockTrackPage", "DockTrackCommandLine"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
