import CDockCV

/// A failure reported by the OpenCV shim: its status code and one-line message.
public struct OpenCVError: Error, Sendable, CustomStringConvertible {
    /// The shim's `dcv_code`.
    public var code: Int32
    public var message: String

    public var description: String { message }

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The error a failed shim call left in `status`.
    public init(_ status: dcv_status) {
        code = status.code
        message = withUnsafeBytes(of: status.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}

/// Calls a shim function that reports failure through a `dcv_status`, and throws that status
/// when `failed` says the returned value means failure. Image operations go through here;
/// stages that report a shim failure as an error of their own (a detector's, a video file's)
/// read the status with ``OpenCVError/init(_:)``.
@discardableResult
package func checked<Result>(_ failed: (Result) -> Bool, _ call: (UnsafeMutablePointer<dcv_status>) -> Result) throws(OpenCVError) -> Result {
    var status = dcv_status()
    let result = call(&status)
    if failed(result) || status.code != 0 { throw OpenCVError(status) }
    return result
}

/// `checked` for functions returning a handle (NULL on failure).
package func checkedHandle<Handle>(_ call: (UnsafeMutablePointer<dcv_status>) -> Handle?) throws(OpenCVError) -> Handle {
    var status = dcv_status()
    guard let handle = call(&status) else { throw OpenCVError(status) }
    return handle
}

/// `checked` for functions returning an int where a negative value means failure.
@discardableResult
package func checkedCount(_ call: (UnsafeMutablePointer<dcv_status>) -> Int32) throws(OpenCVError) -> Int {
    Int(try checked({ $0 < 0 }, call))
}

/// OpenCV's own settings that DockTrack sets deliberately.
package enum OpenCVRuntime {
    /// The OpenCV version the shim was built against.
    package static var version: String { String(cString: dcv_version()) }

    /// The number of threads OpenCV's parallel loops use (`cv::setNumThreads`).
    package static var threads: Int {
        get { Int(dcv_get_num_threads()) }
        set { dcv_set_num_threads(Int32(newValue)) }
    }

    /// Keeps the big blocks OpenCV frees after a frame for the next one (`dcv_keep_freed_blocks`):
    /// page faults and zeroing of fresh pages were 16% of `track`'s CPU time on a 1280x720 clip.
    /// Call once, first thing in a program.
    package static func keepFreedBlocks() { dcv_keep_freed_blocks() }
}
