import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# The tests that run `python -m codemod` (or import it) in a child process from a temporary
# folder must get this tree's package, not the one the virtual environment installed (the main
# checkout's, in a worktree): the child inherits the variable.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


def pytest_addoption(parser):
    parser.addoption(
        "--update-fixtures",
        action="store_true",
        help="Rewrite the expected files of the fixtures from the tool's output (review the diff).",
    )


@pytest.fixture
def update_fixtures(request):
    return request.config.getoption("--update-fixtures")
