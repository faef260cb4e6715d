"""nnts 0.1.9 (torch/models/itransformer.py:282, timesnet.py:339, :395): the proven findings of `inplacefix check` on
main 7911fb7 (stop 53, fresh53), the Time-Series-Library normalization (`x_enc /= stdev` after torch.var saved
x_enc); how each is run: `_tslib53.py`. Series requiring grad raise: real by this file's convention."""

import _shim  # noqa: F401
from _tslib53 import check

check("nnts/torch/models/itransformer.py", 282, "iTransformer.forecast", "x_enc", (None,), {"use_norm": True})
check("nnts/torch/models/timesnet.py", 339, "TimesNet.forecast", "x_enc", (None,), {})
check("nnts/torch/models/timesnet.py", 395, "TimesNet.anomaly_detection", "x_enc", (), {})
