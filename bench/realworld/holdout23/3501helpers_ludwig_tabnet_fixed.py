# Library module for case 3501 (reference, the fix 66168ced applied): ludwig-ai/ludwig ludwig/modules/tabnet_modules.py at 66168ced^ (inside PR #1376,
# "TF to Torch Migration of TabNet", squash-merged as fc6d777b2), with the pieces of ludwig/utils/torch_utils.py
# (LudwigModule, SparsemaxFunction / Sparsemax, _make_ix_like), ludwig/modules/activation_modules.py (glu) and
# ludwig/modules/normalization_modules.py (GhostBatchNormalization) it uses. TabNet, FeatureBlock,
# AttentiveTransformer and FeatureTransformer are the source's, reduced to their forward paths (the shape
# properties are dropped). Stand-in: LudwigModule keeps only add_loss / losses (the source collects callables
# and children's losses the same way).
from typing import List, Optional, Tuple

import torch
from torch.autograd import Function


class LudwigModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._callable_losses = []

    def losses(self):
        collected_losses = [loss_fn() for loss_fn in self._callable_losses]
        for child in self.children():
            if isinstance(child, LudwigModule):
                collected_losses.extend(child.losses())
        return collected_losses

    def add_loss(self, loss):
        if callable(loss):
            self._callable_losses.append(loss)


def glu(x: torch.Tensor, dim: int = -1):
    return torch.nn.functional.glu(x, dim)


def _make_ix_like(input, dim=0):
    d = input.size(dim)
    rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    view = [1] * input.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


class SparsemaxFunction(Function):
    """Sparsemax (Martins & Astudillo, 2016), by Ben Peters and Vlad Niculae, as in ludwig's torch_utils."""

    @staticmethod
    def forward(ctx, input, dim=-1):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input -= max_val  # same numerical stability trick as for softmax
        tau, supp_size = SparsemaxFunction._threshold_and_support(input, dim=dim)
        output = torch.clamp(input - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None

    @staticmethod
    def _threshold_and_support(input, dim=-1):
        input_srt, _ = torch.sort(input, descending=True, dim=dim)
        input_cumsum = input_srt.cumsum(dim) - 1
        rhos = _make_ix_like(input, dim)
        support = rhos * input_srt > input_cumsum
        support_size = support.sum(dim=dim).unsqueeze(dim)
        tau = input_cumsum.gather(dim, support_size - 1)
        tau /= support_size.to(input.dtype)
        return tau, support_size


sparsemax = SparsemaxFunction.apply


class Sparsemax(torch.nn.Module):
    def __init__(self, dim=-1):
        self.dim = dim
        super().__init__()

    def forward(self, input):
        return sparsemax(input, self.dim)


class GhostBatchNormalization(LudwigModule):
    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-3,
                 virtual_batch_size: Optional[int] = None):
        super().__init__()
        self.num_features = num_features
        self.virtual_batch_size = virtual_batch_size
        self.bn = torch.nn.BatchNorm1d(num_features, momentum=momentum, eps=epsilon)

    def forward(self, inputs):
        if self.training and self.virtual_batch_size:
            batch_size = inputs.shape[0]
            splits = inputs.chunk(-(-batch_size // self.virtual_batch_size), 0)
            x = [self.bn(x) for x in splits]
            return torch.cat(x, 0)
        return self.bn(inputs)


class TabNet(LudwigModule):
    def __init__(self, input_size: int, size: int, output_size: int, num_steps: int = 1,
                 num_total_blocks: int = 4, num_shared_blocks: int = 2, relaxation_factor: float = 1.5,
                 bn_momentum: float = 0.7, bn_epsilon: float = 1e-3, bn_virtual_bs: int = None,
                 sparsity: float = 1e-5):
        super().__init__()
        self.input_size = input_size
        self.size = size
        self.output_size = output_size
        self.num_steps = num_steps
        self.relaxation_factor = relaxation_factor
        self.sparsity = torch.tensor(sparsity)
        self.bn_momentum = bn_momentum
        self.bn_epsilon = bn_epsilon
        self.bn_virtual_bs = bn_virtual_bs
        self.batch_norm = torch.nn.BatchNorm1d(input_size, momentum=bn_momentum, eps=bn_epsilon)
        kargs = {
            "num_total_blocks": num_total_blocks,
            "num_shared_blocks": num_shared_blocks,
            "bn_momentum": bn_momentum,
            "bn_epsilon": bn_epsilon,
            "bn_virtual_bs": bn_virtual_bs,
        }
        # first feature transformer block is built first to get the shared blocks
        self.feature_transforms = torch.nn.ModuleList([FeatureTransformer(input_size, size + output_size, **kargs)])
        self.attentive_transforms = torch.nn.ModuleList([None])
        for i in range(num_steps):
            self.feature_transforms.append(
                FeatureTransformer(input_size, size + output_size, **kargs,
                                   shared_fc_layers=self.feature_transforms[0].shared_fc_layers))
            self.attentive_transforms.append(
                AttentiveTransformer(size, input_size, bn_momentum, bn_epsilon, bn_virtual_bs))
        self.final_projection = torch.nn.Linear(output_size, output_size)

    def forward(self, features: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, List[torch.Tensor]]:
        if features.dim() != 2:
            raise ValueError(f"Expecting incoming tensor to be dim 2, instead dim={features.dim()}")
        batch_size = features.shape[0]  # b_s
        num_features = features.shape[-1]  # i_s
        out_accumulator = torch.zeros((batch_size, self.output_size))  # [b_s, o_s]
        aggregated_mask = torch.zeros([batch_size, num_features])  # [b_s, i_s]
        prior_scales = torch.ones((batch_size, num_features))  # [b_s, i_s]
        masks = []
        total_entropy = 0.0

        features = self.batch_norm(features)  # [b_s, i_s]
        masked_features = features
        x = self.feature_transforms[0](masked_features)  # [b_s, s + o_s]

        for step_i in range(1, self.num_steps + 1):
            # Attentive Transformer
            mask_values = self.attentive_transforms[step_i](x[:, self.output_size:], prior_scales)  # [b_s, i_s]

            # relaxation factor 1 forces the feature to be only used once
            prior_scales = prior_scales * (self.relaxation_factor - mask_values)  # [b_s, i_s]

            # entropy is used to penalize the amount of sparsity in feature selection
            total_entropy += torch.mean(torch.sum(-mask_values * torch.log(mask_values + 0.00001), dim=1)) / self.num_steps

            masks.append(torch.unsqueeze(torch.unsqueeze(mask_values, 0), 3))  # [1, b_s, i_s, 1]

            # Feature Transformer
            masked_features = torch.multiply(mask_values, features)
            x = self.feature_transforms[step_i](masked_features)  # [b_s, s + o_s]

            out = torch.nn.functional.relu(x[:, :self.output_size])  # [b_s, o_s]
            out_accumulator += out

            # Aggregated masks are used for visualization of the feature importance attributes.
            scale = torch.sum(out, dim=1, keepdim=True) / self.num_steps
            aggregated_mask += mask_values * scale  # [b_s, i_s]

        final_output = self.final_projection(out_accumulator)  # [b_s, o_s]

        sparsity_loss = torch.multiply(self.sparsity, total_entropy)
        setattr(sparsity_loss, "loss_name", "sparsity_loss")
        self.add_loss(sparsity_loss)
        return final_output, aggregated_mask, masks


class FeatureBlock(LudwigModule):
    def __init__(self, input_size: int, size: int, apply_glu: bool = True, bn_momentum: float = 0.9,
                 bn_epsilon: float = 1e-3, bn_virtual_bs: int = None, shared_fc_layer: LudwigModule = None):
        super().__init__()
        self.input_size = input_size
        self.apply_glu = apply_glu
        self.size = size
        units = size * 2 if apply_glu else size
        if shared_fc_layer:
            self.fc_layer = shared_fc_layer
        else:
            self.fc_layer = torch.nn.Linear(input_size, units, bias=False)
        self.batch_norm = GhostBatchNormalization(units, virtual_batch_size=bn_virtual_bs, momentum=bn_momentum,
                                                  epsilon=bn_epsilon)

    def forward(self, inputs):
        hidden = self.fc_layer(inputs)  # [b_s, u]
        hidden = self.batch_norm(hidden)  # [b_s, u]
        if self.apply_glu:
            hidden = glu(hidden)  # [bs, s]
        return hidden


class AttentiveTransformer(LudwigModule):
    def __init__(self, input_size: int, size: int, bn_momentum: float = 0.9, bn_epsilon: float = 1e-3,
                 bn_virtual_bs: int = None):
        super().__init__()
        self.input_size = input_size
        self.size = size
        self.feature_block = FeatureBlock(input_size, size, bn_momentum=bn_momentum, bn_epsilon=bn_epsilon,
                                          bn_virtual_bs=bn_virtual_bs, apply_glu=False)
        self.sparsemax = Sparsemax()

    def forward(self, inputs, prior_scales):
        # inputs shape [b_s, i_s], prior_scales shape [b_s, s]
        hidden = self.feature_block(inputs)  # [b_s, s]
        hidden = hidden * prior_scales  # [b_s, s]
        return self.sparsemax(hidden)  # [b_s, s]


class FeatureTransformer(LudwigModule):
    def __init__(self, input_size: int, size: int, shared_fc_layers: List = [], num_total_blocks: int = 4,
                 num_shared_blocks: int = 2, bn_momentum: float = 0.9, bn_epsilon: float = 1e-3,
                 bn_virtual_bs: int = None):
        super().__init__()
        self.input_size = input_size
        self.num_total_blocks = num_total_blocks
        self.num_shared_blocks = num_shared_blocks
        self.size = size
        kwargs = {"bn_momentum": bn_momentum, "bn_epsilon": bn_epsilon, "bn_virtual_bs": bn_virtual_bs}
        self.blocks = torch.nn.ModuleList()
        for n in range(num_total_blocks):
            if shared_fc_layers and n < len(shared_fc_layers):
                self.blocks.append(FeatureBlock(input_size, size, **kwargs, shared_fc_layer=shared_fc_layers[n]))
            else:
                if n == 0:
                    self.blocks.append(FeatureBlock(input_size, size, **kwargs))
                else:
                    self.blocks.append(FeatureBlock(size, size, **kwargs))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        hidden = self.blocks[0](inputs)  # [b_s, s]
        for n in range(1, self.num_total_blocks):
            hidden = (self.blocks[n](hidden) + hidden) * torch.sqrt(torch.tensor(0.5))  # [b_s, s]
        return hidden

    @property
    def shared_fc_layers(self):
        return [self.blocks[i].fc_layer for i in range(self.num_shared_blocks)]
