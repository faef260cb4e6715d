# reference fix for 725: run the generation under torch.no_grad() (thread fix)
# GPT2-chitchat issue #57 "python interact_mmi.py报错" (also posted as microsoft/DialoGPT#57 by the same user):
# interact_mmi.py fails at
#     for next_token_logit in next_token_logits:
#         next_token_logit[tokenizer.convert_tokens_to_ids('[UNK]')] = -float('Inf')
# with "Output 1 of UnbindBackward is a view and its base or another view of its base has been modified inplace":
# the dialogue model runs with grad enabled, so iterating over the logits yields unbind() views of a tensor that
# requires grad, and the [UNK] logit is overwritten in place in each of them.
# Fix (thread, KaishuaiXu): run the generation under `with torch.no_grad():` (michael-destiny's alternative:
# `next_token_logits = outputs[0][:, -1, :].clone().detach()`); the reference uses torch.no_grad().
# Stand-ins: GPT2LMHeadModel is a tiny embedding + GRU + LM-head model returning a tuple (logits,) or
# (loss, logits); BertTokenizer is a 12-token vocabulary; one user turn, no console/input/sample file;
# batch_size=3, max_len=4, topk=8, topp=0, temperature=1, repetition_penalty=1.0 (the script's defaults except
# batch_size/max_len). compute() returns the generated candidate tokens, the chosen response and the MMI losses.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Args:
    batch_size = 3
    max_len = 4
    max_history_len = 5
    topk = 8
    topp = 0
    temperature = 1
    repetition_penalty = 1.0
    debug = False


class BertTokenizer:
    # stand-in vocabulary
    vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '你', '好', '吗', '我', '很', '是', '的', '啊']

    def __init__(self):
        self.cls_token_id = 2
        self.sep_token_id = 3

    def convert_tokens_to_ids(self, tok):
        return self.vocab.index(tok)

    def encode(self, text):
        return [self.vocab.index(c) for c in text]


class GPT2LMHeadModel(nn.Module):
    # stand-in: returns (logits,) or (loss, logits) like transformers' tuple outputs
    def __init__(self, vocab=12, d=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, labels=None):
        squeeze = input_ids.dim() == 1
        if squeeze:
            input_ids = input_ids.unsqueeze(0)
        h, _ = self.rnn(self.wte(input_ids))
        logits = self.lm_head(h)
        if labels is None:
            return (logits,)
        if squeeze:
            labels = labels.unsqueeze(0)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        return (loss, logits)


def top_k_top_p_filtering(logits, top_k=0, top_p=0.0, filter_value=-float('Inf')):
    """ Filter a distribution of logits using top-k and/or nucleus (top-p) filtering
    """
    assert logits.dim() == 2
    top_k = min(top_k, logits[0].size(-1))  # Safety check
    if top_k > 0:
        # Remove all tokens with a probability less than the last token of the top-k
        for logit in logits:
            indices_to_remove = logit < torch.topk(logit, top_k)[0][..., -1, None]
            logit[indices_to_remove] = filter_value

    if top_p > 0.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True, dim=-1)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)

        # Remove tokens with cumulative probability above the threshold
        sorted_indices_to_remove = cumulative_probs > top_p
        # Shift the indices to the right to keep also the first token above the threshold
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0
        for index, logit in enumerate(logits):
            indices_to_remove = sorted_indices[index][sorted_indices_to_remove[index]]
            logit[indices_to_remove] = filter_value
    return logits


def main(args, tokenizer, dialogue_model, mmi_model, text, device='cpu'):
    history = []
    history.append(tokenizer.encode(text))
    input_ids = [tokenizer.cls_token_id]  # 每个input以[CLS]为开头
    for history_id, history_utr in enumerate(history[-args.max_history_len:]):
        input_ids.extend(history_utr)
        input_ids.append(tokenizer.sep_token_id)
    input_ids = [copy.deepcopy(input_ids) for _ in range(args.batch_size)]

    curr_input_tensors = torch.tensor(input_ids).long().to(device)
    generated = []
    finish_set = set()
    for _ in range(args.max_len):
        outputs = dialogue_model(input_ids=curr_input_tensors)
        next_token_logits = outputs[0][:, -1, :]
        for index in range(args.batch_size):
            for token_id in set([token_ids[index] for token_ids in generated]):
                next_token_logits[index][token_id] /= args.repetition_penalty
        next_token_logits = next_token_logits / args.temperature
        # 对于[UNK]的概率设为无穷小，也就是说模型的预测结果不可能是[UNK]这个token
        for next_token_logit in next_token_logits:
            next_token_logit[tokenizer.convert_tokens_to_ids('[UNK]')] = -float('Inf')
        filtered_logits = top_k_top_p_filtering(next_token_logits, top_k=args.topk, top_p=args.topp)
        next_token = torch.multinomial(F.softmax(filtered_logits, dim=-1), num_samples=1)
        for index, token_id in enumerate(next_token[:, 0]):
            if token_id == tokenizer.sep_token_id:
                finish_set.add(index)
        finish_flag = True
        for index in range(args.batch_size):
            if index not in finish_set:
                finish_flag = False
                break
        if finish_flag:
            break
        generated.append([token.item() for token in next_token[:, 0]])
        curr_input_tensors = torch.cat((curr_input_tensors, next_token), dim=-1)
    candidate_responses = []
    for batch_index in range(args.batch_size):
        response = []
        for token_index in range(len(generated)):
            if generated[token_index][batch_index] != tokenizer.sep_token_id:
                response.append(generated[token_index][batch_index])
            else:
                break
        candidate_responses.append(response)

    min_loss = float('Inf')
    best_response = ""
    losses = []
    for response in candidate_responses:
        mmi_input_id = [tokenizer.cls_token_id]
        mmi_input_id.extend(response)
        mmi_input_id.append(tokenizer.sep_token_id)
        for history_utr in reversed(history[-args.max_history_len:]):
            mmi_input_id.extend(history_utr)
            mmi_input_id.append(tokenizer.sep_token_id)
        mmi_input_tensor = torch.tensor(mmi_input_id).long().to(device)
        out = mmi_model(input_ids=mmi_input_tensor, labels=mmi_input_tensor)
        loss = out[0].item()
        losses.append(loss)
        if loss < min_loss:
            best_response = response
            min_loss = loss
    return generated, best_response, losses


def compute():
    torch.manual_seed(0)
    args = Args()
    tokenizer = BertTokenizer()
    dialogue_model = GPT2LMHeadModel()
    dialogue_model.eval()
    mmi_model = GPT2LMHeadModel()
    mmi_model.eval()
    with torch.no_grad():
        generated, best_response, losses = main(args, tokenizer, dialogue_model, mmi_model, "你好吗")
    return {
        "generated": torch.tensor(generated, dtype=torch.long),
        "best_response": torch.tensor(best_response, dtype=torch.long),
        "mmi_losses": torch.tensor(losses),
    }
