"""The package's layers, read from its source: no import cycle anywhere (imports inside functions
count: they only hide a cycle), the kernel never imports Spark (issue 17), and nothing persists
outside the run that releases it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "quiltdetect"


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(kept + ([base] if base else []))
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in candidates:
            while target and target not in known:  # a name imported from a module -> the module
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("quiltdetect"):
                targets.add(target)
    # ``from quiltdetect.x import y`` also names the package quiltdetect.x's __init__; only
    # the most specific module counts, so a package never "imports" its own children by that.
    return {t for t in targets if not any(o != t and o.startswith(t + ".") for o in targets)}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert "quiltdetect.options" in graph["quiltdetect.neardup.cli"]  # the walk sees imports
    assert cycles(graph) == []


def test_the_kernel_never_imports_spark():
    for path in (PACKAGE / "kernel").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "pyspark" for n in names), path


def test_each_bucket_table_is_defined_once_in_arrow_and_its_spark_ddl_derived():
    import pyarrow as pa

    from quiltdetect.common.arrow import ddl
    from quiltdetect.neardup import pairs
    from quiltdetect.quilts import cover, gram_table, patch_grams, patchfrac

    assert ddl(pa.schema([("a", pa.int32()), ("b", pa.binary()), ("c", pa.float64()), ("d", pa.bool_())])) == (
        "a int, b binary, c double, d boolean")
    for module, names in ((gram_table, ("GRAM_BUCKETS", "WORD_HASHES")), (patch_grams, ("DOC_PARTS", "DOC_BUCKETS")),
                          (patchfrac, ("FRACTIONS",)), (cover, ("PATCH_PAIRS", "TRIPLES")),
                          (pairs, ("BUCKET_ROWS", "MEMBERS", "TOUCHED"))):
        for name in names:
            assert getattr(module, f"{name}_DDL") == ddl(getattr(module, name))
            assert not {f.name for f in getattr(module, name)} & set("abcde"), name  # named columns


def job_classes() -> dict[str, type]:
    """Every job of the package by its command name (the concrete ``lifecycle.Job`` subclasses)."""
    import importlib

    from quiltdetect.lifecycle import Job

    for name in modules():
        if name.endswith(".job"):
            importlib.import_module(name)
    found: dict[str, type] = {}
    todo = list(Job.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if "name" in vars(cls):
            found[cls.name] = cls
    return found


def test_every_analysis_is_a_job_of_one_shape():
    """Each command that runs Spark is one ``Job``: a name, a config class, its tables and
    ``compute``; none re-implements the life cycle (``run``) or the summary frame."""
    from quiltdetect.common.config import JobConfig
    from quiltdetect.lifecycle import Job

    jobs = job_classes()
    assert set(jobs) == {"quilts", "ingest", "neardup", "phrases", "sweep", "mwo index", "mwo join",
                         "reuse discover", "reuse detect", "reuse mutate-eval"}
    for name, cls in jobs.items():
        assert issubclass(cls.config_class, JobConfig) and cls.state_name and cls.tables, name
        assert cls.compute is not Job.compute, name
        assert "run" not in vars(cls) and "summary" not in vars(cls), name


def test_the_architecture_document_names_every_job_and_its_tables():
    """docs/architecture.md is the map a newcomer reads: it must not fall behind the code."""
    text = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name, cls in job_classes().items():
        assert f"`{cls.__name__}`" in text, name
        for table in cls.tables:
            assert f"{table}/" in text, (name, table)


def test_jobs_persist_only_through_the_run_that_releases_it():
    """``common.caching.keep`` / ``cut`` register what a run persists so ``Job.run`` can release
    it; a bare ``.persist()``, ``.cache()`` or ``.localCheckpoint()`` would outlive the run in
    the caller's session (a notebook kept a copy of every corpus it had read)."""
    bare = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "common" / "caching.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("persist", "cache", "localCheckpoint", "checkpoint")):
                bare.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .{node.func.attr}()")
    assert bare == [], "use common.caching.keep / cut instead: " + ", ".join(bare)



def test_storage_levels_are_named_once():
    """SPILL, ON_DISK and TEXT_CACHE live in ``common.caching``, beside ``keep``: a job names the
    level it keeps a table at, and where each level is chosen is one place to read."""
    elsewhere = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "common" / "caching.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "StorageLevel":
                elsewhere.append(f"{path.relative_to(PACKAGE)}:{node.lineno} StorageLevel.{node.attr}")
    assert elsewhere == []


def test_the_console_command_starts_without_pyspark():
    """``quiltdetect --help`` and every command's parsing import no PySpark (0.4 s at each start,
    paid by every subprocess the tests and a scheduler run): a config class that imported a
    Spark module for a constant once did."""
    import subprocess
    import sys

    code = "import sys, quiltdetect.cli; print(any(m.split('.')[0] == 'pyspark' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(PACKAGE.parent)})
    assert out.stdout.strip() == "False"

def calls(path: Path) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)]


def test_stages_are_reused_only_through_the_run():
    """Whether a stage is reused (its marker, key and tables) is decided in one place,
    ``JobRun.stage``: a job that read or wrote stage markers itself (``state.stage``,
    ``finish_stage``) would write the reuse logic again, and get it subtly different."""
    allowed = {PACKAGE / "lifecycle.py", PACKAGE / "common" / "runstate.py"}
    by_hand = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in allowed:
            continue
        for node in calls(path):
            func = node.func
            if isinstance(func, ast.Attribute) and (
                    func.attr in ("finish_stage", "forget_stage")
                    or func.attr == "stage" and ast.unparse(func.value).endswith("state")):
                by_hand.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(func)}")
    assert by_hand == [], "reuse a stage through run.stage(name, description, build, key=..., reuse=...): " + \
        ", ".join(by_hand)


def test_no_module_reaches_into_another_modules_private_names():
    """A name that starts with ``_`` belongs to its module: another module (of the package or
    of bench/ or testkit/) that imports it, or reads it as ``module._name``, depends on what may change
    without notice. Make it public, with a docstring, or move it."""
    reached = []
    repo = PACKAGE.parents[1]
    files = [*sorted(PACKAGE.rglob("*.py")), *sorted((repo / "bench").rglob("*.py")), *sorted((repo / "testkit").rglob("*.py"))]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("quiltdetect"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        reached.append(f"{path.name}:{node.lineno} from {node.module} import {alias.name}")
                    module_names.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                module_names.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("quiltdetect"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in module_names):
                reached.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    assert reached == []


# Analyses and who may build on whom: an arrow a -> b lets a import b's modules (never its
# job module: that is the job, not a library). Everything else sits below them (kernel, common,
# documents, options, lifecycle) or above them (cli, api). docs/architecture.md draws the same.
ANALYSES = {"neardup", "quilts", "sweep", "phrases", "reuse", "mwo", "review"}
BUILDS_ON = {"quilts": {"neardup"}, "sweep": {"quilts"}, "phrases": {"neardup"}}
ABOVE = {"quiltdetect.cli", "quiltdetect.api", "quiltdetect.conftemplates", "quiltdetect"}


def test_analyses_build_on_each_other_only_in_the_documented_order_and_never_on_a_job():
    known = modules()
    wrong = []
    for name, path in known.items():
        if name in ABOVE:
            continue
        mine = name.split(".")[1]
        for target in imports(name, path, known):
            theirs = target.split(".")[1] if target.count(".") else target
            if theirs == mine or theirs not in ANALYSES:
                continue
            if mine not in ANALYSES:
                wrong.append(f"{name} (below the analyses) imports {target}")
            elif theirs not in BUILDS_ON.get(mine, set()):
                wrong.append(f"{name} imports {target}: {mine} does not build on {theirs}")
            elif target.endswith(".job"):
                wrong.append(f"{name} imports the job module {target}")
    assert wrong == []
    text = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "neardup ← quilts ← sweep" in text and "neardup ← phrases" in text


# The package's floors, lowest first: a module imports only from its own floor or below. Documents
# (reading, records, HTML, URLs, keys, the document table) sit below the job contract; the
# ``ingest`` command is one job beside the analyses.
FLOORS = (
    ("kernel", ("quiltdetect.kernel",)),
    ("common", ("quiltdetect.common",)),
    ("documents", ("quiltdetect.documents",)),
    ("job contract", ("quiltdetect.lifecycle", "quiltdetect.options")),
    ("jobs", ("quiltdetect.previous", "quiltdetect.ingest", *(f"quiltdetect.{a}" for a in sorted(ANALYSES)))),
    ("python api", ("quiltdetect.api",)),
    ("console", ("quiltdetect.cli", "quiltdetect.conftemplates")),
)
# Arrows that run up, each with its reason. The package's face hands the API on: ``from
# quiltdetect import find_quilts`` imports ``quiltdetect.api`` on first use (``__getattr__``), so
# that ``quiltdetect --help`` starts without Spark.
UPWARD = {("quiltdetect", "quiltdetect.api")}


def floor_of(module: str) -> int:
    """The floor (index into ``FLOORS``) of a module of the package; the package's face is 0."""
    for i, (_, prefixes) in enumerate(FLOORS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    if module == "quiltdetect":
        return 0
    raise AssertionError(f"{module} is on no floor: add it to FLOORS in tests/test_architecture.py")


def upward_arrows() -> list[tuple[str, str]]:
    """Every import from a lower floor to a higher one."""
    known = modules()
    return sorted((name, target) for name, path in known.items() for target in imports(name, path, known)
                  if floor_of(target) > floor_of(name))


def test_imports_run_down_the_floors_of_the_package():
    """Kernel < common < documents < the job contract < the jobs < the Python API < the console:
    an arrow that runs up is a layer that depends on what is built on it (the document layer
    once imported the job contract that imports it). The one arrow up is explained in ``UPWARD``."""
    assert floor_of("quiltdetect.documents.read") < floor_of("quiltdetect.lifecycle") < floor_of("quiltdetect.ingest.job")
    assert [arrow for arrow in upward_arrows() if arrow not in UPWARD] == []


def longest(n: int = 10) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The ``n`` longest functions (lines, with their docstrings) and files of the package."""
    functions, files = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(PACKAGE.parent)
        files.append((len(text.splitlines()), str(where)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.end_lineno - node.lineno + 1, f"{where}:{node.lineno} {node.name}"))
    return sorted(functions, reverse=True)[:n], sorted(files, reverse=True)[:n]


if __name__ == "__main__":  # python tests/test_architecture.py: the map's figures
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    top_functions, top_files = longest()
    print("longest functions (lines):", *(f"  {n:4d}  {what}" for n, what in top_functions), sep="\n")
    print("longest files (lines):", *(f"  {n:4d}  {what}" for n, what in top_files), sep="\n")
    print(f"modules: {len(known)}, import cycles: {len(cycles(graph))}", *(f"  {c}" for c in cycles(graph)), sep="\n")
    up = upward_arrows()
    print(f"imports that run up the floors: {len(up)}", *(f"  {a} -> {b}" for a, b in up), sep="\n")


# The run's own modules: the layout of an output (common/layout.py), the run that writes it
# (common/runstate.py, lifecycle.py) and the reader of a finished one (common/finished.py). fs.py
# and ownfiles.py name the markers only to recognise a run's output (refuse to clear a user's
# folder, leave a run's files out of an input) and read nothing of it.
RUN_OWN = {"common/layout.py", "common/runstate.py", "common/finished.py", "lifecycle.py"}
RECOGNISE_ONLY = {"common/fs.py", "common/ownfiles.py"}
LAYOUT_NAMES = {"COMPLETE", "STATE_DIR", "STAGES_DIR", "WORK_DIR"}
LAYOUT_PARTS = {"_COMPLETE", "_quiltdetect"}


def layout_reads(path: Path) -> list[str]:
    """Where a module names the layout of a run's output: imports one of its names, or spells a
    path of it (``"_COMPLETE"``, ``"_quiltdetect/..."``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("quiltdetect"):
            found += [f"{node.lineno} imports {a.name}" for a in node.names if a.name in LAYOUT_NAMES]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.strip("/").split("/")[0] in LAYOUT_PARTS:
                found.append(f"{node.lineno} spells {node.value!r}")
    return found


def test_only_the_run_reads_the_layout_of_an_output():
    """One reader of a finished run (``common.finished.FinishedRun``: its _COMPLETE record,
    stage markers and kept state) and one writer (``common.runstate``): a job names its state
    tables (``work_table``), an update reads them through ``run.previous``; no other module
    reads ``_COMPLETE``, ``_quiltdetect/stages`` or ``_quiltdetect/work`` by hand."""
    assert layout_reads(PACKAGE / "common" / "layout.py")  # the check sees the layout
    by_hand = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        if where in RUN_OWN:
            continue
        found = layout_reads(path)
        if where in RECOGNISE_ONLY:
            found = [f for f in found if "imports COMPLETE" not in f and "imports STATE_DIR" not in f]
        by_hand += [f"{where}:{f}" for f in found]
    assert by_hand == [], "read a finished run through common.finished.FinishedRun (run.previous): " + \
        ", ".join(by_hand)


def function_node(path: Path, qualname: str) -> ast.FunctionDef:
    """The definition ``qualname`` (``f`` or ``Class.f``) in the module at ``path``."""
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    *outer, name = qualname.split(".")
    for part in outer:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == part).body
    return next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)


def called(node: ast.AST) -> set[str]:
    """The names of the functions ``node`` calls (``f(...)`` and ``x.f(...)``)."""
    return {c.func.id if isinstance(c.func, ast.Name) else c.func.attr for c in ast.walk(node)
            if isinstance(c, ast.Call) and isinstance(c.func, (ast.Name, ast.Attribute))}


def test_a_fresh_run_and_an_update_go_through_one_pipeline():
    """A fresh near-duplicate run is the first step of its chain and an update a later one: the
    job's ``compute`` is one sequence of stages, with no branch on the previous run (the stages
    hold what differs, ``neardup/chain.py``); the quilt job runs an update through the same
    ``find_quilts`` as a fresh run, restricted to the documents the new ones touch."""
    neardup = function_node(PACKAGE / "neardup" / "job.py", "NearDupJob.compute")
    assert not [n for n in ast.walk(neardup) if isinstance(n, (ast.If, ast.IfExp))]
    assert {"start_chain", "fingerprints_stage", "pairs_stage", "clusters_stage", "kept_stage"} <= called(neardup)
    quilts = function_node(PACKAGE / "quilts" / "job.py", "QuiltsJob.compute")
    assert "find_quilts" in called(quilts) and not [b for b in ast.walk(quilts)
                                                    if isinstance(b, ast.If) and "find_quilts" in called(b)]


THRESHOLDS = {"b_threshold", "c_threshold", "combined_c_threshold", "resemblance_threshold", "containment_threshold"}


def test_the_rules_of_near_duplicates_are_written_once_for_any_number_of_bucket_families():
    """The bucket rule is ``pairs.bucket_pairs``, the verification ``pairs.decided_pairs`` (the
    only Spark code that reads a threshold), the keep rule ``keep.decide`` (called by
    ``decisions.py`` alone), for a fresh run, an update and the collapsing of other jobs alike;
    and no code assumes a number of bucket families (``x[0] if len(x) == 1 else
    x[0].unionByName(x[1])`` once did, in three places)."""
    pipeline = [PACKAGE / "neardup" / name for name in ("chain.py", "collapse.py", "pairs.py")]
    readers = []
    for path in pipeline:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                reads = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in THRESHOLDS}
                if reads:
                    readers.append(f"{path.name}:{node.name}")
    # fingerprints: a simhash is cut into as many pieces as the C threshold needs (Henzinger 2006)
    assert readers == ["pairs.py:fingerprints", "pairs.py:decided_pairs"]
    for name in ("chain.py", "pairs.py"):
        assert "bucket_pairs" in called(ast.parse((PACKAGE / "neardup" / name).read_text(encoding="utf-8")))
    callers = [path.name for path in PACKAGE.rglob("*.py") if path.name != "keep.py"
               and "decide" in called(ast.parse(path.read_text(encoding="utf-8")))]
    assert callers == ["decisions.py"]
    pairwise = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "unionByName"
                    and node.args and isinstance(node.args[0], ast.Subscript)
                    and isinstance(node.args[0].slice, ast.Constant) and node.args[0].slice.value == 1):
                pairwise.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert pairwise == [], "union any number of tables with functools.reduce(DataFrame.unionByName, tables)"
