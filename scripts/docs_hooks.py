"""MkDocs hooks: the pages generated from the code (``mkdocs.yml`` names this file under ``hooks``).

Nothing here is written by hand about a rule, a setting or a command: the pages are made at build
time from the same objects the tool uses, so they cannot drift from it.

- ``rules/index.md``: every rule and its codes (``rules.registry.table``), and the reason codes
  (``findings.REASONS``).
- ``rules/<rule-name>.md`` (URL ``rules/<rule-name>/``, the one ``rules.registry`` links to): one
  page per rule class, from its docstring (summary, What it does, Why is this bad?, Example, Fix
  safety), its codes and their forms, and the reason codes its docs name.
- ``reference/cli.md``: every command, argument and option of the typer app (``frontends.cli``).
- ``reference/settings.md``: every key of ``[tool.inplacefix]`` (``config.KEYS``), its type, its
  default (``config.Settings``) and its description (``config.DESCRIPTIONS``).

``python scripts/docs_hooks.py OUTDIR`` writes the same pages into OUTDIR, to read them without
building the site.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import sys
from typing import Dict, List

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs imports this file by path; the package may not be installed
    sys.path.insert(0, str(ROOT))

RULES_TITLE = "Rules"


# --- rules -------------------------------------------------------------------------------------

def _rule_classes():
    """The rules, then the engine's own check of suppression comments (IPF900): each gets a page."""
    from codemod.rules.registry import UnusedSuppression, rules

    return [*rules(), UnusedSuppression]


def _codes(rule) -> List[tuple]:
    """(code, name, what it reports) for each code of the rule."""
    from codemod.rules.registry import UNUSED_SUPPRESSION, codes_of, table

    out = []
    for code in codes_of(rule):
        info = table()[code]
        if code == UNUSED_SUPPRESSION:  # the engine's check of suppressions, not a Rule
            what = "suppression comments that suppress nothing, off by default (`--extend-select IPF900`)"
        elif info.possible:
            what = ("possible hazard, off by default (`--select IPF2`): the write may modify a tensor "
                    "autograd saved, but the analysis cannot see it (a call it cannot see into, a value "
                    "from the caller)")
        elif info.hazard:
            what = f"proven hazard, on by default: reported {rule.HAZARD_FORM}"
        else:
            what = "every candidate, hazard or not (`--select IPF` or `ALL`): the blanket migration"
        out.append((code, info.name, what))
    return out


def _reasons_named(text: str) -> List[str]:
    from codemod.findings import REASONS

    named = []
    for match in re.finditer(r"`([a-z][a-z-]+)`", text):
        word = match.group(1)
        if word in REASONS and word not in named:
            named.append(word)
    return named


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rule_page(rule) -> str:
    from codemod.findings import REASONS
    from codemod.rules.registry import documentation

    doc = documentation(rule)
    summary, _, body = doc.partition("\n")
    lines = [f"# {rule.NAME} ({rule.CODE})", "", f"**{summary.strip()}**", "",
             "_Generated from the docstring of `" + f"{rule.__module__}.{rule.__qualname__}" + "`._", "",
             "| Code | Name | Reports |", "|---|---|---|"]
    for code, name, what in _codes(rule):
        lines.append(f"| `{code}` | `{name}` | {_cell(what)} |")
    lines += ["", body.strip(), ""]
    named = _reasons_named(doc)
    if named:
        lines += ["## Reasons", "",
                  "The reason codes this rule's findings can carry (`check` prints them in parentheses; "
                  "every code is listed on the [rules page](index.md#reasons)):", ""]
        lines += [f"- `{reason}`: {REASONS[reason]}" for reason in named]
        lines.append("")
    codes = [code for code, _, _ in _codes(rule)]
    shown = codes[1] if len(codes) > 1 else codes[0]  # the proven form where the rule has one
    lines += ["## Select and suppress", "",
              f"- Report every form: `inplacefix check --select {','.join(codes)}`; show this page: "
              f"`inplacefix rule {rule.CODE}`.",
              f"- On one line: `# noqa: {shown}` (or `# inplacefix: ignore[{shown}]`); in settings: "
              f"`ignore = [\"{shown}\"]`.", ""]
    return "\n".join(lines)


def rules_index() -> str:
    from codemod.findings import REASONS
    from codemod.rules.registry import summary

    lines = ["# Rules", "",
             "_Generated from the rule classes (`codemod/rules/`) and the reason codes (`codemod/findings.py`)._", "",
             "Each rule has three forms: `IPF0xx`, every in-place candidate it finds (the blanket migration, "
             "`--select IPF`); `IPF1xx`, the candidates proven to break backward (reported by default); and "
             "`IPF2xx`, those that may (a call the analysis cannot see into; `--select IPF2`). The leaf and "
             "view rules have no `IPF2xx`: PyTorch refuses those writes outright.", "",
             "| Rule | Codes | What it does |", "|---|---|---|"]
    for rule in _rule_classes():
        codes = ", ".join(f"`{code}`" for code, _, _ in _codes(rule))
        lines.append(f"| [{rule.NAME}]({rule.NAME}.md) | {codes} | {_cell(summary(rule))} |")
    lines += ["", "## Reasons", "",
              "Why a candidate is not a safe fix (unsafe, manual or skipped), as `check` prints it in "
              "parentheses and JSON gives it in `reason`:", "", "| Reason | Meaning |", "|---|---|"]
    lines += [f"| `{code}` | {_cell(text)} |" for code, text in REASONS.items()]
    return "\n".join(lines) + "\n"


# --- the command line --------------------------------------------------------------------------

def _param_row(param) -> str:
    if param.param_type_name == "argument":
        name = param.human_readable_name
        if param.nargs == -1:
            name += "..."
        default = "required" if param.required else ""
    else:
        name = ", ".join(param.opts)
        if param.secondary_opts:
            name += " / " + ", ".join(param.secondary_opts)
        if not param.is_flag and param.type.name not in ("boolean",):
            choices = getattr(param.type, "choices", None)
            name += " " + ("{" + ",".join(map(str, choices)) + "}" if choices else param.type.name.upper())
        default = param.default
        if default is None or (param.is_flag and default is False) or callable(default):
            default = ""
        elif isinstance(default, bool):
            default = param.opts[0] if default else param.secondary_opts[0] if param.secondary_opts else ""
        else:
            default = getattr(default, "value", default)
    return f"| `{name}` | {_cell(str(default)) if default != '' else ''} | {_cell(getattr(param, 'help', None) or '')} |"


def cli_page() -> str:
    import typer.main

    from codemod.frontends.cli import app

    group = typer.main.get_command(app)
    context = type(group.context_class(group)) if hasattr(group, "context_class") else None
    root = context(group, info_name="inplacefix")
    lines = ["# Command line", "",
             "_Generated from the command-line app (`codemod/frontends/cli.py`); "
             "`inplacefix COMMAND --help` prints the same._", "",
             (group.help or "").strip(), "", "```text", group.get_usage(root), "```", "",
             "| Option | Default | Description |", "|---|---|---|"]
    lines += [_param_row(p) for p in group.params if not getattr(p, "hidden", False)]
    lines += ["", "Exit codes: **0** nothing to do, **1** findings remain or a diff exists, **2** the tool "
              "failed; see [Exit codes](../faq.md#exit-codes).", ""]
    for name, command in group.commands.items():
        if getattr(command, "hidden", False):
            continue
        ctx = context(command, info_name=name, parent=root)
        lines += [f"## `inplacefix {name}`", "", (command.help or "").strip(), "",
                  "```text", command.get_usage(ctx), "```", ""]
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            lines += ["| Argument / option | Default | Description |", "|---|---|---|"]
            lines += [_param_row(p) for p in params]
            lines.append("")
    return "\n".join(lines)


# --- settings ----------------------------------------------------------------------------------

def _toml(value, kind) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (tuple, list)):
        if not value and "table" in str(kind.value):
            return "{}"
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    return repr(value)


class UndocumentedSetting(Exception):
    pass


def settings_page() -> str:
    from codemod import config

    defaults = {f.name: f.default for f in dataclasses.fields(config.Settings)}
    missing = [key for key in config.KEYS if key not in config.DESCRIPTIONS]
    if missing:
        raise UndocumentedSetting(f"settings without a description in codemod/config.py DESCRIPTIONS: {', '.join(missing)}")
    lines = ["# Settings", "",
             "_Generated from the settings schema (`codemod/config.py`: `KEYS`, `Settings`, `DESCRIPTIONS`)._", "",
             "Settings live in the `[tool.inplacefix]` table of `pyproject.toml` (see "
             "[Configuration](../configuration.md) for where the file is looked for). Every value is "
             "checked: a key of the wrong type, an unknown key or a selector that selects nothing stops "
             "the run with exit 2 and one line naming the file and the key. Command-line flags override the file.",
             ""]
    for key, spec in config.KEYS.items():
        default = _toml(defaults.get(spec.field), spec.kind)
        lines += [f"## `{key}`", "", config.DESCRIPTIONS[key], "",
                  f"- Type: {spec.kind.value}",
                  f"- Default: `{default}`" if len(default) < 80 else "- Default: the list below",
                  "", "```toml", "[tool.inplacefix]", f"{key} = {default or '[]'}", "```", ""]
    return "\n".join(lines)


# --- mkdocs ------------------------------------------------------------------------------------

def pages() -> Dict[str, str]:
    """Path under docs/ -> Markdown, for every generated page."""
    out = {"rules/index.md": rules_index(), "reference/cli.md": cli_page(), "reference/settings.md": settings_page()}
    for rule in _rule_classes():
        out[f"rules/{rule.NAME}.md"] = rule_page(rule)
    return out


def on_config(config, **kwargs):
    """The nav's "Rules" section lists every rule's page (a new rule appears without editing mkdocs.yml)."""
    nav = config.get("nav") or []
    for entry in nav:
        if isinstance(entry, dict) and RULES_TITLE in entry:
            entry[RULES_TITLE] = [{"Overview": "rules/index.md"}] + [
                {f"{rule.CODE} {rule.NAME}": f"rules/{rule.NAME}.md"} for rule in _rule_classes()]
    return config


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    for path, content in pages().items():
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=content))
    return files


if __name__ == "__main__":
    target = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "generated-docs")
    for path, content in pages().items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(content, encoding="utf-8")
        print(target / path)
