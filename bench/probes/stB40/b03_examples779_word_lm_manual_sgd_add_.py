# source: https://github.com/pytorch/examples/pull/779
# error: B (a hand-written SGD step `p.add_(...)` on the model's parameters, outside no_grad)
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, x):
        output, hidden = self.rnn(self.encoder(x))
        return self.decoder(output), hidden


def main():
    torch.manual_seed(0)
    ntokens, lr = 12, 0.5
    model = RNNModel(ntokens, 6, 8)
    criterion = nn.CrossEntropyLoss()
    data = torch.randint(0, ntokens, (3, 7))
    targets = torch.randint(0, ntokens, (3, 7))
    for _ in range(2):
        model.zero_grad()
        output, hidden = model(data)
        loss = criterion(output.reshape(-1, ntokens), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)
    return [loss.detach()] + [p.detach().clone() for p in model.parameters()]
