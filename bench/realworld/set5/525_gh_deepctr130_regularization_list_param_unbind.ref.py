# reference fix for 525 (DeepCTR-Torch PR #142): add_regularization_weight wraps a single Parameter in a list
# instead of iterating (unbinding) it.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Linear(nn.Module):
    def __init__(self, dense_dim, init_std=0.0001, device='cpu'):
        super(Linear, self).__init__()
        self.weight = nn.Parameter(torch.Tensor(dense_dim, 1)).to(device)
        torch.nn.init.normal_(self.weight, mean=0, std=init_std)

    def forward(self, X):
        return X.matmul(self.weight)


class DeepFM(nn.Module):
    def __init__(self, dense_dim, dnn_hidden_units=(8,), l2_reg_linear=0.00001, l2_reg_dnn=0.01, init_std=0.0001,
                 seed=1024, device='cpu'):
        super(DeepFM, self).__init__()
        torch.manual_seed(seed)
        self.reg_loss = torch.zeros((1,), device=device)
        self.aux_loss = torch.zeros((1,), device=device)
        self.device = device  # device

        self.linear_model = Linear(dense_dim, device=device)

        self.regularization_weight = []

        self.add_regularization_weight(
            self.linear_model.parameters(), l2_reg_linear)

        self.dnn = nn.Sequential(nn.Linear(dense_dim, dnn_hidden_units[0]), nn.ReLU())
        self.dnn_linear = nn.Linear(dnn_hidden_units[-1], 1, bias=False)
        self.add_regularization_weight(
            filter(lambda x: 'weight' in x[0] and 'bn' not in x[0], self.dnn.named_parameters()), l2_reg_dnn)
        self.add_regularization_weight(self.dnn_linear.weight, l2_reg_dnn)
        self.to(device)

    def forward(self, X):
        logit = self.linear_model(X)
        logit = logit + self.dnn_linear(self.dnn(X))
        return torch.sigmoid(logit)

    def add_regularization_weight(self, weight_list, weight_decay, p=2):
        # For a Parameter, put it in a list to keep Compatible with get_regularization_loss()
        if isinstance(weight_list, torch.nn.parameter.Parameter):
            weight_list = [weight_list]
        # For generators, filters and ParameterLists, convert them to a list of tensors to avoid bugs.
        # e.g., we can't pickle generator objects when we save the model.
        else:
            weight_list = list(weight_list)
        self.regularization_weight.append((weight_list, weight_decay, p))

    def get_regularization_loss(self, ):
        total_reg_loss = torch.zeros((1,), device=self.device)
        for weight_list, weight_decay, p in self.regularization_weight:
            weight_reg_loss = torch.zeros((1,), device=self.device)
            for w in weight_list:
                if isinstance(w, tuple):
                    l2_reg = torch.norm(w[1], p=p, )
                else:
                    l2_reg = torch.norm(w, p=p, )
                weight_reg_loss = weight_reg_loss + l2_reg
            reg_loss = weight_decay * weight_reg_loss
            total_reg_loss += reg_loss
        return total_reg_loss

    def fit(self, batches):
        model = self.train()
        loss_func = F.binary_cross_entropy
        optim = torch.optim.Adagrad(model.parameters(), lr=0.01)
        grads = {}
        for index, (x_train, y_train) in enumerate(batches):
            x = x_train.to(self.device).float()
            y = y_train.to(self.device).float()

            y_pred = model(x).squeeze()

            optim.zero_grad()
            loss = loss_func(y_pred, y.squeeze(), reduction='sum')
            reg_loss = self.get_regularization_loss()

            total_loss = loss + reg_loss + self.aux_loss

            total_loss.backward(retain_graph=True)
            grads.update({"step%d.%s" % (index, n): p.grad.clone() for n, p in model.named_parameters()})
            optim.step()
        grads.update({"final." + n: p.detach().clone() for n, p in model.named_parameters()})
        return grads


def compute():
    torch.manual_seed(0)
    batches = [(torch.randn(16, 5), (torch.rand(16) > 0.5).float()) for _ in range(3)]
    model = DeepFM(dense_dim=5)
    return model.fit(batches)


if __name__ == "__main__":
    compute()
