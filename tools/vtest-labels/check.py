# Consistency checks of the labels (no heavy computation):
#  1. proposal (SSD) boxes that overlap none of the labels (possible missed people)
#  2. foreground blobs of person size that no label covers (possible missed people)
#  3. labels with little foreground inside (possible boxes on nothing)
#  4. jumps: a label's centre or height changing abruptly from one frame to the next
import sys
import cv2
import numpy as np
from common import *

lab = load_mot(sys.argv[1] if len(sys.argv) > 1 else 'vtest.mot.txt')
prop = load_mot('proposal.txt')
m = masks()
print('== proposal boxes matching no label (IoU<0.2 and <50% inside a label)')
for f in range(1, NF + 1):
    for p in prop.get(f, []):
        b = p[2:6]
        best = max([iou(b, v[2:6]) for v in lab.get(f, [])] + [0])
        ins = 0
        for v in lab.get(f, []):
            ix = max(0, min(b[0] + b[2], v[2] + v[4]) - max(b[0], v[2]))
            iy = max(0, min(b[1] + b[3], v[3] + v[5]) - max(b[1], v[3]))
            ins = max(ins, ix * iy / (b[2] * b[3]))
        if best < 0.2 and ins < 0.5:
            print(' f%d proposal %s best IoU %.2f' % (f, b, best))
print('== person-sized foreground blobs outside all labels')
for f in range(1, NF + 1):
    n, labm, st, _ = cv2.connectedComponentsWithStats(m[f - 1])
    cover = np.zeros((H, W), bool)
    for v in lab.get(f, []):
        cover[max(0, v[3] - 3):v[3] + v[5] + 3, max(0, v[2] - 3):v[2] + v[4] + 3] = True
    for i in range(1, n):
        x, y, w, h, a = st[i]
        if h < 15 or a < 60:
            continue
        out = ((labm == i) & ~cover).sum()
        if out > 0.5 * a:
            print(' f%d blob x%d y%d w%d h%d area %d (%d outside)' % (f, x, y, w, h, a, out))
print('== labels with <25% foreground inside')
for f in range(1, NF + 1):
    for v in lab.get(f, []):
        sub = m[f - 1, v[3]:v[3] + v[5], v[2]:v[2] + v[4]]
        if sub.size and sub.mean() < 0.25:
            print(' f%d id%d %s fg %.2f c%d' % (f, v[1], v[2:6], sub.mean(), v[6]))
print('== jumps')
per = collections.defaultdict(dict)
for f, rows in lab.items():
    for v in rows:
        per[v[1]][f] = v
for pid, d in sorted(per.items()):
    for f in sorted(d):
        if f + 1 in d:
            a, b = d[f], d[f + 1]
            ca = (a[2] + a[4] / 2, a[3] + a[5] / 2); cb = (b[2] + b[4] / 2, b[3] + b[5] / 2)
            if abs(ca[0] - cb[0]) > 0.2 * a[5] or abs(a[5] - b[5]) > 0.12 * a[5] or abs(a[3] - b[3]) > 0.1 * a[5]:
                print(' id%d f%d->%d %s -> %s' % (pid, f, f + 1, a[2:6], b[2:6]))
