#!/usr/bin/env python3
"""Makes the 8-bit form of DockTrack's person detector for OpenVINO's CPU engine (detector
`yolox-body-int8`):

    models/yolox_nano_person_int8.xml + .bin     from models/yolox_nano_person.onnx

Post-training quantization by PyPI's NNCF (3.4.0 checked, with openvino 2026.4.1): the weights
of each convolution are rounded to 8 bits per output channel, and each activation that feeds one
gets an 8-bit range read off real pictures (the "mixed" preset: symmetric weights, asymmetric
activations; each range from the smallest to the largest value seen, not NNCF's default of the
mean of each picture's extremes; NNCF's fast bias correction after). Nothing is trained; the graph is the same
network with FakeQuantize nodes, which OpenVINO's CPU plugin runs as 8-bit convolutions (VNNI).

The model is first converted by OpenVINO (`ov.convert_model`), which fuses each Sigmoid x Multiply
into one Swish: quantized straight from the ONNX graph, NNCF put a FakeQuantize between the two
halves of every Swish, the CPU plugin could no longer fold the activation into its convolution,
and the 8-bit network ran slower than the f32 one.

The calibration pictures are none of the clips `eval --clip` scores (vtest.avi, vtest-small.mp4,
vtest-panning.mp4, bikes.mp4, carphone_pristine.mp4): Megamind.avi, motion.mov, the two gesture
clips, every 10th frame, and the still pictures of samples/ (the faces set, messi5, grace_hopper,
astronaut), each prepared as DockTrack prepares it: scaled to long side 416, padded with 114 to
multiples of 32, folded 2x2 into 12 channels as `dcv_image_folded_input` does.

The re-identification network (person-reidentification-retail-0248) quantized the same way, on
the bodies found in those pictures, read 1.8 ms a crop against 2.6 and kept vtest's nearest-person
score, but moved each signature enough (cosine 0.985 to the f32 one on average) to change who one
walker of vtest-panning.mp4 was taken for (`eval` identityKept 0.841 -> 0.738, even with its last
25 layers kept in f32): it is not made here.

Run once by a developer (not by the build), from the repository's top, with PyPI's nncf,
openvino and opencv-python-headless:
    python3 tools/quantize-int8.py
"""
import glob
import os

import cv2
import nncf
import numpy as np
import openvino as ov
from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters
from nncf.quantization.range_estimator import RangeEstimatorParametersSet

CLIPS = ["samples/Megamind.avi", "samples/motion.mov", "samples/gestures/two_palms_webcam.mp4",
         "samples/gestures/palm_close_portrait.mp4"]
PICTURES = sorted(glob.glob("samples/faces/*.jpg")) + ["samples/messi5.jpg", "samples/grace_hopper_512x512.jpg",
                                                         "samples/astronaut.png"]
EVERY = 10
LONG_SIDE = 416
PAD = 114


def pictures():
    for path in CLIPS:
        capture = cv2.VideoCapture(path)
        index = 0
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            if index % EVERY == 0:
                yield frame
            index += 1
    for path in PICTURES:
        yield cv2.imread(path)


def folded(picture):
    """YOLOX's input for `picture`, as DockTrack fills it, and the scale it was shrunk by."""
    height, width = picture.shape[:2]
    scale = LONG_SIDE / max(width, height)
    content = (max(1, round(width * scale)), max(1, round(height * scale)))
    input_width, input_height = ((side + 31) // 32 * 32 for side in content)
    canvas = np.full((input_height, input_width, 3), PAD, np.uint8)
    canvas[:content[1], :content[0]] = cv2.resize(picture, content, interpolation=cv2.INTER_AREA)
    c = canvas.astype(np.float32)
    parts = [c[0::2, 0::2], c[1::2, 0::2], c[0::2, 1::2], c[1::2, 1::2]]
    return np.concatenate(parts, axis=2).transpose(2, 0, 1)[None].copy(), scale


def quantize(model, samples, target):
    ranges = AdvancedQuantizationParameters(activations_range_estimator_params=RangeEstimatorParametersSet.MINMAX)
    quantized = nncf.quantize(model, nncf.Dataset(samples), preset=nncf.QuantizationPreset.MIXED,
                              subset_size=len(samples), advanced_parameters=ranges)
    ov.save_model(quantized, target, compress_to_fp16=False)
    print(f"{target}: {len(samples)} calibration inputs")


def main():
    # Any shape (the pictures have several); DockTrack reshapes the network to each picture's.
    yolox = ov.convert_model("models/yolox_nano_person.onnx")
    yolox.reshape({"folded": ov.PartialShape([1, 12, -1, -1])})
    quantize(yolox, [folded(picture)[0] for picture in pictures()], "models/yolox_nano_person_int8.xml")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    main()
