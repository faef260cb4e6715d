"""Where "Suppress IPFxxx on this line" puts its comment, worked out from the statement around
the finding alone (an editor's quick fix on a long module), is where the whole text says."""

from __future__ import annotations


TRICKY = [
    "import torch\n\n\ndef f(x):\n    y = x.exp()\n    y.add_(1) + \\\n        2\n    return y\n",
    "import torch\ns = '''a\nb'''; x = torch.ones(2)\nx.add_(1)\n",
    "import torch\n\n@torch.no_grad()\n@other(\n    1)\ndef f(x):\n    x.add_(1)\n    '''doc\n    more'''\n",
    "import torch\na = (\n1); b = (2,\n3); c = torch.ones(\n4)\nc.add_(1)\n",
    "import torch\nx = 1; \\\ny = torch.ones(2)\ny.add_(1)\n",
    "import torch\n\\\nx = torch.ones(2)\nx.add_(1)  # a comment \\\n",
    "import torch\r\nx = torch.ones(2)\r\nx.add_('''a\r\nb''')\r\n",
    "import torch\rx = torch.ones(2)\rx.add_(1)\r",
    "import torch\nclass A:\n    def f(self, x):\n        x.add_(f'''{x}\n''')\n\n# trailing \\\n",
]


def test_the_comment_line_of_one_statement_is_the_whole_texts():
    """``comment_line_finder`` (the editor's quick fix: the statement around the line alone)
    answers what ``comment_lines`` (the whole text) answers, on every line of every fixture and
    of texts with backslashes, strings over lines, decorators and statements sharing lines."""
    import pathlib

    from codemod.analysis.source import Source
    from codemod.engine.suppression import comment_line_finder, comment_lines

    texts = list(TRICKY) + [p.read_text() for p in sorted(pathlib.Path("fixtures").rglob("*.py"))]
    checked = 0
    for text in texts:
        whole = comment_lines(text)
        if whole is None:
            continue
        tree = Source(text.encode()).tree
        at = comment_line_finder(text, tree)
        for line in range(1, text.count("\n") + text.count("\r") + 2):
            assert at(line) == whole(line), (text, line)
            checked += 1
    assert checked > 10_000
