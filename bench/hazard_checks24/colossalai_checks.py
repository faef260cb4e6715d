"""colossalai 0.5.0 (colossalai/legacy/communication/p2p.py:181, :190, `_communicate`): the two proven findings
of `inplacefix check` on main 97a004a (stop 52, fresh52), "in-place update of `tensor_recv_prev`, created with
requires_grad=True". `create_recv_buffer_with_shapes` returns one leaf requiring grad when the shape is a
`torch.Size`, else a *list* of such leaves; the flagged writes `tensor_recv_prev[index] = ...` sit in the
`else` arm of `if isinstance(tensor_recv_prev, torch.Tensor):`, where the name holds the list: a Python
list item assignment, which touches no tensor. False.
The file's functions are compiled alone from the shipped file, with stand-ins for the process group (`dist`:
P2P ops that complete at once), `gpc` (a tensor-parallel world of 2, so the shapes are split), the accelerator
and `gather_split_1d_tensor` (the received halves concatenated, without grad, as the all-gather returns them)."""

import _shim  # noqa: F401
import linecache
import operator
import types
from functools import reduce

import torch
from _check import attempt
from _fresh52 import compile_alone, src

SRC = src("colossalai/legacy/communication/p2p.py")
assert linecache.getline(SRC, 181).strip() == "tensor_recv_prev[index] = ("
assert linecache.getline(SRC, 190).strip() == "tensor_recv_next[index] = ("
assert linecache.getline(SRC, 177).strip() == "if isinstance(tensor_recv_prev, torch.Tensor):"


class _Req:
    def wait(self):
        return None


DIST = types.SimpleNamespace(P2POp=lambda op, t, rank: (op, t, rank), isend="isend", irecv="irecv",
                             batch_isend_irecv=lambda ops: [_Req() for _ in ops])
GPC = types.SimpleNamespace(get_world_size=lambda mode: 2, get_prev_global_rank=lambda mode: 0,
                            get_next_global_rank=lambda mode: 1)
ACC = types.SimpleNamespace(get_current_device=lambda: "cpu", synchronize=lambda: None)
NS = {"torch": torch, "dist": DIST, "gpc": GPC, "ParallelMode": types.SimpleNamespace(PIPELINE="pipe", TENSOR="tensor"),
      "get_accelerator": lambda: ACC, "reduce": reduce, "operator": operator,
      "gather_split_1d_tensor": lambda t: torch.cat([t.detach(), t.detach()]),
      "split_tensor_into_1d_equal_chunks": lambda t: t.reshape(-1)[: t.numel() // 2]}
NAMES = {"_communicate", "create_recv_buffer_with_shapes", "_get_tensor_shape", "process_object_to_send",
         "filling_ops_queue"}


def run(prev, shapes):
    def go():
        ns = compile_alone(SRC, NAMES, dict(NS))
        kw = dict(recv_prev=True, recv_prev_shape=shapes) if prev else dict(recv_next=True, recv_next_shape=shapes)
        got_prev, got_next = ns["_communicate"](dtype=torch.float, scatter_gather_tensors=True, **kw)
        got = got_prev if prev else got_next
        assert isinstance(got, list) == isinstance(shapes, list)
        got = got if isinstance(got, list) else [got]
        assert all(t.requires_grad for t in got)
        sum((t * 2).sum() for t in got).backward()
    return go


LIST = [torch.Size([2, 3]), torch.Size([4])]
F181, F190 = "colossalai/legacy/communication/p2p.py:181:IPF105", "colossalai/legacy/communication/p2p.py:190:IPF105"
attempt(F181, "path", "_communicate(recv_prev=True, two shapes: a list buffer), split over 2, grad on, backward of "
        "what was received", run(True, LIST))
attempt(F181, "context", "one torch.Size (the Tensor arm, not flagged): runs", run(True, torch.Size([2, 3])))
attempt(F190, "path", "_communicate(recv_next=True, two shapes), split over 2, grad on, backward", run(False, LIST))
attempt(F190, "context", "one torch.Size (the Tensor arm, not flagged): runs", run(False, torch.Size([2, 3])))
