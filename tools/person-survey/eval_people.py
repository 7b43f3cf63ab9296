#!/usr/bin/env python3
"""Person-detector harness for DockTrack candidate measurements (read-only use of /work/main).

Three steps:
  detect : run one "look" family over a clip, cache raw boxes (low threshold) to cache/<clip>__<look>.json
  score  : combine looks into a candidate, sweep score thresholds, print recall per height bucket and
           false people per frame for vtest (768x576), vtest360 (360x270) and bikes, plus dogs/messi
  time   : ms per look on one core at 360x270, 768x576, 1280x720 (vtest frames resized), median of N

Always run under `taskset -c 1` (cv2.setNumThreads(1) is set here).

  taskset -c 1 /usr/bin/python3 eval_people.py detect --look ssd300 --clip vtest
  /usr/bin/python3 eval_people.py score --cand ssd300 --thr 0.3,0.4,0.5
  taskset -c 1 /usr/bin/python3 eval_people.py time --cand ssd300
"""
import argparse
import json
import os
import sys
import time

import cv2
import numpy as np

cv2.setNumThreads(1)

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'samples')
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models')
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, 'cache')

CLIPS = {
    # name: (video, labels, resize-to or None, last labelled frame)
    'vtest': (f'{SAMPLES}/vtest.avi', f'{SAMPLES}/labels/vtest.mot.txt', None, 300),
    'vtest360': (f'{SAMPLES}/vtest.avi', f'{SAMPLES}/labels/vtest.mot.txt', (360, 270), 300),
    'bikes': (f'{SAMPLES}/bikes.mp4', f'{SAMPLES}/labels/bikes.mot.txt', None, 250),
}
IMAGES = {'dogs': f'{SAMPLES}/faces/dogs.jpg', 'messi': f'{SAMPLES}/messi5.jpg'}

# ----------------------------------------------------------------------------- detectors (looks)
_ssd = None


def ssd_net():
    global _ssd
    if _ssd is None:
        p = f'{MODELS}/ssdlite_mobilenet_v2_people'
        _ssd = cv2.dnn.readNetFromTensorflow(p + '.pb', p + '.pbtxt')
    return _ssd


_ort = None
ORT_MODEL = os.path.join(HERE, 'onnx', 'ssdlite_people_full.onnx')


def ort_detect(image, min_score=0.1):
    """The same SSDLite people graph converted by tf2onnx (TF's own resize to 300x300 and NMS inside),
    run by ONNX Runtime on one thread. Needs the venv (onnxruntime)."""
    global _ort
    if _ort is None:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        _ort = ort.InferenceSession(ORT_MODEL, so, providers=['CPUExecutionProvider'])
    boxes, scores, n = _ort.run(None, {'image_tensor:0': cv2.cvtColor(image, cv2.COLOR_BGR2RGB)[None]})
    h, w = image.shape[:2]
    return [(float(b[1] * w), float(b[0] * h), float(b[3] * w), float(b[2] * h), float(s))
            for b, s in zip(boxes[0], scores[0]) if s >= min_score]


def ssd_detect(image, size, min_score=0.1):
    """SSDLite-MobileNetV2 people on `image` resized to size=(W,H) (no aspect keeping, as trained).
    size None: the ONNX Runtime form of the same network (300x300 inside the graph)."""
    if size is None:
        return ort_detect(image, min_score)
    net = ssd_net()
    blob = cv2.dnn.blobFromImage(image, 1 / 127.5, size, (127.5, 127.5, 127.5), swapRB=True)
    net.setInput(blob)
    out = net.forward()[0, 0]
    h, w = image.shape[:2]
    out = out[out[:, 2] >= min_score]
    return [(float(d[3] * w), float(d[4] * h), float(d[5] * w), float(d[6] * h), float(d[2])) for d in out]


def tiles(w, h, cols, rows):
    """cols x rows tiles with 50% overlap (tile = 2/(n+1) of the side), as tools/propose_people_labels.py for 3x2."""
    tw, th = w * 2.0 / (cols + 1), h * 2.0 / (rows + 1)
    xs = [0.0] if cols == 1 else [i * (w - tw) / (cols - 1) for i in range(cols)]
    ys = [0.0] if rows == 1 else [j * (h - th) / (rows - 1) for j in range(rows)]
    return [(int(x), int(y), int(x + tw), int(y + th)) for y in ys for x in xs]


def ssd_tiles(image, cols, rows, size=(300, 300), edge_rule=False):
    """edge_rule: drop a tile's box touching an inner tile edge (a cut-off part of a person; the overlapping
    neighbour tile or the whole-frame look sees that person whole)."""
    h, w = image.shape[:2]
    found = []
    m = 3
    for x0, y0, x1, y1 in tiles(w, h, cols, rows):
        for a, b, c, d, s in ssd_detect(image[y0:y1, x0:x1], size):
            a, b, c, d = a + x0, b + y0, c + x0, d + y0
            if edge_rule and ((x0 > 0 and a <= x0 + m) or (x1 < w - 1 and c >= x1 - m) or
                              (y0 > 0 and b <= y0 + m) or (y1 < h - 1 and d >= y1 - m)):
                continue
            found.append((a, b, c, d, s))
    return found


_hog = {}


def hog_detect(image, kind, up):
    if kind not in _hog:
        if kind == 'hog':
            d = cv2.HOGDescriptor()
            d.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
        else:
            d = cv2.HOGDescriptor((48, 96), (16, 16), (8, 8), (8, 8), 9)
            d.setSVMDetector(cv2.HOGDescriptor_getDaimlerPeopleDetector())
        _hog[kind] = d
    img = image if up == 1 else cv2.resize(image, None, fx=up, fy=up, interpolation=cv2.INTER_LINEAR)
    gray = img  # HOG works on colour (max gradient over channels), as DockTrack's hog detectors
    rects, weights = _hog[kind].detectMultiScale(gray, hitThreshold=0, winStride=(8, 8), padding=(8, 8), scale=1.05)
    out = []
    for (x, y, ww, hh), s in zip(rects, np.array(weights).reshape(-1)):
        out.append((x / up, y / up, (x + ww) / up, (y + hh) / up, float(s)))
    return out


_haar = None


def haar_detect(image, up):
    global _haar
    if _haar is None:
        _haar = cv2.CascadeClassifier(os.path.join(HERE, 'deb/x/usr/share/opencv4/haarcascades/haarcascade_fullbody.xml'))
    img = image if up == 1 else cv2.resize(image, None, fx=up, fy=up)
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    rects, levels, weights = _haar.detectMultiScale3(gray, scaleFactor=1.05, minNeighbors=3, outputRejectLevels=True)
    return [(x / up, y / up, (x + w) / up, (y + h) / up, float(s)) for (x, y, w, h), s in zip(rects, np.array(weights).reshape(-1))]


def look(name, image):
    """One named look family -> list of (x1,y1,x2,y2,score) in image pixels."""
    if name == 'ort300':
        return ort_detect(image)
    if name.startswith('orttilesE'):
        c, r = map(int, name[9:].split('x'))
        return ssd_tiles(image, c, r, size=None, edge_rule=True)
    if name.startswith('ssdtilesE'):  # ssdtilesE3x2: tiles with the inner-edge rule
        c, r = map(int, name[9:].split('x'))
        return ssd_tiles(image, c, r, edge_rule=True)
    if name.startswith('ssdtiles'):  # ssdtiles3x2 (tiles only, full frame is a separate look)
        c, r = map(int, name[8:].split('x'))
        return ssd_tiles(image, c, r)
    if name == 'ssd300':
        return ssd_detect(image, (300, 300))
    if name.startswith('ssd'):  # ssdWxH, e.g. ssd640x480: whole frame at that input size
        W, H = map(int, name[3:].split('x'))
        return ssd_detect(image, (W, H))
    if name.startswith('hog') or name.startswith('daimler'):  # hog_u2, daimler_u1.5
        kind, u = name.split('_u')
        return hog_detect(image, kind, float(u))
    if name.startswith('haar'):
        return haar_detect(image, float(name.split('_u')[1]))
    raise SystemExit(f'unknown look {name}')


# ----------------------------------------------------------------------------- geometry, merging
def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def inside(a, b):
    """Share of box a lying inside box b."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = max(1e-6, (a[2] - a[0]) * (a[3] - a[1]))
    return ix * iy / area


def merge(boxes, iou_thr=0.4, inside_thr=0.7):
    """Greedy by score: drop a box overlapping a kept one (IoU) or lying mostly inside it (a tile's cut-off half).
    Score-ordered, so thresholding after merging equals merging after thresholding."""
    boxes = sorted(boxes, key=lambda b: -b[4])
    kept = []
    for b in boxes:
        if all(iou(b, k) < iou_thr and inside(b, k) < inside_thr and inside(k, b) < inside_thr for k in kept):
            kept.append(b)
    return kept


# ----------------------------------------------------------------------------- data
def frames(clip, step=1):
    video, _, size, last = CLIPS[clip]
    cap = cv2.VideoCapture(video)
    i = 0
    while True:
        ok, f = cap.read()
        if not ok:
            break
        i += 1
        if i > last:
            break
        if (i - 1) % step:
            continue
        if size:
            f = cv2.resize(f, size, interpolation=cv2.INTER_AREA)
        yield i, f


def labels(clip):
    video, path, size, last = CLIPS[clip]
    sx = sy = 1.0
    if size:
        cap = cv2.VideoCapture(video)
        W, H = cap.get(cv2.CAP_PROP_FRAME_WIDTH), cap.get(cv2.CAP_PROP_FRAME_HEIGHT)
        sx, sy = size[0] / W, size[1] / H
    by = {}
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        f, i, l, t, w, h, c = [float(v) for v in line.split(',')[:7]]
        by.setdefault(int(f), []).append((l * sx, t * sy, (l + w) * sx, (t + h) * sy, int(c)))
    return by


def cache_path(clip, lk):
    return os.path.join(CACHE, f'{clip}__{lk}.json')


def cmd_detect(args):
    os.makedirs(CACHE, exist_ok=True)
    for clip in args.clip.split(','):
        out = {}
        t0 = time.time()
        if clip in IMAGES:
            img = cv2.imread(IMAGES[clip])
            out['1'] = look(args.look, img)
        else:
            for i, f in frames(clip, args.step):
                out[str(i)] = look(args.look, f)
        json.dump({'step': args.step, 'dets': out}, open(cache_path(clip, args.look), 'w'))
        print(f'{clip} {args.look}: {len(out)} frames in {time.time() - t0:.0f}s', flush=True)


# ----------------------------------------------------------------------------- scoring
BUCKETS = [('<40', 0, 40), ('40-60', 40, 60), ('60-90', 60, 90), ('90+', 90, 1e9)]


def match_frame(dets, gts):
    """Greedy one-to-one by IoU; a pair qualifies at IoU>=0.3 or when >50% of the detection lies in the label.
    Returns (matched considered labels set, number of false detections)."""
    pairs = []
    for di, d in enumerate(dets):
        for gi, g in enumerate(gts):
            o = iou(d, g)
            if o >= 0.3 or inside(d, g) > 0.5:
                pairs.append((o, di, gi))
    pairs.sort(reverse=True)
    dused, gused = set(), set()
    for o, di, gi in pairs:
        if di in dused or gi in gused:
            continue
        dused.add(di)
        gused.add(gi)
    false = 0
    for di, d in enumerate(dets):
        if di in dused:  # matched a label (a considered=0 one is neither found nor false)
            continue
        # unmatched: ignored if it touches a considered=0 label
        if any(g[4] == 0 and (iou(d, g) >= 0.3 or inside(d, g) > 0.5) for g in gts):
            continue
        false += 1
    found = {gi for gi in gused if gts[gi][4] == 1}
    return found, false


def size_limits(part, fh):
    """'look@h35@l20' -> keep boxes between 20% and 35% of the frame height (pixels)."""
    lo, hi = 0.0, 1e9
    for m in part.split('@')[1:]:
        if m[0] == 't':
            continue
        if m[0] == 'h':
            hi = float(m[1:]) / 100 * fh
        elif m[0] == 'l':
            lo = float(m[1:]) / 100 * fh
    return lo, hi


def look_min_score(part):
    """'look@t60' -> this look's boxes need a score of at least 0.60 (on top of the candidate's threshold)."""
    for m in part.split('@')[1:]:
        if m[0] == 't':
            return float(m[1:]) / 100
    return 0.0


def frame_height(clip):
    if clip in IMAGES:
        return cv2.imread(IMAGES[clip]).shape[0]
    video, _, size, _ = CLIPS[clip]
    return size[1] if size else cv2.VideoCapture(video).get(cv2.CAP_PROP_FRAME_HEIGHT)


def candidate_dets(clip, cand):
    """cand = '+'-joined look names, e.g. 'ssd300+ssdtiles3x2'; a look may end in '@hNN' to keep only its boxes
    at most NN% of the frame tall (e.g. ssd640x480@h35: the enlarged look only for small people).
    Returns {frame: merged boxes}, step."""
    parts = cand.split('+')
    names = [p.split('@')[0] for p in parts]
    fh = frame_height(clip)
    limits = [size_limits(p, fh) for p in parts]
    mins = [look_min_score(p) for p in parts]
    data = [json.load(open(cache_path(clip, p))) for p in names]
    step = max(d['step'] for d in data)
    keys = set.intersection(*[set(d['dets']) for d in data])
    out = {}
    for k in keys:
        boxes = []
        for d, (lo, hi), t in zip(data, limits, mins):
            boxes += [tuple(b) for b in d['dets'][k] if lo <= b[3] - b[1] <= hi and b[4] >= t]
        out[int(k)] = merge(boxes) if len(parts) > 1 or 'tiles' in cand else boxes
    return out, step


def score_clip(clip, cand, thr):
    dets, step = candidate_dets(clip, cand)
    gt = labels(clip)
    hits = {b[0]: [0, 0] for b in BUCKETS}
    allh = [0, 0]
    from50 = [0, 0]
    false = 0
    for f in sorted(dets):
        ds = [d for d in dets[f] if d[4] >= thr]
        gs = gt.get(f, [])
        found, fa = match_frame(ds, gs)
        false += fa
        for gi, g in enumerate(gs):
            if g[4] != 1:
                continue
            h = g[3] - g[1]
            hit = gi in found
            allh[0] += hit
            allh[1] += 1
            if h >= 50 * (1 if clip != 'vtest360' else 270 / 576):
                from50[0] += hit
                from50[1] += 1
            for name, lo, hi in BUCKETS:
                if lo <= h < hi:
                    hits[name][0] += hit
                    hits[name][1] += 1
    n = len(dets)
    rec = {k: (v[0] / v[1] if v[1] else None, v[1]) for k, v in hits.items()}
    return {'recall': allh[0] / max(1, allh[1]), 'n': allh[1], 'from50': from50[0] / max(1, from50[1]),
            'buckets': rec, 'false_per_frame': false / max(1, n), 'frames': n}


def image_count(name, cand, thr):
    try:
        dets, _ = candidate_dets(name, cand)
    except FileNotFoundError:
        return None
    return sum(1 for d in dets[1] if d[4] >= thr)


def fmt(x):
    return '-' if x is None else f'{x:.2f}'


def cmd_score(args):
    rows = []
    for thr in [float(t) for t in args.thr.split(',')]:
        res = {}
        for clip in args.clips.split(','):
            try:
                res[clip] = score_clip(clip, args.cand, thr)
            except FileNotFoundError as e:
                res[clip] = None
        dogs = image_count('dogs', args.cand, thr)
        messi = image_count('messi', args.cand, thr)
        line = [f'{args.cand} thr={thr:.2f}']
        for clip, r in res.items():
            if r is None:
                line.append(f'{clip}: n/a')
                continue
            b = ' '.join(f'{k}:{fmt(v[0])}' for k, v in r['buckets'].items())
            line.append(f"{clip}: R={r['recall']:.3f} R50+={r['from50']:.3f} [{b}] FP/f={r['false_per_frame']:.3f} ({r['frames']}f)")
        line.append(f'dogs={dogs} messi={messi}')
        print(' | '.join(line), flush=True)
        rows.append({'cand': args.cand, 'thr': thr, 'res': res, 'dogs': dogs, 'messi': messi})
    if args.json:
        with open(args.json, 'a') as fo:
            for r in rows:
                fo.write(json.dumps(r) + '\n')


# ----------------------------------------------------------------------------- timing
def cmd_time(args):
    src = [f for _, f in frames('vtest')][:args.n + 3]
    res = {}
    for (W, H) in [(360, 270), (768, 576), (1280, 720)]:
        imgs = [cv2.resize(f, (W, H), interpolation=cv2.INTER_AREA if W < 768 else cv2.INTER_LINEAR) for f in src]
        ts = []
        for k, img in enumerate(imgs):
            t = time.perf_counter()
            boxes = []
            for p in args.cand.split('+'):
                lo, hi = size_limits(p, H)
                tmin = look_min_score(p)
                boxes += [b for b in look(p.split('@')[0], img) if lo <= b[3] - b[1] <= hi and b[4] >= tmin]
            if '+' in args.cand or 'tiles' in args.cand:
                merge(boxes)
            if k >= 3:
                ts.append((time.perf_counter() - t) * 1000)
        res[f'{W}x{H}'] = float(np.median(ts))
    print(args.cand, ' '.join(f'{k}:{v:.1f}ms' for k, v in res.items()), flush=True)
    if args.json:
        with open(args.json, 'a') as fo:
            fo.write(json.dumps({'cand': args.cand, 'ms': res, 'n': args.n}) + '\n')


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('detect')
    a.add_argument('--look', required=True)
    a.add_argument('--clip', default='vtest,vtest360,bikes,dogs,messi')
    a.add_argument('--step', type=int, default=1)
    a.set_defaults(fn=cmd_detect)
    b = sub.add_parser('score')
    b.add_argument('--cand', required=True)
    b.add_argument('--thr', default='0.3,0.4,0.5,0.6,0.7')
    b.add_argument('--clips', default='vtest,vtest360,bikes')
    b.add_argument('--json')
    b.set_defaults(fn=cmd_score)
    c = sub.add_parser('time')
    c.add_argument('--cand', required=True)
    c.add_argument('--n', type=int, default=30)
    c.add_argument('--json')
    c.set_defaults(fn=cmd_time)
    args = ap.parse_args()
    args.fn(args)


if __name__ == '__main__':
    main()
