# Step 1: link the machine proposal (SSD boxes, frames 1..300) into person tracks.
# Forward pass: predict each track linearly, match to proposal boxes (IoU), else snap the predicted
# box to the foreground; unmatched proposal boxes and person-sized foreground blobs that no track
# covers start new tracks. Then tracks are extended backwards by snapping, short gaps between
# tracklets that continue each other are joined, and the result is written to auto_tracks.txt
# (frame,id,x,y,w,h,source) with source d=detector, s=snapped, p=predicted.
import numpy as np
import cv2
from common import *


def center(b):
    return np.array([b[0] + b[2] / 2, b[1] + b[3] / 2])


class Track:
    def __init__(self, tid, f, box, src):
        self.id = tid
        self.obs = {f: (tuple(box), src)}
        self.miss = 0

    def last(self):
        f = max(self.obs)
        return f, self.obs[f][0]

    def velocity(self, end=True, n=6):
        fs = sorted(f for f, (b, s) in self.obs.items() if s != 'p')
        fs = fs[-n:] if end else fs[:n]
        if len(fs) < 2:
            return np.zeros(2)
        c = np.array([center(self.obs[f][0]) for f in fs])
        t = np.array(fs, float)
        A = np.vstack([t, np.ones_like(t)]).T
        v = np.linalg.lstsq(A, c, rcond=None)[0][0]
        return np.clip(v, -8, 8)

    def predict(self, f):
        lf, b = self.last()
        v = self.velocity()
        dt = f - lf
        return (b[0] + v[0] * dt, b[1] + v[1] * dt, b[2], b[3])


def proposal():
    d = load_mot('proposal.txt')
    return {f: [tuple(map(float, v[2:6])) for v in d[f]] for f in range(1, NF + 1)}


def blobs(f):
    m = masks()[f - 1]
    n, lab, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
    out = []
    for i in range(1, n):
        x, y, w, h, a = st[i]
        if h >= 18 and a >= 80 and 1.2 * w <= h * 1.0 + 20 and w >= 5:
            out.append((float(x), float(y), float(w), float(h)))
    return out


def inside_frac(a, b):
    """fraction of a's area inside b"""
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return ix * iy / (a[2] * a[3])


def forward(dets):
    tracks, active, nid = [], [], 1
    for f in range(1, NF + 1):
        preds = {t.id: t.predict(f) for t in active}
        D = dets[f]
        pairs = sorted(((iou(preds[t.id], d), ti, di) for ti, t in enumerate(active)
                        for di, d in enumerate(D)), reverse=True)
        mt, md = set(), set()
        for s, ti, di in pairs:
            if s < 0.3 or ti in mt or di in md:
                continue
            # a detector box much wider than the track (a pair) is not taken as is
            t = active[ti]
            if D[di][2] > 1.5 * preds[t.id][2] + 4:
                continue
            mt.add(ti); md.add(di)
            t.obs[f] = (D[di], 'd'); t.miss = 0
        for ti, t in enumerate(active):
            if ti in mt:
                continue
            others = [preds[o.id] for o in active if o is not t]
            b, ok = snap(f, preds[t.id], others)
            if ok:
                t.obs[f] = (b, 's'); t.miss = 0
            else:
                t.obs[f] = (preds[t.id], 'p'); t.miss += 1
        cur = [t.obs[f][0] for t in active]
        for di, d in enumerate(D):
            if di in md:
                continue
            if any(iou(d, c) > 0.3 or inside_frac(d, c) > 0.6 for c in cur):
                continue
            t = Track(nid, f, d, 'd'); nid += 1
            tracks.append(t); active.append(t); cur.append(d)
        for b in blobs(f):
            if any(inside_frac(b, c) > 0.2 or inside_frac(c, b) > 0.3 for c in cur):
                continue
            t = Track(nid, f, b, 'b'); nid += 1
            tracks.append(t); active.append(t); cur.append(b)
        still = []
        for t in active:
            lf, b = t.last()
            out = b[0] + b[2] < 2 or b[0] > W - 2 or b[1] + b[3] < 2
            if t.miss > 8 or out:
                for g in [g for g, (bb, s) in t.obs.items() if s == 'p']:
                    if g > max([h for h, (bb, s) in t.obs.items() if s != 'p'], default=0):
                        del t.obs[g]
                continue
            still.append(t)
        active = still
        # drop duplicate tracks sitting on the same person
        for a in list(active):
            for b2 in list(active):
                if a is b2 or a not in active or b2 not in active:
                    continue
                if iou(a.obs[f][0], b2.obs[f][0]) > 0.6:
                    loser = a if len(a.obs) < len(b2.obs) else b2
                    active.remove(loser)
                    del loser.obs[f]
    return [t for t in tracks if t.obs]


def extend_back(tracks):
    for t in tracks:
        f0 = min(t.obs)
        v = t.velocity(end=False)
        b = t.obs[f0][0]
        miss = 0
        for f in range(f0 - 1, 0, -1):
            pred = (b[0] - v[0], b[1] - v[1], b[2], b[3])
            others = [o.obs[f][0] for o in tracks if o is not t and f in o.obs]
            if any(iou(pred, o) > 0.4 for o in others):
                break
            nb, ok = snap(f, pred, others)
            if not ok:
                break
            t.obs[f] = (nb, 's')
            b = nb


def join(tracks, maxgap=25):
    changed = True
    while changed:
        changed = False
        tracks.sort(key=lambda t: min(t.obs))
        for a in tracks:
            ae = max(a.obs)
            best = None
            for b in tracks:
                if b is a:
                    continue
                bs = min(b.obs)
                if not (ae < bs <= ae + maxgap):
                    continue
                p = a.predict(bs)
                bb = b.obs[bs][0]
                dist = np.linalg.norm(center(p) - center(bb))
                if dist < 0.5 * p[3] + 0.1 * (bs - ae) * p[3] / 4 and 0.7 < bb[3] / p[3] < 1.4:
                    if best is None or dist < best[0]:
                        best = (dist, b)
            if best:
                b = best[1]
                a.obs.update(b.obs)
                tracks.remove(b)
                changed = True
                break
    return tracks


if __name__ == '__main__':
    dets = proposal()
    tr = forward(dets)
    extend_back(tr)
    tr = join(tr)
    # drop very short blob-only tracks (noise)
    tr = [t for t in tr if len(t.obs) >= 5]
    tr.sort(key=lambda t: min(t.obs))
    with open('auto_tracks.txt', 'w') as fo:
        for k, t in enumerate(tr, 1):
            t.id = k
            fs = sorted(t.obs)
            for f in range(fs[0], fs[-1] + 1):
                if f in t.obs:
                    b, s = t.obs[f]
                else:  # interpolate
                    p = max(g for g in fs if g < f); n = min(g for g in fs if g > f)
                    a = (f - p) / (n - p)
                    b = tuple((1 - a) * np.array(t.obs[p][0]) + a * np.array(t.obs[n][0])); s = 'i'
                fo.write('%d,%d,%.1f,%.1f,%.1f,%.1f,%s\n' % (f, k, *b, s))
    print(len(tr), 'tracks')
    for t in tr:
        fs = sorted(t.obs)
        src = ''.join(t.obs[f][1] for f in fs)
        print(t.id, fs[0], fs[-1], {s: src.count(s) for s in 'dsbp'}, [int(v) for v in t.obs[fs[0]][0]])
