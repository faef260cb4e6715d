# helper for case 812 (fixed: the add_to_loss body as torchbearer has it since issue #431,
# `state[LOSS] = state[LOSS] + func(state)`): the parts of torchbearer (pytorchbearer/torchbearer, late 2018) the case runs, written out
# as stand-ins: the state keys, the callback decorators `on_criterion` and `add_to_loss` (callbacks/decorators.py,
# the decorator body as in the library), and a minimal Trial training step that, as torchbearer did after issue
# #414, uses `torch.zeros(1, requires_grad=True)` as the loss when no criterion is given, then lets the
# on_criterion callbacks modify state[LOSS] before backward.
import torch

MODEL = 'model'
X = 'x'
Y_TRUE = 'y_true'
Y_PRED = 'y_pred'
LOSS = 'loss'
OPTIMIZER = 'optimizer'


class Callback(object):
    def on_criterion(self, state):
        pass


def on_criterion(func):
    cb = Callback()
    cb.on_criterion = func
    return cb


def add_to_loss(func):
    """ The :func:`add_to_loss` decorator is used to initialise a :class:`.Callback` with the value returned from func
    being added to the loss
    """
    @on_criterion
    def add_to_loss_callback(state):
        state[LOSS] = state[LOSS] + func(state)

    return add_to_loss_callback


class Trial(object):
    def __init__(self, model, optimizer=None, criterion=None, callbacks=[]):
        if criterion is None:
            def criterion(_):
                return torch.zeros(1, requires_grad=True)
        self.criterion = criterion
        self.callbacks = callbacks
        self.state = {MODEL: model, OPTIMIZER: optimizer}

    def run_steps(self, batches):
        model, optimizer = self.state[MODEL], self.state[OPTIMIZER]
        for x, y in batches:
            self.state[X], self.state[Y_TRUE] = x, y
            optimizer.zero_grad()
            self.state[Y_PRED] = model(x)
            self.state[LOSS] = self.criterion(self.state)
            for cb in self.callbacks:
                cb.on_criterion(self.state)
            self.state[LOSS].backward()
            optimizer.step()
        return self.state
