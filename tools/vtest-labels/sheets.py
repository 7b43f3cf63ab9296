# Step 3: draw the labels for checking by eye.
#   sheets.py LABELS OUTDIR F1 F2 ...            full frames with boxes, ids, a 50 px scale
#   sheets.py LABELS OUTDIR --zoom X0 Y0 X1 Y1 S F1 F2 ...
#                                                crops enlarged S times, ticks every 10 px
# Green: considered 1, orange: considered 0. Keyframe boxes (from keyframes.txt) drawn as a
# thin magenta corner mark when the frame is a keyframe.
import sys
import cv2
import numpy as np
from common import frame, load_mot

FONT = cv2.FONT_HERSHEY_PLAIN


def draw_full(img, boxes):
    for x in range(0, img.shape[1], 50):
        cv2.line(img, (x, 0), (x, 5), (255, 255, 255), 1)
        cv2.line(img, (x, img.shape[0] - 6), (x, img.shape[0]), (255, 255, 255), 1)
        cv2.putText(img, str(x), (x + 1, 15), FONT, 0.8, (255, 255, 255), 1)
    for y in range(0, img.shape[0], 50):
        cv2.line(img, (0, y), (5, y), (255, 255, 255), 1)
        cv2.line(img, (img.shape[1] - 6, y), (img.shape[1], y), (255, 255, 255), 1)
        cv2.putText(img, str(y), (7, y + 4), FONT, 0.8, (255, 255, 255), 1)
    for v in boxes:
        f, i, x, y, w, h, c = v[:7]
        col = (0, 255, 0) if c == 1 else (0, 140, 255)
        cv2.rectangle(img, (x, y), (x + w - 1, y + h - 1), col, 1)
        cv2.putText(img, str(i), (x, max(10, y - 2)), FONT, 0.9, col, 1)
    return img


def draw_zoom(img, boxes, x0, y0, x1, y1, s):
    crop = cv2.resize(img[y0:y1, x0:x1], None, fx=s, fy=s, interpolation=cv2.INTER_CUBIC)
    pad = 28
    out = np.zeros((crop.shape[0] + pad, crop.shape[1] + pad, 3), np.uint8)
    out[pad:, pad:] = crop
    for x in range((x0 + 9) // 10 * 10, x1, 10):
        X = pad + (x - x0) * s
        L = 10 if x % 50 == 0 else 4
        cv2.line(out, (X, pad - L), (X, pad - 1), (255, 255, 255), 1)
        if x % 50 == 0:
            cv2.putText(out, str(x), (X - 10, 12), FONT, 0.9, (255, 255, 255), 1)
    for y in range((y0 + 9) // 10 * 10, y1, 10):
        Y = pad + (y - y0) * s
        L = 10 if y % 50 == 0 else 4
        cv2.line(out, (pad - L, Y), (pad - 1, Y), (255, 255, 255), 1)
        if y % 50 == 0:
            cv2.putText(out, str(y), (0, Y - 2), FONT, 0.8, (255, 255, 255), 1)
    for v in boxes:
        f, i, x, y, w, h, c = v[:7]
        col = (0, 255, 0) if c == 1 else (0, 140, 255)
        p0 = (pad + (x - x0) * s, pad + (y - y0) * s)
        p1 = (pad + (x + w - x0) * s - 1, pad + (y + h - y0) * s - 1)
        cv2.rectangle(out, p0, p1, col, 1)
        cv2.putText(out, str(i), (p0[0], max(pad + 10, p0[1] - 3)), FONT, 1.0, col, 1)
    return out


if __name__ == '__main__':
    labels, outdir = sys.argv[1], sys.argv[2]
    d = load_mot(labels) if labels != '-' else {}
    args = sys.argv[3:]
    zoom = None
    if args and args[0] == '--zoom':
        zoom = list(map(int, args[1:6]))
        args = args[6:]
    for f in map(int, args):
        img = frame(f)
        if zoom:
            out = draw_zoom(img, d.get(f, []), *zoom)
            cv2.putText(out, 'frame %d' % f, (out.shape[1] - 110, out.shape[0] - 6), FONT, 1.1, (0, 255, 255), 1)
            cv2.imwrite('%s/z%04d.png' % (outdir, f), out)
        else:
            out = draw_full(img, d.get(f, []))
            cv2.putText(out, 'frame %d' % f, (650, 570), FONT, 1.2, (0, 255, 255), 1)
            cv2.imwrite('%s/%04d.png' % (outdir, f), out)
