"""A pytest plugin: a test that dies of the in-place, leaf or view error gets both lines and the
suggested fix appended to its failure report.

Installed with the package (entry point ``pytest11``), so pytest imports this module in every
project of that environment: it must cost nothing and change nothing until asked. Until then it
only adds its option and ini key; torch is not imported and no hook wraps a test. Enable it with
any of::

    pytest -p inplacefix          # the entry point's name
    pytest --inplacefix
    [pytest] inplacefix = true    # or [tool.pytest.ini_options] in pyproject.toml

Enabled, each test's call phase runs under the locator (about the cost of anomaly mode).
"""

from __future__ import annotations

import pytest

_NAME = "inplacefix"
_KEY = pytest.StashKey[object]()


def pytest_addoption(parser) -> None:
    group = parser.getgroup(_NAME)
    group.addoption("--inplacefix", action="store_true", default=False,
                    help="Run tests under inplacefix's locator: an in-place/leaf/view error gets "
                         "both lines and the suggested fix in its report.")
    parser.addini(_NAME, type="bool", default=False, help="Enable the inplacefix locator (as --inplacefix).")


def enabled(config) -> bool:
    plugins = getattr(config.option, "plugins", None) or []
    return bool(config.getoption(_NAME) or config.getini(_NAME) or _NAME in plugins)


def pytest_configure(config) -> None:
    if enabled(config) and not config.pluginmanager.has_plugin("inplacefix-locator"):
        config.pluginmanager.register(_Locating(), "inplacefix-locator")


class _Locating:
    """The hooks that run only once the plugin is enabled."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        from codemod.runtime.locate import Locator

        locator = Locator()
        item.stash[_KEY] = locator
        with locator:
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        locator = item.stash.get(_KEY, None)
        if call.when != "call" or not report.failed or locator is None or call.excinfo is None:
            return report
        from codemod.runtime.suggest import explain

        text = explain(call.excinfo.value, locator.conflicts)
        if text:
            longrepr = report.longrepr
            if hasattr(longrepr, "addsection"):
                longrepr.addsection("inplacefix: where the in-place error comes from", text)
            else:
                report.sections.append(("inplacefix: where the in-place error comes from", text))
        return report
