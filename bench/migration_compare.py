"""Real-repository migration check: tiny random models from an original and a rewritten copy.

Procedure (as run for the issue note; needs `pip install transformers` beside torch==2.13.0):

    T=$(python -c "import transformers, os; print(os.path.dirname(transformers.__file__))")
    mkdir A B && cp -r $T A/transformers && cp -r $T B/transformers
    (cd B/transformers && inplacefix fix --select ALL --unsafe-fixes --no-cache \
        $(ls models/*/modeling_*.py | grep -v -E "_tf_|_flax_") activations.py pytorch_utils.py)
    M="bert gpt2 llama t5 vit big_bird wav2vec2 hubert wavlm sew_d wav2vec2_conformer swin2sr"
    PYTHONPATH=A python bench/migration_compare.py a.pt $M
    PYTHONPATH=B python bench/migration_compare.py b.pt $M
    python bench/migration_compare.py --diff a.pt b.pt

Each run builds the listed model families with tiny random configurations (seeded), runs
forward and backward in train mode with fixed random cotangents, and saves the outputs and all
parameter gradients; ``--diff`` prints the largest differences.
"""

import sys

import torch
import transformers
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM,
                          T5Config, T5ForConditionalGeneration, ViTConfig, ViTModel)


def tiny(name):
    common = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)
    if name == "bert": return BertModel(BertConfig(**common)), {"input_ids": torch.randint(0, 99, (2, 7))}
    if name == "gpt2": return GPT2LMHeadModel(GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4)), {"input_ids": torch.randint(0, 99, (2, 7))}
    if name == "llama": return LlamaForCausalLM(LlamaConfig(**common, num_key_value_heads=2)), {"input_ids": torch.randint(0, 99, (2, 7))}
    if name == "t5": return T5ForConditionalGeneration(T5Config(vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4, decoder_start_token_id=0, pad_token_id=0)), {"input_ids": torch.randint(0, 99, (2, 7)), "labels": torch.randint(0, 99, (2, 5))}
    if name == "big_bird":
        from transformers import BigBirdConfig, BigBirdModel
        return BigBirdModel(BigBirdConfig(**common, attention_type="block_sparse", block_size=4, num_random_blocks=2, max_position_embeddings=128)), {"input_ids": torch.randint(0, 99, (2, 64))}
    speech = {"wav2vec2": ("Wav2Vec2Model", "Wav2Vec2Config"), "hubert": ("HubertModel", "HubertConfig"),
              "wavlm": ("WavLMModel", "WavLMConfig"), "sew_d": ("SEWDModel", "SEWDConfig"),
              "wav2vec2_conformer": ("Wav2Vec2ConformerModel", "Wav2Vec2ConformerConfig")}
    if name in speech:
        cfg = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, conv_dim=(8, 8), conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=2, mask_time_prob=0.0)
        cls, conf = (getattr(transformers, n) for n in speech[name])
        return cls(conf(**cfg)), {"input_values": torch.randn(2, 400)}
    if name == "swin2sr":
        from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution
        return Swin2SRForImageSuperResolution(Swin2SRConfig(image_size=16, patch_size=1, embed_dim=12, depths=[2], num_heads=[2], window_size=4, upscale=2)), {"pixel_values": torch.randn(1, 3, 16, 16)}
    if name == "vit": return ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, image_size=16, patch_size=4)), {"pixel_values": torch.randn(2, 3, 16, 16)}

def run(target, names):
    out = {}
    for name in names:
        torch.manual_seed(0)
        model, inputs = tiny(name)
        model.train()
        torch.manual_seed(1)
        result = model(**inputs)
        tensors = [v for v in result.values() if isinstance(v, torch.Tensor) and v.is_floating_point()]
        gen = torch.Generator().manual_seed(2)
        loss = sum((t.double() * torch.randn(t.shape, generator=gen, dtype=torch.float64)).sum() for t in tensors)
        loss.backward()
        out[name] = {"outputs": [t.detach() for t in tensors],
                     "grads": {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}}
        print(name, transformers.__file__, len(out[name]["grads"]))
    torch.save(out, target)


def diff(a_path, b_path):
    a, b = torch.load(a_path), torch.load(b_path)
    for name in [n for n in a if n in b]:
        out = max((x.double() - y.double()).abs().max().item() for x, y in zip(a[name]["outputs"], b[name]["outputs"]))
        grads = max((a[name]["grads"][k].double() - b[name]["grads"][k].double()).abs().max().item() for k in a[name]["grads"])
        print(f"{name:10} outputs max abs diff {out:.3g}  grads max abs diff {grads:.3g}  ({len(a[name]['grads'])} parameters)")


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        diff(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[1], sys.argv[2:])
