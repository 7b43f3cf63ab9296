#!/usr/bin/python3
# Re-makes samples/labels/vtest.mot.txt (people in frames 1..300 of samples/vtest.avi) from the
# hand keyframes samples/labels/vtest.keyframes.txt, in a work folder ($VTLABEL_WORK, default
# /tmp/vtlabel), with contact sheets to check by eye. Needs python3 with cv2 and numpy (Debian's
# python3-opencv); the first run also proposes boxes with tools/propose_people_labels.py.
#   /usr/bin/python3 tools/vtest-labels/label.py          (frames, background, masks, build, sheets, checks)
#   /usr/bin/python3 tools/vtest-labels/label.py --auto   (also re-run the automatic linking of the proposal)
# Steps:
#   frames/NNNN.jpg   frames 1..300 as OpenCV reads them (first read = frame 1)
#   bg.py             median background of the whole clip -> bg.png
#   fg.py             foreground masks of frames 1..300 -> fg.npz (cleaned in common.masks())
#   autotrack.py      proposal (SSD) frames 1..300 linked into tracks -> auto_tracks.txt   [--auto]
#   make_auto_keys.py auto tracks -> keyframes_auto.txt (the start of keyframes.txt)       [--auto]
#   build.py          keyframes.txt -> vtest.mot.txt (interpolation, snapping, considered flags)
#   sheets.py/grid.py/strips.py  contact sheets in sheets/, check.py -> check_report.txt
import os
import subprocess
import sys

import cv2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLIP = os.path.join(REPO, 'samples', 'vtest.avi')
WORK = os.environ.get('VTLABEL_WORK', '/tmp/vtlabel')
os.makedirs(WORK, exist_ok=True)
os.chdir(WORK)
PY = sys.executable


def run(py, script, *a):
    print('+', script, ' '.join(a), flush=True)
    subprocess.run([py, os.path.join(HERE, script), *a], check=True)


with open(os.path.join(REPO, 'samples', 'labels', 'vtest.keyframes.txt')) as fi, open('keyframes.txt', 'w') as fo:
    fo.write(fi.read())


if not os.path.exists('frames/0300.jpg'):
    os.makedirs('frames', exist_ok=True)
    cap = cv2.VideoCapture(CLIP)
    for i in range(1, 301):
        ok, f = cap.read()
        assert ok
        cv2.imwrite('frames/%04d.jpg' % i, f, [cv2.IMWRITE_JPEG_QUALITY, 95])
if not os.path.exists('proposal.txt'):
    if not os.path.exists('proposal-all.txt'):
        subprocess.run([PY, os.path.join(REPO, 'tools', 'propose_people_labels.py'), CLIP, 'proposal-all.txt'], check=True)
    with open('proposal-all.txt') as fi, open('proposal.txt', 'w') as fo:
        fo.writelines(l for l in fi if l.strip() and not l.startswith('#') and int(l.split(',')[0]) <= 300)
if not os.path.exists('bg.png'):
    run(PY, 'bg.py')
if not os.path.exists('fg.npz'):
    run(PY, 'fg.py')
if '--auto' in sys.argv:
    run(PY, 'autotrack.py')
    run(PY, 'make_auto_keys.py')
run(PY, 'build.py')
os.makedirs('sheets/zoom', exist_ok=True)
os.makedirs('sheets/strips', exist_ok=True)
frames = [str(f) for f in list(range(1, 300, 10)) + [300, 5, 55, 105, 155, 205, 255, 295]]
run(PY, 'sheets.py', 'vtest.mot.txt', 'sheets', *frames)
for f in frames:
    run(PY, 'grid.py', 'vtest.mot.txt', 'sheets/zoom/%04d.png' % int(f), '130', '30', '768', '430', '2', '1', f)
run(PY, 'strips.py', 'vtest.mot.txt', 'sheets/strips', '5')
with open('check_report.txt', 'w') as fo:
    subprocess.run([PY, os.path.join(HERE, 'check.py'), 'vtest.mot.txt'], stdout=fo, check=True)
print('labels:', os.path.join(WORK, 'vtest.mot.txt'), '(compare with samples/labels/vtest.mot.txt)')
