#!/usr/bin/env python3
"""Makes models/person-reidentification-retail-0248-planar.onnx from
person-reidentification-retail-0248.onnx: the same network and weights with a planar input.

The model as published takes a 1x256x128x3 (NHWC) BGR crop and, before its first convolution,
swaps the colours to RGB (a Split and a Concat), normalizes (per-colour scale and offset, then
the crop's own mean and deviation, then a per-colour scale and offset) and transposes to NCHW.
OpenVINO runs the Split, the Concat and the Transpose as copies: 1.1 ms of a 3.4 ms read on one
core. Here the input is 1x3x256x128 (NCHW) BGR, as dcv_image_planar_input fills it; the swap is
folded into the per-colour constants and the first convolution's input channels (reversed),
the transpose dropped. The crop's mean and deviation are over every value, in any layout.

Run once by a developer (not by the build), with PyPI's onnx (1.23 checked):
    python3 tools/trim-reid-input.py models/person-reidentification-retail-0248.onnx \
        models/person-reidentification-retail-0248-planar.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    source, target = sys.argv[1:3]
    model = onnx.load(source)
    graph = model.graph
    crop = graph.input[0]
    _, height, width, colours = [d.dim_value for d in crop.type.tensor_type.shape.dim]
    nodes = list(graph.node)
    split, concat = nodes[0], nodes[1]
    if split.op_type != "Split" or concat.op_type != "Concat" or list(concat.input) != list(reversed(split.output)):
        sys.exit("the model does not start by reversing its colours: not retail-0248's graph?")
    transpose = next(n for n in nodes if n.op_type == "Transpose")
    perm = list(next(a.ints for a in transpose.attribute if a.name == "perm"))
    if perm != [0, 3, 1, 2]:
        sys.exit(f"unexpected transpose {perm}")
    between = nodes[2:nodes.index(transpose)]
    if any(n.op_type not in ("Mul", "Add", "Sub", "Div", "ReduceMean", "Sqrt") for n in between):
        sys.exit("unexpected operations between the colour swap and the transpose")
    constants = {i.name: i for i in graph.initializer}
    for node in between:
        for name in node.input:
            if name in constants:
                value = numpy_helper.to_array(constants[name])
                if value.size == colours:  # per colour, last axis: reversed, on the channel axis
                    value = value.reshape(colours)[::-1].reshape(1, colours, 1, 1).copy()
                    constants[name].CopyFrom(numpy_helper.from_array(value.astype(np.float32), name))
        if node.op_type == "ReduceMean":
            axes = next(a.ints for a in node.attribute if a.name == "axes")
            if sorted(axes) != [0, 1, 2, 3]:
                sys.exit("a mean over some axes only: the layout matters")
    # The convolutions after the transpose read RGB: reverse the first one's input channels.
    readers = [n for n in nodes if transpose.output[0] in n.input]
    if len(readers) != 1 or readers[0].op_type != "Conv":
        sys.exit("the transpose does not feed one convolution")
    weights = constants[readers[0].input[1]]
    value = numpy_helper.to_array(weights)[:, ::-1].copy()
    weights.CopyFrom(numpy_helper.from_array(value, weights.name))
    readers[0].input[0] = transpose.input[0]
    between[0].input[0] = "planar"
    graph.node.remove(split)
    graph.node.remove(concat)
    graph.node.remove(transpose)
    planar = helper.make_tensor_value_info("planar", onnx.TensorProto.FLOAT, [1, colours, height, width])
    graph.input.remove(crop)
    graph.input.insert(0, planar)
    drop_layout_round_trips(graph)
    onnx.checker.check_model(model)
    onnx.save(model, target)


def drop_layout_round_trips(graph):
    """The same after the first convolution: its output goes to NHWC for the same normalization
    (the whole tensor's mean and deviation, per-channel scale and offset, ReLU) and back to NCHW
    for the pooling, two more copies. Each Transpose to NHWC whose readers are all elementwise
    or whole-tensor means is dropped with the Transpose back, the per-channel constants moved to
    the channel axis."""
    elementwise = {"Mul", "Add", "Sub", "Div", "Sqrt", "Relu", "ReduceMean", "Reshape"}
    constants = {i.name: i for i in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    for to_nhwc in [n for n in graph.node if n.op_type == "Transpose" and list(n.attribute[0].ints) == [0, 2, 3, 1]]:
        # The tensors in NHWC: those computed from this transpose's output (means are scalars).
        nhwc, region, back = {to_nhwc.output[0]}, [], []
        for node in graph.node:
            if not any(i in nhwc for i in node.input):
                continue
            if node.op_type == "Transpose" and list(node.attribute[0].ints) == [0, 2, 3, 1]:
                if node.input[0] in nhwc:
                    break
                continue
            if node.op_type == "Transpose" and list(node.attribute[0].ints) == [0, 3, 1, 2]:
                back.append(node)
                continue
            if node.op_type not in elementwise:
                break
            if node.op_type == "ReduceMean":
                if sorted(node.attribute[0].ints) != [0, 1, 2, 3]:
                    break
                continue  # a scalar: its readers mix it with NCHW tensors alike
            region.append(node)
            nhwc.update(node.output)
        else:
            if len(back) > 1 or (not back and region):
                continue
            for node in region:
                for name in node.input:
                    if name in constants:
                        value = numpy_helper.to_array(constants[name])
                        if value.ndim >= 1 and value.size > 1:
                            value = value.reshape(1, value.size, 1, 1).copy()
                            constants[name].CopyFrom(numpy_helper.from_array(value, name))
            for node in graph.node:
                for i, name in enumerate(node.input):
                    if name == to_nhwc.output[0]:
                        node.input[i] = to_nhwc.input[0]
                    elif back and name == back[0].output[0]:
                        node.input[i] = back[0].input[0]
            graph.node.remove(to_nhwc)
            for node in back:
                graph.node.remove(node)
            continue
        sys.exit(f"cannot drop the transpose {to_nhwc.name}")


if __name__ == "__main__":
    main()
