# pytorch-tabnet (dreamquark-ai/tabnet) pytorch_tabnet/abstract_model.py and tab_model.py after commit
# 423f7c4 ("fix: custom loss using inplace operations", PR #323, for issue #312), which writes
# `loss = loss - self.lambda_sparse * M_loss`: TabModel._train_batch and
# TabNetRegressor.compute_loss, copied.
# The culprit: `loss -= self.lambda_sparse * M_loss` on whatever the user's loss_fn returned; a custom RMSE loss
# ends in torch.sqrt, whose backward saved its output.
# Stand-ins: TabModel is reduced to the attributes _train_batch reads (network, device, lambda_sparse, clip_value,
# _optimizer, loss_fn), set by the constructor instead of fit(); `batch_logs["loss"]` drops `.numpy()` before
# `.item()` (numpy is not installed with the benchmark's torch); the TabNet network is in the case (a stand-in).
import torch
from torch.nn.utils import clip_grad_norm_


class TabModel:
    """Reduced TabModel (see the header)."""

    def __init__(self, network, optimizer, loss_fn, lambda_sparse=1e-3, clip_value=1, device="cpu"):
        self.network = network
        self._optimizer = optimizer
        self.loss_fn = loss_fn
        self.lambda_sparse = lambda_sparse
        self.clip_value = clip_value
        self.device = device

    def _train_batch(self, X, y):
        """
        Trains one batch of data

        Parameters
        ----------
        X : torch.Tensor
            Train matrix
        y : torch.Tensor
            Target matrix

        Returns
        -------
        batch_outs : dict
            Dictionnary with "y": target and "score": prediction scores.
        batch_logs : dict
            Dictionnary with "batch_size" and "loss".
        """
        batch_logs = {"batch_size": X.shape[0]}

        X = X.to(self.device).float()
        y = y.to(self.device).float()

        for param in self.network.parameters():
            param.grad = None

        output, M_loss = self.network(X)

        loss = self.compute_loss(output, y)
        # Add the overall sparsity loss
        loss = loss - self.lambda_sparse * M_loss

        # Perform backward pass and optimization
        loss.backward()
        if self.clip_value:
            clip_grad_norm_(self.network.parameters(), self.clip_value)
        self._optimizer.step()

        batch_logs["loss"] = loss.cpu().detach().item()  # stand-in: `.numpy()` dropped (see the header)

        return batch_logs


class TabNetRegressor(TabModel):
    def compute_loss(self, y_pred, y_true):
        return self.loss_fn(y_pred, y_true)
