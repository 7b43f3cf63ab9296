# Per-person strips: crops of one id's box on every STEP-th frame of its span, side by side,
# to check that an id stays on the same person (clothes) and the box stays tight.
#   strips.py LABELS OUTDIR STEP [ids...]
import sys
import collections
import cv2
import numpy as np
from common import frame, load_mot

FONT = cv2.FONT_HERSHEY_PLAIN
labels, outdir, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = set(map(int, sys.argv[4:]))
d = load_mot(labels)
per = collections.defaultdict(dict)
for f, rows in d.items():
    for v in rows:
        per[v[1]][f] = v
cache = {}
for pid, fr in sorted(per.items()):
    if want and pid not in want:
        continue
    fs = sorted(fr)
    sel = [f for f in fs if (f - 1) % step == 0]
    if fs[0] not in sel:
        sel = [fs[0]] + sel
    if fs[-1] not in sel:
        sel.append(fs[-1])
    tiles = []
    for f in sel:
        _, _, x, y, w, h, c = fr[f][:7]
        s = max(1.0, 120.0 / max(h, 1))
        s = min(s, 4.0)
        mx, my = int(0.4 * w) + 6, int(0.15 * h) + 6
        x0, y0 = max(0, x - mx), max(0, y - my)
        x1, y1 = min(768, x + w + mx), min(576, y + h + my)
        img = cache.get(f)
        if img is None:
            img = cache[f] = frame(f)
        crop = img[y0:y1, x0:x1].copy()
        crop = cv2.resize(crop, None, fx=s, fy=s, interpolation=cv2.INTER_CUBIC)
        col = (0, 255, 0) if c == 1 else (0, 140, 255)
        cv2.rectangle(crop, (int((x - x0) * s), int((y - y0) * s)),
                      (int((x + w - x0) * s) - 1, int((y + h - y0) * s) - 1), col, 1)
        t = np.zeros((crop.shape[0] + 14, max(crop.shape[1], 40), 3), np.uint8)
        t[14:, :crop.shape[1]] = crop
        cv2.putText(t, str(f), (1, 11), FONT, 0.8, (255, 255, 255), 1)
        tiles.append(t)
    hmax = max(t.shape[0] for t in tiles)
    tiles = [np.pad(t, ((0, hmax - t.shape[0]), (0, 2), (0, 0))) for t in tiles]
    rows_img, row, wsum = [], [], 0
    for t in tiles:
        if wsum + t.shape[1] > 1400 and row:
            rows_img.append(np.hstack(row)); row, wsum = [], 0
        row.append(t); wsum += t.shape[1]
    rows_img.append(np.hstack(row))
    wmax = max(r.shape[1] for r in rows_img)
    out = np.vstack([np.pad(r, ((0, 0), (0, wmax - r.shape[1]), (0, 0))) for r in rows_img])
    out = np.vstack([np.zeros((16, wmax, 3), np.uint8), out])
    cv2.putText(out, 'id %d: frames %d-%d' % (pid, fs[0], fs[-1]), (2, 12), FONT, 1.0, (0, 255, 255), 1)
    cv2.imwrite('%s/id%03d.png' % (outdir, pid), out)
