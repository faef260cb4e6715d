# Library module for case 2805 (original).
# speechbrain/speechbrain, speechbrain/lobes/models/Tacotron2.py, read at the parent of commit f79b77f ("fix torch 1.11
# pb with clone()", 2022-05-20). Written anew at small size (not copied): ConvNorm, Postnet (tanh + dropout over
# conv/BatchNorm stacks, the last one linear), Decoder.parse_decoder_outputs (stack -> transpose(0, 1).contiguous() ->
# view -> transpose(1, 2)), the teacher-forced decoding loop's list of frames, Tacotron2.forward (postnet on the decoder's
# mel outputs plus the residual) and Tacotron2.parse_output (its three masked_fill_ calls on the padded frames),
# get_mask_from_lengths and Loss (mel MSE of both outputs plus the gate BCE) follow the source; the guided
# attention term of Loss is left out (its scheduler and weights). Stand-ins: the encoder (an embedding mean-pooled to one
# memory vector) and the attention decoder cell (`decode`: one linear layer from the memory and the previous
# teacher-forced frame to a mel frame and a gate energy; the alignments are uniform over the input), both at small
# size.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNorm(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=None, dilation=1, bias=True,
                 w_init_gain="linear"):
        super().__init__()
        if padding is None:
            padding = int(dilation * (kernel_size - 1) / 2)
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=padding,
                              dilation=dilation, bias=bias)
        nn.init.xavier_uniform_(self.conv.weight, gain=nn.init.calculate_gain(w_init_gain))

    def forward(self, signal):
        return self.conv(signal)


class Postnet(nn.Module):
    def __init__(self, n_mel_channels=80, postnet_embedding_dim=512, postnet_kernel_size=5, postnet_n_convolutions=5):
        super().__init__()
        pad = int((postnet_kernel_size - 1) / 2)
        self.convolutions = nn.ModuleList()
        self.convolutions.append(nn.Sequential(
            ConvNorm(n_mel_channels, postnet_embedding_dim, kernel_size=postnet_kernel_size, padding=pad,
                     w_init_gain="tanh"),
            nn.BatchNorm1d(postnet_embedding_dim)))
        for _ in range(1, postnet_n_convolutions - 1):
            self.convolutions.append(nn.Sequential(
                ConvNorm(postnet_embedding_dim, postnet_embedding_dim, kernel_size=postnet_kernel_size, padding=pad,
                         w_init_gain="tanh"),
                nn.BatchNorm1d(postnet_embedding_dim)))
        self.convolutions.append(nn.Sequential(
            ConvNorm(postnet_embedding_dim, n_mel_channels, kernel_size=postnet_kernel_size, padding=pad,
                     w_init_gain="linear"),
            nn.BatchNorm1d(n_mel_channels)))
        self.n_convs = len(self.convolutions)

    def forward(self, x):
        i = 0
        for conv in self.convolutions:
            if i < self.n_convs - 1:
                x = F.dropout(torch.tanh(conv(x)), 0.5, training=self.training)
            else:
                x = F.dropout(conv(x), 0.5, training=self.training)
            i += 1
        return x


class Decoder(nn.Module):
    def __init__(self, n_mel_channels, encoder_embedding_dim):
        super().__init__()
        self.n_mel_channels = n_mel_channels
        self.proj = nn.Linear(encoder_embedding_dim + n_mel_channels, n_mel_channels + 1)

    def decode(self, decoder_input, memory, memory_lengths):
        out = self.proj(torch.cat([memory, decoder_input], dim=-1))
        mel_output, gate_output = out[:, :self.n_mel_channels], out[:, self.n_mel_channels:]
        attention_weights = torch.ones(memory.size(0), int(memory_lengths.max())) / memory_lengths.unsqueeze(1)
        return mel_output.unsqueeze(1), gate_output, attention_weights

    def parse_decoder_outputs(self, mel_outputs, gate_outputs, alignments):
        # (T_out, B) -> (B, T_out)
        alignments = alignments.transpose(0, 1).contiguous()
        # (T_out, B) -> (B, T_out)
        if gate_outputs.dim() == 1:
            gate_outputs.unsqueeze(0)
        else:
            gate_outputs = gate_outputs.transpose(0, 1).contiguous()
        # (T_out, B, n_mel_channels) -> (B, T_out, n_mel_channels)
        mel_outputs = mel_outputs.transpose(0, 1).contiguous()
        # decouple frames per step
        shape = (mel_outputs.shape[0], -1, self.n_mel_channels)
        mel_outputs = mel_outputs.view(*shape)
        # (B, T_out, n_mel_channels) -> (B, n_mel_channels, T_out)
        mel_outputs = mel_outputs.transpose(1, 2)
        return mel_outputs, gate_outputs, alignments

    def forward(self, memory, decoder_inputs, memory_lengths):
        # teacher forcing: a go frame, then the targets shifted by one
        go_frame = decoder_inputs.new_zeros(1, decoder_inputs.size(0), self.n_mel_channels)
        decoder_inputs = torch.cat((go_frame, decoder_inputs.permute(2, 0, 1)), dim=0)
        mel_outputs, gate_outputs, alignments = [], [], []
        while len(mel_outputs) < decoder_inputs.size(0) - 1:
            decoder_input = decoder_inputs[len(mel_outputs)]
            mel_output, gate_output, attention_weights = self.decode(decoder_input, memory, memory_lengths)
            mel_outputs += [mel_output.squeeze(1)]
            gate_outputs += [gate_output.squeeze()]
            alignments += [attention_weights]
        mel_outputs, gate_outputs, alignments = self.parse_decoder_outputs(
            torch.stack(mel_outputs), torch.stack(gate_outputs), torch.stack(alignments))
        return mel_outputs, gate_outputs, alignments


def get_mask_from_lengths(lengths, max_len=None):
    if max_len is None:
        max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len, device=lengths.device, dtype=lengths.dtype)
    mask = (ids < lengths.unsqueeze(1)).byte()
    mask = torch.le(mask, 0)
    return mask


class Tacotron2(nn.Module):
    def __init__(self, mask_padding=True, n_mel_channels=8, n_symbols=20, symbols_embedding_dim=16,
                 postnet_embedding_dim=16, postnet_kernel_size=5, postnet_n_convolutions=3):
        super().__init__()
        self.mask_padding = mask_padding
        self.n_mel_channels = n_mel_channels
        self.embedding = nn.Embedding(n_symbols, symbols_embedding_dim)
        self.decoder = Decoder(n_mel_channels, symbols_embedding_dim)
        self.postnet = Postnet(n_mel_channels, postnet_embedding_dim, postnet_kernel_size, postnet_n_convolutions)

    def encoder(self, embedded_inputs, input_lengths):
        return embedded_inputs.sum(-1) / input_lengths.unsqueeze(1)

    def parse_output(self, outputs, output_lengths, alignments_dim=None):
        mel_outputs, mel_outputs_postnet, gate_outputs, alignments = outputs
        if self.mask_padding and output_lengths is not None:
            mask = get_mask_from_lengths(output_lengths, max_len=mel_outputs.size(-1))
            mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
            mask = mask.permute(1, 0, 2)

            mel_outputs.masked_fill_(mask, 0.0)
            mel_outputs_postnet.masked_fill_(mask, 0.0)
            gate_outputs.masked_fill_(mask[:, 0, :], 1e3)  # gate energies
        if alignments_dim is not None:
            alignments = F.pad(alignments, (0, alignments_dim - alignments.size(-1)))
        return mel_outputs, mel_outputs_postnet, gate_outputs, alignments

    def forward(self, inputs, alignments_dim=None):
        inputs, input_lengths, targets, max_len, output_lengths = inputs
        input_lengths, output_lengths = input_lengths.data, output_lengths.data

        embedded_inputs = self.embedding(inputs).transpose(1, 2)
        encoder_outputs = self.encoder(embedded_inputs, input_lengths)
        mel_outputs, gate_outputs, alignments = self.decoder(encoder_outputs, targets, memory_lengths=input_lengths)

        mel_outputs_postnet = self.postnet(mel_outputs)
        mel_outputs_postnet = mel_outputs + mel_outputs_postnet

        return self.parse_output([mel_outputs, mel_outputs_postnet, gate_outputs, alignments], output_lengths,
                                 alignments_dim)


class Loss(nn.Module):
    def __init__(self, gate_loss_weight=1.0):
        super().__init__()
        self.gate_loss_weight = gate_loss_weight
        self.mse_loss = nn.MSELoss()
        self.bce_loss = nn.BCEWithLogitsLoss()

    def forward(self, model_output, targets):
        mel_target, gate_target = targets[0], targets[1]
        mel_target.requires_grad = False
        gate_target.requires_grad = False
        gate_target = gate_target.view(-1, 1)
        mel_out, mel_out_postnet, gate_out, alignments = model_output
        gate_out = gate_out.view(-1, 1)
        mel_loss = self.mse_loss(mel_out, mel_target) + self.mse_loss(mel_out_postnet, mel_target)
        gate_loss = self.gate_loss_weight * self.bce_loss(gate_out, gate_target)
        return mel_loss + gate_loss
