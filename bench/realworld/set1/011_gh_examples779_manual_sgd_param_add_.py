# source: https://github.com/pytorch/examples/pull/779
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# word_language_model train(): manual SGD `p.add_(-lr, p.grad)` on parameters outside torch.no_grad().
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def compute():
    torch.manual_seed(0)
    ntokens, bptt, batch_size, lr, clip = 20, 5, 3, 20.0, 0.25
    model = RNNModel('LSTM', ntokens, 8, 8, 2, dropout=0.2)
    criterion = nn.NLLLoss()
    train_data = torch.randint(0, ntokens, (2 * bptt + 1, batch_size))
    model.train()
    hidden = model.init_hidden(batch_size)
    grads = {}
    for batch, i in enumerate(range(0, 2 * bptt, bptt)):
        data = train_data[i:i + bptt]
        targets = train_data[i + 1:i + 1 + bptt].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        grads = {name: p.grad.clone() for name, p in model.named_parameters()}

        # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.add_(-lr, p.grad)
    return grads  # gradients of the second batch (depend on the first update)


if __name__ == "__main__":
    compute()
