# reference fix for 808: PR #15, the generator loss's backward and steps first, the discriminator's after.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiOptimizer:
    def __init__(self, optimizers={}):
        self.optimizers = optimizers
        self.keys = list(optimizers.keys())

    def step(self, key=None):
        if key is not None:
            self.optimizers[key].step()
        else:
            _ = [self.optimizers[k].step() for k in self.keys]

    def zero_grad(self, key=None):
        if key is not None:
            self.optimizers[key].zero_grad()
        else:
            _ = [self.optimizers[k].zero_grad() for k in self.keys]


class WavLMDiscriminator(nn.Module):
    def __init__(self, slm_hidden=8, initial_channel=8):
        super().__init__()
        self.pre = nn.Conv1d(slm_hidden, initial_channel, 1, 1, padding=0)
        self.convs = nn.ModuleList([nn.Conv1d(initial_channel, initial_channel * 2, 5, 1, padding=2)])
        self.conv_post = nn.Conv1d(initial_channel * 2, 1, 3, 1, padding=1)
        self.head = nn.Conv1d(1, 1, 1)

    def forward(self, x):
        x = self.pre(x)
        for layer in self.convs:
            x = F.leaky_relu(layer(x), 0.1)
        x = self.conv_post(x)
        x = self.head(x)
        return torch.flatten(x, 1, -1)


class WavLMLoss(nn.Module):
    def __init__(self, wavlm, wd):
        super().__init__()
        self.wavlm = wavlm
        self.wd = wd

    def generator(self, y_rec):
        y_rec_embeddings = self.wavlm(y_rec)
        y_df_hat_g = self.wd(y_rec_embeddings)
        loss_gen = torch.mean((1 - y_df_hat_g) ** 2)
        return loss_gen

    def discriminator(self, y, y_rec):
        with torch.no_grad():
            y_embeddings = self.wavlm(y)
            y_rec_embeddings = self.wavlm(y_rec)
        y_d_rs = self.wd(y_embeddings)
        y_d_gs = self.wd(y_rec_embeddings)
        r_loss = torch.mean((1 - y_d_rs) ** 2)
        g_loss = torch.mean((y_d_gs) ** 2)
        return r_loss + g_loss


class SLMAdversarialLoss(nn.Module):
    """stand-in for Modules/slmadv.py: synthesise speech from the predictor's output, return the D and G losses"""

    def __init__(self, predictor, decoder, wl):
        super().__init__()
        self.predictor = predictor
        self.decoder = decoder
        self.wl = wl

    def forward(self, text_feats, wav):
        y_pred = self.decoder(self.predictor(text_feats))
        d_loss_slm = self.wl.discriminator(wav.detach(), y_pred.detach()).mean()
        loss_gen_lm = self.wl.generator(y_pred).mean()
        return d_loss_slm, loss_gen_lm, y_pred


def compute():
    torch.manual_seed(0)
    predictor = nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.Tanh())
    decoder = nn.Conv1d(8, 1, 3, padding=1)
    wavlm = nn.Conv1d(1, 8, 5, padding=2)
    for p in wavlm.parameters():
        p.requires_grad_(False)
    wd = WavLMDiscriminator()
    slmadv = SLMAdversarialLoss(predictor, decoder, WavLMLoss(wavlm, wd))
    optimizer = MultiOptimizer({
        'predictor': torch.optim.AdamW(predictor.parameters(), lr=1e-3),
        'decoder': torch.optim.AdamW(decoder.parameters(), lr=1e-3),
        'wd': torch.optim.AdamW(wd.parameters(), lr=1e-3, betas=(0.0, 0.99)),
    })
    for it in range(2):
        text_feats = torch.randn(2, 4, 16)
        wav = torch.randn(2, 1, 16)
        slm_out = slmadv(text_feats, wav)
        if slm_out is not None:
            d_loss_slm, loss_gen_lm, y_pred = slm_out

            # SLM generator loss
            optimizer.zero_grad()
            loss_gen_lm.backward()
            optimizer.step('predictor')
            optimizer.step('decoder')

            # SLM discriminator loss
            if d_loss_slm != 0:
                optimizer.zero_grad()
                d_loss_slm.backward(retain_graph=True)
                optimizer.step('wd')
    out = {}
    for tag, m in [("predictor", predictor), ("decoder", decoder), ("wd", wd)]:
        out.update({tag + "." + n: p.detach().clone() for n, p in m.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
