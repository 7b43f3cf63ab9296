#!/usr/bin/python3
"""Makes samples/vtest-panning.mp4 and samples/labels/vtest-panning.mot.txt: vtest.avi's first 300
frames seen through a 360x270 window that pans and tilts across the 768x576 street as a dock's
camera would (a sweep with a faster wobble), pixels 1:1, and the people of
samples/labels/vtest.mot.txt moved with the window. A box less than 2/3 inside the window is
marked not considered (as vtest.mot.txt marks people half out of the picture); a box not in it at
all is left out. Run from the repository's top: /usr/bin/python3 tools/moving-camera/make_clip.py
(Debian's python3-opencv 4.6)."""
import math
import cv2

WIDTH, HEIGHT, FRAMES = 360, 270, 300


def window(frame):
    """The window's top-left corner at frame (from 0): a sweep left to right and back every 6 s
    (10 fps: up to 21 px, 6% of the window, a frame), a slow tilt, and a wobble of 1.5 s (a dock
    turning at about 0.3 rad/s with a 60-degree lens, and a hand's shake)."""
    t = frame / 10.0
    x = (768 - WIDTH) * (0.5 - 0.5 * math.cos(2 * math.pi * t / 6)) + 25 * math.sin(2 * math.pi * t / 1.5)
    y = (576 - HEIGHT) * (0.35 + 0.25 * math.sin(2 * math.pi * t / 17)) + 6 * math.sin(2 * math.pi * t / 1.3)
    return int(round(min(max(x, 0), 768 - WIDTH))), int(round(min(max(y, 0), 576 - HEIGHT)))


def main():
    source = cv2.VideoCapture("samples/vtest.avi")
    writer = cv2.VideoWriter("samples/vtest-panning.mp4", cv2.VideoWriter_fourcc(*"avc1"), 10, (WIDTH, HEIGHT))
    for frame in range(FRAMES):
        ok, image = source.read()
        assert ok, frame
        x, y = window(frame)
        writer.write(image[y:y + HEIGHT, x:x + WIDTH])
    writer.release()
    lines = ["# vtest.avi frames 1-300 through a panning 360x270 window (tools/moving-camera/make_clip.py)"]
    for line in open("samples/labels/vtest.mot.txt"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.strip().split(",")
        frame, ident = int(f[0]), f[1]
        if frame > FRAMES:
            continue
        left, top, width, height = map(float, f[2:6])
        considered = f[6] if len(f) > 6 else "1"
        x, y = window(frame - 1)
        l, t = left - x, top - y
        il, it = max(l, 0), max(t, 0)
        ir, ib = min(l + width, WIDTH), min(t + height, HEIGHT)
        if ir <= il or ib <= it:
            continue
        inside = (ir - il) * (ib - it) / (width * height)
        if inside < 2 / 3:
            considered = "0"
        lines.append(f"{frame},{ident},{l:.1f},{t:.1f},{width:.1f},{height:.1f},{considered},1,1")
    open("samples/labels/vtest-panning.mot.txt", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
