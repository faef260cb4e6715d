"""inplacefix: find and fix PyTorch in-place operations that break autograd."""

__version__ = "0.2.0"  # the one place the version is written (pyproject.toml reads it)


def load_ipython_extension(ipython) -> None:
    """``%load_ext codemod``: the ``%%inplacefix`` cell magic (``codemod.frontends.ipython``).
    Imported only here, when IPython asks: importing the package stays free of the front ends."""
    from codemod.frontends.ipython import load_ipython_extension as load

    load(ipython)
