"""An IPython extension: ``%%inplacefix`` runs a cell under the locator.

::

    %load_ext codemod.frontends.ipython     # or: %load_ext codemod

    %%inplacefix
    loss = model(x).sum()
    loss.backward()

If the cell dies of the in-place, leaf or view error, the magic prints the cell and line of
both sites (the save and the mutation, in this cell or in one run earlier) and the suggested
fix as a diff of that cell, instead of the traceback. Any other error shows as usual.
The cell runs in the notebook's namespace, as it would without the magic.
"""

from __future__ import annotations

from IPython.core.magic import Magics, cell_magic, magics_class


@magics_class
class InplacefixMagics(Magics):
    @cell_magic
    def inplacefix(self, line: str, cell: str):
        """Run the cell under inplacefix's locator; name both lines of an in-place conflict."""
        from codemod.runtime.suggest import explain
        from codemod.runtime.locate import Locator

        shell = self.shell
        source = shell.transform_cell(cell)
        filename = shell.compile.cache(source, _cell_number(shell, cell))
        code = shell.compile(source, filename, "exec")
        locator = Locator()
        try:
            with locator:
                exec(code, shell.user_ns)
        except Exception as exc:
            text = explain(exc, locator.conflicts)
            if not text:
                raise
            print(f"inplacefix: {type(exc).__name__}: {str(exc).splitlines()[0]}\n\n{text}")
            self.conflicts = [c for c in locator.conflicts if c.confirmed]
            return None
        self.conflicts = []
        return None


def _cell_number(shell, cell: str) -> int:
    """The In [n] of the cell being run: its raw text is already the last of the history."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", [])
    if raw and cell.strip() and cell.strip() in raw[-1]:
        return len(raw) - 1
    return shell.execution_count


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(InplacefixMagics)
