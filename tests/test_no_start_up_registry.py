"""Nothing is wired at start-up (issue 28 item 4): a use case that spans apps lives in the layer above
them (``community``) and imports what it needs, instead of a lower app keeping a module global that
an app above fills from its ``AppConfig.ready``. Two checks over the source of every project package:

- no function keeps what it is given in module state (a ``global`` it assigns, or a module-level
  dict, list or set it adds to): the shape of ``register_x(thing)``. Lazily built process-wide
  values (``process_cache()``) take no argument and are not registries;
- every ``AppConfig.ready`` only imports modules (Django's own registries: signal receivers,
  checks) and passes settings to a library (Pillow's pixel bound), never a project object.

The import contract (pyproject.toml) keeps the dependencies downward; these keep them from being
turned upward again at run time.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.paths import PROJECT_PACKAGES, REPO_ROOT

CONTAINER_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "WeakValueDictionary", "WeakSet"}
MUTATORS = {"append", "add", "update", "setdefault", "extend", "insert", "__setitem__"}


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for package in PROJECT_PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(REPO_ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _module_containers(module: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        built = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in CONTAINER_CALLS
        if isinstance(target, ast.Name) and (isinstance(value, ast.Dict | ast.List | ast.Set) or built):
            names.add(target.id)
    return names


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]
    return [a.arg for a in every if a.arg not in {"self", "cls"}]


def _module_state_writes(function: ast.FunctionDef | ast.AsyncFunctionDef, containers: set[str]) -> list[str]:
    writes: list[str] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Global):
            writes += [f"global {name}" for name in node.names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            if isinstance(node.func.value, ast.Name) and node.func.value.id in containers:
                writes.append(f"{node.func.value.id}.{node.func.attr}(…)")
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            writes += [
                f"{t.value.id}[…] ="
                for t in targets
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in containers
            ]
    return writes


def registry_fillers(modules: Iterator[tuple[str, ast.Module]]) -> list[str]:
    found: list[str] = []
    for path, module in modules:
        containers = _module_containers(module)
        for function in ast.walk(module):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and _parameters(function):
                found += [f"{path}: {function.name} → {w}" for w in _module_state_writes(function, containers)]
    return found


def _is_setting(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings"


def wiring_in_ready(modules: Iterator[tuple[str, ast.Module]]) -> list[str]:
    found: list[str] = []
    for path, module in modules:
        if not path.endswith("/apps.py"):
            continue
        for ready in (n for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name == "ready"):
            for statement in ready.body:
                if isinstance(statement, ast.Import | ast.ImportFrom):
                    continue
                call = statement.value if isinstance(statement, ast.Expr) else None
                arguments = [*call.args, *(k.value for k in call.keywords)] if isinstance(call, ast.Call) else []
                if not (arguments and all(_is_setting(a) for a in arguments)):
                    found.append(f"{path}:{statement.lineno}: {ast.unparse(statement)}")
    return found


def test_no_function_keeps_what_it_is_given_in_module_state() -> None:
    assert registry_fillers(_sources()) == []


def test_app_configs_are_ready_without_wiring() -> None:
    apps = [path for path, _ in _sources() if path.endswith("/apps.py")]
    assert {Path(p).parts[0] for p in apps} >= {"personas", "chatcontext", "community", "bot", "botplatform"}
    assert wiring_in_ready(_sources()) == []


def test_the_checks_see_the_registries_they_forbid() -> None:
    """What main had before this issue: each shape is caught."""
    old = ast.parse(
        "_store = None\n"
        "_registered: list = []\n"
        "SURFACES: dict = {}\n"
        "def register_prompt_record_store(store):\n    global _store\n    _store = store\n"
        "def register_server_columns(extra):\n    _registered.append(extra)\n"
        "def register_surface(surface):\n    SURFACES[surface.name] = surface\n"
        "def process_cache():\n    global _store\n    _store = 1\n"
    )
    assert [f.split(": ", 1)[1] for f in registry_fillers(iter([("old.py", old)]))] == [
        "register_prompt_record_store → global _store",
        "register_server_columns → _registered.append(…)",
        "register_surface → SURFACES[…] =",
    ]
    ready = ast.parse(
        "class C:\n"
        "    def ready(self):\n"
        "        from x import signals\n"
        "        register_prompt_record_store(PromptRecords())\n"
        "        server_usage.register()\n"
        "        configure_pillow(settings.MAX_IMAGE_PIXELS)\n"
    )
    assert [f.split(": ", 1)[1] for f in wiring_in_ready(iter([("old/apps.py", ready)]))] == [
        "register_prompt_record_store(PromptRecords())",
        "server_usage.register()",
    ]
