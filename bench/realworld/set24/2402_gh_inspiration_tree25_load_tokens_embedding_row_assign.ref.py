# source: https://github.com/google/inspiration_tree/issues/25
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Inspiration Tree (Google Research; visual concept decomposition with textual inversion on Stable Diffusion),
# utils.py at the commit the issue reads (07676f5). load_tokens(pipe, data, device) adds the learned concept tokens
# ("v1", "v2", "<*>", ...) to the pipeline's CLIP tokenizer, resizes the text encoder's token embedding and writes
# each learned vector into its row:
# `pipe.text_encoder.text_model.embeddings.token_embedding.weight[ref_indx] = embd_cur`. The embedding weight is a
# Parameter that requires grad and the call is not under no_grad, so the row assignment raises "a view of a leaf
# Variable that requires grad is being used in an in-place operation" (issue #25, from the playground notebook's
# "Load the learned nodes" cell). The fix given in the thread (the poster's, confirmed by a second user): wrap the
# body of load_tokens in `with torch.no_grad():`; the pipeline is then only sampled, under no_grad.
# Reduced (written anew, not copied): stand-ins for the diffusers StableDiffusionPipeline and the transformers CLIP
# tokenizer / text model (neither is installed): a word-level tokenizer with add_tokens / tokenize /
# convert_tokens_to_ids / __len__, a text encoder whose text_model.embeddings.token_embedding is an nn.Embedding
# (float16, as the pipeline is loaded with torch_dtype=float16) with resize_token_embeddings keeping the old rows, and
# an "encode" that stands for the text encoder's forward (mean of the prompt's token embeddings, under no_grad as in
# the sampling loop). The learned vectors are seeded random tensors standing for embeds.bin. compute() returns the
# embedding table after loading and the encodings of the three prompts save_rev_samples builds ("v1", "v2",
# "v1 v2").
import torch
import torch.nn as nn


class _Tokenizer:  # stand-in for transformers.CLIPTokenizer
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(words)}

    def add_tokens(self, tokens):
        added = 0
        for t in tokens:
            if t not in self.vocab:
                self.vocab[t] = len(self.vocab)
                added += 1
        return added

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens]

    def __len__(self):
        return len(self.vocab)


class _Embeddings(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, dim)


class _TextModel(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embeddings = _Embeddings(vocab_size, dim)


class _TextEncoder(nn.Module):  # stand-in for transformers.CLIPTextModel
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.text_model = _TextModel(vocab_size, dim)

    def resize_token_embeddings(self, new_num_tokens):
        old = self.text_model.embeddings.token_embedding
        new = nn.Embedding(new_num_tokens, old.embedding_dim).to(old.weight.dtype)
        with torch.no_grad():
            new.weight[: old.num_embeddings] = old.weight
        self.text_model.embeddings.token_embedding = new
        return new

    def encode(self, ids):
        return self.text_model.embeddings.token_embedding(torch.tensor(ids)).mean(dim=0)


class _Pipeline:  # stand-in for diffusers.StableDiffusionPipeline (only what load_tokens touches)
    def __init__(self, words, dim):
        self.tokenizer = _Tokenizer(words)
        self.text_encoder = _TextEncoder(len(words), dim).to(torch.float16)


def load_tokens(pipe, data, device):
    """
    Adds the new learned tokens into the predefined dictionary of pipe.
    """
    with torch.no_grad():
        added_tokens = []
        for t_ in data.keys():
            added_tokens.append(t_)
        num_added_tokens = pipe.tokenizer.add_tokens(added_tokens)
        pipe.text_encoder.resize_token_embeddings(len(pipe.tokenizer))
        for token_ in data.keys():
            ref_token = pipe.tokenizer.tokenize(token_)
            ref_indx = pipe.tokenizer.convert_tokens_to_ids(ref_token)[0]
            embd_cur = data[token_].to(device).to(dtype=torch.float16)
            pipe.text_encoder.text_model.embeddings.token_embedding.weight[ref_indx] = embd_cur


def compute():
    torch.manual_seed(0)
    dim = 8
    pipe = _Pipeline(["a", "photo", "of", "the", "object"], dim)
    prompt_to_vec = {"v1": torch.randn(dim), "v2": torch.randn(dim)}
    load_tokens(pipe, prompt_to_vec, "cpu")
    prompts = ["v1", "v2", "v1 v2"]
    encodings = []
    with torch.no_grad():
        for p in prompts:
            ids = pipe.tokenizer.convert_tokens_to_ids(pipe.tokenizer.tokenize("a photo of " + p))
            encodings.append(pipe.text_encoder.encode(ids))
    table = pipe.text_encoder.text_model.embeddings.token_embedding.weight
    return {
        "token_embedding.weight": table.detach().float(),
        "prompt_encodings": torch.stack(encodings).float(),
    }
