# holocron/models/detection/yolo.py at af956bae^ (frgfm/holocron, May 2020), reduced: _YOLO._compute_losses and
# YOLOv1._format_outputs / forward as in the source. Stand-ins: torchvision's box_iou (3301helpers_holocron_boxes),
# a two-conv backbone and a small classifier in place of DarknetBodyV1 + block4 + the 1024*7*7 -> 4096 head (same
# layer kinds, same output layout 7 * 7 * (num_anchors * 5 + num_classes)), holocron.nn.init.init_module inlined.
# post_process / YOLOv2 / the pretrained-URL factory are left out (not on the training path).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box_iou = importlib.import_module("3301helpers_holocron_boxes").box_iou

__all__ = ['YOLOv1', 'yolov1']


def init_module(module, nonlinearity=None):
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight.data, mode='fan_out', nonlinearity=nonlinearity)
            if m.bias is not None:
                m.bias.data.zero_()


class _YOLO(nn.Module):

    def _compute_losses(self, pred_boxes, pred_o, pred_scores, gt_boxes, gt_labels):
        """Computes the detector losses as described in "You Only Look Once: Unified, Real-Time Object Detection"

        Args:
            pred_boxes (torch.Tensor[N, H * W, num_anchors, 4]): relative coordinates in format (x, y, w, h)
            pred_o (torch.Tensor[N, H * W, num_anchors]): objectness scores
            pred_scores (torch.Tensor[N, H * W, num_anchors, num_classes]): classification scores
            gt_boxes (list<torch.Tensor[-1, 4]>): ground truth boxes
            gt_labels (list<torch.Tensor>): ground truth labels

        Returns:
            dict: dictionary of losses
        """

        # Reset losses
        objectness_loss = torch.zeros(pred_boxes.shape[1], device=pred_boxes.device)
        bbox_loss = torch.zeros(pred_boxes.shape[1], device=pred_boxes.device)
        clf_loss = torch.zeros(pred_boxes.shape[1], device=pred_boxes.device)
        # Convert from x, y, w, h to xmin, ymin, xmax, ymax
        pred_boxes[..., 2:] += pred_boxes[..., :2]
        # B * cells * predictors * info
        for idx in range(pred_boxes.shape[0]):

            # cells * predictors * num_gt
            iou_mat = box_iou(pred_boxes[idx].view(-1, 4), gt_boxes[idx])
            # Assign in each cell the best box predictors
            # Compute max IoU for each predictor, take the highest predictor in each cell
            cell_selection = iou_mat.view(pred_boxes.shape[1], -1).max(dim=1).values > 0
            if torch.any(cell_selection):
                # S * predictors * num_gt
                iou_mat = iou_mat.view(pred_boxes.shape[1], self.num_anchors, -1)[cell_selection]
                anchor_selection = iou_mat.max(dim=2).values.argmax(dim=1)
                selection = [idx * self.num_anchors + anchor.item() for idx, anchor in enumerate(anchor_selection)]
                # Predictor selection
                selected_pred_boxes = pred_boxes[idx, cell_selection].view(-1, 4)[selection]
                selected_o = pred_o[idx, cell_selection].view(-1)[selection]
                selected_scores = pred_scores[idx, cell_selection].view(-1, self.num_classes)[selection]
                # GT selection
                max_iou = iou_mat.view(-1, gt_boxes[idx].shape[0])[selection].max(dim=1)
                selected_gt_boxes = gt_boxes[idx][max_iou.indices]
                select_gt_labels = gt_labels[idx][max_iou.indices]

                # Objectness loss for cells where any object was detected
                objectness_loss[cell_selection] += F.mse_loss(selected_o, max_iou.values, reduction='none')
                # Regression loss
                # cf. YOLOv1 loss: SSE of xy preds, SSE of squared root of wh
                selected_pred_boxes[..., 2:] = selected_pred_boxes[..., 2:].sqrt_()
                selected_gt_boxes[..., 2:] = selected_gt_boxes[..., 2:].sqrt_()
                bbox_loss[cell_selection] += F.mse_loss(selected_pred_boxes, selected_gt_boxes, reduction='none').sum(dim=-1)

                # Classification loss
                clf_loss[cell_selection] += F.cross_entropy(selected_scores, select_gt_labels, reduction='none')

            # Objectness loss for cells where no object was detected
            if torch.any(~cell_selection):
                empty_cell_o = pred_o[idx, ~cell_selection].max(dim=1).values
                objectness_loss[~cell_selection] += 0.5 * F.mse_loss(empty_cell_o, torch.zeros_like(empty_cell_o), reduction='none')

        return dict(objectness_loss=objectness_loss.mean() / pred_boxes.shape[0],
                    bbox_loss=bbox_loss.mean() / pred_boxes.shape[0],
                    clf_loss=clf_loss.mean() / pred_boxes.shape[0])


class YOLOv1(_YOLO):

    def __init__(self, layout=None, num_classes=20, num_anchors=2):

        super().__init__()

        # stand-in for DarknetBodyV1(layout) and block4
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1),
            nn.LeakyReLU(0.1, inplace=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),
            nn.LeakyReLU(0.1, inplace=True))
        self.block4 = nn.AdaptiveAvgPool2d(7)

        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 7 ** 2, 64),
            nn.LeakyReLU(inplace=True),
            nn.Linear(64, 7 ** 2 * (num_anchors * 5 + num_classes)))
        self.num_anchors = num_anchors
        self.num_classes = num_classes

        init_module(self, 'leaky_relu')

    def _format_outputs(self, x, img_h, img_w):
        b, c = x.shape
        h, w = 7, 7
        # B * (H * W * (num_anchors * 5 + num_classes)) --> B * H * W * (num_anchors * 5 + num_classes)
        x = x.view(b, h, w, self.num_anchors * 5 + self.num_classes)
        # Classification scores
        b_scores = x[..., -self.num_classes:].view(b, h * w, -1)
        # Repeat for anchors to keep compatibility across YOLO versions
        b_scores = b_scores.unsqueeze(2).repeat_interleave(self.num_anchors, dim=2)
        #  B * H * W * (num_anchors * 5 + num_classes) -->  B * H * W * num_anchors * 5
        x = x[..., :self.num_anchors * 5].view(b, h, w, self.num_anchors, 5)
        # Cell offset
        c_x = torch.arange(0, w, dtype=torch.float, device=x.device)
        c_y = torch.arange(0, h, dtype=torch.float, device=x.device)
        # Box coordinates
        b_x = img_w / w * (torch.sigmoid(x[..., 0]) + c_x.view(1, 1, -1, 1)).view(b, -1, self.num_anchors)
        b_y = img_h / h * (torch.sigmoid(x[..., 1]) + c_y.view(1, -1, 1, 1)).view(b, -1, self.num_anchors)
        b_w = torch.sigmoid(x[..., 2]).view(b, -1, self.num_anchors)
        b_h = torch.sigmoid(x[..., 3]).view(b, -1, self.num_anchors)
        # B * (H * W) * num_anchors * 4
        b_coords = torch.stack((b_x, b_y, b_w, b_h), dim=3)
        # Objectness
        b_o = torch.sigmoid(x[..., 4]).view(b, -1, self.num_anchors)

        return b_coords, b_o, b_scores

    def forward(self, x, gt_boxes=None, gt_labels=None):

        if self.training and (gt_boxes is None or gt_labels is None):
            raise ValueError("`gt_boxes` and `gt_labels` need to be specified in training mode")

        if isinstance(x, (list, tuple)):
            x = torch.stack(x, dim=0)

        img_h, img_w = x.shape[-2:]
        x = self.backbone(x)
        x = self.block4(x)
        x = self.classifier(x)

        # B * (H * W) * num_anchors
        b_coords, b_o, b_scores = self._format_outputs(x, img_h, img_w)

        if self.training:
            # Update losses
            return self._compute_losses(b_coords, b_o, b_scores, gt_boxes, gt_labels)
        raise NotImplementedError("post_process is left out of the reduction")


def yolov1(pretrained=False, progress=True, **kwargs):
    return YOLOv1(None, **kwargs)
