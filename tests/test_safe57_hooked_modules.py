"""Stop 57 (safe57): a module's call and the forward hooks that see it.

A recognition, with the fact it needs, "what a forward hook of the file keeps"
(``hooks.call_hooks``, ``kept.hooks_may_keep``):

- ``text_embeds = self.llm.model.embed_tokens(ids)`` (VILA, realworld set2/116):
  the module two attributes down, set on a plain ``nn.Module`` by a class of the file, is an
  ``nn.Embedding`` wherever the file sets it, and nothing else of the file replaces it: its
  result is kept by no one (the file's one hook makes it require grad and keeps nothing), so
  ``text_embeds += ...`` gets the safe fix (``kept._named_torch_module``).
- Where a hook of the file may keep what the module's call returns (``SEEN.append(output)``),
  or another place of the file may put another module there, it stays unsafe.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, run_program


def _verdicts(source: str, write: str, settings: Settings) -> list:
    line = source.splitlines().index(write.rstrip("\n")) + 1
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, settings).findings if f.span.line == line]


# ---- a recognition: a torch module two attributes down (VILA, realworld set2/116) ------------

NESTED = """\
import torch
import torch.nn as nn

SEEN = []


class TinyLLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(10, 4)
        self.lm_head = nn.Linear(4, 3)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            HOOK

        self._hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, inputs_embeds):
        return self.lm_head(inputs_embeds)


class Llava(nn.Module):
    def __init__(self):
        super().__init__()
        self.llm = TinyLLM()
        self.proj = nn.Linear(5, 4)

    def forward(self, ids, image):
        text_embeds = self.llm.model.embed_tokens(ids)
        text_embeds += torch.sum(self.proj(image)) * 0
        return self.llm(text_embeds)


def main(backward=True):
    torch.manual_seed(0)
    net = Llava()
    for p in net.llm.parameters():
        p.requires_grad_(False)
    net.llm.enable_input_require_grads()
    AFTER
    out = net(torch.tensor([[1, 2, 3]]), torch.randn(2, 5))
    held = [t.detach().clone() for t in SEEN]
    if not backward:
        return held
    out.pow(2).sum().backward()
    return [out.detach(), *[p.grad for p in net.parameters() if p.grad is not None], *held]
"""
NESTED_WRITE = "        text_embeds += torch.sum(self.proj(image)) * 0\n"
NESTED_REWRITTEN = "        text_embeds = text_embeds + torch.sum(self.proj(image)) * 0\n"


def test_a_torch_module_two_attributes_down_gets_the_safe_fix():
    source = NESTED.replace("HOOK", "output.requires_grad_(True)").replace("    AFTER\n", "")
    statuses = {status for status, _ in _verdicts(source, NESTED_WRITE, Settings())}
    assert "safe" in statuses and "unsafe" not in statuses, _verdicts(source, NESTED_WRITE, Settings())
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        run_program(source)
    fixed = fixed_source(source, project=True)
    assert NESTED_REWRITTEN in fixed
    got, want = run_program(fixed), run_program(source.replace(NESTED_WRITE, NESTED_REWRITTEN))
    assert len(got) == len(want) > 1 and all(torch.equal(g, w) for g, w in zip(got, want))


NESTED_HELD = {
    "the-hook-keeps-the-output-too": ("output.requires_grad_(True)\n            SEEN.append(output)", "    AFTER\n", ""),
    "replaced-from-another-class": ("output.requires_grad_(True)",
                                    "        self.proj = nn.Linear(5, 4)\n",
                                    "        self.proj = nn.Linear(5, 4)\n        self.llm.model.embed_tokens = Keeper()\n"),
    "a-second-hook-keeping-it": ("output.requires_grad_(True)",
                                 "        self._hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)\n",
                                 "        self._hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)\n"
                                 "        self.model.embed_tokens.register_forward_hook(lambda m, i, o: SEEN.append(o))\n"),
    "replaced-after-construction": ("output.requires_grad_(True)", "    AFTER\n",
                                    "    net.llm.model.embed_tokens = Keeper()\n"),
}
KEEPER = """

class Keeper(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, ids):
        out = self.emb(ids)
        SEEN.append(out)
        return out
"""


@pytest.mark.parametrize("name", sorted(NESTED_HELD))
def test_a_module_two_attributes_down_someone_else_may_hold_stays_unsafe(name):
    hook, old, new = NESTED_HELD[name]
    source = NESTED.replace("HOOK", hook).replace(old, new).replace("    AFTER\n", "")
    source = source.replace("\n\nclass Llava", KEEPER + "\n\nclass Llava")
    verdicts = _verdicts(source, NESTED_WRITE, Settings())  # (none where the hazard is not shown)
    assert all(status != "safe" for status, _ in verdicts), verdicts
    assert NESTED_REWRITTEN not in fixed_source(source, project=True)
