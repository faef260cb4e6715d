"""OWL-ViT / OWLv2 `post_process_image_guided_detection` (transformers 5.24.0): NMS writes zeros into
`scores`, the output of `torch.sigmoid` (SigmoidBackward saves its result), then the threshold write
`query_scores[query_scores < threshold] = 0.0` into a row of it. Eight findings, one code in four
image processors (torchvision and PIL back ends of both models).

Inputs: a model output of two detections (1 image, 4 patches) whose logits and boxes require grad,
as `image_guided_detection` returns them when run with grad on. Each write is isolated by stopping the
method right after it ran once (the later write cannot be the one that raised), then backward from
the sigmoid's output. Context: the whole method, backward from the boxes' scores it returns.
Run: /work/venvs/real/bin/python bench/hazard_checks/owl_image_guided_nms.py
"""

import torch
from _check import attempt, expect_line, run_through
from transformers.models.owlv2.image_processing_owlv2 import Owlv2ImageProcessor
from transformers.models.owlv2.image_processing_pil_owlv2 import Owlv2ImageProcessorPil
from transformers.models.owlv2.modeling_owlv2 import Owlv2ImageGuidedObjectDetectionOutput
from transformers.models.owlvit.image_processing_owlvit import OwlViTImageProcessor
from transformers.models.owlvit.image_processing_pil_owlvit import OwlViTImageProcessorPil
from transformers.models.owlvit.modeling_owlvit import OwlViTImageGuidedObjectDetectionOutput

BASE = "transformers/models/"
# processor class, its file, the NMS write's line, the threshold write's line, the output class
CASES = [
    (Owlv2ImageProcessor, "owlv2/image_processing_owlv2.py", 233, 250, Owlv2ImageGuidedObjectDetectionOutput),
    (Owlv2ImageProcessorPil, "owlv2/image_processing_pil_owlv2.py", 319, 336, Owlv2ImageGuidedObjectDetectionOutput),
    (OwlViTImageProcessor, "owlvit/image_processing_owlvit.py", 223, 240, OwlViTImageGuidedObjectDetectionOutput),
    (OwlViTImageProcessorPil, "owlvit/image_processing_pil_owlvit.py", 235, 252, OwlViTImageGuidedObjectDetectionOutput),
]


def model_output(output_class):
    """What image_guided_detection returns with grad on: 4 patches, two overlapping boxes."""
    torch.manual_seed(0)
    logits = torch.randn(1, 4, 1, requires_grad=True)
    boxes = torch.tensor([[[0.5, 0.5, 0.4, 0.4], [0.52, 0.5, 0.4, 0.4], [0.2, 0.2, 0.1, 0.1],
                           [0.8, 0.8, 0.1, 0.1]]], requires_grad=True)
    return output_class(logits=logits * 1.0, target_pred_boxes=boxes * 1.0)


for cls, path, nms_line, threshold_line, output_class in CASES:
    processor = cls()
    method = processor.post_process_image_guided_detection
    expect_line(method, nms_line, "scores[idx][ious > nms_threshold] = 0.0")
    expect_line(method, threshold_line, "query_scores[query_scores < threshold] = 0.0")
    sigmoid_line = nms_line - 14
    expect_line(method, sigmoid_line, "scores = torch.sigmoid(probs.values)")

    def nms_write():
        scope = run_through(method, nms_line, model_output(output_class), nms_threshold=0.3)
        scope["scores"].sum().backward()

    def threshold_write():  # NMS off (nms_threshold=1.0): this is the only write
        scope = run_through(method, threshold_line, model_output(output_class), threshold=0.5, nms_threshold=1.0)
        scope["query_scores"].sum().backward()

    def no_write():  # control: stopped right after the sigmoid, before any write
        scope = run_through(method, sigmoid_line, model_output(output_class))
        scope["scores"].sum().backward()

    def whole_method():
        results = method(model_output(output_class))
        torch.stack([r["scores"].sum() for r in results]).sum().backward()

    attempt(f"{BASE}{path}:{nms_line}:IPF104", "path",
            "NMS write into the sigmoid's output (grad on, logits require grad), backward from the scores", nms_write)
    attempt(f"{BASE}{path}:{threshold_line}:IPF104", "path",
            "threshold write into a row of the sigmoid's output (nms_threshold=1.0, so no NMS write), backward "
            "from it", threshold_write)
    for line in (nms_line, threshold_line):
        attempt(f"{BASE}{path}:{line}:IPF104", "control", "stopped after the sigmoid, before any write, backward "
                "from the scores", no_write)
        attempt(f"{BASE}{path}:{line}:IPF104", "context",
                "whole method with its defaults, backward from the returned scores", whole_method)
