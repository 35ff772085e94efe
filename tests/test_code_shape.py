"""The house rule on parameter lists (issue 28 item 2): no function of ``personas/``, ``chatcontext/``
or ``bot/`` (migrations aside) takes more than 8 parameters; a longer list becomes a request or
value object. Read from the source with ``ast``, so every function counts: methods, nested
functions and lambdas, positional, keyword-only, ``*args`` and ``**kwargs`` (not ``self``/``cls``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.paths import PROJECT_PACKAGES, REPO_ROOT

MAX_PARAMETERS = 8

# Functions over the limit, as "path:qualified name", each with the reason it may be. None today.
ALLOWED: frozenset[str] = frozenset()

Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def parameter_count(node: Function) -> int:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (args.vararg is not None) + (args.kwarg is not None)


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, Function]]:
    """Every function under ``tree`` with its qualified name (``Class.method``, ``outer.inner``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.Lambda):
            yield f"{prefix}<lambda:{node.lineno}>", node
            yield from functions(node, prefix)
        else:
            yield from functions(node, prefix)


def sources() -> Iterator[Path]:
    for package in PROJECT_PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            if "migrations" not in path.relative_to(REPO_ROOT).parts:
                yield path


def long_parameter_lists() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sources():
        where = path.relative_to(REPO_ROOT).as_posix()
        for name, node in functions(ast.parse(path.read_text(encoding="utf-8"), filename=where)):
            count = parameter_count(node)
            if count > MAX_PARAMETERS:
                found[f"{where}:{name}"] = count
    return found


def test_no_function_takes_more_than_eight_parameters() -> None:
    found = long_parameter_lists()
    over = {name: count for name, count in found.items() if name not in ALLOWED}
    assert not over, "use a request or value object instead:\n" + "\n".join(
        f"  {name}: {count} parameters" for name, count in sorted(over.items())
    )


def test_the_allowance_lists_only_functions_still_over_the_limit() -> None:
    # An entry whose function was fixed (or renamed) would let its successor grow unnoticed.
    assert not ALLOWED - set(long_parameter_lists())


def test_the_count_sees_every_kind_of_parameter() -> None:
    source = (
        "class C:\n"
        "    def method(self, a, /, b, *args, c, **kwargs): pass\n"
        "async def outer(a, b, c, d, e, f, g, h, i):\n"
        "    def inner(a, b, c, d, e, f, g, h, *, i): pass\n"
        "    return lambda a, b, c, d, e, f, g, h, i: None\n"
    )
    counted = {name: parameter_count(node) for name, node in functions(ast.parse(source))}
    assert counted == {"C.method": 5, "outer": 9, "outer.inner": 9, "outer.<lambda:5>": 9}
