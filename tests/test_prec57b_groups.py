"""Stop 57 (prec57b): precision and recall of the proven tier, general facts with real torch.

- the recall cost of prec56b's index rule (an index the analysis cannot type is not read as basic), won back
  soundly in two forms:
  - a dict whose values are ints (dagua layout/ops/cluster_driver.py:505/:511: ``source_index =
    item_index[source_owner]``, ``item_index = {item.key: i for i, item in enumerate(items)}``): every binding of
    the dict is a dict display or comprehension whose values are ints, and nothing else touches the dict but reads
    (a subscript load, ``in``); an item of it is an int, a basic index;
  - a helper read at THIS call's literal arguments (tests/test_real42's ``row = pick(out, False)``): a ``return``
    under ``if flag:`` (or ``not flag``, ``flag is None``, ``flag == "x"``) whose test the literal argument (or the
    parameter's literal default) decides false cannot be what the call returns. Unknown stays unknown: a parameter
    the helper rebinds, a non-literal argument, ``*args``/``**kw``, a decorated helper.
Each recognised program raises at backward and is proven; each look-alike that holds a tensor index runs and is not.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven_lines  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- group 4a: a dict whose values are ints (dagua)
DICT_INDEX = '''\
import torch


def clear(positions, sizes, keys, pairs):
    adjusted = positions.clone()
    BUILD
    for a, b in pairs:
        s = item_index[a]
        t = item_index[b]
        min_y = adjusted[t, 1] + sizes[s, 1] / 2.0
        adjusted[s, 1] = torch.maximum(adjusted[s, 1], min_y)  # MARK
    return adjusted


def main():
    positions = torch.randn(3, 2, requires_grad=True)
    sizes = torch.rand(3, 2, requires_grad=True)
    clear(positions, sizes, ["a", "b", "c"], [("a", "b")]).sum().backward()
'''

INT_DICTS = [
    "item_index = {key: local_index for local_index, key in enumerate(keys)}",
    "item_index = {key: i + 0 for i, key in enumerate(keys)}",
    'item_index = {"a": 0, "b": 1, "c": 2}',
    "item_index = dict()\n    item_index = {k: j for j, k in zip(range(len(keys)), keys)}",
    'item_index = {k: 2 for k in keys}\n    item_index = {"a": 0, "b": 1, "c": 2} if len(keys) else {}',
]


@pytest.mark.parametrize("build", INT_DICTS)
def test_item_of_a_dict_of_ints_is_a_basic_index(build):
    _real(DICT_INDEX.replace("BUILD", build))


TENSOR_DICTS = [
    # a value that is a tensor (an advanced index: a copy, nothing of `adjusted` saved)
    "item_index = {key: torch.tensor([i]) for i, key in enumerate(keys)}",
    # ints at first, a tensor stored later
    'item_index = {key: i for i, key in enumerate(keys)}\n    item_index["a"] = torch.tensor([0])',
    'item_index = {key: i for i, key in enumerate(keys)}\n    item_index.update(a=torch.tensor([0]))',
    'item_index = {key: i for i, key in enumerate(keys)}\n    item_index.setdefault("z", 0)\n'
    '    item_index |= {"a": torch.tensor([0])}',
    # handed to a function that may store anything
    'item_index = {key: i for i, key in enumerate(keys)}\n    retag(item_index)',
    # a parameter's dict, a dict of unknown values
    'item_index = dict(zip(keys, [torch.tensor([i]) for i in range(len(keys))]))',
    'item_index = {key: v for key, v in zip(keys, torch.arange(len(keys)).split(1))}',
]

RETAG = '''

def retag(d):
    d["a"] = torch.tensor([0])
'''


@pytest.mark.parametrize("build", TENSOR_DICTS)
def test_item_of_a_dict_not_known_to_hold_ints_is_not_proven(build):
    _safe(DICT_INDEX.replace("BUILD", build) + RETAG)


def test_dict_of_ints_rebound_in_a_loop_to_a_tensor_dict_is_not_proven():
    """The first turn reads ints (it raises), but the read may see the tensor dict a later turn binds: unknown,
    so not proven (possible at most; a miss, never a false proof)."""
    from tests.programs import marked
    src = DICT_INDEX.replace("BUILD", "item_index = {key: i for i, key in enumerate(keys)}").replace(
        "        adjusted[s, 1] = torch.maximum(adjusted[s, 1], min_y)  # MARK",
        "        adjusted[s, 1] = torch.maximum(adjusted[s, 1], min_y)  # MARK\n"
        "        item_index = {key: torch.tensor([i]) for i, key in enumerate(keys)}")
    assert not marked(src) & proven_lines(src)


# ---------------------------------------------------------------- group 4b: a helper read at this call's literals
PICK = '''\
import torch


def pick(audio, loud_only):
    if loud_only:
        return (abs(audio) > 0.99).any(1)
    return 0


def limit_first(signal, gain):
    out = signal * (gain / signal.std(1)).unsqueeze(1)
    row = CALL
    out[row] = out[row] / out[row].abs().max()  # MARK
    return out


def main():
    signal = torch.randn(4, 50, requires_grad=True)
    limit_first(signal, torch.tensor(3.0, requires_grad=True)).sum().backward()
'''


@pytest.mark.parametrize("call", ["pick(out, False)", "pick(out, loud_only=False)", "pick(out, 0)",
                                  "pick(out, None)", 'pick(out, "")'])
def test_helper_at_its_literal_arguments_returning_an_int_is_a_basic_index(call):
    _real(PICK.replace("CALL", call))


@pytest.mark.parametrize("helper, call", [
    ("def pick(audio, loud_only=False):", "pick(out)"),
    ("def pick(audio, *, loud_only=False):", "pick(out)"),
])
def test_helper_default_literal_decides_too(helper, call):
    _real(PICK.replace("def pick(audio, loud_only):", helper).replace("CALL", call))


@pytest.mark.parametrize("test, call", [
    ("not loud_only", "pick(out, True)"),
    ("loud_only is None", "pick(out, 1)"),
    ('loud_only == "mask"', 'pick(out, "row")'),
    ('loud_only != "row"', 'pick(out, "row")'),
    ("loud_only is not None", "pick(out, None)"),
])
def test_helper_test_forms_decided_by_the_literal(test, call):
    _real(PICK.replace("    if loud_only:", f"    if {test}:").replace("CALL", call))


def test_helper_else_arm_decided_by_the_literal():
    src = PICK.replace("    if loud_only:\n        return (abs(audio) > 0.99).any(1)\n    return 0",
                       "    if loud_only:\n        return 0\n    else:\n        return (abs(audio) > 0.99).any(1)")
    _real(src.replace("CALL", "pick(out, True)"))


MASKED = [
    "pick(out, True)",          # the mask: an advanced index, a copy
    "pick(out, 1)",
    'pick(out, "yes")',
    "pick(out, out.numel() > 0)",  # not a literal
    "pick(out, loud_only=True)",
]


@pytest.mark.parametrize("call", MASKED)
def test_helper_that_returns_a_mask_at_these_arguments_is_not_proven(call):
    _safe(PICK.replace("CALL", call))


UNDECIDED_HELPERS = [
    # the helper rebinds its flag before the test
    ("    if loud_only:", "    loud_only = not loud_only\n    if loud_only:"),
    ("    if loud_only:", "    for loud_only in (loud_only, True):\n        pass\n    if loud_only:"),
    # a decorator may hand back anything
    ("def pick(audio, loud_only):", "def flip(f):\n    return lambda a, b: f(a, not b)\n\n\n@flip\ndef pick(audio, loud_only):"),
]


@pytest.mark.parametrize("old, new", UNDECIDED_HELPERS)
def test_helper_whose_flag_is_not_the_literal_is_not_proven(old, new):
    _safe(PICK.replace(old, new).replace("CALL", "pick(out, False)"))


def test_helper_called_with_star_arguments_is_not_proven():
    _safe(PICK.replace("CALL", "pick(*[out, True])"))


# ---------------------------------------------------------------- group 2: single-pass loop (torch-world puzzles.py:156)
# The write comes before the saver in the loop body, so it could only spoil the save on a second turn; the loop
# turns twice only for "ice", and the write runs only for "sokoban". The finding is demoted to possible (it says
# why), never dropped.
LOOP = '''\
import torch


def advance(x, task: str):
    state = x.clone()
    acc = torch.zeros(len(x))
    for _ in BOUND:
        if WRITE_TEST:
            state[:, 1] = state[:, 0] + 1  # MARK
        acc = acc + torch.maximum(state[:, 1], state[:, 0])
    return acc


def main():
    x = torch.rand(2, 3, requires_grad=True)
    for task in TASKS:
        advance(x, task).sum().backward()
'''

SINGLE_PASS = [
    ('range(3 if task == "ice" else 1)', 'task == "sokoban"', '("ice", "sokoban", "maze")'),
    ('range(1 if task != "ice" else 3)', 'task == "sokoban"', '("ice", "sokoban", "maze")'),
    ('range(3 if task == "ice" else 0)', 'task != "ice"', '("ice",)'),
    ('range(3 if task == "ice" else 1)', 'task == "sokoban" and x.numel() > 0', '("ice", "sokoban")'),
]


@pytest.mark.parametrize("bound, test, tasks", SINGLE_PASS)
def test_write_on_a_turn_the_loop_never_makes_is_not_proven(bound, test, tasks):
    _safe(LOOP.replace("BOUND", bound).replace("WRITE_TEST", test).replace("TASKS", tasks))


def test_single_pass_loop_is_still_reported_possible():
    from codemod.config import Settings
    from tests.programs import process_in_project
    src = LOOP.replace("BOUND", SINGLE_PASS[0][0]).replace("WRITE_TEST", SINGLE_PASS[0][1]).replace("TASKS", "()")
    result = process_in_project(src, Settings(select=("IPF",)))
    found = [f for f in result.findings if f.span.line == 9]
    assert [f.code for f in found] == ["IPF204"] and "turns twice only where" in found[0].message


LOOP_RAISES = [
    # the loop turns three times for every task
    ("range(3)", 'task == "sokoban"', '("sokoban",)'),
    # the write's test does not exclude the second turn
    ('range(3 if task == "ice" else 1)', 'task != "sokoban"', '("ice",)'),
    ('range(3 if task == "ice" else 1)', 'task == "ice"', '("ice",)'),
    ('range(3 if task != "ice" else 1)', 'task == "sokoban"', '("sokoban",)'),
]


@pytest.mark.parametrize("bound, test, tasks", LOOP_RAISES)
def test_write_on_a_second_turn_stays_proven(bound, test, tasks):
    _real(LOOP.replace("BOUND", bound).replace("WRITE_TEST", test).replace("TASKS", tasks))


def test_task_rebound_in_the_loop_stays_proven():
    src = LOOP.replace("BOUND", 'range(3 if task == "ice" else 1)').replace("WRITE_TEST", 'task == "sokoban"').replace(
        "TASKS", '("ice",)').replace("        acc = acc + torch.maximum(state[:, 1], state[:, 0])",
                                     "        acc = acc + torch.maximum(state[:, 1], state[:, 0])\n        task = \"sokoban\"")
    _real(src)


def test_single_pass_loop_inside_another_loop_stays_proven():
    src = LOOP.replace("    for _ in BOUND:\n", '    for _ in range(2):\n      for _ in range(3 if task == "ice" else 1):\n').replace(
        "WRITE_TEST", 'task == "sokoban"').replace("TASKS", '("sokoban",)')
    _real(src)


CLASS_LOOP = '''\
import torch


class Puzzle:
    def __init__(self, task="maze"):
        self.task = task

    SWITCH

    def advance(self, x):
        state = x.clone()
        acc = torch.zeros(len(x))
        for _ in range(3 if self.task == "ice" else 1):
            CALL
            if self.task == "sokoban":
                state[:, 1] = state[:, 0] + 1  # MARK
            acc = acc + torch.maximum(state[:, 1], state[:, 0])
        return acc


def main():
    x = torch.rand(2, 3, requires_grad=True)
    for task in TASKS:
        Puzzle(task).advance(x).sum().backward()
'''


def test_attribute_task_set_only_in_init_is_not_proven():
    _safe(CLASS_LOOP.replace("SWITCH", "pass").replace("CALL", "pass").replace("TASKS", '("ice", "sokoban", "maze")'))


def test_attribute_task_a_method_in_the_loop_changes_stays_proven():
    src = CLASS_LOOP.replace("    SWITCH", '    def switch(self):\n        self.task = "sokoban"').replace(
        "CALL", "self.switch()").replace("TASKS", '("ice",)')
    _real(src)


# ---------------------------------------------------------------- group 1: flag-exclusive-alias, turn by turn (buctoolkit)
# `g.mul_(m)` after the loop writes what `g = g2_` (one arm) bound; `acc.addcmul_(g2_, c)` (the other arm) saved
# `g2_`; `g2_` is bound anew (an op's result) at the top of each turn, so the tensor a turn saves is never the
# tensor another turn hands to `g`. Possible at most, never proven.
TURNS = '''\
import torch


def helper(x, i):
    y = x * 2.0
    return y, torch.sin(x * (i + 1)), y + 1


def rotate(x, c):
    g = x * 1.0
    acc = torch.zeros_like(x)
    BEFORE
    for i in range(4):
        BIND
        g2_.mul_(2.0)
        if i % 2 == 0:
            acc.addcmul_(g2_, c)
        else:
            ALIAS
        AFTER
    g.mul_(3.0)  # MARK
    return g.sum() + acc.sum()


def main():
    x = torch.rand(3, requires_grad=True)
    c = torch.rand(3, requires_grad=True)
    rotate(x, c).backward()
'''


def _turns(bind="g2_ = torch.sin(x * (i + 1))", alias="g = g2_", before="pass", after="pass"):
    return TURNS.replace("BEFORE", before).replace("BIND", bind).replace("ALIAS", alias).replace("AFTER", after)


@pytest.mark.parametrize("bind", [
    "g2_ = torch.sin(x * (i + 1))",
    "g2_ = torch.where(x > 0.5, x, x * (i + 1))",
    "g2_ = x * (i + 1)",
    "_, g2_, _h = helper(x, i)",
])
def test_alias_of_the_other_arm_with_a_fresh_tensor_each_turn_is_not_proven(bind):
    _safe(_turns(bind=bind))


@pytest.mark.parametrize("kw", [
    # bound once, before the loop: every turn saves and aliases one tensor
    dict(bind="pass", before="g2_ = torch.sin(x)"),
    # bound only on the first turn
    dict(bind="g2_ = torch.sin(x) if i == 0 else g2_"),
    # a view of a lasting tensor: one version counter across the turns
    dict(bind="g2_ = base[0]", before="base = torch.sin(x).expand(2, 3).clone()"),
    # the alias in the same arm as the save
    dict(alias="pass", after="g = g2_ if i % 2 == 0 else g"),
    # the tensor handed to another name in the saving turn, which the alias then takes
    dict(alias="g = keep", after="keep = g2_", before="keep = x * 1.0"),
])
def test_alias_that_may_meet_the_saved_tensor_stays_proven(kw):
    src = _turns(**kw)
    if "pass\n        g2_.mul_" in src:
        src = src.replace("        pass\n        g2_.mul_(2.0)\n", "        g2_.mul_(2.0)\n")
    _real(src)
