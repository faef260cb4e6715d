# source: https://github.com/MorvanZhou/PyTorch-Tutorial/pull/91 (see also https://github.com/pytorch/pytorch/issues/39141)
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# 406_GAN: D_loss.backward(retain_graph=True); opt_D.step() updates D's weights in place, then G_loss.backward()
# goes through the same D graph ("[128, 1]], which is output 0 of TBackward, is at version 2; expected version 1").
# numpy is not available in the eval env: artist_works() uses torch RNG instead of np.random.
import torch
import torch.nn as nn

# Hyper Parameters
BATCH_SIZE = 64
LR_G = 0.0001           # learning rate for generator
LR_D = 0.0001           # learning rate for discriminator
N_IDEAS = 5             # think of this as number of ideas for generating an art work (Generator)
ART_COMPONENTS = 15     # it could be total point G can draw in the canvas
PAINT_POINTS = torch.stack([torch.linspace(-1, 1, ART_COMPONENTS) for _ in range(BATCH_SIZE)])


def artist_works():     # painting from the famous artist (real target)
    a = torch.empty(BATCH_SIZE).uniform_(1, 2)[:, None]
    paintings = a * torch.pow(PAINT_POINTS, 2) + (a-1)
    return paintings


def compute():
    torch.manual_seed(1)    # reproducible

    G = nn.Sequential(                      # Generator
        nn.Linear(N_IDEAS, 128),            # random ideas (could from normal distribution)
        nn.ReLU(),
        nn.Linear(128, ART_COMPONENTS),     # making a painting from these random ideas
    )

    D = nn.Sequential(                      # Discriminator
        nn.Linear(ART_COMPONENTS, 128),     # receive art work either from the famous artist or a newbie like G
        nn.ReLU(),
        nn.Linear(128, 1),
        nn.Sigmoid(),                       # tell the probability that the art work is made by artist
    )

    opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
    opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)

    grads = {}
    for step in range(1):
        artist_paintings = artist_works()           # real painting from artist
        G_ideas = torch.randn(BATCH_SIZE, N_IDEAS, requires_grad=True)  # random ideas
        G_paintings = G(G_ideas)                    # fake painting from G (random ideas)

        prob_artist0 = D(artist_paintings)          # D try to increase this prob
        prob_artist1 = D(G_paintings)               # D try to reduce this prob

        D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
        G_loss = torch.mean(torch.log(1. - prob_artist1))

        opt_D.zero_grad()
        D_loss.backward(retain_graph=True)      # reusing computational graph
        grads.update({"D." + n: p.grad.clone() for n, p in D.named_parameters()})
        opt_D.step()

        opt_G.zero_grad()
        G_loss.backward()
        grads.update({"G." + n: p.grad.clone() for n, p in G.named_parameters()})
        opt_G.step()
    return grads


if __name__ == "__main__":
    compute()
