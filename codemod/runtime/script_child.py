"""Inside the subprocess: run a script as ``__main__`` under the locator, or record what it computed.

:mod:`codemod.runtime.script` starts a fresh interpreter with a request file; this module
(and torch) is loaded only there, so the tool's own ``sys.argv``, imports and state never reach
the script, and the script's ``sys.exit``, globals and grad mode never reach the tool.

Two modes:

- ``locate``: the script runs under a :class:`Locator`; the first in-place, leaf or view error
  ends it as it would without the tool (a script that catches the error goes on, as it would),
  and both lines of every conflict a backward pass or the error confirmed, with the suggested
  fix, go back as JSON (``record_values`` records as well: the locator changes no value);
- ``record``: no locator; the script runs plain, or as the reference (every saved tensor
  snapshotted: the snapshot oracle; leaf updates at the given lines applied under
  ``torch.no_grad()``), and what each backward pass computed goes back by ``torch.save``: the
  tensors passed to backward, the gradients of the leaves they reach (parameters keyed by the
  module that holds them, in construction order, and their name), the parameters after each
  optimizer step, and every module's parameters and buffers at the end.

Either way the run stops after ``max_backward`` passes: at the first optimizer step after the
last counted pass, or when the next backward pass starts, whichever comes first.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib.machinery
import json
import os
import random
import sys
import threading
import traceback
import types
from typing import Dict, List, Optional

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode

from codemod.runtime import procgroup
from codemod.runtime.ctx_attributes import snapshot_ctx_attributes
from codemod.runtime.harness import graph_leaves
from codemod.runtime.locate import Conflict, Locator, _user_frame
from codemod.runtime.rewritten_imports import use_sources
from codemod.runtime.rounding import rounding

_OWN_DIR = os.path.dirname(os.path.abspath(__file__))


class _Stop(BaseException):
    """Ends the script early: enough backward passes ran, or the first conflict was found."""


# ---------------------------------------------------------------- running as __main__
def _run_main(request: dict) -> None:
    """What ``python script.py ARGS`` / ``python -m module ARGS`` do before the first line."""
    args = list(request["args"])
    if request.get("module"):
        import runpy

        sys.argv = ["-m"] + args  # runpy puts the module's file in argv[0]
        sys.path[0] = os.getcwd()
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        return
    given = request["path"]
    path = os.path.abspath(given)
    sys.argv = [given] + args
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    source = request.get("sources", {}).get(path)
    if source is None:
        with open(path, "rb") as handle:
            source = handle.read()
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __builtins__=builtins, __cached__=None, __package__=None,
                         __spec__=None, __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    exec(compile(source, path, "exec", dont_inherit=True), main.__dict__)


def _seed_everything() -> None:
    random.seed(0)
    torch.manual_seed(0)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)


# ---------------------------------------------------------------- counting backward passes
# The step-order repair's helpers (``fixes.step_order``): the first takes a pass's gradients
# early (not a pass), the second is the pass, of the loss the first was given.
GRADS_NOW, ACCUMULATE = "_inplacefix_grads_now", "_inplacefix_accumulate"

def _called_from(name: str, depth: int = 6):
    """The frame of a function called ``name`` among the few callers above (wrappers between)."""
    frame = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return None
        if frame.f_code.co_name == name:
            return frame
        frame = frame.f_back
    return None


class _Passes:
    """Wraps ``torch.autograd.backward``/``grad`` (``Tensor.backward`` calls the former) and the
    optimizers' global step hook: counts passes, stops after ``limit``, feeds the recorder."""

    def __init__(self, limit: Optional[int], recorder: Optional["_Recorder"],
                 quiet: Optional[_QuietSteps] = None) -> None:
        self.limit = limit
        self.recorder = recorder
        self.quiet = quiet
        self.count = 0
        self._local = threading.local()  # inside a counted pass, in this thread

    def install(self) -> None:
        self._backward, self._grad = torch.autograd.backward, torch.autograd.grad
        torch.autograd.backward = self.backward
        torch.autograd.grad = self.grad
        register_optimizer_step_post_hook(self.after_step)

    def _enough(self) -> None:
        if self.limit is not None and self.count >= self.limit:
            raise _Stop(f"stopped after {self.count} backward pass(es)")

    def backward(self, tensors, *args, **kwargs):
        if getattr(self._local, "inside", False):
            # torch.autograd.backward called directly under a function mode (the locator's)
            # calls itself again through the mode: one pass, counted once.
            return self._backward(tensors, *args, **kwargs)
        self._enough()
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        caller = _called_from(ACCUMULATE)
        if caller is not None and isinstance(caller.f_locals.get("loss"), torch.Tensor):
            roots = [caller.f_locals["loss"]]  # recorded as the backward of that loss
        leaves = self.recorder.before(self.count + 1, roots, kwargs.get("inputs")) if self.recorder else None
        self._local.inside = True
        try:
            result = self._backward(tensors, *args, **kwargs)
        finally:
            self._local.inside = False
        self.count += 1
        if self.recorder:
            self.recorder.after_backward(self.count, leaves)
        return result

    def grad(self, outputs, inputs, *args, **kwargs):
        if _called_from(GRADS_NOW) is not None:
            # The step-order repair takes a pass's gradients early; the pass is counted (and
            # recorded) where its backward was (``fixes.step_order``).
            return self._grad(outputs, inputs, *args, **kwargs)
        self._enough()
        roots = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
        if self.recorder:
            self.recorder.before(self.count + 1, roots, None)
        result = self._grad(outputs, inputs, *args, **kwargs)
        self.count += 1
        if self.recorder:
            ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
            self.recorder.after_grad(self.count, ins, result)
        return result

    def after_step(self, optimizer, args, kwargs) -> None:
        if self.quiet is not None:
            self.quiet.resume()
        if self.recorder:
            self.recorder.after_step(optimizer)
        self._enough()


class _QuietSteps:
    """Optimizer steps run without the locator's function mode. They run under ``no_grad`` and
    save nothing, and checking the tensors of every ``foreach`` op of a step tripled its cost
    on a small model. Instead the parameters' versions are compared once, around the step: a
    step that changed a tensor a live graph saved is reported at the ``opt.step()`` line."""

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        self.popped = None
        self.versions: list = []
        self.frame = None  # the user's frame that called the step (its ``opt.step(...)`` line)

    def install(self) -> None:
        register_optimizer_step_pre_hook(self.pause)
        self.locator.flush_unseen = self.flush

    def pause(self, optimizer, args, kwargs):
        if self.popped is None and torch.overrides._get_current_function_mode() is self.locator:
            self.versions = [(p, p._version) for group in optimizer.param_groups for p in group["params"]]
            self.frame = _user_frame(2)
            self.popped = torch.overrides._pop_mode()
            return self._closure_seen(args, kwargs)
        return None

    def _closure_seen(self, args, kwargs):
        """The step's arguments with its closure (LBFGS, SAM-style optimizers) run under the
        locator again: the closure is the program's own code (a forward, a backward, maybe a
        write of its own), seen as the rest of the program is. None where there is no closure."""
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)  # args[0]: the optimizer
        if not callable(closure):
            return None

        def seen(*a, **k):
            self.flush()  # what the step wrote before calling back
            torch.overrides._push_mode(self.locator)
            try:
                return closure(*a, **k)
            finally:
                torch.overrides._pop_mode()
                self._rebase()  # the closure's own writes were seen as they happened

        if "closure" in kwargs:
            return args, {**kwargs, "closure": seen}
        return (args[0], seen, *args[2:]), kwargs

    def _rebase(self) -> None:
        self.versions = [(p, p._version) for p, _ in self.versions]

    def flush(self) -> None:
        """The step's own writes since it began (or since it last called back into the
        program), reported at its line: a step that calls back into the program (LBFGS's
        closure) runs a backward before it returns."""
        for tensor, version in self.versions:
            if tensor._version != version:
                self.locator._mutated(tensor, "optimizer.step", tensor._version, frame=self.frame)
        self._rebase()

    def resume(self) -> None:
        """After the step (or when it raised: before the locator is left)."""
        if self.popped is None:
            return
        torch.overrides._push_mode(self.popped)
        self.popped = None
        self.flush()
        self.versions, self.frame = [], None


# ---------------------------------------------------------------- what a run computed
class _Recorder:
    """Tensors by stable key: parameters are named after the module that holds them (modules
    numbered in construction order) and their attribute; other leaves by their order in the pass."""

    def __init__(self) -> None:
        self.modules: List[torch.nn.Module] = []  # kept alive: the final state is read at the end
        self.leaves: Dict[str, torch.Tensor] = {}  # leaves seen by a pass, read again at the end
        self.values: Dict[str, torch.Tensor] = {}
        self.steps = 0
        self._pending: List[torch.Tensor] = []

    def track_modules(self) -> None:
        original = torch.nn.Module.__init__
        recorder = self

        def __init__(module, *args, **kwargs):
            original(module, *args, **kwargs)
            recorder.modules.append(module)

        torch.nn.Module.__init__ = __init__

    def _keys(self) -> Dict[int, str]:
        keys: Dict[int, str] = {}
        for index, module in enumerate(self.modules):
            for name, tensor in list(module._parameters.items()) + list(module._buffers.items()):
                if tensor is not None and id(tensor) not in keys:
                    keys[id(tensor)] = f"module{index}:{type(module).__name__}.{name}"
        return keys

    def _keep(self, key: str, tensor: Optional[torch.Tensor]) -> None:
        self.values[key] = None if tensor is None else tensor.detach().clone().cpu()

    def before(self, pass_no: int, roots: List[torch.Tensor], inputs) -> List[torch.Tensor]:
        for i, root in enumerate(roots):
            self._keep(f"pass{pass_no}/loss{i}", root)
        if inputs is not None:
            return [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        return graph_leaves(roots)

    def after_backward(self, count: int, leaves: List[torch.Tensor]) -> None:
        keys = self._keys()
        for i, leaf in enumerate(leaves):
            key = keys.get(id(leaf), f"leaf{i}")
            self._keep(f"pass{count}/grad/{key}", leaf.grad)
            self.leaves.setdefault(key, leaf)

    def after_grad(self, count: int, inputs: List[torch.Tensor], grads) -> None:
        keys = self._keys()
        for i, (leaf, grad) in enumerate(zip(inputs, grads)):
            self._keep(f"pass{count}/grad/{keys.get(id(leaf), f'input{i}')}", grad)

    def after_step(self, optimizer) -> None:
        self.steps += 1
        keys = self._keys()
        i = 0
        for group in optimizer.param_groups:
            for p in group["params"]:
                self._keep(f"step{self.steps}/{keys.get(id(p), f'param{i}')}", p)
                i += 1

    def final_state(self) -> None:
        keys = self._keys()
        for index, module in enumerate(self.modules):
            for name, tensor in list(module._parameters.items()) + list(module._buffers.items()):
                if tensor is not None and keys.get(id(tensor), "").startswith(f"module{index}:"):
                    self._keep(f"final/{keys[id(tensor)]}", tensor)
        for key, leaf in self.leaves.items():
            if id(leaf) not in keys:
                self._keep(f"final/{key}", leaf)


# ---------------------------------------------------------------- the reference for leaf errors
_MUTATING_DUNDERS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                     "__ipow__", "__imod__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"}


class _LeafUpdatesWithoutAutograd(TorchFunctionMode):
    """At the given lines, in-place ops on a leaf that requires grad run under ``no_grad``:
    the meaning of weight surgery, init and manual SGD ("updates applied outside autograd")."""

    def __init__(self, sites) -> None:
        super().__init__()
        self.sites = {(os.path.realpath(f), line) for f, line in sites}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        inplace = name in _MUTATING_DUNDERS or (name.endswith("_") and not name.endswith("__"))
        target = args[0] if args else None
        if inplace and isinstance(target, torch.Tensor) and target.is_leaf and target.requires_grad:
            frame = _user_frame(2)
            if frame is not None and (os.path.realpath(frame.f_code.co_filename), frame.f_lineno) in self.sites:
                with torch.no_grad():
                    return func(*args, **kwargs)
        return func(*args, **kwargs)


# ---------------------------------------------------------------- threads
class _Threads:
    """The script's threads run under what its main thread runs under, and what they die of is
    kept. Torch function modes and saved-tensor hooks are per thread, so without this an
    in-place error in a thread passes the locator by (and Python only prints it: the script
    still exits 0). Each new ``threading.Thread`` enters, before its ``run``, the modes and hooks
    the main thread entered (the locator's included); an exception that ends a thread is kept
    (``threading.excepthook``, and around ``run`` in case the script installs its own hook)."""

    def __init__(self) -> None:
        self.contexts: list = []
        self.errors: List[tuple] = []  # (thread name, exception), in the order they happened
        self.stopped = False  # a thread hit the --max-backward limit
        self._seen: set = set()

    def install(self, contexts: list) -> None:
        import threading

        self.contexts = list(contexts)
        original_hook = threading.excepthook
        threads = self

        def excepthook(args) -> None:
            threads._keep(args.thread, args.exc_value)
            if not isinstance(args.exc_value, _Stop):  # the tool's own stop is not the script's error
                original_hook(args)

        threading.excepthook = excepthook
        bootstrap = getattr(threading.Thread, "_bootstrap_inner", None)
        if bootstrap is None:  # pragma: no cover - every CPython from 3.8 to 3.13 has it
            return

        def _bootstrap_inner(thread) -> None:
            run = thread.run

            def run_kept() -> None:
                try:
                    run()
                except BaseException as exc:
                    threads._keep(thread, exc)
                    raise

            thread.run = run_kept
            entered = threads._enter()
            try:
                bootstrap(thread)
            finally:
                for context in reversed(entered):
                    context.__exit__(None, None, None)

        threading.Thread._bootstrap_inner = _bootstrap_inner

    def _keep(self, thread, exc: Optional[BaseException]) -> None:
        if isinstance(exc, _Stop):
            self.stopped = True
            return
        if exc is None or id(exc) in self._seen:
            return
        self._seen.add(id(exc))
        self.errors.append((getattr(thread, "name", "a thread"), exc))

    def _enter(self) -> list:
        """In the new thread: the main thread's modes and hooks, entered again for this one."""
        entered = []
        for context in self.contexts:
            if isinstance(context, Locator):
                parts = [torch.autograd.graph.saved_tensors_hooks(context._pack, context._unpack), _Pushed(context)]
            elif isinstance(context, torch.autograd.graph.saved_tensors_hooks):
                parts = [torch.autograd.graph.saved_tensors_hooks(context.pack_hook, context.unpack_hook)]
            elif isinstance(context, TorchFunctionMode):
                parts = [_Pushed(context)]
            else:  # the rounding probe's mode: a thread the script starts rounds to nearest (less noise measured)
                parts = []
            for part in parts:
                part.__enter__()
                entered.append(part)
        return entered

    def first_error(self) -> Optional[tuple]:
        from codemod.runtime.suggest import in_place_family

        return next(((name, exc) for name, exc in self.errors if in_place_family(exc)), None)


class _Pushed:
    """A torch function mode pushed on this thread's stack (the mode's own ``__enter__`` may do
    more: the locator's registers global module hooks, once, in the main thread)."""

    def __init__(self, mode: TorchFunctionMode) -> None:
        self.mode = mode

    def __enter__(self) -> "_Pushed":
        torch.overrides._push_mode(self.mode)
        return self

    def __exit__(self, *exc) -> None:
        torch.overrides._pop_mode()


# ---------------------------------------------------------------- the child's main
def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _script_traceback(exc: BaseException) -> str:
    """The traceback as ``python script.py`` prints it: without this runner's frames."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith(_OWN_DIR)
                              or "runpy" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _conflict_json(conflict: Conflict) -> dict:
    from codemod.runtime.suggest import describe

    data = dataclasses.asdict(conflict)
    data["shape"] = list(conflict.shape)
    data["describe"] = describe(conflict)
    return data


def main(request_file: str) -> None:
    owner = os.getpid()  # a process the script forks unwinds through here too; only this one reports
    with open(request_file, encoding="utf-8") as handle:
        request = json.load(handle)
    mode = request["mode"]
    sources = request.get("sources") or {}
    use_sources(sources)
    if request.get("seed"):
        _seed_everything()
    recorder = _Recorder() if mode == "record" or request.get("record_values") else None
    locator = Locator() if mode == "locate" else None
    quiet = _QuietSteps(locator) if locator is not None else None
    if quiet is not None:
        quiet.install()
    passes = _Passes(request.get("max_backward"), recorder, quiet)
    passes.install()
    if recorder:
        recorder.track_modules()
    result = {"outcome": "clean", "exit_code": 0, "error": None, "traceback": None}
    contexts = []
    if locator is not None:
        contexts.append(locator)
    if request.get("snapshot"):
        contexts.append(torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t))
        contexts.append(snapshot_ctx_attributes())  # a custom Function's ctx attributes too (global: threads share it)
    if request.get("no_grad_sites"):
        contexts.append(_LeafUpdatesWithoutAutograd(request["no_grad_sites"]))
    replay = None
    if request.get("recompute"):  # the step-order repair's recompute meaning: stale forwards run again
        from codemod.runtime.recompute import RecomputeAfterStep

        replay = RecomputeAfterStep()
        contexts.append(replay)
    copies = None
    if request.get("view_copies"):  # the view family's reference: refused views become copies
        from codemod.runtime.view_copies import WritesIntoCopies

        copies = WritesIntoCopies()
        contexts.append(copies)
    elif request.get("views_allowed"):  # where copies do not fit: multi-output views made ordinary
        from codemod.runtime.view_copies import ViewsAllowed

        contexts.append(ViewsAllowed())
    if request.get("seed") and torch.cuda.is_available():  # the runs a repair compares: one dropout draw
        from codemod.runtime.dropout_draws import SameDropoutDraws

        contexts.append(SameDropoutDraws())
    if request.get("rounding"):  # the rounding probe: every float operation rounded one way
        contexts.insert(0, rounding(request["rounding"]))
    threads = _Threads()
    threads.install(contexts)
    error: Optional[BaseException] = None
    thread_name: Optional[str] = None
    try:
        for context in contexts:
            context.__enter__()
        try:
            _run_main(request)
        finally:
            if quiet is not None:
                quiet.resume()
            for context in reversed(contexts):
                context.__exit__(*sys.exc_info())
    except _Stop:
        result["outcome"] = "stopped"
    except SystemExit as exc:
        result["exit_code"] = _exit_code(exc)
        result["outcome"] = "clean" if result["exit_code"] == 0 else "exit"
    except BaseException as exc:  # the script's own failure: reported as the script's
        error = exc
        result["outcome"] = "exception"
        result["exit_code"] = 1
    sys.stdout.flush()
    died = threads.first_error()
    if error is None and died is not None and result["outcome"] in ("clean", "exit"):
        # The main thread ended as if nothing happened (Python only prints what ends a thread):
        # the in-place error of a thread is the run's, said as such.
        thread_name, error = died
        result["outcome"] = "exception"
    elif error is None and threads.stopped and result["outcome"] == "clean":
        result["outcome"] = "stopped"
    if error is not None:
        result["error"] = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        result["traceback"] = _script_traceback(error)
        result["thread"] = thread_name
        from codemod.runtime.suggest import in_place_family

        result["inplace_family"] = in_place_family(error)
        if result["inplace_family"] and locator is not None and any(c.confirmed for c in locator.conflicts):
            result["outcome"] = "conflict"
    result["backward_passes"] = passes.count
    if copies is not None:
        result["unfit"] = copies.unfit
    if replay is not None:  # with the view copies too: either one not fitting leaves no reference
        result["unfit"] = result.get("unfit") or replay.unfit
        result["replays"] = replay.replays
    if locator is not None:
        confirmed = [c for c in locator.conflicts if c.confirmed]
        result["conflicts"] = [_conflict_json(c) for c in confirmed]
        if confirmed and request.get("suggest"):
            from codemod.runtime.suggest import digest, suggest_all

            # "basis": the text the fix was computed on, which the parent checks against its own.
            result["suggestions"] = [
                {"path": s.path, "actions": s.actions, "diff": s.diff(), "fixed": s.fixed if s.changed else None,
                 "basis": digest(s.original)}
                for s in suggest_all(confirmed, sources, skip=request.get("skip") or None,
                                     meaning=request.get("meaning") or "as-computed")
            ]
    if os.getpid() != owner:
        return  # a fork of the script (both interrupted at once wrote one file: "Extra data")
    if recorder is not None:
        recorder.final_state()
        torch.save(recorder.values, request["record"])
    partial = request["result"] + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    os.replace(partial, request["result"])  # the parent reads a whole result or none


def serve() -> None:
    """The fork server: torch and this module are imported once; each request path read from
    stdin runs in a forked copy (its own process, so nothing of one run reaches the next).
    Replies, one line each: the copy's pid, then its exit code."""
    import atexit

    _warm_up()
    protocol_in, protocol_out = sys.stdin, os.fdopen(os.dup(1), "w")
    for line in protocol_in:
        request_file = line.strip()
        with open(request_file, encoding="utf-8") as handle:
            request = json.load(handle)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                procgroup.own_group()  # killed whole at the timeout, with what it started
                os.chdir(request["cwd"])
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                for fd, name in ((1, "stdout"), (2, "stderr")):
                    target = os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    os.dup2(target, fd)
                    os.close(target)
                sys.stdin = open(os.devnull, encoding="utf-8")
                main(request_file)
                atexit._run_exitfuncs()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        procgroup.adopt(pid)
        protocol_out.write(f"{pid}\n")
        protocol_out.flush()
        _, status = os.waitpid(pid, 0)
        procgroup.end_group(pid)  # what the run left behind (a forked copy, a `sleep`)
        protocol_out.write(f"{os.waitstatus_to_exitcode(status)}\n")
        protocol_out.flush()


def _warm_up() -> None:
    """Import once, before forking, what most runs import anyway: what a conflict's suggestion
    needs (libcst, the analysis) and what building an optimizer imports (torch._dynamo: seconds)."""
    import torch._dynamo  # noqa: F401

    from codemod.config import Settings
    from codemod.engine.pipeline import process_source
    from codemod.runtime import suggest  # noqa: F401

    process_source(b"import torch\nx = torch.ones(1)\nx.add_(1)\n", "warm.py", Settings(select=("ALL",)),
                   build_fixes=True)
