#!/usr/bin/env python3
"""Tracking metrics from `docktrack track` state files (standard library only).

  tracking_metrics.py identities STATES.jsonl WIDTH HEIGHT FPS
      identities and probable identity switches per 100 frames (a track that ends and another
      that starts within 1 s and one body height of where it ended), plus, for vtest.avi, the
      identities along four hand-labelled walks (torso centres read off the frames).
  tracking_metrics.py speaking STATES.jsonl
      distribution of speakingConfidence and lookingAtCameraConfidence over all people.
"""
import json
import math
import sys

# vtest.avi: torso centres (pixels from the top-left) of four pedestrians every 20 frames.
VTEST_WALKS = {
    'R': {60: (485, 240), 80: (460, 215), 100: (506, 180), 120: (573, 160)},
    'W': {60: (517, 235), 80: (487, 210), 100: (528, 185), 120: (597, 165)},
    'L': {120: (707, 260), 140: (533, 225), 160: (365, 210), 180: (213, 190)},
    'M': {60: (632, 285), 80: (583, 235), 100: (603, 195), 120: (662, 170), 140: (715, 140)},
}


def load(path):
    return [json.loads(line) for line in open(path)]


def identities(rows, width, height, fps):
    tracks = {}
    for row in rows:
        for s in row['subjects']:
            r = s['rect']
            tracks.setdefault(s['identifier'], []).append(
                (row['frame'], r['x'] + r['width'] / 2, r['y'] + r['height'] / 2, r['height']))
    last = rows[-1]['frame']
    switches = 0
    for ident, points in tracks.items():
        f, x, y, h = points[-1]
        if f >= last - 1:
            continue
        for other, start in tracks.items():
            f2, x2, y2, _ = start[0]
            if other != ident and 0 < f2 - f <= fps and math.hypot(x2 - x, y2 - y) < h:
                switches += 1
                break
    print(f'frames {len(rows)}, identities {len(tracks)}, probable switches {switches}, '
          f'{100 * switches / len(rows):.2f} per 100 frames')
    by_frame = {row['frame']: row for row in rows}
    if (width, height) == (768, 576):
        labelled = changes = tracked = 0
        for name, walk in VTEST_WALKS.items():
            ids = []
            for frame, (px, py) in walk.items():
                ux, uy = px / width, 1 - py / height
                hits = [s for s in by_frame.get(frame, {'subjects': []})['subjects']
                        if s['rect']['x'] <= ux <= s['rect']['x'] + s['rect']['width']
                        and s['rect']['y'] <= uy <= s['rect']['y'] + s['rect']['height']]
                hits.sort(key=lambda s: s['rect']['width'] * s['rect']['height'])
                ids.append(hits[0]['identifier'][-4:] if hits else None)
            seen = [i for i in ids if i]
            changes += sum(1 for a, b in zip(seen, seen[1:]) if a != b)
            labelled += len(ids)
            tracked += len(seen)
            print(f'  walk {name}: {ids}')
        print(f'labelled walks: {labelled} points, {tracked} tracked, {changes} identity changes')


def speaking(rows):
    def spread(values):
        values = sorted(values)
        q = lambda p: values[min(len(values) - 1, int(len(values) * p))]
        return ' '.join(f'p{int(p * 100)} {q(p):.2f}' for p in (0.1, 0.25, 0.5, 0.75, 0.9))
    sp = [s['speakingConfidence'] for r in rows for s in r['subjects'] if s.get('speakingConfidence') is not None]
    lk = [s['lookingAtCameraConfidence'] for r in rows for s in r['subjects'] if s.get('lookingAtCameraConfidence') is not None]
    print(f'speaking: {len(sp)} samples, {spread(sp)}, above 0.5 in {sum(v > 0.5 for v in sp) / len(sp):.0%}')
    print(f'looking at camera: {spread(lk)}')


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'identities':
        identities(load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    elif len(sys.argv) == 3 and sys.argv[1] == 'speaking':
        speaking(load(sys.argv[2]))
    else:
        sys.exit(__doc__)
