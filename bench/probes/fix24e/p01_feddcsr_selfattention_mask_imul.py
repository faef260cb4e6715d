# source: https://github.com/orion-orion/FedDCSR/issues/3
# error: A
# FedDCSR's VGSAN encoder runs two SelfAttention stacks (mu, logvar) on the same sequence embedding; each
# SelfAttention.forward starts with `seqs *= ~timeline_mask.unsqueeze(-1)` on its input, so the logvar stack
# masks in place the tensor the mu stack's first LayerNorm (and attention) saved. The user's fix:
# `seqs = seqs * (~timeline_mask.unsqueeze(-1))`. Stand-ins: a config object, tiny sizes, no GNN branch.
import torch
import torch.nn as nn


class config:
    hidden_size = 8
    num_heads = 2
    num_blocks = 2
    dropout_rate = 0.0


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super(PointWiseFeedForward, self).__init__()
        self.conv1 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = nn.Dropout(p=dropout_rate)
        self.conv2 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = torch.relu(self.dropout1(self.conv1(inputs.transpose(-1, -2))))
        outputs = self.dropout2(self.conv2(outputs))
        outputs = outputs.transpose(-1, -2)
        outputs += inputs
        return outputs


class SelfAttention(nn.Module):
    def __init__(self, num_items):
        super(SelfAttention, self).__init__()
        self.num_items = num_items
        self.attention_layernorms = nn.ModuleList()
        self.attention_layers = nn.ModuleList()
        self.forward_layernorms = nn.ModuleList()
        self.forward_layers = nn.ModuleList()
        self.last_layernorm = nn.LayerNorm(config.hidden_size, eps=1e-8)
        for _ in range(config.num_blocks):
            self.attention_layernorms.append(nn.LayerNorm(config.hidden_size, eps=1e-8))
            self.attention_layers.append(nn.MultiheadAttention(config.hidden_size, config.num_heads, config.dropout_rate))
            self.forward_layernorms.append(nn.LayerNorm(config.hidden_size, eps=1e-8))
            self.forward_layers.append(PointWiseFeedForward(config.hidden_size, config.dropout_rate))

    def forward(self, seqs, seqs_data):
        timeline_mask = torch.BoolTensor(seqs_data.cpu() == self.num_items)
        seqs *= ~timeline_mask.unsqueeze(-1)
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool))
        for i in range(len(self.attention_layers)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attention_layernorms[i](seqs)
            mha_outputs, _ = self.attention_layers[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = Q + mha_outputs
            seqs = torch.transpose(seqs, 0, 1)
            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
            seqs *= ~timeline_mask.unsqueeze(-1)
        return self.last_layernorm(seqs)


class Encoder(nn.Module):
    def __init__(self, num_items):
        super(Encoder, self).__init__()
        self.encoder_mu = SelfAttention(num_items)
        self.encoder_logvar = SelfAttention(num_items)

    def forward(self, seqs, seqs_data):
        mu = self.encoder_mu(seqs, seqs_data)
        logvar = self.encoder_logvar(seqs, seqs_data)
        return mu, logvar


class VGSAN(nn.Module):
    def __init__(self, num_items, max_seq_len=6):
        super(VGSAN, self).__init__()
        self.item_emb = nn.Embedding(num_items + 1, config.hidden_size, padding_idx=num_items)
        self.pos_emb = nn.Embedding(max_seq_len, config.hidden_size)
        self.encoder = Encoder(num_items)
        self.linear = nn.Linear(config.hidden_size, num_items)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.0)

    def add_position_embedding(self, seqs, seq_embeddings):
        position_ids = torch.arange(seqs.size(1), dtype=torch.long).unsqueeze(0).expand_as(seqs)
        seq_embeddings += self.pos_emb(position_ids)
        seq_embeddings = self.LayerNorm(seq_embeddings)
        return self.dropout(seq_embeddings)

    def forward(self, seqs):
        seqs_emb = self.item_emb(seqs)
        seqs_emb *= self.item_emb.embedding_dim ** 0.5
        seqs_emb = self.add_position_embedding(seqs, seqs_emb)
        mu, logvar = self.encoder(seqs_emb, seqs)
        z = mu + torch.exp(0.5 * logvar)
        return self.linear(z)


def compute():
    torch.manual_seed(0)
    model = VGSAN(num_items=10)
    seqs = torch.tensor([[10, 10, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]])
    loss = model(seqs).pow(2).mean()
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
