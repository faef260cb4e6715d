# FIXED version (commit 8a39f07, PR #80: forward hook + tensor hook instead of the full backward hook); the parent's
# header follows.
# torchcam/cams/core.py and torchcam/cams/gradcam.py (frgfm/torch-cam) as of the parent of commit 8a39f07 ("Fixed grad
# storage for architectures with inplace ops", in PR #80): _CAM (forward hook storing the target layer's output) and
# _GradCAM / GradCAM. The culprit: the gradient of the target layer's output is read with
# `register_full_backward_hook`, which wraps the layer's output in BackwardHookFunction; a model that applies an
# in-place ReLU to that output (`nn.ReLU(inplace=True)` right after the target conv) then fails in its forward pass
# with "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace". The fix registers a forward
# hook that puts a tensor hook on the output (`output.register_hook(self._store_grad)`).
# Stand-ins: `locate_candidate_layer` (automatic target-layer resolution) is left out (the case names the layer);
# the version test `torch.__version__ >= '1.8.0'` is kept as written (a string comparison; true here); GradCAMpp and
# the other subclasses are left out.
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from typing import List, Optional, Tuple


class _CAM:
    def __init__(
        self,
        model: nn.Module,
        target_layer: Optional[str] = None,
        input_shape: Tuple[int, ...] = (3, 224, 224),
    ) -> None:
        # Obtain a mapping from module name to module instance for each layer in the model
        self.submodule_dict = dict(model.named_modules())
        if target_layer not in self.submodule_dict.keys():
            raise ValueError(f"Unable to find submodule {target_layer} in the model")
        self.target_layer = target_layer
        self.model = model
        # Init hooks
        self.hook_a: Optional[Tensor] = None
        self.hook_handles: List[torch.utils.hooks.RemovableHandle] = []
        # Forward hook
        self.hook_handles.append(self.submodule_dict[target_layer].register_forward_hook(self._hook_a))
        # Enable hooks
        self._hooks_enabled = True
        # Should ReLU be used before normalization
        self._relu = False
        # Model output is used by the extractor
        self._score_used = False

    def _hook_a(self, module: nn.Module, input: Tensor, output: Tensor) -> None:
        """Activation hook"""
        if self._hooks_enabled:
            self.hook_a = output.data

    @staticmethod
    def _normalize(cams: Tensor, spatial_dims: Optional[int] = None) -> Tensor:
        """CAM normalization"""
        spatial_dims = cams.ndim if spatial_dims is None else spatial_dims
        cams.sub_(cams.flatten(start_dim=-spatial_dims).min(-1).values[(...,) + (None,) * spatial_dims])
        cams.div_(cams.flatten(start_dim=-spatial_dims).max(-1).values[(...,) + (None,) * spatial_dims])
        return cams

    def __call__(self, class_idx: int, scores: Optional[Tensor] = None, normalized: bool = True) -> Tensor:
        return self.compute_cams(class_idx, scores, normalized)

    def compute_cams(self, class_idx: int, scores: Optional[Tensor] = None, normalized: bool = True) -> Tensor:
        # Get map weight & unsqueeze it
        weights = self._get_weights(class_idx, scores)
        missing_dims = self.hook_a.ndim - weights.ndim - 1  # type: ignore[union-attr]
        weights = weights[(...,) + (None,) * missing_dims]
        # Perform the weighted combination to get the CAM
        batch_cams = torch.nansum(weights * self.hook_a.squeeze(0), dim=0)  # type: ignore[union-attr]
        if self._relu:
            batch_cams = F.relu(batch_cams, inplace=True)
        # Normalize the CAM
        if normalized:
            batch_cams = self._normalize(batch_cams)
        return batch_cams


class _GradCAM(_CAM):
    def __init__(
        self,
        model: torch.nn.Module,
        target_layer: Optional[str] = None,
        input_shape: Tuple[int, ...] = (3, 224, 224),
    ) -> None:

        super().__init__(model, target_layer, input_shape)
        # Init hook
        self.hook_g: Optional[Tensor] = None
        # Ensure ReLU is applied before normalization
        self._relu = True
        # Model output is used by the extractor
        self._score_used = True
        # Trick to avoid issues with inplace operations cf. https://github.com/pytorch/pytorch/issues/61519
        self.hook_handles.append(self.submodule_dict[self.target_layer].register_forward_hook(self._hook_g))

    def _store_grad(self, grad: Tensor) -> None:
        if self._hooks_enabled:
            self.hook_g = grad.data

    def _hook_g(self, module: torch.nn.Module, input: Tensor, output: Tensor) -> None:
        """Gradient hook"""
        output.register_hook(self._store_grad)

    def _backprop(self, scores: Tensor, class_idx: int) -> None:
        """Backpropagate the loss for a specific output class"""
        if self.hook_a is None:
            raise TypeError("Inputs need to be forwarded in the model for the conv features to be hooked")
        # Backpropagate to get the gradients on the hooked layer
        loss = scores[:, class_idx].sum()
        self.model.zero_grad()
        loss.backward(retain_graph=True)


class GradCAM(_GradCAM):
    def _get_weights(self, class_idx: int, scores: Tensor) -> Tensor:  # type: ignore[override]
        """Computes the weight coefficients of the hooked activation maps"""
        self.hook_g: Tensor
        # Backpropagate
        self._backprop(scores, class_idx)
        # Global average pool the gradients over spatial dimensions
        return self.hook_g.squeeze(0).flatten(1).mean(-1)
