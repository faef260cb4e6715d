# Library module for case 2907 (original).
# kozistr/pytorch_optimizer, pytorch_optimizer/fp16.py (DynamicLossScaler, SafeFP16Optimizer, a port of ParlAI's
# fp16 utilities), read at the parent of commit d4d8b73 ("fix: step", 2022-02-20). Written anew at small size (not
# copied): the loss scaler's update rule, and the optimizer wrapper that keeps fp32 master copies of the fp16 model
# parameters, scales the loss in `backward`, copies the fp16 gradients into the fp32 copies (unscaled) before the
# wrapped optimizer's step, and then copies the fp32 values back into the model with `p.copy_(p32)` (the statement at
# fault) follow the source.
# Stand-ins: no flattened master copy (`flatten=False`, as the constructor uses), no gradient clipping / overflow
# handling, no state-dict or learning-rate helpers.
from torch import nn
from torch.optim import Optimizer


class DynamicLossScaler:
    def __init__(self, init_scale=2.0 ** 15, scale_factor=2.0, scale_window=2000, tolerance=0.00, threshold=None):
        self.loss_scale = init_scale
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.tolerance = tolerance
        self.threshold = threshold
        self.iter = 0
        self.last_overflow_iter = -1
        self.last_rescale_iter = -1
        self.overflows_since_rescale = 0

    def update_scale(self, overflow):
        iter_since_rescale = self.iter - self.last_rescale_iter
        if overflow:
            self.last_overflow_iter = self.iter
            self.overflows_since_rescale += 1
            pct_overflow = self.overflows_since_rescale / float(iter_since_rescale)
            if pct_overflow >= self.tolerance:
                self.decrease_loss_scale()
                self.last_rescale_iter = self.iter
                self.overflows_since_rescale = 0
        elif (self.iter - self.last_overflow_iter) % self.scale_window == 0:
            self.loss_scale *= self.scale_factor
            self.last_rescale_iter = self.iter
        self.iter += 1

    def decrease_loss_scale(self):
        self.loss_scale /= self.scale_factor
        if self.threshold is not None:
            self.loss_scale = max(self.loss_scale, self.threshold)


class SafeFP16Optimizer(Optimizer):
    def __init__(self, optimizer, aggregate_g_norms=False):
        self.optimizer = optimizer
        self.aggregate_g_norms = aggregate_g_norms
        self.fp16_params = self.get_parameters(optimizer)
        self.fp32_params = self.build_fp32_params(self.fp16_params)
        if len(optimizer.param_groups) != 1:
            raise NotImplementedError('[-] Need to implement the parameter group transfer.')
        optimizer.param_groups[0]['params'] = self.fp32_params
        self.scaler = DynamicLossScaler(2.0 ** 15)
        self.min_loss_scale = 2 ** -5
        self.needs_sync = True

    @classmethod
    def get_parameters(cls, optimizer):
        params = []
        for pg in optimizer.param_groups:
            params += list(pg['params'])
        return params

    @classmethod
    def build_fp32_params(cls, parameters):
        fp32_params = []
        for p in parameters:
            p32 = nn.Parameter(p.float())
            p32.grad = p32.new_zeros(p32.shape)
            fp32_params.append(p32)
        return fp32_params

    def backward(self, loss, update_main_grads=False):
        if self.scaler is not None:
            loss = loss * self.scaler.loss_scale
        loss.backward()
        self.needs_sync = True
        if update_main_grads:
            self.update_main_grads()

    def sync_fp16_grads_to_fp32(self, multiply_grads=1.0):
        if self.needs_sync:
            if self.scaler is not None:
                multiply_grads /= self.scaler.loss_scale
            for p, p32 in zip(self.fp16_params, self.fp32_params):
                if not p.requires_grad:
                    continue
                if p.grad is not None:
                    p32.grad.copy_(p.grad)
                    p32.grad.mul_(multiply_grads)
                else:
                    p32.grad = p32.new_zeros(p32.shape)
            self.needs_sync = False

    def update_main_grads(self):
        self.sync_fp16_grads_to_fp32()

    def step(self, closure=None):
        """Performs a single optimization step."""
        self.sync_fp16_grads_to_fp32()
        self.optimizer.step(closure)

        # copy FP32 params back into FP16 model
        for p, p32 in zip(self.fp16_params, self.fp32_params):
            if not p.requires_grad:
                continue
            p.copy_(p32)

    def zero_grad(self):
        for p in self.fp16_params:
            p.grad = None
        for p32 in self.fp32_params:
            p32.grad.zero_()
        self.needs_sync = False
