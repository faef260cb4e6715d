"""What the probe files' ``__main__`` blocks print: a probe ``runs`` (backward without the in-place
error); a control ``raises`` (the error's first line), or says that it did not."""


def runs(f):
    f()
    return "runs"


def raises(f):
    try:
        f()
    except RuntimeError as exc:
        return "raises: " + str(exc).splitlines()[0][:90]
    return "RUNS (control should raise)"
