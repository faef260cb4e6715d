# source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# (h0, c0) returned by the LSTM are fed into the next batch without .detach(); after adding retain_graph=True to get past
# "backward through the graph a second time", the next backward walks the previous batch's graph whose LSTM weights
# were already updated in place by optimizer.step() ("[torch.FloatTensor [128, 6]] is at version 2; expected version 1").
# Fix from the post: detach the hidden state between batches (and drop retain_graph). The post does not show the lstm
# module; a thin nn.LSTM wrapper with the same call signature is used.
import torch
import torch.nn as nn

EPOCH = 1
num_layers, batch_size, hidden_dim, embedding_dim, seq_len = 1, 4, 32, 6, 5


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (h, c) = self.lstm(x, (h0, c0))
        return self.fc(out), (h, c)


def compute():
    torch.manual_seed(0)
    lstm = LSTMModel()
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-3)
    data_loader = [(torch.randn(batch_size, seq_len, embedding_dim), torch.randn(batch_size * seq_len, embedding_dim))
                   for _ in range(3)]
    grads = {}
    for epoch in range(EPOCH):
        batch_num = 0
        h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        for batch in data_loader:
            optimizer.zero_grad()
            output, (h0, c0) = lstm(batch[0], h0, c0)
            loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
            loss.backward(retain_graph=True)
            grads = {n: p.grad.clone() for n, p in lstm.named_parameters()}
            optimizer.step()
            batch_num += 1
    return grads  # gradients of the last batch


if __name__ == "__main__":
    compute()
