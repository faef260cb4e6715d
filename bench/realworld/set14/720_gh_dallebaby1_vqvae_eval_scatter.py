# source: https://github.com/yashbonde/dall-e-baby/issues/1
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: differs
# dall-e-baby discrete_vae.py (commit a8d505a, the code the report ran): "Error detected in SoftmaxBackward" on
# the training step right after the first ":: Entering Testing Mode". DiscreteVAETrainer.train() puts the model in
# eval mode for testing and only calls `model=model.train()` inside the `save_every` branch, so the next training
# steps run VQVAE_v3.forward's eval branch: `softmax = F.softmax(encoding, dim = 1)` followed by
# `softmax = softmax.scatter_(1, ...)`, which overwrites the output SoftmaxBackward saved.
# Fix (maintainer, commit d17ce0c "fix bug in transformer VAE" series, 2021-02-18, after the report): the trainer
# calls `model.train()` after every test pass ("# ------ testing ends"), so training always takes the
# gumbel-softmax branch. (3c0414e later also replaced the eval-branch scatter_ by F.one_hot.)
# Stand-ins: tiny image tensors instead of the ImageFolder dataset/DataLoader, no tqdm/wandb/matplotlib/checkpoint
# saving, hidden_dims=[8, 16], embedding_dim=6, num_embeddings=10, test_every=1, save_every=None; compute() runs
# 3 training steps and returns the gradients of the last step and the final parameters.
import torch
from torch import nn, einsum
import torch.nn.functional as F


# ----- model
class ResidualLayer(nn.Module):
  def __init__(self, in_channels, out_channels):
    super(ResidualLayer, self).__init__()
    self.resblock = nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.LeakyReLU(inplace=True),
        nn.Conv2d(out_channels, out_channels, kernel_size=1, bias=False),
        nn.BatchNorm2d(out_channels),
    )

  def forward(self, input):
    return input + self.resblock(input)


class QuickGELU(nn.Module):
  # https://github.com/openai/CLIP/blob/main/clip/model.py
  def forward(self, x):
    return x * torch.sigmoid(1.702 * x)


class VQVAE_Encoder_v2(nn.Module):
  def __init__(self, in_channels, hidden_dims, num_embeddings, add_residual=True, **kwargs):
    super().__init__()
    modules = []
    for h_dim in hidden_dims:
      modules.append(nn.Sequential(
        nn.Conv2d(in_channels, out_channels=h_dim, kernel_size=4, stride=2, padding=1),
        nn.BatchNorm2d(h_dim),
        QuickGELU()
      ))
      in_channels = h_dim
      if add_residual:
        modules.append(ResidualLayer(in_channels, in_channels))
        modules.append(QuickGELU())

    modules.append(nn.Sequential(
        nn.Conv2d(in_channels, num_embeddings, kernel_size=1, stride=1),
    ))

    self.encoder = nn.Sequential(*modules)

  def forward(self, x):
    return self.encoder(x)


class VQVAE_Decoder_v2(nn.Module):
  def __init__(self, embedding_dim, hidden_dims, out_channels, add_residual=True, **kwargs):
    super().__init__()
    modules = []
    modules.append(nn.Sequential(
      nn.ConvTranspose2d(embedding_dim, hidden_dims[-1], kernel_size=3, stride=1, padding=1),
      nn.BatchNorm2d(hidden_dims[-1]),
      QuickGELU()
    ))
    hidden_dims = list(reversed(hidden_dims))
    hidden_dims = hidden_dims + [out_channels]  # add the last layer in it

    last = len(hidden_dims) - 1
    for i in range(last):
      if add_residual:
        modules.append(ResidualLayer(hidden_dims[i], hidden_dims[i]))
        modules.append(QuickGELU())

      # we need a tanh activation for the last layer not LReLU
      if i != last-1:
        modules.append(nn.Sequential(
          nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1], kernel_size=4, stride=2, padding=1),
          nn.BatchNorm2d(hidden_dims[i + 1]),
          QuickGELU()
        ))
      else:
        modules.append(nn.Sequential(
          nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1], kernel_size=4, stride=2, padding=1),
          nn.Tanh()
        ))

    self.decoder = nn.Sequential(*modules)

  def forward(self, x):
    return self.decoder(x)


class VQVAE_v3(nn.Module):
  def __init__(self, in_channels, embedding_dim, num_embeddings, hidden_dims=[128, 256], add_residual=True, **kwargs):
    super().__init__()

    self.embedding_dim=embedding_dim
    self.num_embeddings=num_embeddings

    self.encoder = VQVAE_Encoder_v2(
      in_channels=in_channels,
      hidden_dims=hidden_dims,
      embedding_dim=embedding_dim,
      num_embeddings=num_embeddings,
      add_residual=add_residual,
    )
    self.codebook = nn.Embedding(num_embeddings, embedding_dim)
    self.decoder = VQVAE_Decoder_v2(
      embedding_dim=embedding_dim,
      hidden_dims=hidden_dims,
      out_channels=in_channels,
      add_residual=add_residual,
    )

  def forward(self, input, v=False):
    # first step is to pass the image through encoder and get the embeddings
    encoding=self.encoder(input)

    if self.training:
      softmax = F.gumbel_softmax(encoding, tau = 1., hard = True, dim = 1)
    else:
      # during testing we can ignore this added noise and go for standard softmax
      softmax = F.softmax(encoding, dim = 1)

      # we can also improve this by introducing the argmax method, since we know that
      # during testing we do not need the gradient we can get away with it. We simply
      # create the same shape as we would get in the Gumbel distribution
      softmax = softmax.scatter_(1, torch.argmax(softmax, dim = 1).unsqueeze(1), 1)

    # we can also convert the softmax distribution to argmax and identify the final ids
    # to use for language model
    encoding_ids = torch.argmax(softmax, dim = 1).view(encoding.size(0), -1)

    # now just like conventional embedding we tell the model to fill the hard indices
    # with the values from a learnable embedding matrix.
    quantized_inputs = einsum("bdhw,dn->bnhw", softmax, self.codebook.weight)

    # we pass the embedding through decoder that is supposed to recreate the image
    recons=self.decoder(quantized_inputs)
    recons_loss=F.mse_loss(recons, input)
    loss = recons_loss # + vq_loss
    return encoding_ids, loss, recons


# ------- trainer
class DiscreteVAETrainer:
  def __init__(self, model, train, test=None):
    self.model=model
    self.train_dataset=train
    self.test_dataset=test
    self.device="cpu"

  def train(self, bs, n_epochs, lr, test_every=500, save_every=None, **kwargs):
    model=self.model
    train_data=self.train_dataset
    test_data=self.test_dataset
    optim=torch.optim.Adam(model.parameters(), lr=lr)
    gs=0
    train_losses=[-1]
    model.train()
    for epoch in range(n_epochs):
      # ----- train for one complete epoch
      dl = train_data.split(bs)  # stand-in for DataLoader
      for d in dl:
        # train the model
        d=d.to(self.device)
        _, loss, _=model(d)
        loss=loss.mean() # gather from multiple GPUs

        # gradient clipping
        optim.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.5)
        optim.step()
        gs += 1
        train_losses.append(loss.item())

        # ----- test condition
        if test_data != None and gs and gs % test_every == 0:
          print(":: Entering Testing Mode")
          model=model.eval() # convert model to testing mode
          test_loss=[]
          for d in test_data.split(bs * 4):
            d=d.to(self.device)
            with torch.no_grad():
              _, loss, output_img=model(d)
            loss=loss.mean() # gather from multiple GPUs
            test_loss.append(loss.item())

        if gs and save_every and gs % save_every == 0:
          model=model.train()  # convert model back to training mode
    return model, optim


def compute():
  torch.manual_seed(0)
  model = VQVAE_v3(in_channels=3, embedding_dim=6, num_embeddings=10, hidden_dims=[8, 16], add_residual=True)
  train = torch.rand(6, 3, 16, 16) * 2 - 1
  test = torch.rand(4, 3, 16, 16) * 2 - 1
  trainer = DiscreteVAETrainer(model, train, test)
  model, _ = trainer.train(bs=2, n_epochs=1, lr=2e-4, test_every=1, save_every=None)
  out = {}
  for n, p in model.named_parameters():
    out["grad." + n] = p.grad.detach().clone()
    out["param." + n] = p.detach().clone()
  return out
