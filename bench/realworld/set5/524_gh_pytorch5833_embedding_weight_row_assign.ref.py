# reference fix for 524 (the answer in the thread): write the rows through emb.weight.data[i].
import torch as th
import torch.nn as nn


def compute():
    th.manual_seed(0)
    vocab = ['<unk>', '<pad>', 'the', 'cat', 'sat', 'mat']
    glove = {'the': th.randn(4), 'cat': th.randn(4), 'mat': th.randn(4)}
    emb = th.nn.Embedding(len(vocab), 4)
    emb.weight.data[1] = 0
    for i, word in enumerate(vocab):
        if word in glove:
            emb.weight.data[i] = glove[word]
    clf = nn.Linear(4, 2)
    tokens = th.tensor([[2, 3, 4, 1], [2, 5, 1, 1]])
    logits = clf(emb(tokens).mean(1))
    loss = nn.functional.cross_entropy(logits, th.tensor([0, 1]))
    loss.backward()
    return {"emb.weight.grad": emb.weight.grad.clone(), "clf.weight.grad": clf.weight.grad.clone(),
            "clf.bias.grad": clf.bias.grad.clone(), "emb.weight": emb.weight.detach().clone()}


if __name__ == "__main__":
    compute()
