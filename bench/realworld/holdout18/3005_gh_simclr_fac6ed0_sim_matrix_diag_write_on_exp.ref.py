# reference fix for 3005: commit fac6ed0 in the training script: the self-similarities dropped with
# `sim_matrix.masked_select(mask).view(2 * batch_size, -1)` instead of written to zero in place.
import importlib
import os
import sys

import torch
import torch.optim as optim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
Model = importlib.import_module("3005helpers_simclr_model").Model

temperature, batch_size, epoch, epochs = 0.5, 4, 1, 1


# train for one epoch to learn unique features
def train(net, data_loader, train_optimizer):
    net.train()
    total_loss, total_num, train_bar = 0.0, 0, data_loader
    for pos_1, pos_2, target in train_bar:
        feature_1, out_1 = net(pos_1)
        feature_2, out_2 = net(pos_2)
        # [2*B, D]
        out = torch.cat([out_1, out_2], dim=0)
        # [2*B, 2*B]
        sim_matrix = torch.exp(torch.mm(out, out.t().contiguous()) / temperature)
        mask = (torch.ones_like(sim_matrix) - torch.eye(2 * batch_size, device=sim_matrix.device)).bool()
        # [2*B, 2*B-1]
        sim_matrix = sim_matrix.masked_select(mask).view(2 * batch_size, -1)

        # compute loss
        pos_sim = torch.sum(out_1 * out_2, dim=-1)
        pos_sim = torch.cat([pos_sim, pos_sim], dim=0)
        loss = (- torch.log(pos_sim / sim_matrix.sum(dim=-1))).mean()
        train_optimizer.zero_grad()
        loss.backward()
        train_optimizer.step()

        total_num += batch_size
        total_loss += loss.item() * batch_size
    return total_loss / total_num


def compute():
    torch.manual_seed(0)
    model = Model(feature_dim=16)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    data_loader = []
    for _ in range(2):
        image = torch.rand(batch_size, 3, 8, 8)
        # two "augmented views": small random perturbations of the same images
        pos_1 = image + 0.1 * torch.randn_like(image)
        pos_2 = image + 0.1 * torch.randn_like(image)
        data_loader.append((pos_1, pos_2, torch.zeros(batch_size, dtype=torch.long)))
    train_loss = train(model, data_loader, optimizer)
    return {
        "train_loss": torch.tensor(train_loss),
        "g.0.weight": model.g[0].weight.detach(),
        "g.2.weight": model.g[2].weight.detach(),
        "f.0.weight": model.f[0].weight.detach(),
        "g.2.weight.grad": model.g[2].weight.grad,
    }


if __name__ == "__main__":
    compute()
