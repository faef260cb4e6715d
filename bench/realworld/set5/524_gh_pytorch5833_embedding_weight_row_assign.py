# source: https://github.com/pytorch/pytorch/issues/5833
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# "[Doc Bug] where is classmethod torch.nn.Embedding.from_pretrained?": without from_pretrained the reporter loads
# pretrained word vectors (torchtext GloVe) into an nn.Embedding row by row, `emb.weight[1] = 0` / emb.weight[i] =
# vector, on the trainable weight -> today "a view of a leaf Variable that requires grad is being used in an in-place
# operation" (0.3: "in-place operations can be only used on variables that don't share storage ..."). The answer in
# the thread: `emb.weight.data[i] = xxx` works.
# Harness: a tiny vocabulary with "pretrained" vectors for some words, the padding row zeroed as in the report,
# then one classification step through the embedding; returns the gradients and the loaded table.
import torch as th
import torch.nn as nn


def compute():
    th.manual_seed(0)
    vocab = ['<unk>', '<pad>', 'the', 'cat', 'sat', 'mat']
    glove = {'the': th.randn(4), 'cat': th.randn(4), 'mat': th.randn(4)}
    emb = th.nn.Embedding(len(vocab), 4)
    emb.weight[1] = 0
    for i, word in enumerate(vocab):
        if word in glove:
            emb.weight[i] = glove[word]
    clf = nn.Linear(4, 2)
    tokens = th.tensor([[2, 3, 4, 1], [2, 5, 1, 1]])
    logits = clf(emb(tokens).mean(1))
    loss = nn.functional.cross_entropy(logits, th.tensor([0, 1]))
    loss.backward()
    return {"emb.weight.grad": emb.weight.grad.clone(), "clf.weight.grad": clf.weight.grad.clone(),
            "clf.bias.grad": clf.bias.grad.clone(), "emb.weight": emb.weight.detach().clone()}


if __name__ == "__main__":
    compute()
