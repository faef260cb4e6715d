# Library module for case 3201 (shared by the original and the reference: the fix does not touch it).
# microsoft/nni, src/sdk/pynni/nni/nas/pytorch/{mutables.py, mutator.py, fixed.py}, read at the parent of commit
# c892912a ("fix droppath inplace error", 2019-11-22). Written anew at small size: LayerChoice / InputChoice ask their
# mutator for a decision and reduce the chosen outputs; with a fixed architecture the decision is a bool mask, only
# the chosen candidates run (`_select_with_mask`), and a LayerChoice with no chosen candidate returns None
# (`_tensor_reduction` of an empty list), which the DARTS Node skips. apply_fixed_architecture takes the exported
# architecture as a dict of lists of bools (the JSON file's content; no file here).
# Stand-ins: no MutableScope, no search-time mutators, no device handling.
import torch
from torch import nn


class Mutable(nn.Module):
    def __init__(self, key=None):
        super().__init__()
        self._key = key
        self.__dict__["mutator"] = None

    def set_mutator(self, mutator):
        self.__dict__["mutator"] = mutator

    @property
    def key(self):
        return self._key


class LayerChoice(Mutable):
    def __init__(self, op_candidates, reduction="sum", return_mask=False, key=None):
        super().__init__(key=key)
        self.length = len(op_candidates)
        self.choices = nn.ModuleList(op_candidates)
        self.reduction = reduction
        self.return_mask = return_mask

    def forward(self, *inputs):
        out, mask = self.mutator.on_forward_layer_choice(self, *inputs)
        if self.return_mask:
            return out, mask
        return out


class InputChoice(Mutable):
    def __init__(self, n_candidates=None, choose_from=None, n_chosen=None, reduction="sum", return_mask=False,
                 key=None):
        super().__init__(key=key)
        if n_candidates is None:
            n_candidates = len(choose_from)
        self.n_candidates = n_candidates
        self.choose_from = choose_from
        self.n_chosen = n_chosen
        self.reduction = reduction
        self.return_mask = return_mask

    def forward(self, optional_inputs):
        optional_input_list = optional_inputs
        if isinstance(optional_inputs, dict):
            optional_input_list = [optional_inputs[tag] for tag in self.choose_from]
        assert isinstance(optional_input_list, list)
        out, mask = self.mutator.on_forward_input_choice(self, optional_input_list)
        if self.return_mask:
            return out, mask
        return out


class Mutator(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.__dict__["model"] = model
        self.mutables = [m for m in model.modules() if isinstance(m, Mutable)]
        for m in self.mutables:
            m.set_mutator(self)
        self._cache = {}

    def reset(self):
        self._cache = self.sample_search()

    def _get_decision(self, mutable):
        return self._cache[mutable.key]

    def on_forward_layer_choice(self, mutable, *inputs):
        def _map_fn(op, *inputs):
            return op(*inputs)

        mask = self._get_decision(mutable)
        assert len(mask) == len(mutable.choices)
        out = self._select_with_mask(_map_fn, [(choice, *inputs) for choice in mutable.choices], mask)
        return self._tensor_reduction(mutable.reduction, out), mask

    def on_forward_input_choice(self, mutable, tensor_list):
        mask = self._get_decision(mutable)
        assert len(mask) == mutable.n_candidates
        out = self._select_with_mask(lambda x: x, [(t,) for t in tensor_list], mask)
        return self._tensor_reduction(mutable.reduction, out), mask

    def _select_with_mask(self, map_fn, candidates, mask):
        if "BoolTensor" in mask.type():
            out = [map_fn(*cand) for cand, m in zip(candidates, mask) if m]
        elif "FloatTensor" in mask.type():
            out = [map_fn(*cand) * m for cand, m in zip(candidates, mask)]
        else:
            raise ValueError("Unrecognized mask")
        return out

    def _tensor_reduction(self, reduction_type, tensor_list):
        if reduction_type == "none":
            return tensor_list
        if not tensor_list:
            return None  # empty. return None for now
        if len(tensor_list) == 1:
            return tensor_list[0]
        if reduction_type == "sum":
            return sum(tensor_list)
        if reduction_type == "mean":
            return sum(tensor_list) / len(tensor_list)
        if reduction_type == "concat":
            return torch.cat(tensor_list, dim=1)
        raise ValueError("Unrecognized reduction policy: \"{}\"".format(reduction_type))


class FixedArchitecture(Mutator):
    def __init__(self, model, fixed_arc, strict=True):
        super().__init__(model)
        self._fixed_arc = fixed_arc
        mutable_keys = set([mutable.key for mutable in self.mutables])
        fixed_arc_keys = set(self._fixed_arc.keys())
        if fixed_arc_keys - mutable_keys:
            raise RuntimeError("Unexpected keys found in fixed architecture: {}.".format(fixed_arc_keys - mutable_keys))
        if mutable_keys - fixed_arc_keys:
            raise RuntimeError("Missing keys in fixed architecture: {}.".format(mutable_keys - fixed_arc_keys))

    def sample_search(self):
        return self._fixed_arc

    def sample_final(self):
        return self._fixed_arc


def _encode_tensor(data, device):
    if isinstance(data, list):
        if all(map(lambda o: isinstance(o, bool), data)):
            return torch.tensor(data, dtype=torch.bool, device=device)
        else:
            return torch.tensor(data, dtype=torch.float, device=device)
    if isinstance(data, dict):
        return {k: _encode_tensor(v, device) for k, v in data.items()}
    return data


def apply_fixed_architecture(model, fixed_arc, device=None):
    if device is None:
        device = torch.device("cpu")
    fixed_arc = _encode_tensor(fixed_arc, device)
    architecture = FixedArchitecture(model, fixed_arc)
    architecture.reset()
    return architecture
