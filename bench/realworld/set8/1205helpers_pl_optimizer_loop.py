# pytorch_lightning/loops/optimization/optimizer_loop.py as of the parent of commit 37469cd3e8 (PR #9649):
# ClosureResult (the culprit: `closure_loss /= normalize` on the loss training_step returned).
# Stand-ins: OutputResult is a plain base class; the v1.6 `extra` detach deprecation check and the
# MisconfigurationException type (a ValueError here) are left out.
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from torch import Tensor


class OutputResult:
    def asdict(self) -> Dict[str, Any]:
        raise NotImplementedError


@dataclass
class ClosureResult(OutputResult):
    closure_loss: Optional[Tensor]
    loss: Optional[Tensor] = field(init=False, default=None)
    extra: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._clone_loss()

    def _clone_loss(self) -> None:
        if self.closure_loss is not None:
            # the loss will get scaled for amp. avoid any modifications to it
            self.loss = self.closure_loss.detach().clone()

    @classmethod
    def from_training_step_output(cls, training_step_output, normalize: int = 1) -> "ClosureResult":
        closure_loss, extra = None, {}

        if isinstance(training_step_output, dict):
            # this should not modify the `training_step_output`, as the user could be using it after `training_step_end`
            closure_loss = training_step_output.get("loss")
            if closure_loss is None:
                raise ValueError(
                    "In automatic_optimization, when `training_step` returns a dict, the 'loss' key needs to be present"
                )
            extra = {k: v for k, v in training_step_output.items() if k not in ("loss", "hiddens")}
        elif isinstance(training_step_output, Tensor):
            closure_loss = training_step_output
        elif training_step_output is not None:
            raise ValueError(
                "In automatic optimization, `training_step` must return a Tensor, "
                "a dict, or None (where the step will be skipped)."
            )

        if closure_loss is not None:
            # accumulate the loss. If ``accumulate_grad_batches == 1``, no effect
            closure_loss /= normalize

        return cls(closure_loss, extra=extra)

    def asdict(self) -> Dict[str, Any]:
        return {"loss": self.loss, **self.extra}
