# Miniature of transformers' BertForQuestionAnswering (transformers 3.x/4.x of 2021): the QA head and its loss are
# as in modeling_bert.py; the BERT encoder is a one-layer nn.TransformerEncoder stand-in.
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss


class BertConfig:
    def __init__(self, vocab_size=30, hidden_size=16, hidden_dropout_prob=0.1, num_labels=2):
        self.vocab_size, self.hidden_size = vocab_size, hidden_size
        self.hidden_dropout_prob, self.num_labels = hidden_dropout_prob, num_labels


class BertModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(2, config.hidden_size)
        layer = nn.TransformerEncoderLayer(config.hidden_size, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        h = inputs_embeds + self.token_type_embeddings(token_type_ids)
        h = self.encoder(h, src_key_padding_mask=attention_mask == 0)
        return (h,)


class BertForQuestionAnswering(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        self.qa_outputs = nn.Linear(config.hidden_size, config.num_labels)

    def get_input_embeddings(self):
        return self.bert.word_embeddings

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None,
                start_positions=None, end_positions=None):
        outputs = self.bert(input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                            inputs_embeds=inputs_embeds)
        sequence_output = outputs[0]

        logits = self.qa_outputs(sequence_output)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits = start_logits.squeeze(-1)
        end_logits = end_logits.squeeze(-1)

        total_loss = None
        if start_positions is not None and end_positions is not None:
            # If we are on multi-GPU, split add a dimension
            if len(start_positions.size()) > 1:
                start_positions = start_positions.squeeze(-1)
            if len(end_positions.size()) > 1:
                end_positions = end_positions.squeeze(-1)
            # sometimes the start/end positions are outside our model inputs, we ignore these terms
            ignored_index = start_logits.size(1)
            start_positions.clamp_(0, ignored_index)
            end_positions.clamp_(0, ignored_index)

            loss_fct = CrossEntropyLoss(ignore_index=ignored_index)
            start_loss = loss_fct(start_logits, start_positions)
            end_loss = loss_fct(end_logits, end_positions)
            total_loss = (start_loss + end_loss) / 2

        output = (start_logits, end_logits) + outputs[1:]
        return ((total_loss,) + output) if total_loss is not None else output
