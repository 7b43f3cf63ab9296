/// The control page: plain HTML, CSS and JavaScript, served from the binary (no build step, no
/// CDN). It speaks the dock protocol on `/ws` and shows `/frame.jpg`.
enum ControlPageHTML {
    static let page = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>DockTrack</title>
<style>
  body { font: 15px system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
  main { display: flex; flex-wrap: wrap; gap: 12px; padding: 12px; }
  #view { position: relative; flex: 1 1 480px; max-width: 960px; }
  #picture { width: 100%; display: block; background: #222; touch-action: none; cursor: crosshair; }
  aside { flex: 0 1 300px; display: flex; flex-direction: column; gap: 10px; }
  button { font: inherit; padding: 8px 12px; border-radius: 6px; border: 1px solid #555; background: #2a2a2a; color: #eee; }
  button.on { background: #2d6a3e; border-color: #3c9; }
  .row { display: flex; gap: 6px; flex-wrap: wrap; }
  #pad { width: 180px; height: 180px; border-radius: 50%; background: #222; border: 1px solid #555; position: relative; touch-action: none; }
  #pad.off { opacity: 0.35; }
  #knob { position: absolute; width: 40px; height: 40px; border-radius: 50%; background: #3c9; left: 70px; top: 70px; }
  #status, #log { font: 12px ui-monospace, monospace; white-space: pre-wrap; background: #1b1b1b; padding: 8px; border-radius: 6px; }
  #log { max-height: 160px; overflow: auto; }
</style>
</head>
<body>
<main>
  <div id="view"><img id="picture" alt="the picture the dock sees"></div>
  <aside>
    <div class="row">
      <button id="tracking" class="on">tracking on</button>
    </div>
    <div class="row" id="modes">
      <button data-mode="automatic">automatic</button><button data-mode="center">center</button>
      <button data-mode="left">left</button><button data-mode="right">right</button>
    </div>
    <div id="pad" class="off" title="joystick: with tracking off, hold to turn the dock"><div id="knob"></div></div>
    <div id="status">connecting…</div>
    <div id="log"></div>
  </aside>
</main>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const withToken = (path) => token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
const picture = document.getElementById("picture");
const status = document.getElementById("status");
const logBox = document.getElementById("log");
let ws, nextId = 1, lastFrame = -1, tracking = true, mode = null, held = false;
const state = { docked: true, pose: null, subjects: 0, first: null, battery: null, fps: 0 };
const pending = {};

function log(text) { logBox.textContent = (text + "\n" + logBox.textContent).slice(0, 4000); }
function send(request, onAnswer) {
  if (!ws || ws.readyState !== 1) return;
  const id = nextId++;
  if (onAnswer) pending[id] = onAnswer;
  ws.send(JSON.stringify(Object.assign({ id: id }, request)));
}
function show() {
  const pose = state.pose ? `pan ${state.pose.y.toFixed(3)} tilt ${state.pose.x.toFixed(3)} rad` : "pose ?";
  status.textContent = `${ws && ws.readyState === 1 ? "connected" : "not connected"}, ${state.docked ? "docked" : "undocked"}\n` +
    `${pose}\nsubjects ${state.subjects}${state.first ? ", first " + state.first.slice(0, 8) : ""}\n` +
    `${state.battery ? "battery " + Math.round(state.battery.level * 100) + "% " + state.battery.chargeState : ""}\n` +
    `picture ${state.fps.toFixed(1)} frames/s`;
}
function connect() {
  ws = new WebSocket(withToken((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws"));
  ws.onopen = () => { ws.send(JSON.stringify({ type: "hello", protocols: ["org.docktrack.dock/1"] })); send({ command: "getFramingMode" }); send({ command: "getSystemTracking" }); show(); };
  ws.onclose = () => { show(); setTimeout(connect, 1000); };
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    if (m.id !== undefined && pending[m.id]) { pending[m.id](m); delete pending[m.id]; }
    switch (m.type) {
      case "trackingState": state.subjects = m.subjects.length; state.first = m.subjects.length ? m.subjects[0].identifier : null; break;
      case "motionState": state.pose = m.position; break;
      case "hello": state.docked = m.docked; break;
      case "event": if (m.event === "docked" || m.event === "undocked") { state.docked = m.event === "docked"; log(m.event); } break;
      case "battery": state.battery = m; break;
      case "framingMode": mode = m.mode; markMode(); break;
      case "systemTracking": tracking = m.enabled; markTracking(); break;
      case "error": log("error: " + m.code + " " + m.message); break;
      case "accessoryEvent": log("dock: " + m.event); break;
      case "audioRouteChange": log("audio route: " + m.reason); break;
    }
    show();
  };
}
// The picture: the next frame once the last is shown (newest wins, never a queue).
let frames = 0, since = performance.now();
async function nextFrame() {
  try {
    const reply = await fetch(withToken("/frame.jpg?after=" + lastFrame), { cache: "no-store" });
    if (reply.status === 200) {
      lastFrame = parseInt(reply.headers.get("X-Frame"), 10);
      const url = URL.createObjectURL(await reply.blob());
      picture.onload = () => { URL.revokeObjectURL(url); frames++; nextFrame(); };
      picture.src = url;
      const now = performance.now();
      if (now - since > 1000) { state.fps = frames * 1000 / (now - since); frames = 0; since = now; show(); }
      return;
    }
  } catch (e) { }
  setTimeout(nextFrame, 500);
}
// A tap on a person follows them; a tap where nobody is goes back to automatic.
picture.addEventListener("click", (event) => {
  const box = picture.getBoundingClientRect();
  const x = (event.clientX - box.left) / box.width, y = (event.clientY - box.top) / box.height;
  send({ command: "selectSubject", point: { x: x, y: y } }, (answer) => {
    if (answer.type === "selected") log("following " + answer.identifier.slice(0, 8));
    else { send({ command: "selectSubjects", identifiers: [] }); log("nobody there: automatic"); }
  });
});
function markMode() { for (const b of document.querySelectorAll("#modes button")) b.classList.toggle("on", b.dataset.mode === mode); }
for (const b of document.querySelectorAll("#modes button")) {
  b.addEventListener("click", () => send({ command: "setFramingMode", mode: b.dataset.mode }, (a) => { if (a.type === "done") { mode = b.dataset.mode; markMode(); } }));
}
const trackingButton = document.getElementById("tracking"), pad = document.getElementById("pad"), knob = document.getElementById("knob");
function markTracking() {
  trackingButton.textContent = tracking ? "tracking on" : "tracking off";
  trackingButton.classList.toggle("on", tracking);
  pad.classList.toggle("off", tracking);
}
trackingButton.addEventListener("click", () => { tracking = !tracking; markTracking(); send({ command: "setSystemTracking", enabled: tracking }); });
// The joystick: a velocity while held (with tracking off), a stop on release or when the page goes.
function stopJoystick() {
  if (!held) return;
  held = false;
  knob.style.left = "70px"; knob.style.top = "70px";
  send({ command: "setAngularVelocity", velocity: { x: 0, y: 0, z: 0 } });
}
function steer(event) {
  const box = pad.getBoundingClientRect();
  let dx = (event.clientX - box.left) / box.width * 2 - 1, dy = (event.clientY - box.top) / box.height * 2 - 1;
  const r = Math.hypot(dx, dy); if (r > 1) { dx /= r; dy /= r; }
  knob.style.left = (70 + dx * 70) + "px"; knob.style.top = (70 + dy * 70) + "px";
  send({ command: "setAngularVelocity", velocity: { x: dy * 0.5, y: dx * 1.0, z: 0 } });
}
pad.addEventListener("pointerdown", (e) => { if (tracking) return; held = true; pad.setPointerCapture(e.pointerId); steer(e); });
pad.addEventListener("pointermove", (e) => { if (held) steer(e); });
for (const name of ["pointerup", "pointercancel", "lostpointercapture"]) pad.addEventListener(name, stopJoystick);
window.addEventListener("pagehide", stopJoystick);
document.addEventListener("visibilitychange", () => { if (document.hidden) stopJoystick(); });
window.addEventListener("blur", stopJoystick);
connect();
nextFrame();
</script>
</body>
</html>
"""#
}
