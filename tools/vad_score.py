#!/usr/bin/env python3
"""Frame-level precision and recall of `docktrack vad` segments against hand-checked speech.

    docktrack vad samples/Megamind.avi | python3 tools/vad_score.py samples/Megamind.speech.json

The reference file lists speech segments read off the clip's spectrogram (docs/megamind-speech.jpg):
{"duration": 11.23, "speech": [[start, end], ...]}. Scored on 10 ms frames.
"""
import json
import sys

reference = json.load(open(sys.argv[1]))
found = [json.loads(line) for line in sys.stdin if line.strip()]
step = 0.01
frames = int(reference["duration"] / step)

def inside(t, segments):
    return any(a <= t < b for a, b in segments)

truth = [inside(i * step, reference["speech"]) for i in range(frames)]
guess = [inside(i * step, [(s["start"], s["end"]) for s in found]) for i in range(frames)]
tp = sum(t and g for t, g in zip(truth, guess))
fp = sum(g and not t for t, g in zip(truth, guess))
fn = sum(t and not g for t, g in zip(truth, guess))
precision = tp / max(tp + fp, 1)
recall = tp / max(tp + fn, 1)
print(f"precision {precision:.3f} recall {recall:.3f} ({tp * step:.2f} s speech found, {fp * step:.2f} s false, {fn * step:.2f} s missed; {len(found)} segments)")
