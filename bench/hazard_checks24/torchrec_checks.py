"""torchrec 1.9.2: the three proven findings of `inplacefix check` on main e0a91e4 (stop 50, prec50b).
torchrec's modules import fbgemm_gpu and more (not installed here), so the driver compiles the flagged code
alone from the unpacked wheel under $PREC50B_SITE2 (default /work/tmp/prec50b/pk2) (ast, line numbers kept).

- distributed/tensor_pool.py:267 IPF105: `update(shard: torch.nn.Parameter, rank_ids, values)` writes
  `shard[rank_ids] = values`; its one caller, `LocalShardPool.update`, passes `self._shard`, built in
  `LocalShardPool.__init__` as `torch.nn.Parameter(shard, requires_grad=False)`. The path: `update` and
  `LocalShardPool` compiled alone, a pool of a float shard, `pool.update(ids, values requiring grad)`, a
  lookup, backward: runs (FALSE: the annotation `torch.nn.Parameter` is read as a parameter with grad on).
- modules/hash_mc_modules.py:1101 IPF105 and IPF103: `identity_table.copy_(identity_global)` in
  `HashZchManagedCollisionModule.sync_identities`, `identity_table = self._hash_zch_identities`, built as
  `torch.nn.Parameter(identities, requires_grad=False)` of the int64 identities (`_create_zch_buffer`,
  long_type=True); the IPF103 says it was "saved for backward by torch.distributed.gather" (line 993), a
  collective with no autograd node. `sync_identities` needs a 2-D sharded process-group set-up; the driver
  replays its lines 976/993/1101 on the library's object (an int64 Parameter with requires_grad=False, as line
  340 builds it) in a one-process gloo group: `dist.gather(identity_table, gather_list, dst=0)`, then
  `identity_table.copy_(...)`: no error, no grad_fn anywhere (FALSE for both), and torch refuses
  `requires_grad=True` on an int64 Parameter at all (shown as context).
"""

import _shim  # noqa: F401
import ast
import os
import tempfile

import torch
import torch.distributed as dist
from _check import attempt, expect_line

SITE = os.environ.get("PREC50B_SITE2", "/work/tmp/prec50b/pk2")
POOL = os.path.join(SITE, "torchrec", "distributed", "tensor_pool.py")
HASH = os.path.join(SITE, "torchrec", "modules", "hash_mc_modules.py")
tree = ast.parse(open(POOL).read(), POOL)
nodes = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name == "update")
         or (isinstance(n, ast.ClassDef) and n.name == "LocalShardPool")]
NS = {"torch": torch, "__name__": "prec50b_tensor_pool"}
exec(compile(ast.Module(body=nodes, type_ignores=[]), POOL, "exec"), NS)
expect_line(NS["update"], 267, "shard[rank_ids] = values")
expect_line(NS["LocalShardPool"].__init__, 298, "requires_grad=False,")
hash_lines = open(HASH).read().splitlines()
for line, text in ((340, "self._hash_zch_identities = torch.nn.Parameter(identities, requires_grad=False)"),
                   (976, "identity_table = self._hash_zch_identities"), (993, "identity_table,"),
                   (1101, "identity_table.copy_(identity_global)")):
    if text not in hash_lines[line - 1]:
        raise SystemExit(f"{HASH}:{line} is {hash_lines[line - 1].strip()!r}: another version?")
F_POOL = "torchrec/distributed/tensor_pool.py:267:IPF105"
F_HASH3 = "torchrec/modules/hash_mc_modules.py:1101:IPF103"
F_HASH5 = "torchrec/modules/hash_mc_modules.py:1101:IPF105"


def pool_update():
    pool = NS["LocalShardPool"](torch.randn(6, 3))
    values = torch.randn(2, 3, requires_grad=True)
    pool.update(torch.tensor([1, 4]), values * 2)
    pool(torch.tensor([1, 4, 0])).sum().backward()
    assert values.grad is not None


def identity_sync():
    identity_table = torch.nn.Parameter(torch.full((8, 1), -1, dtype=torch.int64), requires_grad=False)
    identity_table.data[:3, 0] = torch.tensor([5, 9, 2])
    gathered = [torch.full_like(identity_table, -1)]
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        try:
            dist.gather(identity_table, gather_list=gathered, dst=0)
        finally:
            dist.destroy_process_group()
    identity_global = gathered[0].clone()
    identity_global[3, 0] = 7
    identity_table.copy_(identity_global)
    assert identity_table.grad_fn is None and not identity_table.requires_grad
    assert identity_table[3, 0] == 7


def int_parameter_with_grad():
    torch.nn.Parameter(torch.zeros(4, 1, dtype=torch.int64), requires_grad=True)


attempt(F_POOL, "path", "LocalShardPool(float shard).update(ids, values requiring grad), lookup, backward",
        pool_update)
attempt(F_HASH5, "path", "lines 976/993/1101 on an int64 Parameter(requires_grad=False) in a one-process gloo "
        "group: gather then copy_", identity_sync)
attempt(F_HASH3, "path", "the same: dist.gather adds no autograd node; copy_ into the identities raises nothing",
        identity_sync)
attempt(F_HASH5, "context", "torch refuses requires_grad=True on an int64 Parameter", int_parameter_with_grad,
        expected=(RuntimeError,))
