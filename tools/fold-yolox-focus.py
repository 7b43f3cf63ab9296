#!/usr/bin/env python3
"""Makes yolox_nano_folded.onnx from yolox_nano_416x416.onnx: the same network and
weights without its first layer, YOLOX's Focus slicing (eight strided Slice nodes and a Concat,
which OpenVINO runs with its reference kernels: 1.1 ms of an 8.1 ms look at 416x224 on one core).
Its input is what that layer made: the picture's pixels folded into 12 channels at half the
size, channel k*3+c holding colour c of the pixels at rows 2y+dy, columns 2x+dx, with (dy, dx)
= (0,0), (1,0), (0,1), (1,1) for k = 0..3 (YOLOX's top-left, bottom-left, top-right,
bottom-right). DockTrack's detector fills it so (dcv_image_planar_input with fold 2).

Run once by a developer (not by the build), with PyPI's onnx (1.23 checked):
    python3 tools/fold-yolox-focus.py ../shared/models/yolox_nano_416x416.onnx yolox_nano_folded.onnx
    (then tools/yolox-person-only.py makes models/yolox_nano_person.onnx of it)
"""
import sys

import onnx
from onnx import helper, numpy_helper


def main():
    source, target = sys.argv[1:3]
    model = onnx.load(source)
    graph = model.graph
    picture = graph.input[0]
    side = [d.dim_value for d in picture.type.tensor_type.shape.dim]
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    # The Focus layer: the Slices that read the picture (and the Slices of those), and the
    # Concat that joins the four quarters.
    focus, reading = [], {picture.name}
    for node in graph.node:
        if node.op_type == "Slice" and node.input[0] in reading:
            focus.append(node)
            reading.add(node.output[0])
        elif node.op_type == "Concat" and all(i in reading for i in node.input):
            focus.append(node)
            joined = node
            break
    else:
        sys.exit("no Focus layer found: not YOLOX's graph?")
    # Check the quarters' order: each input of the Concat is (rows from dy, columns from dx).
    def start(node_output):
        node = next(n for n in graph.node if n.output[0] == node_output)
        starts = constants.get(node.input[1])
        if starts is None:
            starts = next(numpy_helper.to_array(n.attribute[0].t) for n in graph.node if n.output and n.output[0] == node.input[1])
        return node, int(starts[0])
    order = []
    for quarter in joined.input:
        columns, dx = start(quarter)
        _, dy = start(columns.input[0])
        order.append((dy, dx))
    if order != [(0, 0), (1, 0), (0, 1), (1, 1)]:
        sys.exit(f"unexpected quarter order {order}")
    for node in focus:
        graph.node.remove(node)
    folded = helper.make_tensor_value_info("folded", onnx.TensorProto.FLOAT, [1, 12, side[2] // 2, side[3] // 2])
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == joined.output[0]:
                node.input[i] = "folded"
    graph.input.remove(picture)
    graph.input.insert(0, folded)
    used = {i for n in graph.node for i in n.input}
    for initializer in [i for i in graph.initializer if i.name not in used]:
        graph.initializer.remove(initializer)
    onnx.checker.check_model(model)
    onnx.save(model, target)


if __name__ == "__main__":
    main()
