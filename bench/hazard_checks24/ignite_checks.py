"""pytorch-ignite 0.5.5: the one proven finding of `inplacefix check` (main at 3c26737, stop 43):
`EMAHandler._update_ema_model` (ignite/handlers/ema_handler.py:194) writes `ema_p.mul_(...)` over
`self.ema_model.parameters()`, reported as a leaf that requires grad. The constructor makes the
copy with `for param in self.ema_model.parameters(): param.detach_()`: its parameters require no
grad. The path attaches the handler to an engine whose step trains the model with grad on and
runs it (the update runs after each iteration)."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from ignite.engine import Engine
from ignite.handlers import EMAHandler

FINDING = "ignite/handlers/ema_handler.py:194:IPF105"
expect_line(EMAHandler._update_ema_model, 194, "ema_p.mul_(1.0 - momentum).add_(model_p.data, alpha=momentum)")


def train():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(engine, batch):
        optimizer.zero_grad()
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        return loss.item()

    engine = Engine(step)
    handler = EMAHandler(model, momentum=0.5)
    handler.attach(engine, name="ema_momentum")
    engine.run([torch.randn(4, 3) for _ in range(3)], max_epochs=1)
    assert not any(p.requires_grad for p in handler.ema_model.parameters())


attempt(FINDING, "path", "EMAHandler(model).attach(engine); engine.run(3 training steps) with grad on", train)
