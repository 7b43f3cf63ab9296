#!/usr/bin/env python3
"""Makes DockTrack's planar-input models from MediaPipe's TFLite models (PyPI mediapipe 0.10.21,
Apache-2.0): the same network and weights, saved in OpenVINO's own format with a planar input.

The models as published take a 1xSxSx3 (NHWC) RGB picture scaled to -1...1 (BlazeFace) or to
0...1 (the palm detector and the hand landmark model). Here the input is 1x3xSxS (NCHW) BGR
0-255, as dcv_image_planar_input fills it: OpenVINO's PrePostProcessor puts the colour swap, the
scaling and the layout change in front of the network. The outputs are unchanged.

Run once by a developer (not by the build), with PyPI's openvino (2026.4.1 checked):
    python3 tools/mediapipe-planar.py face_detection_full_range_sparse.tflite models/blazeface_full_range_planar.xml
    python3 tools/mediapipe-planar.py face_detection_short_range.tflite models/blazeface_short_range_planar.xml
    python3 tools/mediapipe-planar.py --unit palm_detection_lite.tflite models/palm_detection_lite_planar.xml
    python3 tools/mediapipe-planar.py --unit hand_landmark_lite.tflite models/hand_landmark_lite_planar.xml
(`--unit`: the network takes 0...1; without it, -1...1.)
"""
import sys

import openvino as ov
from openvino.preprocess import ColorFormat, PrePostProcessor


def main():
    arguments = sys.argv[1:]
    unit = "--unit" in arguments
    source, target = [a for a in arguments if a != "--unit"][:2]
    model = ov.Core().read_model(source)
    steps = PrePostProcessor(model)
    picture = steps.input()
    picture.tensor().set_element_type(ov.Type.f32).set_layout(ov.Layout("NCHW")).set_color_format(ColorFormat.BGR)
    if unit:
        picture.preprocess().convert_color(ColorFormat.RGB).scale(255.0)
    else:
        picture.preprocess().convert_color(ColorFormat.RGB).mean(127.5).scale(127.5)
    picture.model().set_layout(ov.Layout("NHWC"))
    ov.save_model(steps.build(), target, compress_to_fp16=False)


if __name__ == "__main__":
    main()
