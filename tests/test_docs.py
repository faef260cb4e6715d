"""The docs site: `mkdocs build --strict` passes, and the pages generated from the code (one per
rule, the command line, the settings) are there and say what the code says."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

from codemod import config
from codemod.rules import registry

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs / mkdocs-material not installed (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f",
                            str(ROOT / "mkdocs.yml"), "-d", str(out)], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def test_mkdocs_build_strict_passes(site):
    assert (site / "index.html").is_file()
    for page in ("getting-started", "errors", "commands", "configuration", "editors", "notebooks",
                 "runtime", "faq", "benchmarks", "architecture", "reference/cli", "reference/settings", "rules"):
        assert (site / page / "index.html").is_file(), page


def test_every_rule_has_its_generated_page(site):
    for rule in registry.rules():
        page = site / "rules" / rule.NAME / "index.html"
        assert page.is_file(), f"no page for {rule.CODE} {rule.NAME}"
        html = page.read_text(encoding="utf-8")
        for code in registry.codes_of(rule):
            assert code in html
        summary = registry.summary(rule).replace("`", "")
        words = [w for w in summary.split() if w.isalpha()][:4]
        assert all(w in html for w in words), (rule.NAME, words)
        for section in ("What it does", "Why is this bad?", "Example", "Fix safety"):
            assert section in html, (rule.NAME, section)
    index = (site / "rules" / "index.html").read_text(encoding="utf-8")
    assert all(rule.NAME in index for rule in registry.rules())


def test_rule_urls_name_the_generated_pages(site):
    """The editor, SARIF and JSON link every code to ``rules/<rule-name>/``: that page exists."""
    for code in registry.table():
        url = registry.code_url(code)
        assert url.startswith("https://inplacefix.readthedocs.io/en/latest/rules/"), url
        page = site / url.rsplit("/latest/", 1)[1] / "index.html"
        assert page.is_file(), f"{code} links to {url}: no such page"
        assert code in page.read_text(encoding="utf-8"), code


def test_no_hand_written_rule_pages():
    """Rule pages are generated from the rule classes: none is kept under docs/."""
    assert not list((ROOT / "docs").glob("rules/**/*.md"))


def test_the_cli_reference_lists_every_command_and_option(site):
    import typer.main

    from codemod.frontends.cli import app

    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        assert f"inplacefix {name}" in html, name
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in html, (name, opt)


def test_every_setting_is_described_and_in_the_reference(site):
    assert set(config.KEYS) <= set(config.DESCRIPTIONS), set(config.KEYS) - set(config.DESCRIPTIONS)
    html = (site / "reference" / "settings" / "index.html").read_text(encoding="utf-8")
    for key in config.KEYS:
        assert f"<code>{key}</code>" in html, key


def test_the_generator_refuses_a_setting_without_a_description(monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import docs_hooks
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    monkeypatch.setitem(config.KEYS, "made-up", config.Key("select", config.Kind.BOOL))
    with pytest.raises(docs_hooks.UndocumentedSetting, match="made-up"):
        docs_hooks.settings_page()


def test_the_readme_is_short_links_every_rule_and_gives_the_ci_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    for rule in registry.rules():
        assert f"/rules/{rule.NAME}/" in readme, rule.NAME
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert "    " + ci in readme.splitlines(), "README's test command is not the one .ci/run runs"


def test_the_leaf_rules_hazard_form_says_what_it_reports():
    """IPF105 is a leaf PyTorch refuses to update, not a tensor saved for backward: its page and
    `inplacefix rule IPF105` say so (they used the saved-tensor sentence of the other rules)."""
    shown = subprocess.run([sys.executable, "-m", "codemod", "rule", "IPF105"], capture_output=True, text=True,
                           cwd=ROOT)
    assert shown.returncode == 0
    first = shown.stdout.split("\n\n")[1]
    assert "saved for backward" not in first and "leaf Variable" in first, first
