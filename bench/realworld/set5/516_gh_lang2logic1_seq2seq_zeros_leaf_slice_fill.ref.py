# reference fix for 516 (mansoor49 in the issue): fill .clone()s of the requires_grad zeros instead of the leaves.
import argparse
import random

import torch
import torch.nn as nn
import torch.nn.init as init
import torch.nn.functional as F
from torch import optim
import warnings

warnings.filterwarnings("ignore")


class LSTM(nn.Module):
    def __init__(self, opt):
        super(LSTM, self).__init__()
        self.opt = opt
        self.i2h = nn.Linear(opt.rnn_size, 4 * opt.rnn_size)
        self.h2h = nn.Linear(opt.rnn_size, 4*opt.rnn_size)
        if opt.dropoutrec > 0:
            self.dropout = nn.Dropout(opt.droputrec)

    def forward(self, x, prev_c, prev_h):
        gates = self.i2h(x) \
            + self.h2h(prev_h)
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = F.sigmoid(ingate)
        forgetgate = F.sigmoid(forgetgate)
        cellgate = F.tanh(cellgate)
        outgate = F.sigmoid(outgate)
        if self.opt.dropoutrec > 0:
            cellgate = self.dropout(cellgate)
        cy = (forgetgate * prev_c) + (ingate * cellgate)
        hy = outgate * F.tanh(cy)  # n_b x hidden_dim
        return cy, hy

class RNN(nn.Module):
    def __init__(self, opt, input_size):
        super(RNN, self).__init__()
        self.opt = opt
        self.hidden_size = opt.rnn_size
        self.embedding = nn.Embedding(input_size, self.hidden_size)
        self.lstm = LSTM(self.opt)
        if opt.dropout > 0:
            self.dropout = nn.Dropout(opt.dropout)

    def forward(self, input_src, prev_c, prev_h):
        src_emb = self.embedding(input_src) # batch_size x src_length x emb_size
        if self.opt.dropout > 0:
            src_emb = self.dropout(src_emb)
        prev_cy, prev_hy = self.lstm(src_emb, prev_c, prev_h)
        return prev_cy, prev_hy

class AttnUnit(nn.Module):
    def __init__(self, opt, output_size):
        super(AttnUnit, self).__init__()
        self.opt = opt
        self.hidden_size = opt.rnn_size

        self.linear_att = nn.Linear(2*self.hidden_size, self.hidden_size)
        self.linear_out = nn.Linear(self.hidden_size, output_size)
        if opt.dropout > 0:
            self.dropout = nn.Dropout(opt.dropout)

        self.softmax = nn.Softmax(dim=1)
        self.logsoftmax = nn.LogSoftmax(dim=1)

    def forward(self, enc_s_top, dec_s_top):
        # (batch*length*hidden) * (batch * hidden * 1) = (batch*length*1)
        #print("enc_s_top: {}\n".format(enc_s_top.size()))
        #print("dec_s_top: {}\n".format(dec_s_top.size()))
        dot = torch.bmm(enc_s_top, dec_s_top.unsqueeze(2))
        #dot = torch.legacy.nn.MM()((enc_s_top, torch.legacy.nn.View(opt.rnn_size,1).setNumInputDims(0)(dec_s_top)))
        #print("dot size: {}\n".format(dot.size()))
        attention = self.softmax(dot.squeeze(2)).unsqueeze(2)
        #print("attention size: {}\n".format(attention.size()))

        #(batch*length*H)^T * (batch*length*1) = (batch*H*1)
        enc_attention = torch.bmm(enc_s_top.permute(0,2,1), attention)
        hid = F.tanh(self.linear_att(torch.cat((enc_attention.squeeze(2),dec_s_top), 1)))
        h2y_in = hid
        if self.opt.dropout > 0:
            h2y_in = self.dropout(h2y_in)
        h2y = self.linear_out(h2y_in)
        pred = self.logsoftmax(h2y)
        return pred

def eval_training(opt, train_loader, encoder, decoder, attention_decoder, encoder_optimizer, decoder_optimizer, attention_decoder_optimizer, criterion, using_gpu, form_manager):
    # encode, decode, backward, return loss
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    attention_decoder_optimizer.zero_grad()
    enc_batch, enc_len_batch, dec_batch = train_loader.random_batch()
    # do not predict after <E>
    enc_max_len = enc_batch.size(1)
    # because you need to compare with the next token!!
    dec_max_len = dec_batch.size(1) -1

    xa = torch.zeros((enc_batch.size(0), enc_max_len, encoder.hidden_size), requires_grad=True)
    enc_outputs = xa.clone()
    if using_gpu:
        enc_outputs = enc_outputs.cuda()

    enc_s = {}
    for j in range(opt.enc_seq_length + 1):
        enc_s[j] = {}

    dec_s = {}
    for j in range(opt.dec_seq_length + 1):
        dec_s[j] = {}

    for i in range(1, 3):
        xb = torch.zeros((opt.batch_size, opt.rnn_size), dtype=torch.float, requires_grad=True)
        xc = torch.zeros((opt.batch_size, opt.rnn_size), dtype=torch.float, requires_grad=True)
        enc_s[0][i] = xb.clone()
        dec_s[0][i] = xc.clone()

    for i in range(enc_max_len):
        enc_s[i+1][1], enc_s[i+1][2] = encoder(enc_batch[:,i], enc_s[i][1], enc_s[i][2])
        enc_outputs[:, i, :] = enc_s[i+1][2]

    loss = 0

    for i in range(opt.batch_size):
        dec_s[0][1][i, :] = enc_s[enc_len_batch[i]][1][i, :]
        dec_s[0][2][i, :] = enc_s[enc_len_batch[i]][2][i, :]

    for i in range(dec_max_len):
        dec_s[i+1][1], dec_s[i+1][2] = decoder(dec_batch[:,i], dec_s[i][1], dec_s[i][2])
        pred = attention_decoder(enc_outputs, dec_s[i+1][2])
        loss += criterion(pred, dec_batch[:,i+1])

    loss = loss / opt.batch_size
    loss.backward()
    torch.nn.utils.clip_grad_value_(encoder.parameters(),opt.grad_clip)
    torch.nn.utils.clip_grad_value_(decoder.parameters(),opt.grad_clip)
    torch.nn.utils.clip_grad_value_(attention_decoder.parameters(),opt.grad_clip)
    encoder_optimizer.step()
    decoder_optimizer.step()
    attention_decoder_optimizer.step()
    return loss


class MinibatchLoader:
    def __init__(self, opt, enc_vocab, dec_vocab):
        self.opt, self.enc_vocab, self.dec_vocab = opt, enc_vocab, dec_vocab

    def random_batch(self):
        enc_batch = torch.randint(1, self.enc_vocab, (self.opt.batch_size, 5))
        enc_len_batch = [5, 4, 3][:self.opt.batch_size]
        dec_batch = torch.randint(1, self.dec_vocab, (self.opt.batch_size, 4))
        return enc_batch, enc_len_batch, dec_batch


def compute():
    torch.manual_seed(0)
    opt = argparse.Namespace(rnn_size=8, dropoutrec=0, dropout=0, batch_size=3, enc_seq_length=5,
                             dec_seq_length=4, grad_clip=5, init_weight=0.08, learning_rate=0.01, decay_rate=0.95)
    encoder = RNN(opt, 11)
    decoder = RNN(opt, 9)
    attention_decoder = AttnUnit(opt, 9)
    for net in (encoder, decoder, attention_decoder):
        for name, param in net.named_parameters():
            if param.requires_grad:
                init.uniform_(param, -opt.init_weight, opt.init_weight)
    train_loader = MinibatchLoader(opt, 11, 9)
    encoder_optimizer = optim.RMSprop(encoder.parameters(), lr=opt.learning_rate, alpha=opt.decay_rate)
    decoder_optimizer = optim.RMSprop(decoder.parameters(), lr=opt.learning_rate, alpha=opt.decay_rate)
    attention_decoder_optimizer = optim.RMSprop(attention_decoder.parameters(), lr=opt.learning_rate, alpha=opt.decay_rate)
    criterion = nn.NLLLoss(reduction='sum', ignore_index=0)
    out = {}
    for step in range(2):
        eval_training(opt, train_loader, encoder, decoder, attention_decoder, encoder_optimizer, decoder_optimizer,
                      attention_decoder_optimizer, criterion, False, None)
        for name, net in (("encoder", encoder), ("decoder", decoder), ("attn", attention_decoder)):
            out.update({"step%d.%s.%s" % (step, name, n): p.grad.clone() for n, p in net.named_parameters()})
    for name, net in (("encoder", encoder), ("decoder", decoder), ("attn", attention_decoder)):
        out.update({"final.%s.%s" % (name, n): p.detach().clone() for n, p in net.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
