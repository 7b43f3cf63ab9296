#!/usr/bin/env python3
"""Makes models/yolox_nano_person.onnx from yolox_nano_folded.onnx (tools/fold-yolox-focus.py): the same network and
weights, asked only for what DockTrack reads, COCO's person.

YOLOX scores 80 classes at each of its anchors: three 1x1 convolutions (cls_preds, 64 -> 80
channels) and then a Concat, Reshapes, a Concat and a Transpose that move 85 numbers an anchor
(box 4, objectness 1, classes 80) into a 1 x anchors x 85 output. DockTrack reads 6 of them. Here
each cls_preds keeps its first output channel (person, its weights and bias untouched), the
Reshapes make 6 rows instead of 85, and the last Transpose is dropped: the output is 1 x 6 x
anchors, planar (row r holds value r of every anchor: x, y, log w, log h, objectness, person),
anchors in the same order (strides 8, 16, 32; each grid row by row).

Run once by a developer (not by the build), with PyPI's onnx (1.23 checked):
    python3 tools/yolox-person-only.py yolox_nano_folded.onnx models/yolox_nano_person.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

PERSON = 0


def main():
    source, target = sys.argv[1:3]
    model = onnx.load(source)
    graph = model.graph
    constants = {i.name: i for i in graph.initializer}
    classes = [n for n in graph.node if n.op_type == "Conv" and n.input[1].startswith("head.cls_preds.")]
    if len(classes) != 3:
        sys.exit(f"expected three cls_preds convolutions, found {len(classes)}: not YOLOX's head?")
    for conv in classes:
        for name in conv.input[1:]:
            value = numpy_helper.to_array(constants[name])
            if value.shape[0] != 80:
                sys.exit(f"{name}: {value.shape[0]} classes, not COCO's 80")
            constants[name].CopyFrom(numpy_helper.from_array(value[PERSON:PERSON + 1].copy(), name))
    rows = 4 + 1 + 1
    reshapes = [n for n in graph.node if n.op_type == "Reshape" and n.input[1] in constants
                and numpy_helper.to_array(constants[n.input[1]]).tolist() == [1, 85, -1]]
    if len(reshapes) != 3:
        sys.exit("expected three Reshapes to 1 x 85 x anchors")
    for reshape in reshapes:
        constants[reshape.input[1]].CopyFrom(numpy_helper.from_array(np.array([1, rows, -1], np.int64), reshape.input[1]))
    last = graph.node[-1]
    if last.op_type != "Transpose" or list(last.attribute[0].ints) != [0, 2, 1] or last.output[0] != graph.output[0].name:
        sys.exit("the network does not end with its 1 x 85 x anchors Transpose")
    joined = last.input[0]
    graph.node.remove(last)
    for node in graph.node:
        for i, name in enumerate(node.output):
            if name == joined:
                node.output[i] = graph.output[0].name
    output = graph.output[0]
    graph.output.remove(output)
    graph.output.append(helper.make_tensor_value_info(output.name, onnx.TensorProto.FLOAT, [1, rows, None]))
    # The shapes the exporter recorded for the tensors inside say 80 and 85: let them be inferred.
    del graph.value_info[:]
    onnx.checker.check_model(model)
    onnx.save(model, target)


if __name__ == "__main__":
    main()
