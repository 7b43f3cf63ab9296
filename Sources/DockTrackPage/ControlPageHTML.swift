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
  #view { position: relative; flex: 1 1 480px; max-width: 960px; align-self: flex-start; }
  #picture { width: 100%; display: block; background: #222; touch-action: none; cursor: crosshair; user-select: none; -webkit-user-drag: none; }
  #draft { position: absolute; border: 2px dashed #fc3; pointer-events: none; display: none; }
  #view.gone #picture { filter: grayscale(1) brightness(0.45); }
  #gone { position: absolute; left: 0; right: 0; top: 40%; text-align: center; font-size: 20px; color: #fc3; display: none; }
  #view.gone #gone { display: block; }
  #overviewView { flex: 0 1 320px; align-self: flex-start; display: none; }
  #overviewView.on { display: block; }
  #overview { width: 100%; display: block; background: #222; cursor: crosshair; }
  aside { flex: 0 1 320px; display: flex; flex-direction: column; gap: 10px; }
  button { font: inherit; padding: 8px 12px; border-radius: 6px; border: 1px solid #555; background: #2a2a2a; color: #eee; }
  button.on { background: #2d6a3e; border-color: #3c9; }
  button:disabled { opacity: 0.4; }
  .row { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
  #pad { width: 180px; height: 180px; border-radius: 50%; background: #222; border: 1px solid #555; position: relative; touch-action: none; }
  #pad.off { opacity: 0.35; }
  #knob { position: absolute; width: 40px; height: 40px; border-radius: 50%; background: #3c9; left: 70px; top: 70px; pointer-events: none; }
  #status, #log { font: 12px ui-monospace, monospace; white-space: pre-wrap; background: #1b1b1b; padding: 8px; border-radius: 6px; }
  #log { max-height: 160px; overflow: auto; }
  #error { color: #f77; font-size: 13px; min-height: 1em; }
  #presets button.go { min-width: 3em; }
</style>
</head>
<body>
<main>
  <div id="view"><img id="picture" alt="the picture the dock sees" draggable="false"><div id="draft"></div><div id="gone">not connected: the tracker has stopped or cannot be reached</div></div>
  <div id="overviewView" title="the overview camera: tap a person to send the dock to them"><img id="overview" alt="the overview camera" draggable="false"></div>
  <aside>
    <div class="row">
      <button id="tracking" class="on">tracking on</button>
    </div>
    <div class="row" id="modes">
      <button data-mode="automatic">automatic</button><button data-mode="center">center</button>
      <button data-mode="left">left</button><button data-mode="right">right</button>
    </div>
    <div class="row">
      <button id="region" title="drag over the picture: the dock frames within that region">draw region</button>
      <button id="whole">whole picture</button>
    </div>
    <div id="pad" class="off" title="joystick: with tracking off, hold to turn the dock"><div id="knob"></div></div>
    <div class="row" id="presets"><button id="save" disabled title="with tracking off: keep this pose (in this browser)">save pose</button></div>
    <div id="error"></div>
    <div id="status">connecting…</div>
    <div id="log"></div>
  </aside>
</main>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const withToken = (path) => token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
const $ = (id) => document.getElementById(id);
const picture = $("picture"), statusBox = $("status"), logBox = $("log"), errorBox = $("error"), draft = $("draft");
let ws, nextId = 1, lastFrame = -1, tracking = true, mode = null, held = false, drawing = false;
// What the page knows, for the status box and for a test to read (window.dockState).
const state = window.dockState = { connected: false, docked: true, pose: null, subjects: 0, first: null, list: [],
  battery: null, limits: null, run: null, pictureFPS: 0, pictures: 0, region: null, errors: 0, gestures: 0, lastGesture: null };
const pending = {}, quietIds = new Set();

function log(text) { logBox.textContent = (new Date().toLocaleTimeString() + " " + text + "\n" + logBox.textContent).slice(0, 6000); }
let errorTimer;
function showError(text) {
  state.errors++; log("error: " + text); errorBox.textContent = text;
  clearTimeout(errorTimer); errorTimer = setTimeout(() => { errorBox.textContent = ""; }, 6000);
}
// A request; `onAnswer` gets its answer. An error answer is shown unless `quiet` (the answer
// handler says what it means then).
function send(request, onAnswer, quiet) {
  if (!ws || ws.readyState !== 1) return;
  const id = nextId++;
  if (onAnswer) pending[id] = onAnswer;
  if (quiet) quietIds.add(id);
  ws.send(JSON.stringify(Object.assign({ id: id }, request)));
}
const degrees = (r) => (r * 180 / Math.PI).toFixed(1) + "°";
function axis(name, a) {
  if (!a) return "";
  const range = a.minimum !== undefined ? `${degrees(a.minimum)}…${degrees(a.maximum)}` : "unlimited";
  return `${name} ${range} up to ${degrees(a.maximumSpeed)}/s`;
}
// The status box is redrawn at most once a screen refresh, however many messages come.
let showing = false;
function scheduleShow() { if (!showing) { showing = true; requestAnimationFrame(() => { showing = false; show(); }); } }
function show() {
  const pose = state.pose ? `pan ${degrees(state.pose.y)} tilt ${degrees(state.pose.x)}` : "pose ?";
  const run = state.run ? `tracking ${state.run.framesPerSecond.toFixed(1)} frames/s, latency p50 ${(state.run.latencyP50 * 1000).toFixed(0)} ms, p99 ${(state.run.latencyP99 * 1000).toFixed(0)} ms` : "";
  const limits = state.limits ? [axis("yaw", state.limits.yaw), axis("pitch", state.limits.pitch)].filter(Boolean).join("\n") : "";
  statusBox.textContent = [
    `${state.connected ? "connected" : "not connected"}, ${state.docked ? "docked" : "undocked"}`,
    pose,
    `subjects ${state.subjects}${state.first ? ", first " + state.first.slice(0, 8) : ""}`,
    state.battery ? `battery ${Math.round(state.battery.level * 100)}% ${state.battery.chargeState}${state.battery.lowBattery ? " LOW" : ""}` : "",
    state.lastGesture ? `gestures ${state.gestures}, last: ${state.lastGesture.gesture} by ${(state.lastGesture.subject || "?").slice(0, 8)}` : "",
    limits, run, `picture ${state.pictureFPS.toFixed(1)} frames/s`].filter(Boolean).join("\n");
}
function connect() {
  ws = new WebSocket(withToken((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws"));
  ws.onopen = () => {
    state.connected = true; $("view").classList.remove("gone");
    ws.send(JSON.stringify({ type: "hello", protocols: ["org.docktrack.dock/1"] }));
    for (const command of ["getFramingMode", "getSystemTracking", "getLimits", "getBattery", "getRegionOfInterest"]) send({ command: command });
    show();
  };
  // The tracker gone (or out of reach): the last picture is no longer what the dock sees.
  ws.onclose = () => { state.connected = false; $("view").classList.add("gone"); show(); setTimeout(connect, 1000); };
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    if (m.id !== undefined && pending[m.id]) { const answer = pending[m.id]; delete pending[m.id]; answer(m); }
    if (m.id !== undefined) setTimeout(() => quietIds.delete(m.id), 0);
    switch (m.type) {
      case "trackingState":
        state.subjects = m.subjects.length;
        state.first = m.subjects.length ? m.subjects[0].identifier : null;
        // Their rects as the protocol gives them: origin at the lower-left.
        state.list = m.subjects.map((s) => ({ id: s.identifier, rank: s.saliencyRank, kind: s.kind, rect: s.rect }));
        break;
      case "motionState": state.pose = m.position; state.velocity = m.velocity; state.time = m.time; break;
      case "hello": state.docked = m.docked; if (m.limits) state.limits = m.limits; break;
      case "limits": state.limits = m.limits; break;
      case "event": if (m.event === "docked" || m.event === "undocked") { state.docked = m.event === "docked"; log(m.event); } break;
      case "battery": state.battery = m; break;
      case "framingMode": mode = m.mode; markMode(); break;
      case "systemTracking": tracking = m.enabled; markTracking(); break;
      case "regionOfInterest": state.region = m.rect; break;
      case "runSpeed": state.run = m; break;
      case "error": if (!quietIds.has(m.id)) showError(m.code + ": " + m.message); break;
      case "accessoryEvent":
        // A gesture the tracker recognized (its hand is drawn on the picture for a moment).
        if (m.event === "gesture") {
          state.gestures++; state.lastGesture = m;
          log(`gesture: ${m.gesture === "followMe" ? "follow me" : m.gesture} by ${(m.subject || "?").slice(0, 8)}`); scheduleShow();
        } else log("dock: " + (m.event || JSON.stringify(m)));
        break;
      case "audioRouteChange": log("audio route: " + m.reason); break;
    }
    scheduleShow();
  };
}
// The picture: the next frame once the last is shown (newest wins, never a queue), at most 30
// a second (a file tracked at full speed makes hundreds).
let frames = 0, since = performance.now(), lastAsked = 0;
async function nextFrame() {
  const wait = lastAsked + 33 - performance.now();
  if (wait > 0) { setTimeout(nextFrame, wait); return; }
  lastAsked = performance.now();
  try {
    const reply = await fetch(withToken("/frame.jpg?after=" + lastFrame), { cache: "no-store" });
    if (reply.status === 200) {
      lastFrame = parseInt(reply.headers.get("X-Frame"), 10);
      const url = URL.createObjectURL(await reply.blob());
      picture.onload = () => {
        URL.revokeObjectURL(url); frames++; state.pictures++;
        const now = performance.now();
        if (now - since >= 1000) { state.pictureFPS = frames * 1000 / (now - since); frames = 0; since = now; show(); }
        nextFrame();
      };
      picture.onerror = () => { URL.revokeObjectURL(url); setTimeout(nextFrame, 500); };
      picture.src = url;
      return;
    }
    if (reply.status === 204) { nextFrame(); return; }
    if (reply.status === 401) { showError("the page needs its token: open the address docktrack printed"); }
  } catch (e) { }
  setTimeout(nextFrame, 500);
}
// The overview camera (track --overview), a few times a second while there is one; a tap on a
// person there sends the dock to them, wherever they are.
const overview = $("overview");
async function nextOverview() {
  try {
    const reply = await fetch(withToken("/overview.jpg"), { cache: "no-store" });
    if (reply.status === 200) {
      const url = URL.createObjectURL(await reply.blob());
      overview.onload = () => { URL.revokeObjectURL(url); $("overviewView").classList.add("on"); setTimeout(nextOverview, 200); };
      overview.onerror = () => { URL.revokeObjectURL(url); setTimeout(nextOverview, 1000); };
      overview.src = url;
      return;
    }
    if (reply.status === 404) return;  // no overview camera in this run
  } catch (e) { }
  setTimeout(nextOverview, 1000);
}
overview.addEventListener("click", (event) => {
  const box = overview.getBoundingClientRect();
  const p = { x: Math.min(1, Math.max(0, (event.clientX - box.left) / box.width)), y: Math.min(1, Math.max(0, (event.clientY - box.top) / box.height)) };
  send({ command: "selectSubject", point: p, view: "overview" }, (answer) => {
    if (answer.type === "selected") log("following " + answer.identifier.slice(0, 8) + " (from the overview)");
    else log("nobody there in the overview");
  }, true);
});
// Where on the picture an event is, in unit coordinates with the origin at the upper-left.
function unitPoint(event) {
  const box = picture.getBoundingClientRect();
  const clamp = (v) => Math.min(1, Math.max(0, v));
  return { x: clamp((event.clientX - box.left) / box.width), y: clamp((event.clientY - box.top) / box.height) };
}
// A tap on a person follows them; a tap where nobody is goes back to automatic.
let drew = false;
picture.addEventListener("click", (event) => {
  if (drawing || drew) { drew = false; return; }  // the end of a drag is not a tap
  const p = unitPoint(event);
  send({ command: "selectSubject", point: p }, (answer) => {
    if (answer.type === "selected") log("following " + answer.identifier.slice(0, 8));
    else { send({ command: "selectSubjects", identifiers: [] }); log("nobody there: automatic"); }
  }, true);
});
// The region of interest: a drag over the picture while "draw region" is on.
let regionStart = null;
const regionButton = $("region");
regionButton.addEventListener("click", () => { drawing = !drawing; regionButton.classList.toggle("on", drawing); });
function regionBetween(a, b) {
  return { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y) };
}
function setRegion(rect) {
  send({ command: "setRegionOfInterest", rect: rect, origin: "upperLeft" }, (a) => {
    if (a.type === "done") { state.region = rect; log(`region ${rect.x.toFixed(2)},${rect.y.toFixed(2)} ${rect.width.toFixed(2)}x${rect.height.toFixed(2)}`); }
  });
}
picture.addEventListener("pointerdown", (e) => {
  if (!drawing) { drew = false; return; }
  e.preventDefault(); regionStart = unitPoint(e); picture.setPointerCapture(e.pointerId);
});
picture.addEventListener("pointermove", (e) => {
  if (!drawing || !regionStart) return;
  const r = regionBetween(regionStart, unitPoint(e));
  Object.assign(draft.style, { display: "block", left: r.x * 100 + "%", top: r.y * 100 + "%", width: r.width * 100 + "%", height: r.height * 100 + "%" });
});
picture.addEventListener("pointerup", (e) => {
  if (!drawing || !regionStart) return;
  const r = regionBetween(regionStart, unitPoint(e));
  regionStart = null; draft.style.display = "none";
  drawing = false; drew = true; regionButton.classList.remove("on");
  if (r.width < 0.05 || r.height < 0.05) { showError("a region needs some size: drag across the picture"); return; }
  setRegion(r);
});
$("whole").addEventListener("click", () => setRegion({ x: 0, y: 0, width: 1, height: 1 }));
function markMode() { for (const b of document.querySelectorAll("#modes button")) b.classList.toggle("on", b.dataset.mode === mode); }
for (const b of document.querySelectorAll("#modes button")) {
  b.addEventListener("click", () => send({ command: "setFramingMode", mode: b.dataset.mode }, (a) => { if (a.type === "done") { mode = b.dataset.mode; markMode(); } }));
}
const trackingButton = $("tracking"), pad = $("pad"), knob = $("knob"), saveButton = $("save");
function markTracking() {
  trackingButton.textContent = tracking ? "tracking on" : "tracking off";
  trackingButton.classList.toggle("on", tracking);
  pad.classList.toggle("off", tracking);
  for (const b of document.querySelectorAll("#presets button")) b.disabled = tracking;
}
trackingButton.addEventListener("click", () => { tracking = !tracking; markTracking(); send({ command: "setSystemTracking", enabled: tracking }); });
// The joystick: a velocity while held (with tracking off), renewed twice a second (the dock
// stops a velocity not renewed within 1 s), a stop on release or when the page goes.
let lastVelocity = null, renewing = null;
function stopJoystick() {
  if (!held) return;
  held = false; clearInterval(renewing);
  knob.style.left = "70px"; knob.style.top = "70px";
  send({ command: "setAngularVelocity", velocity: { x: 0, y: 0, z: 0 } });
}
function steer(event) {
  const box = pad.getBoundingClientRect();
  let dx = (event.clientX - box.left) / box.width * 2 - 1, dy = (event.clientY - box.top) / box.height * 2 - 1;
  const r = Math.hypot(dx, dy); if (r > 1) { dx /= r; dy /= r; }
  knob.style.left = (70 + dx * 70) + "px"; knob.style.top = (70 + dy * 70) + "px";
  lastVelocity = { x: dy * 0.5, y: dx * 1.0, z: 0 };
  send({ command: "setAngularVelocity", velocity: lastVelocity });
}
pad.addEventListener("pointerdown", (e) => {
  if (tracking) { showError("switch tracking off to steer"); return; }
  held = true; pad.setPointerCapture(e.pointerId); steer(e);
  clearInterval(renewing);
  renewing = setInterval(() => { if (held && lastVelocity) send({ command: "setAngularVelocity", velocity: lastVelocity }); }, 400);
});
pad.addEventListener("pointermove", (e) => { if (held) steer(e); });
for (const name of ["pointerup", "pointercancel", "lostpointercapture"]) pad.addEventListener(name, stopJoystick);
window.addEventListener("pagehide", stopJoystick);
document.addEventListener("visibilitychange", () => { if (document.hidden) stopJoystick(); });
window.addEventListener("blur", stopJoystick);
// Presets: poses kept in this browser, gone to with tracking off.
const presetsBox = $("presets");
function loadPresets() { try { return JSON.parse(localStorage.getItem("docktrack.presets") || "[]"); } catch (e) { return []; } }
function drawPresets() {
  for (const b of presetsBox.querySelectorAll("button.go")) b.remove();
  loadPresets().forEach((p, i) => {
    const b = document.createElement("button");
    b.className = "go"; b.textContent = String(i + 1); b.title = `pan ${degrees(p.y)} tilt ${degrees(p.x)} (double-click forgets it)`;
    // A click goes there once it is clear no second click follows (a double click forgets the
    // preset without moving the dock first): half a second, the longest double click desktops
    // take by default (GNOME 400 ms, Windows 500 ms).
    let going = null;
    b.addEventListener("click", (e) => {
      clearTimeout(going);
      if (e.detail > 1) return;
      going = setTimeout(() => send({ command: "setOrientation", orientation: { x: p.x, y: p.y, z: 0 }, duration: 1.5, relative: false },
        (a) => { if (a.type !== "error") log("preset " + (i + 1)); }), 500);
    });
    b.addEventListener("dblclick", () => { clearTimeout(going); const all = loadPresets(); all.splice(i, 1); localStorage.setItem("docktrack.presets", JSON.stringify(all)); drawPresets(); });
    presetsBox.appendChild(b);
  });
  markTracking();
}
saveButton.addEventListener("click", () => {
  if (!state.pose) return;
  const all = loadPresets().concat([{ x: state.pose.x, y: state.pose.y }]).slice(-8);
  localStorage.setItem("docktrack.presets", JSON.stringify(all)); drawPresets();
});
drawPresets();
connect();
nextFrame();
nextOverview();
</script>
</body>
</html>
"""#
}
