# reference fix for 717: the fix described in the thread, optim_G.step() after the discriminator loss's backward.
import torch
import torch.nn as nn
from torch.autograd import Variable
import torch.nn.functional as F

Tensor = torch.FloatTensor


def calc_genb_loss(logits, bias, labels):
    gen_grad = torch.clamp(2 * labels * torch.sigmoid(-2 * labels * bias.detach()), 0, 1)
    loss = F.binary_cross_entropy_with_logits(logits, gen_grad)
    loss *= labels.size(1)
    return loss


class VQAModel(nn.Module):
    # stand-in for base_model.BaseModel and GenB: image feature + question vector -> answer logits
    def __init__(self, v_dim, q_dim, num_hid, num_ans):
        super().__init__()
        self.v_proj = nn.Linear(v_dim, num_hid)
        self.q_proj = nn.Linear(q_dim, num_hid)
        self.classifier = nn.Linear(num_hid, num_ans)

    def forward(self, v, q, gen=True):
        joint = torch.relu(self.v_proj(v.mean(1))) * torch.relu(self.q_proj(q))
        return self.classifier(joint)


class Discriminator(nn.Module):
    def __init__(self, num_hid, num_ans):
        super(Discriminator, self).__init__()
        self.net = nn.Sequential(
            nn.Linear(num_ans, num_hid),
            nn.ReLU(True),
            nn.Linear(num_hid, num_hid//2),
            nn.ReLU(True),
            nn.Linear(num_hid//2, num_hid//4),
            nn.ReLU(True),
            nn.Linear(num_hid//4, 1),
            nn.Sigmoid(),
            )

    def forward(self, z):
        return self.net(z)


def train_step(model, genb, discriminator, batch, optim, optim_G, optim_D):
    kld = nn.KLDivLoss(reduction='batchmean')
    bce = nn.BCELoss()
    v, q, a = batch

    #########################################
    v = Variable(v).requires_grad_()
    q = Variable(q)
    a = Variable(a)
    valid = Variable(Tensor(v.size(0), 1).fill_(1.0), requires_grad=False)
    fake = Variable(Tensor(v.size(0), 1).fill_(0.0), requires_grad=False)
    #########################################

    # get model output
    optim.zero_grad()
    pred = model(v, q)

    # train genb
    optim_G.zero_grad()
    optim_D.zero_grad()

    pred_g = genb(v, q, gen=True)
    g_loss = F.binary_cross_entropy_with_logits(pred_g, a, reduction='none').mean()
    g_loss *= a.size(1)

    vae_preds = discriminator(pred_g)
    main_preds = discriminator(pred)

    g_distill = kld(pred_g, pred.detach())
    dsc_loss = bce(vae_preds, valid) + bce(main_preds, valid)

    g_loss += dsc_loss + g_distill*5
    g_loss.backward(retain_graph=True)
    nn.utils.clip_grad_norm_(genb.parameters(), 0.25)

    # train the discriminator
    dsc_loss = bce(vae_preds, fake) + bce(main_preds, valid)
    dsc_loss.backward(retain_graph=True)
    optim_G.step()
    # done training genb
    optim_D.step()
    # done training the discriminator

    # use genb to train the robust model
    genb.train(False)
    pred_g = genb(v, q, gen=False)

    genb_loss = calc_genb_loss(pred, pred_g, a)
    genb_loss.backward()

    nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    optim.step()

    genb.train(True)


def compute():
    torch.manual_seed(0)
    num_ans = 6
    model = VQAModel(8, 5, 16, num_ans)
    genb = VQAModel(8, 5, 16, num_ans)
    discriminator = Discriminator(32, num_ans)
    optim = torch.optim.Adamax(filter(lambda p: p.requires_grad, model.parameters()), lr=0.001)
    optim_G = torch.optim.Adamax(filter(lambda p: p.requires_grad, genb.parameters()), lr=0.001)
    optim_D = torch.optim.Adamax(filter(lambda p: p.requires_grad, discriminator.parameters()), lr=0.001)
    v = torch.randn(4, 3, 8)
    q = torch.randn(4, 5)
    a = (torch.rand(4, num_ans) > 0.7).float()
    train_step(model, genb, discriminator, (v, q, a), optim, optim_G, optim_D)
    out = {"model." + n: p.detach().clone() for n, p in model.named_parameters()}
    out.update({"genb." + n: p.detach().clone() for n, p in genb.named_parameters()})
    out.update({"discriminator." + n: p.detach().clone() for n, p in discriminator.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
