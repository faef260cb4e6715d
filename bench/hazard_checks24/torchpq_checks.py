"""torchpq 0.3.0.6 (torchpq/metric.py and the five k-means classes of torchpq/clustering/): the 62 proven findings
of `inplacefix check` (stop 57, fresh57, end of stop). torchpq normalises, squares and restores its operands in place
"to save memory": `cosine_similarity(..., inplace=True)` and each class's static `cos_sim`/`euc_sim` with
`inplace=True` (`a.div_(a_norm)` after `a.norm` saved a; `a.mul_(a_norm)`, `a.pow_(2)`, `a.sqrt_()` after `a.T @ b`
saved a), `kmeanspp` in cosine mode (`data.div_(data_norm)`, `data.mul_(data_norm)`: the caller's data, which the
norm saved), `get_labels`' CUDA branch in cosine mode (the same on data and the caller's centroids), and kmeanspp's
`centroids[:, i] = new_centroid` (flagged because `current_centroids = centroids[:, :i].contiguous()` went into
`self.sim`).

Each class is compiled alone from the shipped file (CustomModule compiled from its own file as the base; nothing of
torchpq imported: its kernels need cupy). The CUDA branch of get_labels is run on the CPU: its `if
data.device.type == "cuda"` test is made true in the compiled tree, `self.max_sim_cuda` is a stand-in (the max of
the inner products, computed without grad, as the cupy kernel hands back plain tensors), and `remaining_memory`
says 0 bytes are free (KMeansOld and MultiKMeansOld take the chunked branches only when the similarity matrix does
not fit). Data that
requires grad (the output of `x * 1`, x a leaf) is real by this file's convention: torchpq clusters and searches
plain vectors. Each line is isolated: the other in-place writes of the scenario go out of place (a local rebinding)
or through `.data` (no version bump) where the line writes a tensor an earlier write kept; the control has all of
them out of place."""

import _shim  # noqa: F401
import ast
import linecache
import math
import time as _time

import numpy as np
import torch
import torch.nn as nn
from _check import attempt
from _fresh53 import src
from _rewrite import replace_statement

CLS = "torchpq/clustering/{}.py"
METRIC = src("torchpq/metric.py")
CUSTOM = src("torchpq/CustomModule.py")

# per class: cos_sim's a.div_, b.div_, a.mul_ (b.mul_ the next line); euc_sim's a.pow_, a.sqrt_ (b's the next
# lines); kmeanspp's data.div_, the centroid write, data.mul_; get_labels' `if ... cuda` test and its data.div_,
# centroids.div_, data.mul_, centroids.mul_
LINES = {
    "KMeans": dict(cos=(169, 170, 177), euc=(195, 206), pp=(240, 259, 261), cuda_if=307, cuda=(311, 312, 321, 322)),
    "KMeansOld": dict(cos=(135, 136, 143), euc=(160, 171), pp=(198, 211, 213), cuda_if=260,
                      cuda=(264, 265, 268, 269)),
    "MinibatchKMeans": dict(cos=(176, 177, 184), euc=(202, 213), pp=(247, 266, 268), cuda_if=314,
                            cuda=(318, 319, 328, 329)),
    "MultiKMeans": dict(cos=(171, 172, 179), euc=(196, 207), pp=(241, 265, 267), cuda_if=314,
                        cuda=(318, 319, 332, 333)),
    "MultiKMeansOld": dict(cos=(138, 139, 146), euc=(163, 174), pp=(202, 216, 218), cuda_if=266,
                           cuda=(270, 271, 274, 275)),
}
MULTI = {"MultiKMeans", "MultiKMeansOld"}


def line(path, n):
    return linecache.getline(path, n).strip()


def expect(path, n, text):
    assert line(path, n).startswith(text), (path, n, line(path, n))


for name, L in LINES.items():
    p = src(CLS.format(name))
    c1, c2, c3 = L["cos"]
    expect(p, c1, "a.div_(a_norm)"), expect(p, c2, "b.div_(b_norm)"), expect(p, c3, "a.mul_(a_norm)")
    expect(p, c3 + 1, "b.mul_(b_norm)")
    e1, e2 = L["euc"]
    expect(p, e1, "a.pow_(2)"), expect(p, e1 + 1, "b.pow_(2)"), expect(p, e2, "a.sqrt_()"), expect(p, e2 + 1, "b.sqrt_()")
    p1, p2, p3 = L["pp"]
    expect(p, p1, "data.div_(data_norm)"), expect(p, p2, "centroids[:, "), expect(p, p3, "data.mul_(data_norm)")
    expect(p, L["cuda_if"], 'if data.device.type == "cuda":')
    g1, g2, g3, g4 = L["cuda"]
    expect(p, g1, "data.div_(d_norm)"), expect(p, g2, "centroids.div_(c_norm)")
    expect(p, g3, "data.mul_(d_norm)"), expect(p, g4, "centroids.mul_(c_norm)")
expect(METRIC, 19, "a.div_(a_norm)"), expect(METRIC, 20, "b.div_(b_norm)")
expect(METRIC, 27, "a.mul_(a_norm)"), expect(METRIC, 28, "b.mul_(b_norm)")


def compile_file(path, names, ns, replace=None, force_true=()):
    """Top-level defs `names` of `path` exec'd into ns, statements replaced by line, `if` tests at the lines of
    `force_true` made True (line numbers kept)."""
    tree = ast.parse(open(path).read(), path)
    for n, code in (replace or {}).items():
        replace_statement(tree, n, code)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.lineno in force_true:
            node.test = ast.copy_location(ast.Constant(True), node.test)
    body = [n for n in tree.body if getattr(n, "name", None) in names]
    assert len(body) == len(names), (path, names)
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return ns


def klass(name, replace=None, force_true=()):
    ns = {"torch": torch, "nn": nn, "np": np, "math": math, "time": _time.time}
    compile_file(CUSTOM, ["CustomModule"], ns)
    for k in ("MaxSimCuda", "MinBMMCuda", "TopkBMMCuda", "ComputeCentroidsCuda"):
        ns[k] = None  # constructed only when CUDA is available
    compile_file(src(CLS.format(name)), [name], ns, replace, force_true)
    return ns[name]


def max_sim_stand_in(a, b, dim, mode="tn"):
    with torch.no_grad():  # the cupy kernel hands back plain tensors
        return (a.transpose(-2, -1) @ b).max(dim=-1)


def data_of(name, d=4, n=12, seed=0):
    torch.manual_seed(seed)
    x = torch.randn((2, d, n) if name in MULTI else (d, n), requires_grad=True)
    return x, x * 1


OUT = {"a.div_(a_norm)": "a = a / a_norm", "b.div_(b_norm)": "b = b / b_norm", "a.mul_(a_norm)": "a = a * a_norm",
       "b.mul_(b_norm)": "b = b * b_norm", "a.pow_(2)": "a = a ** 2", "b.pow_(2)": "b = b ** 2",
       "a.sqrt_()": "a = a.sqrt()", "b.sqrt_()": "b = b.sqrt()",
       "data.div_(data_norm)": "data = data / data_norm", "data.mul_(data_norm)": "data = data * data_norm",
       "data.div_(d_norm)": "data = data / d_norm", "centroids.div_(c_norm)": "centroids = centroids / c_norm",
       "data.mul_(d_norm)": "data = data * d_norm", "centroids.mul_(c_norm)": "centroids = centroids * c_norm"}


def out_of_place(path, lines, keep=(), data=()):
    """{line: out-of-place code} for `lines` except those in keep (as shipped) and those in data (through .data)."""
    rep = {}
    for n in lines:
        if n in keep:
            continue
        text = line(path, n)
        if n in data:
            target, rest = text.split(".", 1)
            op, arg = rest.split("(", 1)
            arg = arg.rstrip(")")
            rep[n] = f"{target}.data.{op}({arg}.detach())" if arg and not arg[0].isdigit() else f"{target}.data.{op}({arg})"
        else:
            rep[n] = OUT[text]
    return rep


# ---- torchpq/metric.py cosine_similarity(a, b, inplace=True) (FlatIndex.search's call)
def metric_run(keep=(), data=()):
    ns = {"torch": torch, "util": None}
    compile_file(METRIC, ["cosine_similarity"], ns, out_of_place(METRIC, (19, 20, 27, 28), keep, data))

    def go():
        x, a = data_of("metric", seed=1)
        y, b = data_of("metric", seed=2)
        ns["cosine_similarity"](a[None], b[None], normalize=True, inplace=True).sum().backward()
    return go


for n in (19, 20):
    fid = f"torchpq/metric.py:{n}:IPF103"
    attempt(fid, "path", f"cosine_similarity(a, b, inplace=True), a and b that require grad, :{n} as shipped and the "
            "other normalising/restoring writes out of place: the div_ writes what `.norm` saved, backward of the "
            "similarities raises", metric_run(keep=(n,)))
    attempt(fid, "control", "all four writes out of place: runs", metric_run())
attempt("torchpq/metric.py:19:IPF103", "context", "a.mul_(a_norm) (:27, unflagged) as shipped, the others out of "
        "place: a.mul_ writes what the matmul saved (a miss if it raises)", metric_run(keep=(27,)))
attempt("torchpq/metric.py:19:IPF103", "context", "b.mul_(b_norm) (:28, unflagged) as shipped, the others out of "
        "place (a miss if it raises)", metric_run(keep=(28,)))


for name, L in LINES.items():
    P = src(CLS.format(name))
    rel = CLS.format(name)
    c1, c2, c3 = L["cos"]
    COS = (c1, c2, c3, c3 + 1)

    def cos_run(keep=(), data=(), name=name, P=P, COS=COS):
        C = klass(name, out_of_place(P, COS, keep, data))

        def go():
            x, a = data_of(name, seed=1)
            y, b = data_of(name, n=5, seed=2)
            C.cos_sim(a, b, normalize=True, inplace=True).sum().backward()
        return go

    for n in (c1, c2, c3):
        attempt(f"{rel}:{n}:IPF103", "path", f"{name}.cos_sim(a, b, inplace=True) (get_labels' call on the CPU), a "
                f"and b that require grad, :{n} as shipped, the other normalising/restoring writes out of place: "
                "backward of the similarities raises", cos_run(keep=(n,)))
        attempt(f"{rel}:{n}:IPF103", "control", "all four out of place: runs", cos_run())
    attempt(f"{rel}:{c1}:IPF103", "context", f"b.mul_(b_norm) (:{c3 + 1}, unflagged) as shipped, the others out of "
            "place (a miss if it raises)", cos_run(keep=(c3 + 1,)))

    e1, e2 = L["euc"]
    EUC = (e1, e1 + 1, e2, e2 + 1)

    def euc_run(keep=(), data=(), name=name, P=P, EUC=EUC):
        C = klass(name, out_of_place(P, EUC, keep, data))

        def go():
            x, a = data_of(name, seed=1)
            y, b = data_of(name, n=5, seed=2)
            C.euc_sim(a, b, inplace=True).sum().backward()
        return go

    attempt(f"{rel}:{e1}:IPF103", "path", f"{name}.euc_sim(a, b, inplace=True), a and b that require grad, :{e1} "
            "as shipped, b.pow_ and both sqrt_ out of place: a.pow_ writes what `a.T @ b` saved, backward raises",
            euc_run(keep=(e1,)))
    attempt(f"{rel}:{e1}:IPF103", "control", "all four out of place: runs", euc_run())
    attempt(f"{rel}:{e2}:IPF103", "path", f"{name}.euc_sim(a, b, inplace=True), :{e2} as shipped, a.pow_ through "
            ".data (same tensor, no version bump), b's out of place: a.sqrt_ writes the a that `a.T @ b` saved, "
            "backward raises", euc_run(keep=(e2,), data=(e1,)))
    attempt(f"{rel}:{e2}:IPF103", "control", "all four out of place: runs", euc_run())
    attempt(f"{rel}:{e1}:IPF103", "context", f"b.pow_(2) (:{e1 + 1}, unflagged) as shipped, the others out of place "
            "(a miss if it raises)", euc_run(keep=(e1 + 1,)))

    p1, p2, p3 = L["pp"]
    PP = (p1, p3)

    def pp_run(keep=(), data=(), distance="cosine", d=4, name=name, P=P, PP=PP):
        C = klass(name, out_of_place(P, PP, keep, data))

        def go():
            x, data = data_of(name, d=d)
            km = C(n_clusters=3, distance=distance, init_mode="kmeans++")
            np.random.seed(0)
            centroids = km.kmeanspp(data)
            # fit's next steps: labels, then centroids from data (compute_centroids on the CPU)
            labels = torch.arange(data.shape[-1]) % 3
            labels = labels.expand(data.shape[0], -1).contiguous() if name in MULTI else labels
            new = km.compute_centroids(data, labels)
            (centroids.sum() + new.sum()).backward()
        return go

    attempt(f"{rel}:{p1}:IPF103", "path", f"{name}(distance='cosine').kmeanspp(data), data that requires grad, "
            f":{p1} as shipped and data.mul_ out of place, backward of the centroids and of compute_centroids(data, "
            "labels) (fit's next step): data.div_ writes what `data.norm` saved, raises", pp_run(keep=(p1,)))
    attempt(f"{rel}:{p1}:IPF103", "control", "both out of place: runs", pp_run())
    attempt(f"{rel}:{p3}:IPF103", "path", f"the same, :{p3} as shipped and data.div_ through .data: data.mul_ "
            "writes the caller's data, which `data.norm` saved, and makes the norm part of its history: backward "
            "through compute_centroids(data, labels) raises", pp_run(keep=(p3,), data=(p1,)))
    attempt(f"{rel}:{p3}:IPF103", "control", "both out of place: runs", pp_run())
    for distance in ("cosine", "euclidean"):
        for d in (1, 4):
            attempt(f"{rel}:{p2}:IPF104", "path", f"{name}(distance={distance!r}).kmeanspp(data), d_vector={d} "
                    f"({'current_centroids a view of centroids' if d == 1 else 'contiguous() copies'}), data that "
                    f"requires grad, :{p2} as shipped (data.div_/mul_ through .data): the similarities that saved "
                    "current_centroids reach only max -> argmin (an index), so no backward reads them: runs",
                    pp_run(keep=(p2,), data=PP, distance=distance, d=d))

    g_if = L["cuda_if"]
    G = L["cuda"]

    def cuda_run(keep=(), data=(), name=name, P=P, G=G, g_if=g_if):
        C = klass(name, out_of_place(P, G, keep, data), force_true=(g_if,))

        def go():
            x, data = data_of(name)
            km = C(n_clusters=3, distance="cosine", init_mode="random")
            km.max_sim_cuda = max_sim_stand_in
            km.remaining_memory = lambda device: 0  # a GPU without room for the whole similarity matrix (the Old
            # classes take the branch only then; the others always)
            centroids = data[..., :3].clone()  # initialize_centroids' random mode: data[:, idx].clone()
            maxsims, labels = km.get_labels(data, centroids)
            new = km.compute_centroids(data, labels)
            km.calculate_error(centroids, new).backward()  # fit's error
        return go

    for n in G:
        other = [m for m in G if m != n]
        via_data = tuple(m for m in other if (m, n) in ((G[0], G[2]), (G[1], G[3])))
        attempt(f"{rel}:{n}:IPF103", "path", f"{name}(distance='cosine').get_labels(data, centroids), the CUDA "
                f"branch on the CPU, data and centroids that require grad, :{n} as shipped, the other three "
                f"{'out of place' if not via_data else 'out of place or through .data'}, then fit's "
                "compute_centroids and error: the write spoils what `.norm` saved (and the restoring mul_ makes "
                "the norm part of the caller's tensor), backward of the error raises",
                cuda_run(keep=(n,), data=via_data))
        attempt(f"{rel}:{n}:IPF103", "control", "all four out of place: runs", cuda_run())
