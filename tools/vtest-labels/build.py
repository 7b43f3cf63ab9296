# Step 2: make the labels from the keyframes.
# keyframes.txt: one line per keyframe box: "id frame left top width height [flags]"
#   the box may reach outside the picture (the body's estimated full extent when cut by the edge);
#   flags: s  = snap this keyframe box to the foreground (boxes taken from the automatic tracks);
#          n  = do not snap the frames from this keyframe to the next one (occlusion, merged people);
#          c0 = considered 0 from this keyframe to the next one (hidden behind a person / the sign);
#          c1 = considered 1 forced from this keyframe to the next one;
#          e  = the person leaves the picture after this keyframe (no interpolation to the next one).
#   "# ..." comments and blank lines are ignored.
# Between keyframes the box is interpolated linearly, then snapped to the foreground mask
# (others' boxes excluded) when the snapped box agrees with the interpolation (IoU >= 0.55).
# Output: vtest.mot.txt (frame,id,left,top,width,height,considered,1,1), frames 1..300.
import sys
import collections
import numpy as np
from common import *

SNAP_IOU = 0.55


def read_keys(fn):
    keys = collections.defaultdict(dict)
    for l in open(fn):
        l = l.split('#')[0].strip()
        if not l:
            continue
        t = l.split()
        pid, f = int(t[0]), int(t[1])
        box = tuple(float(v) for v in t[2:6])
        keys[pid][f] = (box, set(t[6:]))
    return keys


SIGN = (413, 202, 31, 41)  # the "fire assembly point" sign on the lamp post (x, y, w, h)
HIDDEN_MAX = 0.34           # considered 0 when more than this share of the box is covered


def occlusion(rows, half=2):
    """Share of each box covered by the sign and by people standing in front (lower feet).
    A person is hidden when more than HIDDEN_MAX of the box is covered; that decision is
    smoothed by a majority vote over +-half frames of the same person (no flicker), then
    considered = 0 when hidden, unless the keyframe forces c1."""
    byf = collections.defaultdict(list)
    for r in rows:
        byf[r[0]].append(r)
    hidden = {}
    for f, rs in byf.items():
        for r in rs:
            x, y, w, h = r[2:6]
            m = np.zeros((h, w), bool)
            occ = [SIGN] + [o[2:6] for o in rs if o is not r and o[3] + o[5] > y + h + 2]
            for ox, oy, ow, oh in occ:
                a0, a1 = max(0, ox - x), min(w, ox + ow - x)
                b0, b1 = max(0, oy - y), min(h, oy + oh - y)
                if a1 > a0 and b1 > b0:
                    m[b0:b1, a0:a1] = True
            hidden[(r[1], f)] = (m.mean() if m.size else 0.0) > HIDDEN_MAX
    for r in rows:
        win = [hidden[(r[1], g)] for g in range(r[0] - half, r[0] + half + 1) if (r[1], g) in hidden]
        if sum(win) * 2 > len(win) and 'c1' not in r[7]:
            r[6] = 0


def build(keyfile='keyframes.txt', out='vtest.mot.txt', snapping=True):
    keys = read_keys(keyfile)
    # interpolated boxes and flags per person per frame
    interp = collections.defaultdict(dict)  # f -> pid -> (box, flags, iskey)
    for pid, k in keys.items():
        fs = sorted(k)
        for a, b in zip(fs, fs[1:] + [None]):
            if b is None or 'e' in k[a][1]:
                interp[a][pid] = (k[a][0], k[a][1], True)
                continue
            for f in range(a, b):
                t = (f - a) / (b - a)
                box = tuple((1 - t) * np.array(k[a][0]) + t * np.array(k[b][0]))
                interp[f][pid] = (box, k[a][1], f == a)
    rows = []
    stats = collections.Counter()
    for f in range(1, NF + 1):
        cur = interp.get(f, {})
        for pid, (box, flags, iskey) in sorted(cur.items()):
            others = [b for q, (b, _, _) in cur.items() if q != pid]
            final = box
            if snapping and ((iskey and 's' in flags) or (not iskey and 'n' not in flags)):
                sb, ok = snap(f, box, others)
                crowded = any(iou(box, o) > 0.05 for o in others)
                steady = (abs(sb[3] - box[3]) <= 0.12 * box[3] and abs(sb[1] - box[1]) <= 0.1 * box[3]
                          and abs(sb[2] - box[2]) <= (0.25 if crowded else 0.5) * box[2])
                if ok and steady and iou(sb, box) >= (0.7 if crowded else SNAP_IOU):
                    final = sb
                    stats['snapped'] += 1
                else:
                    stats['interp'] += 1
            else:
                stats['key' if iskey else 'nosnap'] += 1
            x, y, w, h = final
            # clip to the picture
            x0, y0 = max(0.0, x), max(0.0, y)
            x1, y1 = min(float(W), x + w), min(float(H), y + h)
            if x1 - x0 < 2 or y1 - y0 < 2:
                continue
            inside = (x1 - x0) * (y1 - y0) / (w * h)
            cons = 1
            if inside < 2 / 3 or h < 25 or 'c0' in flags:
                cons = 0
            if 'c1' in flags:
                cons = 1
            rows.append([f, pid, int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0)), cons, flags, h])
    occlusion(rows)
    rows = [tuple(r[:7]) for r in rows]
    rows.sort()
    with open(out, 'w') as fo:
        fo.write('# vtest.avi (OpenCV sample, 768x576) frames 1..300: every visible person, MOTChallenge gt\n')
        fo.write('# frame,id,left,top,width,height,considered,class,visibility; hand keyframes (vtest.keyframes.txt) interpolated and snapped to the foreground (tools/vtest-labels)\n')
        for r in rows:
            fo.write('%d,%d,%d,%d,%d,%d,%d,1,1\n' % r)
    return rows, stats


if __name__ == '__main__':
    kf = sys.argv[1] if len(sys.argv) > 1 else 'keyframes.txt'
    out = sys.argv[2] if len(sys.argv) > 2 else 'vtest.mot.txt'
    rows, stats = build(kf, out)
    print(len(rows), 'boxes', len({r[1] for r in rows}), 'ids', dict(stats))
