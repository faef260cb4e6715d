"""ksom 0.10.0 (ksom/__init__.py:51 and ksom/ksom.py:52 `nb_gaussian`, the same function in two shipped files): the
proven findings of `inplacefix check` (stop 54, fresh54b, end of stop). `ret = torch.exp(-(dist/(nb/2))**2)` and then
`ret[ret < 0] = 0.0` writes exp's output, which autograd saves for exp's backward (the mask is never true, but the
index_put still bumps the version). Isolation: `dist[...] = 0.0` two lines earlier writes pairwise_distance's saved
output too (a real hazard the check does not prove); the runs make it through `.data`. ksom calls it with integer
grid coordinates (the BMU and the map grid), which cannot require grad: real by this file's convention (float unit
positions that require grad; the BMU has to be an integer pair, since it indexes). `nb_gaussian` is compiled alone
from each shipped file (the package imports torchmetrics; nothing of it is imported)."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

FILES = {"ksom/__init__.py": 51, "ksom/ksom.py": 52}


def run(path, line, control=False, isolate=True):
    replace = {line - 2: "dist.data[int(node[0]*dims[0])+node[1]%dims[0]] = 0.0"} if isolate else {}
    if control:
        replace[line] = "ret = torch.where(ret < 0, torch.zeros_like(ret), ret)"
    ns = compile_alone(path, {"nb_gaussian"}, {"torch": torch}, replace=replace)

    def go():
        coord = torch.stack((torch.arange(3).repeat(3).view(-1, 3).T.reshape(9), torch.arange(3).repeat(3)), -1)
        node = torch.tensor([1, 2])  # a BMU, as SOM.forward gives it (an index pair)
        grid = coord.float().requires_grad_(True)  # unit positions that require grad
        ns["nb_gaussian"](node, (3, 3), grid, 1.5).sum().backward()
    return go


for rel, line in FILES.items():
    PATH = src(rel)
    assert linecache.getline(PATH, line).strip() == "ret[ret < 0] = 0.0"
    assert linecache.getline(PATH, line - 2).strip() == "dist[int(node[0]*dims[0])+node[1]%dims[0]] = 0.0"
    FID = f"{rel}:{line}:IPF104"
    attempt(FID, "path", f"nb_gaussian with a 3x3 grid of unit positions that require grad, :{line - 2} through "
            ".data: raises", run(PATH, line))
    attempt(FID, "control", f"the same with :{line} out of place (torch.where): runs", run(PATH, line, control=True))
    attempt(FID, "context", f"as shipped, :{line} out of place: :{line - 2} (not proven) raises on its own",
            run(PATH, line, control=True, isolate=False))
