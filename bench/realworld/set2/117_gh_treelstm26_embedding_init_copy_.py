# source: https://github.com/dasguptar/treelstm.pytorch/pull/26
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# After the PyTorch 0.4 port (all `.data` removed), SimilarityTreeLSTM.__init__ loads the pretrained GloVe vectors
# with `self.emb.weight.copy_(init_emb)`. When the embedding is not frozen the weight is a leaf that requires grad,
# so the in-place copy raises while the model is built. Vocabulary/trees/embeddings are tiny synthetic stand-ins.
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0


class Tree(object):
    def __init__(self, idx):
        self.parent = None
        self.num_children = 0
        self.children = list()
        self.idx = idx

    def add_child(self, child):
        child.parent = self
        self.num_children += 1
        self.children.append(child)


# module for childsumtreelstm
class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super(ChildSumTreeLSTM, self).__init__()
        self.in_dim = in_dim
        self.mem_dim = mem_dim
        self.ioux = nn.Linear(self.in_dim, 3 * self.mem_dim)
        self.iouh = nn.Linear(self.mem_dim, 3 * self.mem_dim)
        self.fx = nn.Linear(self.in_dim, self.mem_dim)
        self.fh = nn.Linear(self.mem_dim, self.mem_dim)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)

        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)

        f = torch.sigmoid(
            self.fh(child_h) +
            self.fx(inputs).repeat(len(child_h), 1)
        )
        fc = torch.mul(f, child_c)

        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, torch.tanh(c))
        return c, h

    def forward(self, tree, inputs):
        for idx in range(tree.num_children):
            self.forward(tree.children[idx], inputs)

        if tree.num_children == 0:
            child_c = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
            child_h = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
        else:
            child_c, child_h = zip(* map(lambda x: x.state, tree.children))
            child_c, child_h = torch.cat(child_c, dim=0), torch.cat(child_h, dim=0)

        tree.state = self.node_forward(inputs[tree.idx], child_c, child_h)
        return tree.state


# module for distance-angle similarity
class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super(Similarity, self).__init__()
        self.mem_dim = mem_dim
        self.hidden_dim = hidden_dim
        self.num_classes = num_classes
        self.wh = nn.Linear(2 * self.mem_dim, self.hidden_dim)
        self.wp = nn.Linear(self.hidden_dim, self.num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)

        out = torch.sigmoid(self.wh(vec_dist))
        out = F.log_softmax(self.wp(out), dim=1)
        return out


# putting the whole model together
class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, hidden_dim, num_classes, sparsity, freeze, init_emb):
        super(SimilarityTreeLSTM, self).__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=PAD, sparse=sparsity)
        self.emb.weight.copy_(init_emb)
        if freeze:
            self.emb.weight.requires_grad = False
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def forward(self, ltree, linputs, rtree, rinputs):
        linputs = self.emb(linputs)
        rinputs = self.emb(rinputs)
        lstate, lhidden = self.childsumtreelstm(ltree, linputs)
        rstate, rhidden = self.childsumtreelstm(rtree, rinputs)
        output = self.similarity(lhidden, rhidden)
        return output


def make_tree():
    root = Tree(0)
    left, right = Tree(1), Tree(2)
    root.add_child(left)
    root.add_child(right)
    right.add_child(Tree(3))
    return root


def compute():
    torch.manual_seed(0)
    vocab_size, in_dim, mem_dim, hidden_dim, num_classes = 12, 6, 5, 4, 5
    emb = torch.randn(vocab_size, in_dim)   # stand-in for the GloVe vectors loaded in main.py
    emb[PAD].zero_()
    model = SimilarityTreeLSTM(vocab_size, in_dim, mem_dim, hidden_dim, num_classes,
                               sparsity=False, freeze=False, init_emb=emb)
    criterion = nn.KLDivLoss(reduction='batchmean')
    linput, rinput = torch.randint(1, vocab_size, (4,)), torch.randint(1, vocab_size, (4,))
    target = torch.softmax(torch.randn(1, num_classes), dim=1)
    output = model(make_tree(), linput, make_tree(), rinput)
    loss = criterion(output, target)
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
