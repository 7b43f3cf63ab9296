#!/usr/bin/env python3
"""Writes the text graph OpenCV's DNN module needs beside an SSD frozen graph from the TensorFlow
Object Detection API (here SSDLite-MobileNetV2 trained on COCO), so that
cv::dnn::readNetFromTensorflow(pb, pbtxt) loads it without TensorFlow.

OpenCV cannot run the graph's own pre- and post-processing (a resize, While loops, a NonMaxSuppression
per class); this keeps the convolutional body (FeatureExtractor/, BoxPredictor_N/), feeds the first
convolution from the input directly, and replaces the rest by OpenCV's own SSD head: one PriorBox per
predictor layer with the anchors the API's ssd_anchor_generator makes, and a DetectionOutput layer.

Needs only cv2 (opencv-python-headless) for cv2.dnn.writeTextGraph, which prints a binary graph's
structure without its weights. Run once, offline; the result is committed in models/.

  python3 tools/ssd_text_graph.py frozen_inference_graph.pb models/ssdlite_mobilenet_v2_coco.pbtxt
"""
import math
import re
import sys
import tempfile

import cv2

KEPT_OPS = {'Conv2D', 'BiasAdd', 'Add', 'Relu6', 'Placeholder', 'FusedBatchNorm', 'DepthwiseConv2dNative',
            'ConcatV2', 'Mul', 'MaxPool', 'AvgPool'}
DROPPED_PREFIXES = ('MultipleGridAnchorGenerator/', 'Postprocessor/', 'Preprocessor/')
# Attributes OpenCV's importer does not read (the same list OpenCV's own generator drops).
DROPPED_ATTRS = {'T', 'data_format', 'Tshape', 'N', 'Tidx', 'Tdim', 'use_cudnn_on_gpu', 'Index', 'Tperm',
                 'is_training', 'Tpaddings', '_class'}

# ssd_anchor_generator of ssdlite_mobilenet_v2_coco's pipeline.config.
NUM_CLASSES, NUM_LAYERS, MIN_SCALE, MAX_SCALE = 1, 6, 0.2, 0.95
ASPECT_RATIOS = [1.0, 2.0, 0.5, 3.0, 0.3333]
INPUT_SIZE = 300


class Node:
    def __init__(self, name, op, inputs, attrs):
        self.name, self.op, self.inputs, self.attrs = name, op, inputs, attrs  # attrs: [(key, text)]

    def text(self):
        lines = ['node {', f'  name: "{self.name}"', f'  op: "{self.op}"']
        lines += [f'  input: "{i}"' for i in self.inputs]
        for key, value in self.attrs:
            lines += ['  attr {', f'    key: "{key}"', '    value {', value.rstrip('\n'), '    }', '  }']
        return '\n'.join(lines) + '\n}\n'


def parse(text):
    """Top-level node blocks of a text graph: name, op, inputs and each attribute's value text."""
    nodes = []
    for block in re.findall(r'^node \{\n(.*?)^\}\n', text, re.S | re.M):
        name = re.search(r'^  name: "(.*?)"', block, re.M).group(1)
        op = re.search(r'^  op: "(.*?)"', block, re.M).group(1)
        inputs = re.findall(r'^  input: "(.*?)"', block, re.M)
        attrs = re.findall(r'^  attr \{\n    key: "(.*?)"\n    value \{\n(.*?)^    \}\n  \}\n', block, re.S | re.M)
        nodes.append(Node(name, op, inputs, attrs))
    return nodes


def tensor(values):
    kind, field = ('DT_FLOAT', 'float_val') if all(isinstance(v, float) for v in values) else ('DT_INT32', 'int_val')
    body = ''.join(f'          {field}: {v}\n' for v in values)
    return ('      tensor {\n' f'        dtype: {kind}\n' '        tensor_shape {\n'
            f'          dim {{\n            size: {len(values)}\n          }}\n' '        }\n' + body + '      }\n')


def scalar(kind, value):
    return f'      {kind}: {value}\n'


def main(pb, out):
    with tempfile.NamedTemporaryFile(suffix='.pbtxt') as raw:
        cv2.dnn.writeTextGraph(pb, raw.name)
        nodes = parse(open(raw.name).read())

    # Identity nodes are pass-throughs: consumers read what they forward.
    forwards = {n.name: n.inputs[0] for n in nodes if n.op == 'Identity'}
    def resolved(name):
        while name in forwards:
            name = forwards[name]
        return name

    removed = set()
    kept = []
    for n in nodes:
        if n.op == 'Identity':
            continue
        if n.op not in KEPT_OPS or n.name.startswith(DROPPED_PREFIXES):
            if n.op != 'Const':  # weights stay in the binary graph, found there by name
                removed.add(n.name)
            continue
        n.inputs = [resolved(i) for i in n.inputs]
        n.attrs = [(k, v) for k, v in n.attrs if k not in DROPPED_ATTRS]
        kept.append(n)
    for n in kept:
        n.inputs = [i for i in n.inputs if i not in removed]

    # The first layer reads the input directly (the graph's Preprocessor scaled it to -1...1;
    # the caller does that with blobFromImage's scale and mean).
    placeholder = next(n for n in kept if n.op == 'Placeholder')
    first = next(n for n in kept if n.name == 'FeatureExtractor/MobilenetV2/Conv/Conv2D')
    first.inputs = [placeholder.name] + first.inputs

    extra = [Node('concat/axis_flatten', 'Const', [], [('value', tensor([-1]))]),
             Node('PriorBox/concat/axis', 'Const', [], [('value', tensor([-2]))]),
             Node('reshape_prior_boxes_to_4d', 'Const', [], [('value', tensor([1, 2, -1, 1]))])]
    for label in ('ClassPredictor', 'BoxEncodingPredictor'):
        flat = []
        for i in range(NUM_LAYERS):
            source = f'BoxPredictor_{i}/{label}/BiasAdd'
            extra.append(Node(source + '/Flatten', 'Flatten', [source], []))
            flat.append(source + '/Flatten')
        extra.append(Node(f'{label}/concat', 'ConcatV2', flat + ['concat/axis_flatten'], []))

    # Anchors as the API makes them: scales spread evenly between MIN_SCALE and MAX_SCALE; the
    # first layer has three (a 0.1 box and two at MIN_SCALE), the others one per aspect ratio plus
    # one between this layer's scale and the next.
    scales = [MIN_SCALE + (MAX_SCALE - MIN_SCALE) * i / (NUM_LAYERS - 1) for i in range(NUM_LAYERS)] + [1.0]
    priors = []
    for i in range(NUM_LAYERS):
        if i == 0:
            widths = [0.1, MIN_SCALE * math.sqrt(2.0), MIN_SCALE * math.sqrt(0.5)]
            heights = [0.1, MIN_SCALE / math.sqrt(2.0), MIN_SCALE / math.sqrt(0.5)]
        else:
            widths = [scales[i] * math.sqrt(a) for a in ASPECT_RATIOS] + [math.sqrt(scales[i] * scales[i + 1])]
            heights = [scales[i] / math.sqrt(a) for a in ASPECT_RATIOS] + [math.sqrt(scales[i] * scales[i + 1])]
        name = f'PriorBox_{i}'
        extra.append(Node(name, 'PriorBox', [f'BoxPredictor_{i}/BoxEncodingPredictor/BiasAdd', placeholder.name], [
            ('clip', scalar('b', 'false')), ('flip', scalar('b', 'false')),
            ('height', tensor([h * INPUT_SIZE for h in heights])),
            ('variance', tensor([0.1, 0.1, 0.2, 0.2])),
            ('width', tensor([w * INPUT_SIZE for w in widths]))]))
        extra.append(Node(name + '/4d', 'Reshape', [name, 'reshape_prior_boxes_to_4d'], []))
        priors.append(name + '/4d')
    extra.append(Node('PriorBox/concat', 'ConcatV2', priors + ['PriorBox/concat/axis'], []))
    extra.append(Node('ClassPredictor/concat/sigmoid', 'Sigmoid', ['ClassPredictor/concat'], []))
    extra.append(Node('detection_out', 'DetectionOutput',
                      ['BoxEncodingPredictor/concat', 'ClassPredictor/concat/sigmoid', 'PriorBox/concat'], [
        ('background_label_id', scalar('i', 0)), ('code_type', scalar('s', '"CENTER_SIZE"')),
        ('confidence_threshold', scalar('f', 0.01)), ('keep_top_k', scalar('i', 100)),
        ('loc_pred_transposed', scalar('b', 'true')), ('nms_threshold', scalar('f', 0.6)),
        ('num_classes', scalar('i', NUM_CLASSES + 1)), ('share_location', scalar('b', 'true')),
        ('top_k', scalar('i', 100))]))
    graph = kept + extra

    # Drop what no longer leads to the output.
    while True:
        used = {i for n in graph for i in n.inputs}
        unused = [n for n in graph if n.name not in used and n.name != 'detection_out']
        if not unused:
            break
        graph = [n for n in graph if n not in unused]

    with open(out, 'w') as f:
        f.writelines(n.text() for n in graph)
    print(f'{out}: {len(graph)} nodes')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
