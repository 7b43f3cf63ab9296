#!/usr/bin/env python3
"""Makes models/blazeface_{full,short}_range_planar.{xml,bin} from MediaPipe's BlazeFace TFLite
models (PyPI mediapipe 0.10.21: mediapipe/modules/face_detection/face_detection_full_range_sparse.tflite
and face_detection_short_range.tflite, Apache-2.0): the same network and weights, saved in
OpenVINO's own format with a planar input.

The models as published take a 1xSxSx3 (NHWC) RGB picture scaled to -1...1. Here the input is
1x3xSxS (NCHW) BGR 0-255, as dcv_image_planar_input fills it: OpenVINO's PrePostProcessor puts
the colour swap, the scaling ((x - 127.5) / 127.5) and the layout change in front of the network.
The outputs are unchanged: boxes 1xNx16 (centre offsets, width, height in input pixels, six key
points) and raw scores 1xNx1, N anchors (2,304 full range, 896 short range).

Run once by a developer (not by the build), with PyPI's openvino (2026.4.1 checked):
    python3 tools/blazeface-planar.py face_detection_full_range_sparse.tflite models/blazeface_full_range_planar.xml
    python3 tools/blazeface-planar.py face_detection_short_range.tflite models/blazeface_short_range_planar.xml
"""
import sys

import openvino as ov
from openvino.preprocess import ColorFormat, PrePostProcessor


def main():
    source, target = sys.argv[1:3]
    model = ov.Core().read_model(source)
    steps = PrePostProcessor(model)
    picture = steps.input()
    picture.tensor().set_element_type(ov.Type.f32).set_layout(ov.Layout("NCHW")).set_color_format(ColorFormat.BGR)
    picture.preprocess().convert_color(ColorFormat.RGB).mean(127.5).scale(127.5)
    picture.model().set_layout(ov.Layout("NHWC"))
    ov.save_model(steps.build(), target, compress_to_fp16=False)


if __name__ == "__main__":
    main()
