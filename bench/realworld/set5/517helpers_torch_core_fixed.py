# helper for 517 (fixed copy, used by the .ref.py): slice_update as changed by keras-core PR #405 (CPU only;
# keras Variable handling and the numpy conversion path dropped).
import torch


def to_torch_dtype(dtype):
    return {"int64": torch.int64, "int32": torch.int32, "float32": torch.float32}.get(dtype, dtype)


def convert_to_tensor(x, dtype=None):
    dtype = to_torch_dtype(dtype or getattr(x, "dtype", None))
    if isinstance(x, int):
        dtype = torch.int32
    if isinstance(x, float):
        dtype = torch.float32
    if torch.is_tensor(x):
        if dtype and dtype != x.dtype:
            x = x.to(dtype)
        return x
    if isinstance(x, (list, tuple)) and len(x) > 0 and isinstance(x[0], torch.Tensor):
        return torch.stack(x)
    return torch.as_tensor(x, dtype=dtype)


def slice_update(inputs, start_indices, updates):
    shape_dtype = to_torch_dtype("int64")
    inputs = convert_to_tensor(inputs)
    start_indices = convert_to_tensor(start_indices).to(shape_dtype)
    updates = convert_to_tensor(updates)

    python_slice = slice
    slices = [
        python_slice(start_index, start_index + update_length)
        for start_index, update_length in zip(start_indices, updates.shape)
    ]
    outputs = torch.clone(inputs)
    outputs[slices] = updates
    return outputs
