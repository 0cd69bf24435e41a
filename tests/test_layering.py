"""Packages depend one way: the engine on nothing, the client on the engine, the daemon
on both; no two modules import each other, directly or round a loop.

The graph is read from the source (every import statement, including imports inside
functions and under ``TYPE_CHECKING``: a name needed only for typing is still a
dependency a reader must follow), so it holds for code that is never run in a test.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "hearts_engine": ROOT / "engine" / "hearts_engine",
    "heartsbot": ROOT / "clients" / "python" / "heartsbot",
    "heartsd": ROOT / "server" / "heartsd",
}
# What each package may import besides the standard library and itself.
ALLOWED = {
    "hearts_engine": set(),  # no runtime dependency at all
    "heartsbot": {"hearts_engine", "grpc", "google"},  # installs with grpcio, protobuf, the engine
    "heartsd": {"hearts_engine", "heartsbot", "grpc", "google", "grpc_health", "grpc_reflection", "structlog",
                "psycopg", "openskill", "rich", "aiohttp", "uvloop",  # uvloop: optional (loop.py)
                "mypy_extensions"},  # optional: the compiled build's class decorator (runner.py)
}


def modules(packages: dict[str, Path]) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of ``packages``."""
    found = {}
    for package, path in packages.items():
        for file in sorted(path.rglob("*.py")):
            parts = [package, *file.relative_to(path).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = file
    return found


def imported(name: str, file: Path, known: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(modules of ours that ``name`` imports, other top-level packages it imports)."""
    tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
    package = name.split(".") if file.name == "__init__.py" else name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets.add(module)
            targets.update(f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known)
    ours, others = set(), set()
    for target in targets:
        candidate = target
        while candidate and candidate not in known:
            candidate = candidate.rpartition(".")[0]
        if candidate:
            if candidate != name:
                ours.add(candidate)
        else:
            others.add(target.split(".")[0])
    return ours, others


def graph(packages: dict[str, Path]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    known = modules(packages)
    edges, external = {}, {}
    for name, file in known.items():
        edges[name], external[name] = imported(name, file, known)
    return edges, external


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
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
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def violations(edges: dict[str, set[str]], external: dict[str, set[str]],
               allowed: dict[str, set[str]]) -> list[str]:
    """Imports that go against the allowed direction, as readable lines."""
    bad = []
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for name in sorted(edges):
        package = name.split(".")[0]
        for target in sorted(edges[name]):
            other = target.split(".")[0]
            if other != package and other not in allowed[package]:
                bad.append(f"{name} imports {target}")
        for other in sorted(external[name] - stdlib - allowed[package]):
            bad.append(f"{name} imports the third-party package {other}")
    return bad


def test_no_module_imports_round_a_loop():
    edges, _ = graph(PACKAGES)
    assert len(edges) > 50  # every module was read
    assert cycles(edges) == []


def test_packages_depend_one_way_engine_then_client_then_daemon():
    edges, external = graph(PACKAGES)
    assert violations(edges, external, ALLOWED) == []
    assert any(t.startswith("heartsbot") for t in edges["heartsd.arena"])  # the checks see real edges


def test_the_checks_fail_when_a_cycle_or_an_upward_import_is_put_back(tmp_path):
    """The arena/runner pair as it was (the runner importing the arena for a type), and
    the client importing the daemon: both must be reported."""
    (tmp_path / "daemon").mkdir()
    (tmp_path / "client").mkdir()
    (tmp_path / "daemon" / "__init__.py").write_text("")
    (tmp_path / "daemon" / "arena.py").write_text("from .runner import MatchRunner\n")
    (tmp_path / "daemon" / "runner.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .arena import Arena\n")
    (tmp_path / "client" / "__init__.py").write_text("")
    (tmp_path / "client" / "cli.py").write_text("def main():\n    from daemon.arena import X\n    import structlog\n")
    packages = {"daemon": tmp_path / "daemon", "client": tmp_path / "client"}
    edges, external = graph(packages)
    assert cycles(edges) == [["daemon.arena", "daemon.runner"]]
    assert violations(edges, external, {"daemon": {"client"}, "client": set()}) == [
        "client.cli imports daemon.arena", "client.cli imports the third-party package structlog"]
