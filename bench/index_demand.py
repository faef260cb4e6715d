"""What an index built on demand could leave out (issue 27): of a code base's files, those whose
facts no file with a candidate can read.

A file asks the project index only when the rules' text screen passes it (or it may hold a
suppression of ours). Every answer the index gives a file is read off the files linked to it by
imports or calls, through other files (``ProjectIndex._import_links``, both ways: the connected
part of the file; ``other_dtype`` and ``hooks`` join the whole part). So a file could go without
its facts only where no file of its connected part asks: this script counts those files, their
lines, and what their facts cost against all the files' (CPU seconds, no cache, one process).

    python bench/index_demand.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import pathlib
import sys
import time

from codemod.analysis.project import module_name
from codemod.engine import project as engine_project
from codemod.engine.project import build_index
from codemod.rules import registry


def measure(folder: pathlib.Path) -> str:
    files = sorted(str(p) for p in folder.rglob("*.py"))
    index = build_index(files)
    if index is None:
        return f"{folder}: fewer than two files"
    data = {p: pathlib.Path(p).read_bytes() for p in files}
    names = index.module_names
    asking = {names[p] for p in files if registry.may_have_candidates(data[p]) or b"IPF" in data[p].upper()
              or b"INPLACEFIX" in data[p].upper()}
    links = index._import_links()
    part = {}
    for module in index.modules:
        if module in part:
            continue
        seen, todo = {module}, [module]
        while todo:
            for other in links.get(todo.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        whole = frozenset(seen)
        for m in seen:
            part[m] = whole
    idle = {m for m in index.modules if not part[m] & asking}
    sizes = sorted({id(p): len(p) for p in part.values()}.values(), reverse=True)
    project = frozenset(names.values())
    salt = engine_project._salt(project)

    def cost(paths) -> float:
        start = time.process_time()
        for p in paths:
            engine_project.module_facts(p, project, None, salt, names=names)
        return time.process_time() - start

    idle_paths = [p for p in files if names.get(p, module_name(pathlib.Path(p))) in idle]
    idle_cost, all_cost = cost(idle_paths), cost(files)
    lines = sum(data[p].count(b"\n") for p in files)
    idle_lines = sum(data[p].count(b"\n") for p in idle_paths)
    return (f"{folder}: {len(files)} files ({lines:,} lines), {len(asking)} may ask the index; "
            f"{len(sizes)} connected parts (largest {sizes[:5]}); no file asking in the part: "
            f"{len(idle_paths)} files ({idle_lines:,} lines), their facts {idle_cost:.3f} of {all_cost:.3f} CPU s")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(measure(pathlib.Path(arg)), flush=True)
