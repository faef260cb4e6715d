"""monai 1.6.1: the proven findings of `inplacefix check` after issue 24's changes (and
barlow_twins' `pow_(2)`, which they removed; NrrdReader's header, also removed, is a dict).

Each path runs the flagged line with grad on and inputs requiring grad, then backward."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from monai.data.utils import affine_to_spacing
from monai.losses import BarlowTwinsLoss, GeneralizedDiceLoss
from monai.metrics.generalized_dice import compute_generalized_dice
from monai.networks.nets import VarAutoEncoder, VarFullyConnectedNet

expect_line(affine_to_spacing, 735, "spacing[spacing == 0] = 1.0")


def spacing(suppress):
    def run():
        affine = torch.eye(4).clone()
        affine[1, 1] = 0.0  # a zero column: the suppressed spacing
        affine.requires_grad_()
        affine_to_spacing(affine, r=3, dtype=torch.float32, suppress_zeros=suppress).sum().backward()
    return run


attempt("monai/data/utils.py:735:IPF104", "path", "affine_to_spacing(affine requiring grad, suppress_zeros=True)",
        spacing(True))
attempt("monai/data/utils.py:735:IPF104", "control", "suppress_zeros=False (no write)", spacing(False))

expect_line(compute_generalized_dice, 215, "batch_w[infs] = 0")


def gdice():
    y_pred = torch.rand(2, 3, 4, 4, requires_grad=True)
    y = torch.zeros(2, 3, 4, 4)
    y[:, 0] = 1.0  # classes 1 and 2 absent: infinite weights replaced
    y.requires_grad_()
    compute_generalized_dice(y_pred, y).sum().backward()


attempt("monai/metrics/generalized_dice.py:215:IPF104", "path",
        "compute_generalized_dice(y_pred and y requiring grad, absent classes)", gdice)
attempt("monai/metrics/generalized_dice.py:217:IPF104", "path",
        "compute_generalized_dice(y_pred and y requiring grad, absent classes)", gdice)


def vae(cls, training):
    def run():
        torch.manual_seed(0)
        if cls is VarFullyConnectedNet:
            net = VarFullyConnectedNet(4, 4, 2, (8,), (8,))
        else:
            net = VarAutoEncoder(spatial_dims=2, in_shape=(1, 8, 8), out_channels=1, latent_size=2,
                                 channels=(4,), strides=(2,))
        net.train(training)
        mu = torch.randn(3, 2, requires_grad=True)
        logvar = torch.randn(3, 2, requires_grad=True)
        net.reparameterize(mu, logvar).sum().backward()
    return run


expect_line(VarFullyConnectedNet.reparameterize, 200, "return std.add_(mu)")
attempt("monai/networks/nets/fullyconnectednet.py:200:IPF103", "path", "VarFullyConnectedNet.reparameterize in eval mode",
        vae(VarFullyConnectedNet, False))
attempt("monai/networks/nets/fullyconnectednet.py:200:IPF103", "control", "the same in training mode (a fresh sample)",
        vae(VarFullyConnectedNet, True))
expect_line(VarAutoEncoder.reparameterize, 170, "return std.add_(mu)")
attempt("monai/networks/nets/varautoencoder.py:170:IPF103", "path", "VarAutoEncoder.reparameterize in eval mode",
        vae(VarAutoEncoder, False))
attempt("monai/networks/nets/varautoencoder.py:170:IPF103", "control", "the same in training mode (a fresh sample)",
        vae(VarAutoEncoder, True))

# removed by issue 24's changes: they must not raise
expect_line(BarlowTwinsLoss.forward, 82, "c_diff[~torch.eye(c.size(0), device=c.device).bool()] *= lambd_tensor")
attempt("monai/losses/barlow_twins.py:82:IPF104", "path", "BarlowTwinsLoss on inputs requiring grad",
        lambda: BarlowTwinsLoss()(torch.randn(4, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)).backward())


def gdl(batch):
    def run():
        y = torch.zeros(2, 3, 4, 4)
        y[:, 0] = 1.0
        y.requires_grad_()
        GeneralizedDiceLoss(batch=batch)(torch.rand(2, 3, 4, 4, requires_grad=True), y).backward()
    return run


# (kept by issue 24's changes: w_func's other returns are seen)
expect_line(GeneralizedDiceLoss.forward, 462, "w[infs] = 0.0")
attempt("monai/losses/dice.py:462:IPF104", "path", "GeneralizedDiceLoss(batch=True, w_type square), target requiring grad,"
        " absent classes", gdl(True))
attempt("monai/losses/dice.py:465:IPF104", "path", "GeneralizedDiceLoss(batch=False, w_type square), target requiring grad,"
        " absent classes", gdl(False))
