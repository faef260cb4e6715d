# source: https://github.com/graytowne/revisit_adv_rec/issues/3
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# WMFTrainer.train_als() (trainers/wmf_trainer.py, surrogate model "sur_wmf_als" of the data-poisoning attack):
# the closed-form ALS step writes each solved user/item factor straight into the nn.Parameter rows,
# model.P[user] = new_p_u.t() / model.Q[item] = new_q_v.t() -> "a view of a leaf Variable that requires grad is
# being used in an in-place operation". The maintainer's fix (PR #4, commit "Fix modify variable issue (issue #3)
# in wmf-als"): write through .data, model.P.data[user] = ... / model.Q.data[item] = ....
# scipy sparse rows are replaced by dense torch rows (sparse2tensor / _array2sparsediag re-implemented densely);
# the harness runs one ALS epoch, then backpropagates the surrogate's weighted reconstruction loss.
import torch
import torch.nn as nn
from types import SimpleNamespace


def _array2sparsediag(x):
    return torch.diag(x)


def sparse2tensor(row):
    return row.unsqueeze(0)


class WeightedMF(nn.Module):
    def __init__(self, n_users, n_items, model_args):
        super(WeightedMF, self).__init__()

        hidden_dims = model_args.hidden_dims
        if len(hidden_dims) > 1:
            raise ValueError("WMF can only have one latent dimension.")

        self.n_users = n_users
        self.n_items = n_items
        self.dim = hidden_dims[0]

        self.Q = nn.Parameter(
            torch.zeros([self.n_items, self.dim]).normal_(mean=0, std=0.1))
        self.P = nn.Parameter(
            torch.zeros([self.n_users, self.dim]).normal_(mean=0, std=0.1))
        self.params = nn.ParameterList([self.Q, self.P])

    def forward(self, user_id=None, item_id=None):
        if user_id is None and item_id is None:
            return torch.mm(self.P, self.Q.t())
        if user_id is not None:
            return torch.mm(self.P[[user_id]], self.Q.t())
        if item_id is not None:
            return torch.mm(self.P, self.Q[[item_id]].t())


class WMFTrainer:
    def __init__(self, n_users, n_items, args):
        self.args = args
        self.device = torch.device("cpu")
        self.n_users = n_users
        self.n_items = n_items

    def _initialize(self):
        model_args = self.args.model
        self.net = WeightedMF(
            n_users=self.n_users, n_items=self.n_items,
            model_args=model_args).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.args.lr,
                                          weight_decay=self.args.l2)
        self.optim_method = model_args.optim_method
        self.weight_alpha = model_args.weight_alpha
        self.dim = self.net.dim

    def train_als(self, data):
        model = self.net  # A warning will raise if use .to() method here.
        P = model.P.detach()
        Q = model.Q.detach()

        weight_alpha = self.weight_alpha - 1
        # Using PyTorch for ALS optimization
        # Update P
        lamda_eye = torch.eye(self.dim).to(self.device) * self.args.l2
        # residual = Q^tQ + lambda*I
        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, batch_data in enumerate(data):
            # x_u: N x 1
            x_u = sparse2tensor(batch_data).to(self.device).t()
            # Cu = diagMat(alpha * rating + 1)
            cu = batch_data * weight_alpha + 1
            Cu = _array2sparsediag(cu).to(self.device)
            Cu_minusI = _array2sparsediag(cu - 1).to(self.device)
            # Q^tCuQ + lambda*I = Q^tQ + lambda*I + Q^t(Cu-I)Q
            # left hand side
            lhs = torch.mm(Q.t(), Cu_minusI.mm(Q)) + residual
            # right hand side
            rhs = torch.mm(Q.t(), Cu.mm(x_u))

            new_p_u = torch.mm(lhs.inverse(), rhs)
            model.P[user] = new_p_u.t()

        # Update Q
        data = data.t()
        # residual = P^tP + lambda*I
        residual = torch.mm(P.t(), P) + lamda_eye
        for item, batch_data in enumerate(data):
            # x_v: M x 1
            x_v = sparse2tensor(batch_data).to(self.device).t()
            # Cv = diagMat(alpha * rating + 1)
            cv = batch_data * weight_alpha + 1
            Cv = _array2sparsediag(cv).to(self.device)
            Cv_minusI = _array2sparsediag(cv - 1).to(self.device)
            # left hand side
            lhs = torch.mm(P.t(), Cv_minusI.mm(P)) + residual
            # right hand side
            rhs = torch.mm(P.t(), Cv.mm(x_v))

            new_q_v = torch.mm(lhs.inverse(), rhs)
            model.Q[item] = new_q_v.t()

        return 0


def compute():
    torch.manual_seed(0)
    n_users, n_items = 6, 5
    args = SimpleNamespace(lr=1e-3, l2=0.1,
                           model=SimpleNamespace(hidden_dims=[3], optim_method="als", weight_alpha=20))
    data = (torch.rand(n_users, n_items) > 0.6).float()
    trainer = WMFTrainer(n_users, n_items, args)
    trainer._initialize()
    trainer.train_als(data)
    model = trainer.net
    pred = model()
    loss = ((1 + 19 * data) * (pred - data) ** 2).sum()
    loss.backward()
    return {"P": model.P.detach().clone(), "Q": model.Q.detach().clone(),
            "P.grad": model.P.grad.clone(), "Q.grad": model.Q.grad.clone()}


if __name__ == "__main__":
    compute()
