"""inplacefix: find and fix PyTorch in-place operations that break autograd."""

__version__ = "0.1.0"
