"""Stop 54 (fresh54b, end of stop): one small program per false group of the proven tier found on the code bases
first measured by fresh54b. The merged main proves each `probe` (`inplacefix check prec54b_probes.py`), and each
probe runs backward fine (`python prec54b_probes.py`); each has a control, the same code with what makes it safe
taken away, that raises."""

import torch
from torch import Tensor


# non-differentiable-sink, the `.long()` form (synapticflow encoding/encoders.py:319): `max` saves `times` and the
# in-place scale writes it, but the next line casts the times to long (no grad) and only byte spikes are returned,
# so no backward reaches the max's node. (fresh53's group; prec53b closed the `float(...)` form.)
def long_probe(data: Tensor, time: int = 10):
    times = torch.zeros(data.numel())
    times[data.flatten() != 0] = 1 / data.flatten()[data.flatten() != 0]
    times *= time / times.max()
    times = torch.ceil(times).long()
    spikes = torch.zeros(time, data.numel()).byte()
    spikes[(times - 1).clamp(0, time - 1), torch.arange(data.numel())] = 1
    return spikes


def long_control(data: Tensor, time: int = 10):  # the float times handed back
    times = torch.zeros(data.numel())
    times[data.flatten() != 0] = 1 / data.flatten()[data.flatten() != 0]
    times *= time / times.max()
    return times


# non-differentiable-sink, the argmin form (yaapt.torch yaapt.py:526): `trans[:, 1:] ** 2` saves a view of trans and
# the same line writes trans, but trans only feeds `torch.argmin` (long indices) and the function returns the
# candidates picked by those indices, so no backward reaches the pow's node.
def argmin_probe(pitch: Tensor, f0_min: float = 60.0):
    n_cand, n_frames = pitch.shape
    trans = torch.zeros((n_cand, n_frames))
    trans[:, 1:] = abs(pitch[:, 1:] - pitch[:, :-1]) / f0_min
    trans[:, 1:] = 0.05 * trans[:, 1:] + trans[:, 1:] ** 2
    path = torch.argmin(trans, dim=0)
    return pitch[path, torch.arange(n_frames)]


def argmin_control(pitch: Tensor, f0_min: float = 60.0):  # the costs handed back too
    n_cand, n_frames = pitch.shape
    trans = torch.zeros((n_cand, n_frames))
    trans[:, 1:] = abs(pitch[:, 1:] - pitch[:, :-1]) / f0_min
    trans[:, 1:] = 0.05 * trans[:, 1:] + trans[:, 1:] ** 2
    path = torch.argmin(trans, dim=0)
    return pitch[path, torch.arange(n_frames)] + trans.sum()


# single-pass-loop (torch-world envs/puzzles.py:156): the write comes before the saver in the loop body, so it could
# only spoil the saved operand on a second pass; but the loop runs more than once only for "ice", and the write's
# branch is taken only for "sokoban".
def loop_probe(x: Tensor, task: str):
    state = x.clone()
    acc = torch.zeros(len(x))
    for _ in range(3 if task == "ice" else 1):
        if task == "sokoban":
            state[:, 1] = state[:, 0] + 1
        acc = acc + torch.maximum(state[:, 1], state[:, 0])
    return acc


def loop_control(x: Tensor, task: str):  # the loop runs three times for every task
    state = x.clone()
    acc = torch.zeros(len(x))
    for _ in range(3):
        if task == "sokoban":
            state[:, 1] = state[:, 0] + 1
        acc = acc + torch.maximum(state[:, 1], state[:, 0])
    return acc


def main():
    from _probe_run import raises, runs

    def data():
        return torch.rand(2, 3, requires_grad=True)

    def pitch():
        return (100.0 + 100.0 * torch.rand(4, 12)).requires_grad_(True)

    def state():
        return torch.rand(2, 3, requires_grad=True)

    def backward_if_any(out):  # the byte spikes carry no grad: nothing to differentiate
        if out.requires_grad:
            out.sum().backward()

    print("non-differentiable-sink long probe", runs(lambda: backward_if_any(long_probe(data()))))
    print("non-differentiable-sink long control", raises(lambda: long_control(data()).sum().backward()))
    print("non-differentiable-sink argmin probe", runs(lambda: argmin_probe(pitch()).sum().backward()))
    print("non-differentiable-sink argmin control", raises(lambda: argmin_control(pitch()).sum().backward()))
    print("single-pass-loop probe", runs(lambda: loop_probe(state(), "sokoban").sum().backward()))
    print("single-pass-loop control", raises(lambda: loop_control(state(), "sokoban").sum().backward()))


if __name__ == "__main__":
    main()
