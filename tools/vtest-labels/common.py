# Shared helpers: frames, foreground masks, box snapping, file I/O.
import collections
import cv2
import numpy as np

W, H = 768, 576
NF = 300
_masks = None


def masks():
    """Cleaned foreground masks for frames 1..300 (index f-1): colour distance to the median
    background (fg.py), opened with a 6x1 vertical kernel and small blobs (<30 px) dropped, which
    removes the fluttering red-white tape."""
    global _masks
    if _masks is None:
        raw = np.load('fg.npz')['m']
        out = np.zeros_like(raw)
        k = np.ones((6, 1), np.uint8)
        for i in range(raw.shape[0]):
            m = cv2.morphologyEx(raw[i], cv2.MORPH_OPEN, k)
            n, lab, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
            keep = np.zeros(n, np.uint8)
            keep[1:] = (st[1:, cv2.CC_STAT_AREA] >= 30)
            out[i] = keep[lab]
        _masks = out
    return _masks


def frame(f):
    return cv2.imread('frames/%04d.jpg' % f)


def iou(a, b):
    ax, ay, aw, ah = a[:4]
    bx, by, bw, bh = b[:4]
    ix = max(0, min(ax + aw, bx + bw) - max(ax, bx))
    iy = max(0, min(ay + ah, by + bh) - max(ay, by))
    i = ix * iy
    u = aw * ah + bw * bh - i
    return i / u if u > 0 else 0.0


def runs(profile, thresh, maxgap):
    """Contiguous index runs where profile >= thresh, bridging gaps up to maxgap."""
    idx = np.nonzero(profile >= thresh)[0]
    if len(idx) == 0:
        return []
    out = []
    s = p = idx[0]
    for i in idx[1:]:
        if i - p - 1 > maxgap:
            out.append((s, p))
            s = i
        p = i
    out.append((s, p))
    return out


def snap(f, box, others=()):
    """Tight box of the foreground around a predicted box (x, y, w, h floats) on frame f.
    Pixels nearer (in box-normalised distance) to another box's centre are left out.
    Returns (box, ok)."""
    m = masks()[f - 1]
    x, y, w, h = box
    cx, cy = x + w / 2, y + h / 2
    x0 = int(max(0, x - 0.35 * w)); x1 = int(min(W, x + w + 0.35 * w))
    y0 = int(max(0, y - 0.2 * h)); y1 = int(min(H, y + h + 0.2 * h))
    if x1 - x0 < 3 or y1 - y0 < 3:
        return box, False
    sub = m[y0:y1, x0:x1].astype(bool).copy()
    xs = np.arange(x0, x1)[None, :]
    ys = np.arange(y0, y1)[:, None]
    own = ((xs - cx) / (w / 2)) ** 2 + ((ys - cy) / (h / 2)) ** 2
    for o in others:
        ox, oy, ow, oh = o[:4]
        if ox > x1 or ox + ow < x0 or oy > y1 or oy + oh < y0:
            continue
        ocx, ocy = ox + ow / 2, oy + oh / 2
        d = ((xs - ocx) / (ow / 2)) ** 2 + ((ys - ocy) / (oh / 2)) ** 2
        sub &= ~(d < own)
    cols = sub.sum(axis=0)
    cr = runs(cols, 2 if h > 40 else 1, max(2, int(0.2 * w)))
    if not cr:
        return box, False
    c = cx - x0
    best = min(cr, key=lambda r: 0 if r[0] <= c <= r[1] else min(abs(r[0] - c), abs(r[1] - c)))
    if not (best[0] - 0.25 * w <= c <= best[1] + 0.25 * w):
        return box, False
    rows = sub[:, best[0]:best[1] + 1].sum(axis=1)
    rr = runs(rows, 1, max(3, int(0.12 * h)))
    if not rr:
        return box, False
    r = cy - y0
    rb = min(rr, key=lambda q: 0 if q[0] <= r <= q[1] else min(abs(q[0] - r), abs(q[1] - r)))
    nb = (x0 + best[0], y0 + rb[0], best[1] - best[0] + 1, rb[1] - rb[0] + 1)
    # refine columns on the chosen rows
    cols2 = sub[rb[0]:rb[1] + 1, :].sum(axis=0)
    cr2 = runs(cols2, 2 if h > 40 else 1, max(2, int(0.2 * w)))
    if cr2:
        b2 = min(cr2, key=lambda q: 0 if q[0] <= c <= q[1] else min(abs(q[0] - c), abs(q[1] - c)))
        nb = (x0 + b2[0], nb[1], b2[1] - b2[0] + 1, nb[3])
    # never move an edge far from the prediction (tape, cones and neighbours touching the body)
    bx0 = max(nb[0], x - 0.25 * w); bx1 = min(nb[0] + nb[2], x + w + 0.25 * w)
    by0 = max(nb[1], y - 0.05 * h); by1 = min(nb[1] + nb[3], y + h + 0.1 * h)
    if bx1 - bx0 < 2 or by1 - by0 < 2:
        return box, False
    nb = (bx0, by0, bx1 - bx0, by1 - by0)
    fill = sub[int(by0) - y0:int(by1) - y0, int(bx0) - x0:int(bx1) - x0].mean()
    ok = (0.75 * h <= nb[3] <= 1.3 * h and 0.45 * w <= nb[2] <= 1.8 * w
          and abs(nb[0] + nb[2] / 2 - cx) < 0.35 * w + 3 and abs(nb[1] + nb[3] / 2 - cy) < 0.2 * h + 3
          and fill > 0.2)
    return (nb if ok else box), ok


def load_mot(fn):
    d = collections.defaultdict(list)
    for l in open(fn):
        if l.startswith('#') or not l.strip():
            continue
        v = [int(float(t)) for t in l.strip().split(',')]
        d[v[0]].append(v)
    return d
