# helper for case 721 (FIXED, reference): symmray/linalg.py after PR #2 (commit e99f677), reduced to svd() and
# svd_truncated(). The functions are verbatim except that the DEBUG .check() blocks were dropped; the code they
# import from autoray / symmray.block_core / symmray.abelian_core is replaced by the small stand-ins marked below.
import functools

import torch


# ---- stand-in for autoray (only what linalg.py uses) ----
class _AutorayStandIn:
    def get_lib_fn(self, backend, fn):
        if fn == "linalg.svd":
            return torch.linalg.svd
        raise NotImplementedError(fn)

    def do(self, fn, *args, like=None):
        return getattr(torch, fn)(*args)

    def shape(self, x):
        return tuple(x.shape)

    def size(self, x):
        return x.numel()


ar = _AutorayStandIn()
DEBUG = False


# ---- stand-ins for symmray's BlockIndex / BlockVector / AbelianArray (Z2 symmetry, 2D only) ----
class Z2:
    def combine(self, *charges):
        return sum(charges) % 2


class BlockIndex:
    def __init__(self, chargemap, dual=False):
        self._chargemap = dict(chargemap)
        self.dual = dual

    def conj(self):
        return BlockIndex(self._chargemap, not self.dual)


class BlockVector:
    def __init__(self, blocks):
        self.blocks = dict(blocks)

    def to_dense(self):
        return torch.cat(tuple(self.blocks.values()))


class AbelianArray:
    backend = "torch"

    def __init__(self, indices, charge=0, blocks=(), symmetry=None):
        self.indices = tuple(indices)
        self.charge = charge
        self.blocks = dict(blocks)
        self.symmetry = symmetry if symmetry is not None else Z2()

    @property
    def ndim(self):
        return len(self.indices)

    @property
    def sectors(self):
        return tuple(self.blocks.keys())

    def copy_with(self, indices=None, blocks=None):
        return self.__class__(
            indices=self.indices if indices is None else indices,
            charge=self.charge,
            blocks=self.blocks if blocks is None else blocks,
            symmetry=self.symmetry,
        )


# ---- symmray/linalg.py ----
@functools.singledispatch
def svd(x):
    if x.ndim != 2:
        raise NotImplementedError(
            "svd only implemented for 2D AbelianArrays,"
            f" got {x.ndim}D. Consider fusing first."
        )

    _svd = ar.get_lib_fn(x.backend, "linalg.svd")

    u_blocks = {}
    s_store = {}
    v_blocks = {}
    new_chargemap = {}

    for sector, array in x.blocks.items():
        u, s, v = _svd(array)
        u_blocks[sector] = u
        # v charge is 0, and dualnesses always opposite
        s_charge = sector[1]
        v_sector = (s_charge, s_charge)
        s_store[s_charge] = s
        v_blocks[v_sector] = v
        new_chargemap[sector[1]] = ar.shape(u)[1]

    bond_index = BlockIndex(new_chargemap, dual=x.indices[1].dual)

    u = x.copy_with(
        indices=(x.indices[0], bond_index),
        blocks=u_blocks,
    )
    s = BlockVector(s_store)
    v = x.__class__(
        indices=(bond_index.conj(), x.indices[1]),
        charge=x.symmetry.combine(),
        blocks=v_blocks,
        symmetry=x.symmetry,
    )

    return u, s, v


def argsort(seq):
    return sorted(range(len(seq)), key=seq.__getitem__)


@functools.lru_cache(maxsize=2**14)
def calc_sub_max_bonds(sizes, max_bond):
    if max_bond < 0:
        # no limit
        return sizes

    # overall fraction of the total bond dimension to use
    frac = max_bond / sum(sizes)
    if frac >= 1.0:
        # keep all singular values
        return sizes

    # number of singular values to keep in each sector
    sub_max_bonds = [int(frac * sz) for sz in sizes]

    # distribute any remaining singular values to the smallest sectors
    rem = max_bond - sum(sub_max_bonds)

    for i in argsort(sub_max_bonds)[:rem]:
        sub_max_bonds[i] += 1

    return tuple(sub_max_bonds)


def svd_truncated(
    x, cutoff=-1.0, cutoff_mode=4, max_bond=-1, absorb=0, renorm=0
):
    """Truncated svd or raw array ``x``."""
    backend = x.backend

    # first perform untruncated svd
    U, s, VH = svd(x)

    if renorm:
        raise NotImplementedError("renorm not implemented yet.")

    if cutoff > 0.0:
        # first combine all singular values into a single, sorted array
        sall = s.to_dense()
        sall = ar.do("sort", sall, like=backend)

        if cutoff_mode == 1:
            # absolute cutoff
            abs_cutoff = cutoff
        elif cutoff_mode == 2:
            # relative cutoff
            abs_cutoff = sall[-1] * cutoff
        else:
            # possible square singular values
            power = {3: 2, 4: 2, 5: 1, 6: 1}[cutoff_mode]
            if power == 1:
                # sum1 or rsum1
                cum_spow = ar.do("cumsum", sall, 0, like=backend)
            else:
                # sum2 or rsum2
                cum_spow = ar.do("cumsum", sall**power, 0, like=backend)

            if cutoff_mode in (4, 6):
                # rsum1 or rsum2: relative cumulative cutoff
                cond = cum_spow >= cutoff * cum_spow[-1]
            else:
                # sum1 or sum2: absolute cumulative cutoff
                cond = cum_spow >= cutoff

            # translate to total number of singular values to keep
            n_chi_all = ar.do("count_nonzero", cond, like=backend)
            # and then to an absolute cutoff value
            abs_cutoff = sall[-n_chi_all]

        if 0 < max_bond < ar.size(sall):
            # also take into account a total maximum bond
            max_bond_cutoff = sall[-max_bond]
            if max_bond_cutoff > abs_cutoff:
                abs_cutoff = max_bond_cutoff

        # now find number of values to keep per sector
        sub_max_bonds = [
            int(ar.do("count_nonzero", ss >= abs_cutoff, like=backend))
            for ss in s.blocks.values()
        ]
    else:
        # size of each sector
        sector_sizes = tuple(map(ar.size, s.blocks.values()))
        # distribute max_bond proportionally to sector sizes
        sub_max_bonds = calc_sub_max_bonds(sector_sizes, max_bond)

    new_inner_chargemap = {}
    for (c0, c1), n_chi in zip(U.sectors, sub_max_bonds):
        # check how many singular values from this sector are valid
        if n_chi == 0:
            # remove this sector entirely
            U.blocks.pop((c0, c1))
            s.blocks.pop(c1)
            VH.blocks.pop((c1, c1))
            continue

        # slice the values and left and right vectors
        U.blocks[(c0, c1)] = U.blocks[(c0, c1)][:, :n_chi]
        s.blocks[c1] = s.blocks[c1][:n_chi]
        VH.blocks[(c1, c1)] = VH.blocks[(c1, c1)][:n_chi, :]

        # make sure the index chargemaps are updated too
        new_inner_chargemap[c1] = n_chi

    new_inner_chargemap = {
        k: new_inner_chargemap[k] for k in sorted(new_inner_chargemap)
    }
    U.indices[1]._chargemap = new_inner_chargemap
    VH.indices[0]._chargemap = new_inner_chargemap.copy()

    if absorb is None:
        return U, s, VH

    # absorb the singular values block by block
    for c0, c1 in U.sectors:
        if absorb == -1:
            U.blocks[(c0, c1)] = U.blocks[(c0, c1)] * s.blocks[c1].reshape((1, -1))
        elif absorb == 1:
            VH.blocks[(c1, c1)] = VH.blocks[(c1, c1)] * s.blocks[c1].reshape((-1, 1))
        elif absorb == 0:
            s_sqrt = ar.do("sqrt", s.blocks[c1], like=backend)
            U.blocks[(c0, c1)] = U.blocks[(c0, c1)] * s_sqrt.reshape((1, -1))
            VH.blocks[(c1, c1)] = VH.blocks[(c1, c1)] * s_sqrt.reshape((-1, 1))

    return U, None, VH
