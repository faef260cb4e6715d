# reference fix for 625 (PR #4): model.P.data[user] = ... / model.Q.data[item] = ...
import torch
import torch.nn as nn
import torch.nn.functional as F


def mult_ce_loss(data, logits):
    """Multi-class cross-entropy loss (trainers/losses.py)."""
    log_probs = F.log_softmax(logits, dim=-1)
    loss = -log_probs * data
    instance_data = data.sum(1)
    instance_loss = loss.sum(1)
    return instance_loss / (instance_data + 1e-10)


def _array2diag(x):
    return torch.diag(x)


class WeightedMF(nn.Module):
    def __init__(self, n_users, n_items, hidden_dims):
        super(WeightedMF, self).__init__()
        self.n_users = n_users
        self.n_items = n_items
        self.dim = hidden_dims[0]
        self.Q = nn.Parameter(torch.zeros([self.n_items, self.dim]).normal_(mean=0, std=0.1))
        self.P = nn.Parameter(torch.zeros([self.n_users, self.dim]).normal_(mean=0, std=0.1))
        self.params = nn.ParameterList([self.Q, self.P])

    def forward(self, user_id=None, item_id=None):
        if user_id is None and item_id is None:
            return torch.mm(self.P, self.Q.t())
        if user_id is not None:
            return torch.mm(self.P[[user_id]], self.Q.t())
        if item_id is not None:
            return torch.mm(self.P, self.Q[[item_id]].t())


class WMFTrainer:
    def __init__(self, n_users, n_items, dim=4, l2=1.0, weight_alpha=20):
        self.net = WeightedMF(n_users, n_items, [dim])
        self.dim, self.l2, self.weight_alpha = dim, l2, weight_alpha

    def train_als(self, data):
        model = self.net
        P = model.P.detach()
        Q = model.Q.detach()

        weight_alpha = self.weight_alpha - 1
        # Update P
        lamda_eye = torch.eye(self.dim) * self.l2
        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, batch_data in enumerate(data):
            x_u = batch_data.view(1, -1).t()
            cu = batch_data * weight_alpha + 1
            Cu = _array2diag(cu)
            Cu_minusI = _array2diag(cu - 1)
            lhs = torch.mm(Q.t(), Cu_minusI.mm(Q)) + residual
            rhs = torch.mm(Q.t(), Cu.mm(x_u))
            new_p_u = torch.mm(lhs.inverse(), rhs)
            model.P.data[user] = new_p_u.t()

        # Update Q
        data = data.t()
        residual = torch.mm(P.t(), P) + lamda_eye
        for item, batch_data in enumerate(data):
            x_v = batch_data.view(1, -1).t()
            cv = batch_data * weight_alpha + 1
            Cv = _array2diag(cv)
            Cv_minusI = _array2diag(cv - 1)
            lhs = torch.mm(P.t(), Cv_minusI.mm(P)) + residual
            rhs = torch.mm(P.t(), Cv.mm(x_v))
            new_q_v = torch.mm(lhs.inverse(), rhs)
            model.Q.data[item] = new_q_v.t()
        return 0

    def fit_adv_als(self, data_tensor, epoch_num, n_fakes, target_items):
        train_data = data_tensor.detach()
        for i in range(1, epoch_num + 1):
            self.train_als(data=train_data)

        target_tensor = torch.zeros_like(data_tensor)
        target_tensor[:, target_items] = 1.0
        model = self.net
        predictions = model()
        adv_loss = mult_ce_loss(logits=predictions[:-n_fakes, ], data=target_tensor[:-n_fakes, ]).sum()
        dloss_dpreds = torch.autograd.grad(adv_loss, predictions)[0]

        data_tensor = data_tensor.t()
        dloss_dpreds = dloss_dpreds.t()
        P = model.P.detach()
        weight_alpha = self.weight_alpha - 1
        lamda_eye = torch.eye(self.dim) * self.l2
        residual = torch.mm(P.t(), P) + lamda_eye

        adv_grads = list()
        for i, x_v in enumerate(data_tensor):
            cv = x_v.detach() * weight_alpha + 1
            Cv = _array2diag(cv)
            Cv_minusI = _array2diag(cv - 1)
            lhs = torch.mm(P.t(), Cv_minusI.mm(P)) + residual
            rhs = torch.mm(P.t(), Cv.mm(x_v.view(-1, 1)))
            new_q_v = torch.mm(lhs.inverse(), rhs)
            r_v = torch.mm(P, new_q_v)
            adv_grad = torch.autograd.grad(r_v, x_v, dloss_dpreds[i].view_as(r_v))[0]
            adv_grads.append(adv_grad.view(-1, 1))
        adv_grads = torch.cat(adv_grads, dim=1)
        return adv_loss.detach(), adv_grads[-n_fakes:, :]


def compute():
    torch.manual_seed(0)
    n_users, n_items, n_fakes = 6, 8, 2
    data = (torch.rand(n_users, n_items) > 0.6).float()
    data_tensor = data.clone().requires_grad_(True)  # real users + fake user rows being optimised
    trainer = WMFTrainer(n_users, n_items)
    adv_loss, adv_grads = trainer.fit_adv_als(data_tensor, epoch_num=2, n_fakes=n_fakes, target_items=[1, 5])
    return {"adv_loss": adv_loss, "adv_grads": adv_grads, "P": trainer.net.P.detach().clone(),
            "Q": trainer.net.Q.detach().clone()}


if __name__ == "__main__":
    compute()
