# Library module for case 2707 (reference: commit 2e31c32 applied, no requires_grad on torch.zeros).
# Trusted-AI/adversarial-robustness-toolbox (ART), art/attacks/evasion/over_the_air_flickering.py, read at the parent
# of commit 2e31c32 ("Removed a requires grad / Leaf variable issues", 2021-05-07, on the branch that added the
# Over-the-Air Flickering attack on video classifiers). Written anew at small size (not copied): the class name
# OverTheAirFlickeringTorch, its hyperparameters (regularization_param, beta_1, beta_2, margin), generate's
# construction of the perturbation Parameter, the AdamW optimiser with ReduceLROnPlateau, the predictions taken under
# no_grad, the objective (thickness and roughness regularisers from first / second temporal differences with
# torch.roll, plus the C&W-style margin loss) and the clamp to the input range follow the source.
# Stand-ins: the attack base class (stores the estimator), label formatting (the case passes class indices of shape
# (N, 1)), scipy's expit -> torch.sigmoid, the predictions stacked with torch.stack (the source's torch.Tensor(list)
# of one (1, classes) tensor per video), the input kept as a tensor and the result returned without .numpy() (numpy
# is not installed), logging dropped; `num_epochs = 200` -> 1 (CPU budget; it also keeps the reference to this
# commit's change: from the second epoch on, the loop's `delta = torch.clamp(delta, ...)` feeds AdamW-updated values
# into a graph that saved them, a later problem of the same work-in-progress branch).
import torch


class OverTheAirFlickeringTorch:
    def __init__(self, classifier, regularization_param, beta_1, beta_2, margin):
        self.estimator = classifier
        self.regularization_param = regularization_param
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.margin = margin

    def generate(self, x, y=None, num_epochs=1):
        x = torch.as_tensor(x, device=self.estimator.device)
        y = torch.as_tensor(y, device=self.estimator.device)
        delta = torch.nn.parameter.Parameter(
            torch.zeros(x[0].shape[1], 3, 1, 1).normal_(mean=0.0, std=0.2).to(self.estimator.device), requires_grad=True

        )
        v_min = torch.min(x).item()
        v_max = torch.max(x).item()
        optimizer = torch.optim.AdamW([delta], lr=1e-3)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=5)
        for _ in range(num_epochs):
            optimizer.zero_grad()
            with torch.no_grad():
                preds = torch.stack([torch.sigmoid(self.estimator.model(video + delta, return_loss=False))
                                     for video in x]).squeeze(1)
            loss = self._objective(delta, preds, y.squeeze(1))
            loss.backward()
            optimizer.step()
            scheduler.step(loss)
            delta = torch.clamp(delta, v_min, v_max)
        return x + delta.detach().cpu()

    def _objective(self, delta, predictions, y):
        T = delta.shape[0]
        regularization = self.regularization_param * (
            self.beta_1 * self._thickness_regularization(delta, T)
            + self.beta_2 * self._roughness_regularization(delta, T)
        )
        return regularization + torch.mean(self._adversarial_loss(predictions, y))

    @staticmethod
    def _first_temporal_derivative(x):
        return torch.roll(x, 1, dims=0) - torch.roll(x, 0, dims=0)

    @staticmethod
    def _second_temporal_derivative(x):
        return torch.roll(x, -1, dims=0) - 2 * torch.roll(x, 0, dims=0) - torch.roll(x, 1, dims=0)

    def _roughness_regularization(self, delta, T):
        first = torch.norm(self._first_temporal_derivative(delta), 2) ** 2
        second = torch.norm(self._second_temporal_derivative(delta), 2) ** 2
        return (first + second) / (3 * T)

    @staticmethod
    def _thickness_regularization(delta, T):
        return torch.norm(delta, 2) ** 2 / (3 * T)

    def _adversarial_loss(self, predictions, y):
        samples, n = predictions.shape
        other = torch.ones(samples, n, dtype=torch.bool)
        other[torch.arange(samples), y] = False
        l_m = (predictions[~other] - torch.max(predictions[other].view(samples, n - 1), dim=-1)[0] + self.margin)
        return torch.max(torch.zeros(y.shape), torch.min(1 / self.margin * l_m ** 2, l_m))
