"""torch-world 0.2.0 (torch_world/envs/puzzles.py:156, :157, :160, :163, :164 `PlanningPuzzle._advance_batch`): the
proven findings of `inplacefix check` (stop 54, fresh54b, end of stop). The batched grid dynamics write the state in
place: `torch.where(moving[:, None], ...)` (:157) saves `moving` as its condition, and `moving &= ...` (:164) writes
it; `torch.maximum(state[:, 2], ...)` (:160) saves the has-key column, and its own write (:160), the checkpoint
count (:163) and, on the next pass of the loop, the moves (:156, :157) write state. The loop runs more than once
only for the "ice" task; the box move (:156) is taken only for "sokoban", so it never follows the saver: :156 is
false (a loop-carried write on a loop that runs once whenever its branch is taken). :157 and :163 write the state
only after :160's own write has already spoilt the maximum's saved operand (not isolated from :160, as scion.py:85
before: with :160 out of place they write a fresh state). All but :156 raise with a state that requires grad
(torch-world's states are integer coordinates in float32; an action that requires grad makes them require grad
through `sign()`): real by this file's convention. Levels with a key and checkpoints, or ice with
a key, are what `level=` (an ASCII map) allows. `_advance_batch` and `_free_batch` are compiled alone from the
shipped file (stand-in self: a 9x7 grid with no walls, its target, key and checkpoints)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torch_world/envs/puzzles.py")
LINES = {
    156: "state[:, 4:6] = torch.where((moving & pushing)[:, None], next_box, state[:, 4:6])",
    157: "state[:, :2] = torch.where(moving[:, None], next_xy, state[:, :2])",
    160: "state[:, 2] = torch.maximum(state[:, 2], acquired.float())",
    163: "state[:, 3] += reached & (state[:, 3] == j)",
    164: "moving &= (state[:, :2] != torch.tensor(self.target, device=self.device)).any(-1)",
}
for number, text in LINES.items():
    assert linecache.getline(PATH, number).strip() == text, number
OUT = {  # each line out of place
    156: "state = torch.cat([state[:, :4], torch.where((moving & pushing)[:, None], next_box, state[:, 4:6])], 1)",
    157: "state = torch.cat([torch.where(moving[:, None], next_xy, state[:, :2]), state[:, 2:]], 1)",
    160: "state = torch.cat([state[:, :2], torch.maximum(state[:, 2], acquired.float())[:, None], state[:, 3:]], 1)",
    163: "state = torch.cat([state[:, :3], (state[:, 3] + (reached & (state[:, 3] == j)))[:, None], state[:, 4:]], 1)",
    164: "moving = moving & (state[:, :2] != torch.tensor(self.target, device=self.device)).any(-1)",
}


def run(task, key=None, checkpoints=(), out=()):
    replace = {n: OUT[n] for n in out}
    ns = compile_alone(PATH, {"PlanningPuzzle._advance_batch", "PlanningPuzzle._free_batch"}, {"torch": torch},
                       replace=replace)

    def go():
        me = types.SimpleNamespace(task=task, width=9, height=7, key=key, door=None, checkpoints=list(checkpoints),
                                   target=(7, 5), device=None, _wall_mask=torch.zeros(7, 9, dtype=torch.bool))
        me._free_batch = lambda xy, k: ns["_free_batch"](me, xy, k)
        leaf = torch.tensor([[2.0, 2.0, 0.0, 0.0, 3.0, 2.0]], requires_grad=True)  # agent (2,2), box (3,2)
        direction = torch.tensor([[1.0, 0.0]])
        state = ns["_advance_batch"](me, leaf * 1.0, direction, torch.tensor([True]))
        state.sum().backward()
    return go


def fid(line, code="IPF104"):
    return f"torch_world/envs/puzzles.py:{line}:{code}"


attempt(fid(164, "IPF101"), "path", "maze (no key), a state that requires grad: raises", run("maze"))
attempt(fid(164, "IPF101"), "control", "the same with :164 out of place: runs", run("maze", out=[164]))
attempt(fid(160), "path", "key_door's key at (5,4), :164 out of place: the maximum's own write raises",
        run("key_door", key=(5, 4), out=[164]))
attempt(fid(160), "control", "the same with :160 out of place (torch.cat): runs", run("key_door", key=(5, 4),
                                                                                         out=[164, 160]))
CP = [(3, 2), (6, 6)]
attempt(fid(163), "path", "a level with a key and checkpoints, :164 out of place: raises (not isolated from :160)",
        run("checkpoints", key=(5, 4), checkpoints=CP, out=[164]))
attempt(fid(163), "control", "the same with :160 and :163 out of place: runs",
        run("checkpoints", key=(5, 4), checkpoints=CP, out=[164, 160, 163]))
attempt(fid(163), "context", "with :160 alone out of place: runs (:163 then writes a fresh state)",
        run("checkpoints", key=(5, 4), checkpoints=CP, out=[164, 160]))
attempt(fid(157), "path", "ice with a key (the loop runs 9 times), :164 out of place: raises (not isolated from "
        ":160)", run("ice", key=(5, 4), out=[164]))
attempt(fid(157), "control", "the same with :160 and :157 out of place: runs", run("ice", key=(5, 4),
                                                                                   out=[164, 160, 157]))
attempt(fid(157), "context", "with :160 alone out of place: runs (the second pass writes a fresh state)",
        run("ice", key=(5, 4), out=[164, 160]))
attempt(fid(156), "path", "sokoban with a key, :164 and :160 out of place (the loop runs once, :156 before the "
        "maximum): runs", run("sokoban", key=(5, 4), out=[164, 160]))
attempt(fid(156), "context", "sokoban with a key, :164 out of place, :160 as shipped: raises (:160's own write)",
        run("sokoban", key=(5, 4), out=[164]))
attempt(fid(156), "context", "the same with :156 out of place too: raises the same", run("sokoban", key=(5, 4),
                                                                                       out=[164, 156]))
