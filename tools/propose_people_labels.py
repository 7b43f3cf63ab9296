#!/usr/bin/env python3
"""Proposes people boxes for every frame of a clip, in MOTChallenge's text format, as a start for
labelling by hand (samples/labels/): the person network of models/ (SSDLite-MobileNetV2, people)
over the whole frame and over 3x2 overlapping tiles enlarged to 300 px, so that people a tenth of
the frame tall are seen large; boxes merged across tiles; the same person given one id from frame
to frame by overlap. Every proposal is then checked by eye on contact sheets (--sheet) and
corrected in the text file; what was checked is written in samples/labels/PROVENANCE.md.

  python3 tools/propose_people_labels.py CLIP OUT.txt [--sheet DIR --every N]

Needs python3 with cv2 (python3-opencv from Debian, or opencv-python-headless) and numpy.
"""
import argparse
import os

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, '..', 'models')


def detect(net, image, threshold):
    blob = cv2.dnn.blobFromImage(image, 1 / 127.5, (300, 300), (127.5, 127.5, 127.5), swapRB=True)
    net.setInput(blob)
    out = net.forward()
    h, w = image.shape[:2]
    return [(float(d[2]), d[3] * w, d[4] * h, d[5] * w, d[6] * h) for d in out[0, 0] if d[2] >= threshold]


def iou(a, b):
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0


def people(net, frame, threshold):
    h, w = frame.shape[:2]
    found = detect(net, frame, threshold)
    tw, th = w / 2, h / 1.5
    for ty in (0, h - th):
        for tx in (0, (w - tw) / 2, w - tw):
            x0, y0 = int(tx), int(ty)
            tile = frame[y0:int(ty + th), x0:int(tx + tw)]
            found += [(s, a + x0, b + y0, c + x0, d + y0) for s, a, b, c, d in detect(net, tile, threshold)]
    found.sort(reverse=True)
    kept = []
    for box in found:
        # A box mostly inside a kept one (a tile's cut-off half of a person) or overlapping it is the same person.
        inside = lambda k: max(0, min(box[3], k[3]) - max(box[1], k[1])) * max(0, min(box[4], k[4]) - max(box[2], k[2])) \
            / max(1e-6, (box[3] - box[1]) * (box[4] - box[2]))
        if all(iou(box[1:], k[1:]) < 0.4 and inside(k) < 0.7 for k in kept):
            kept.append(box)
    return [(max(0, a), max(0, b), min(w, c), min(h, d)) for s, a, b, c, d in kept]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('clip')
    parser.add_argument('out')
    parser.add_argument('--threshold', type=float, default=0.6)
    parser.add_argument('--sheet', help='folder for contact sheets of every Nth frame with the boxes drawn')
    parser.add_argument('--every', type=int, default=10)
    args = parser.parse_args()
    net = cv2.dnn.readNetFromTensorflow(os.path.join(MODELS, 'ssdlite_mobilenet_v2_people.pb'),
                                        os.path.join(MODELS, 'ssdlite_mobilenet_v2_people.pbtxt'))
    capture = cv2.VideoCapture(args.clip)
    tracks, next_id, lines, sheet = [], 1, [], []
    index = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        boxes = people(net, frame, args.threshold)
        now = []
        for box in boxes:
            best = max(tracks, key=lambda t: iou(t[1], box), default=None)
            if best is not None and iou(best[1], box) > 0.3:
                ident = best[0]
                tracks.remove(best)
            else:
                ident, next_id = next_id, next_id + 1
            now.append((ident, box))
            a, b, c, d = box
            lines.append(f'{index + 1},{ident},{a:.0f},{b:.0f},{c - a:.0f},{d - b:.0f},1,1,1\n')
        tracks = now
        if args.sheet and index % args.every == 0:
            shown = frame.copy()
            for ident, (a, b, c, d) in now:
                cv2.rectangle(shown, (int(a), int(b)), (int(c), int(d)), (0, 0, 255), 2)
                cv2.putText(shown, str(ident), (int(a), int(b) + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 255), 1)
            cv2.putText(shown, f'frame {index + 1}', (5, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 0), 2)
            sheet.append(shown)
        index += 1
    with open(args.out, 'w') as f:
        f.writelines(lines)
    if args.sheet:
        os.makedirs(args.sheet, exist_ok=True)
        for start in range(0, len(sheet), 6):
            page = sheet[start:start + 6]
            page += [np.zeros_like(page[0])] * (6 - len(page))
            grid = np.vstack([np.hstack(page[r * 2:r * 2 + 2]) for r in range(3)])
            cv2.imwrite(os.path.join(args.sheet, f'sheet{start // 6:03d}.png'), grid)
    print(f'{args.out}: {index} frames, {len(lines)} boxes')


if __name__ == '__main__':
    main()
