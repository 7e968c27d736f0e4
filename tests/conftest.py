"""Fixtures for every test, and the order of the modules; shared helpers are in ``support``
(``tests/support/``).

In parallel workers (pytest-xdist, ``-n auto --dist loadfile --no-loadscope-reorder``) each test
module is one unit of work, so its module fixtures are built once, in one worker; the modules of
:data:`SAME_WORKER` share a unit; and the longest modules (:data:`LONGEST`) come first, so the
workers end together instead of one finishing a long module alone.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

#: Modules of the slow targets alone (``make conformance``): not collected in the default run, so it
#: neither runs nor skips them.
collect_ignore = [] if os.environ.get("ACPGEN_CONFORMANCE") else ["kit/test_agent_kit_matrix.py",
                                                                  "kit/test_versions_kits_matrix.py"]


def _cache_bytecode() -> None:
    """Let every Python process of the run cache bytecode in one folder the run owns.

    Most tests start Python processes that import a package generated moments before (the bundled
    schema's ``models.py`` alone is ~37k lines). Where ``PYTHONDONTWRITEBYTECODE`` is set, as it is
    on many CI machines, each of them compiled every module again: two thirds of some modules' CPU.
    The run's processes (pytest-xdist workers and every process they start inherit the environment)
    write bytecode under ``PYTHONPYCACHEPREFIX``, a temporary folder, never beside a source file, so
    no generated package and no checkout gains a ``__pycache__``. The process that made the folder
    removes it at exit; a nested run (the sdist's own suite) uses its parent's.
    """
    folder = os.environ.get("ACPGEN_TESTS_PYCACHE")
    if not folder:  # the run's first process
        folder = tempfile.mkdtemp(prefix="acpgen-pycache-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["ACPGEN_TESTS_PYCACHE"] = folder
        _seed_bytecode(Path(folder))
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = folder
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


#: Folders of the standard library no test imports from: not worth seeding.
_UNUSED_STDLIB = frozenset({"test", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip", "site-packages"})


def _seed_bytecode(folder: Path) -> None:
    """Give the run's folder the bytecode this interpreter's standard library and installed
    packages already have (an interpreter reads bytecode only under ``PYTHONPYCACHEPREFIX`` once
    it is set): without it, the first process to import each of them compiled it again, and the
    workers, which start together, all did. Linked where the file system allows, else copied."""
    tag = sys.implementation.cache_tag
    for key in ("stdlib", "purelib", "platlib"):
        root = sysconfig.get_paths()[key]
        for where, folders, files in os.walk(root):
            folders[:] = [name for name in folders if key != "stdlib" or name not in _UNUSED_STDLIB]
            if os.path.basename(where) != "__pycache__":
                continue
            target = folder / os.path.dirname(where).lstrip(os.sep)
            target.mkdir(parents=True, exist_ok=True)
            for name in files:
                if name.endswith(f".{tag}.pyc") and not (target / name).exists():
                    try:
                        os.link(os.path.join(where, name), target / name)
                    except OSError:
                        shutil.copyfile(os.path.join(where, name), target / name)


def _share_outputs() -> None:
    """Give the run a folder of generated packages its workers share (see ``support.run_cache``);
    the process that made it removes it at exit. A nested run (the sdist's own suite) uses its
    parent's: its outputs are keyed by its own copy of acpgen."""
    if os.environ.get("ACPGEN_TESTS_OUTPUTS"):  # a worker, or a nested run
        return
    folder = tempfile.mkdtemp(prefix="acpgen-outputs-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["ACPGEN_TESTS_OUTPUTS"] = folder  # support.run_cache.FOLDER: support is not imported yet


_cache_bytecode()
_share_outputs()

import pytest
import support  # noqa: F401  (generates the fresh bindings and puts them on sys.path before collection)
from click.testing import CliRunner

from acpgen.cli import main

#: The modules that take longest (wall time in a run of the whole suite, 2 cores), longest first;
#: the rest keep pytest's order after them. A module of :data:`SAME_WORKER` stands for its unit.
LONGEST = (
    "tests/models/test_models_roundtrip.py",
    "tests/workflow/test_loop_projects.py",
    "tests/versions/test_several_versions.py",
    "tests/releases/test_releases_corpus.py",
    "tests/render/test_black_style.py",
    "tests/workflow/test_workflow_ci.py",
    "tests/render/test_no_black.py",
    "tests/models/test_pydantic_models.py",
    "tests/diff/test_diff_corpus.py",
    "tests/versions/test_versions_per_schema.py",
    "tests/workflow/test_badinput_errors.py",
    "tests/workflow/test_pydantic_v2.py",
    "tests/docs/test_quick_start.py",
    "tests/runtime/test_remote_interop.py",
    "tests/kit/test_agent_kit_rough.py",
    "tests/kit/test_agent_kit.py",
    "tests/kit/test_agent_kit_sloppy.py",
    "tests/docs/test_docs_flavours.py",
    "tests/versions/test_negotiation.py",
    "tests/versions/test_remote_versions.py",
    "tests/models/test_models_static.py",
    "tests/versions/test_version_rule_per_draft.py",
    "tests/versions/test_versions_tools.py",
    "tests/workflow/test_pydantic_flavour.py",
    "tests/models/test_pydantic_leniency.py",
)
#: Modules one worker runs one after another: unit name -> modules. These build acpgen from the
#: checkout itself, where pip and setuptools write ``build/`` and ``acpgen.egg-info/``.
SAME_WORKER = {
    "builds-the-checkout": (
        "tests/workflow/test_packaging.py",
        "tests/workflow/test_workflow_ci.py",
        "tests/workflow/test_badinput_install.py",
    ),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    named = [*LONGEST, *(module for modules in SAME_WORKER.values() for module in modules)]
    if missing := [module for module in named if not (config.rootpath / module).is_file()]:
        raise pytest.UsageError(f"tests/conftest.py names modules that do not exist: {missing}")
    rank = {module: i for i, module in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(_module(item), len(rank)))  # stable: each module keeps its order


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # a pytest-xdist hook, as the next
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores. A worker spends about a sixth of its time waiting
    on the processes and sockets of its tests' peers; the extra worker uses the cores meanwhile."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without it, pytest runs the tests in one process
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile``, a unit of work is a module or a unit of :data:`SAME_WORKER`."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    unit = {module: name for name, modules in SAME_WORKER.items() for module in modules}

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return unit.get(module, module)

    return ModuleScheduling(config, log)


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.fixture
def cli():
    """Run the acpgen CLI in-process; returns click's Result (stdout and stderr kept apart)."""
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture
def write_schema(tmp_path):
    """Write a schema document (a dict, or raw text) to a file and return its path."""

    def write(doc: Any, name: str = "schema.json") -> Path:
        path = tmp_path / name
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
        return path

    return write
