import DockTrack
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's chromium, headless, driven over the DevTools protocol (its WebSocket, through
/// ``RawHTTPClient``): a page is opened, its script evaluated, the mouse pressed, moved and
/// released where a person would, a screenshot taken, the page closed as a tab is. The browser
/// is killed when the value goes.
final class HeadlessBrowser {
    static let executable = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    let pid: pid_t
    private let profile: URL
    private let log: String
    private var page: RawHTTPClient
    private var nextId = 1
    let devToolsPort: Int

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts chromium with a window of `width` x `height` CSS pixels and attaches to its tab.
    init(width: Int = 1200, height: Int = 800) throws {
        guard let executable = Self.executable else { throw Failure(description: "no chromium (make test installs Debian's)") }
        profile = try Fixtures.temporaryFolder().appendingPathComponent("chromium-profile")
        log = try Fixtures.temporaryFolder().appendingPathComponent("chromium.err").path
        let errFD = Glibc.open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o644), nullFD = Glibc.open("/dev/null", O_WRONLY)
        defer {
            close(errFD)
            close(nullFD)
        }
        // --no-sandbox: the tests may run as root, where chromium's sandbox refuses to start;
        // --disable-dev-shm-usage: a container's /dev/shm may be too small for its pages.
        pid = try ToolRun.spawn(executable, ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
                                             "--user-data-dir=\(profile.path)", "--remote-debugging-address=127.0.0.1",
                                             "--remote-debugging-port=0", "--window-size=\(width),\(height)", "about:blank"],
                                environment: ["HOME": profile.path], stdout: nullFD, stderr: errFD).get()
        var port: Int?
        let deadline = Date().addingTimeInterval(60)
        let logPath = log
        waitWhile(until: deadline, every: .milliseconds(100)) {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "DevTools listening on ws://127.0.0.1:") { port = Int(text[range.upperBound...].prefix { $0.isNumber }) }
            return port == nil
        }
        guard let port else {
            kill(pid, SIGKILL)
            _ = ToolRun.wait(for: pid)
            throw Failure(description: "chromium did not offer DevTools within 60 s: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        devToolsPort = port
        // The tab's own WebSocket, from the list of targets.
        var socketPath: String?
        try waitWhile(until: deadline, every: .milliseconds(100)) {
            let list = try RawHTTPClient(host: "127.0.0.1", port: port).request("/json/list", headers: ["Host": "127.0.0.1:\(port)"])
            let targets = (try? JSONSerialization.jsonObject(with: Data(list.body))) as? [[String: Any]] ?? []
            if let url = targets.first(where: { $0["type"] as? String == "page" })?["webSocketDebuggerUrl"] as? String {
                socketPath = URLComponents(string: url)?.path
            }
            return socketPath == nil
        }
        guard let socketPath else { throw Failure(description: "chromium listed no page") }
        page = try RawHTTPClient(host: "127.0.0.1", port: port)
        guard try page.upgrade(socketPath, host: "127.0.0.1:\(port)") == 101 else { throw Failure(description: "the DevTools WebSocket was refused") }
    }

    deinit {
        kill(pid, SIGKILL)
        _ = ToolRun.wait(for: pid)
        try? FileManager.default.removeItem(at: profile)
    }

    /// A DevTools method on the tab; its `result`. Events that come meanwhile are passed over.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:], within seconds: Double = 30) throws -> [String: Any] {
        try calls([(method, params)], within: seconds)[0]
    }

    /// Sends the calls one after another without waiting for each answer (input events that
    /// must come close together however busy the machine is), then waits for all the answers;
    /// the results in the calls' order.
    @discardableResult
    func calls(_ batch: [(method: String, params: [String: Any])], within seconds: Double = 30) throws -> [[String: Any]] {
        var ids: [Int: Int] = [:]
        for (index, call) in batch.enumerated() {
            ids[nextId] = index
            let request = try JSONSerialization.data(withJSONObject: ["id": nextId, "method": call.method, "params": call.params])
            nextId += 1
            try page.sendText(String(decoding: request, as: UTF8.self))
        }
        var results = [[String: Any]?](repeating: nil, count: batch.count)
        let deadline = Date().addingTimeInterval(seconds)
        while results.contains(where: { $0 == nil }), let text = page.nextText(within: deadline.timeIntervalSinceNow) {
            guard let message = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                  let id = message["id"] as? Int, let index = ids[id] else { continue }
            if let error = message["error"] { throw Failure(description: "\(batch[index].method): \(error)") }
            results[index] = message["result"] as? [String: Any] ?? [:]
        }
        if let missing = results.firstIndex(where: { $0 == nil }) {
            throw Failure(description: "\(batch[missing].method): no answer within \(seconds) s")
        }
        return results.map { $0 ?? [:] }
    }

    /// Opens `url` in the tab and waits for its load.
    func load(_ url: String) throws {
        try call("Page.enable")
        try call("Page.navigate", ["url": url])
        let deadline = Date().addingTimeInterval(30)
        waitWhile(until: deadline, every: .milliseconds(100)) { (try? evaluate("document.readyState")) as? String != "complete" }
    }

    /// The value of a JavaScript expression in the page (a promise is awaited).
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] { throw Failure(description: "\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// A number from the page (`nil` when the expression is not one).
    func number(_ expression: String) -> Double? { (try? evaluate(expression)) as? Double ?? ((try? evaluate(expression)) as? Int).map(Double.init) }

    /// Polls `expression` until it is true (up to `seconds`); whether it became so.
    func waitUntil(_ expression: String, within seconds: Double) -> Bool {
        waitWhile(atMost: .milliseconds(Int64(max(0, seconds) * 1000)), every: .milliseconds(100)) {
            (try? evaluate(expression)) as? Bool != true
        }
    }

    /// Where an element's centre is, in the window's CSS pixels.
    func centre(of selector: String) throws -> (x: Double, y: Double) {
        let box = try evaluate("(() => { const r = document.querySelector('\(selector)').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()") as? [Double]
        guard let box, box.count == 2 else { throw Failure(description: "no element \(selector)") }
        return (box[0], box[1])
    }

    /// A mouse event as the browser's input: `mousePressed`, `mouseMoved`, `mouseReleased`;
    /// `clickCount` 2 on the second press and release of a double click.
    func mouse(_ type: String, x: Double, y: Double, clickCount: Int = 1) throws {
        try call("Input.dispatchMouseEvent", Self.mouseEvent(type, x: x, y: y, clickCount: clickCount))
    }

    private static func mouseEvent(_ type: String, x: Double, y: Double, clickCount: Int) -> [String: Any] {
        ["type": type, "x": x, "y": y, "button": "left", "buttons": type == "mouseReleased" ? 0 : 1, "clickCount": clickCount]
    }

    /// The window as a phone's: `width` x `height` CSS pixels, a touch screen.
    func emulatePhone(width: Int = 390, height: Int = 844) throws {
        try call("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 3, "mobile": true])
        try call("Emulation.setTouchEmulationEnabled", ["enabled": true, "maxTouchPoints": 5])
    }

    /// A finger: `touchStart`, `touchMove` (at a point), `touchEnd` (no points).
    func touch(_ type: String, x: Double = 0, y: Double = 0) throws {
        let points: [[String: Any]] = type == "touchEnd" || type == "touchCancel" ? [] : [["x": x, "y": y, "id": 1]]
        try call("Input.dispatchTouchEvent", ["type": type, "touchPoints": points])
    }

    /// A click (press and release) at a point.
    func click(x: Double, y: Double) throws {
        try mouse("mousePressed", x: x, y: y)
        try mouse("mouseReleased", x: x, y: y)
    }

    /// A double click (two presses and releases, the second counted as such) on an element.
    func doubleClick(_ selector: String) throws {
        let (x, y) = try centre(of: selector)
        // The four events sent at once: one after another, each waited for, a busy machine
        // spread them past the page's wait for a second click (a double click that went).
        try calls((1...2).flatMap { count in
            ["mousePressed", "mouseReleased"].map { ("Input.dispatchMouseEvent", Self.mouseEvent($0, x: x, y: y, clickCount: count)) }
        })
    }

    /// A click on the centre of an element.
    func click(_ selector: String) throws {
        let (x, y) = try centre(of: selector)
        try click(x: x, y: y)
    }

    /// A JPEG screenshot of the window.
    func screenshot(quality: Int = 80) throws -> Data {
        let result = try call("Page.captureScreenshot", ["format": "jpeg", "quality": quality])
        guard let base64 = result["data"] as? String, let data = Data(base64Encoded: base64) else { throw Failure(description: "no screenshot") }
        return data
    }

    /// Closes the tab as a person closes it (its pagehide runs).
    func closePage() throws {
        try call("Page.close")
    }
}
