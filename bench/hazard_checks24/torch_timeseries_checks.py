"""torch-timeseries 0.2.5 (model/PatchTST.py:98, :167, :200; SCINet.py:366; TimesNet.py:137, :192;
iTransformer.py:71): the proven findings of `inplacefix check` on main 7911fb7 (stop 53, fresh53), the
Time-Series-Library normalization (`x_enc /= stdev` after torch.var saved x_enc); how each is run: `_tslib53.py`
(SCINet with pe off and RIN on). Series requiring grad raise: real by this file's convention."""

import _shim  # noqa: F401
from _tslib53 import check

M = "torch_timeseries/model/"
check(M + "PatchTST.py", 98, "PatchTST.forecast", "x_enc", (None, None, None), {})
check(M + "PatchTST.py", 167, "PatchTST.anomaly_detection", "x_enc", (), {})
check(M + "PatchTST.py", 200, "PatchTST.classification", "x_enc", (None,), {})
check(M + "SCINet.py", 366, "SCINet.forward", "x", (), {"input_len": 8, "num_levels": 1, "pe": False, "RIN": True})
check(M + "TimesNet.py", 137, "TimesNet.forecast", "x_enc", (None, None, None), {})
check(M + "TimesNet.py", 192, "TimesNet.anomaly_detection", "x_enc", (), {})
check(M + "iTransformer.py", 71, "iTransformer.forecast", "x_enc", (None, None, None), {"use_norm": True})
