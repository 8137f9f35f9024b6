"""requirements/dev.lock pins every package the dev extra asks for, within its declared range.

CI installs with the lock as constraints; a requirement added to pyproject.toml without refreshing
the lock would go unpinned (or a pin outside the new range would make the install fail), so this
test names what to refresh.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "dev.lock"
REFRESH = "uv pip compile pyproject.toml --extra dev --python-version 3.11 -o requirements/dev.lock"


def read_lock(text: str) -> dict[str, str]:
    """Map each pinned package's canonical name to its version (`name==version` lines)."""
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise ValueError(f"lock line {raw!r} is not name==version")
        pins[canonicalize_name(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return pins


def dev_requirements(project: Mapping[str, Any]) -> list[Requirement]:
    """What `pip install -e ".[dev]"` asks for, with the self-referencing extras expanded."""
    name = canonicalize_name(str(project["name"]))
    optional = project["optional-dependencies"]
    wanted = [Requirement(spec) for spec in project["dependencies"]]
    seen: set[str] = set()
    todo = ["dev"]
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for spec in optional[extra]:
            requirement = Requirement(spec)
            if canonicalize_name(requirement.name) == name:
                todo.extend(requirement.extras)
            else:
                wanted.append(requirement)
    return wanted


def test_read_lock_refuses_unpinned_lines():
    assert read_lock("aiohttp==3.14.5\n    # via rxagent\nMarkupSafe==3.0.4\n") == {
        "aiohttp": "3.14.5",
        "markupsafe": "3.0.4",
    }
    with pytest.raises(ValueError, match="not name==version"):
        read_lock("aiohttp>=3\n")


def test_dev_requirements_follow_self_referencing_extras():
    project = {
        "name": "rxagent",
        "dependencies": ["pydantic>=2"],
        "optional-dependencies": {
            "redis": ["redis>=5"],
            "testing": ["hypothesis"],
            "dev": ["rxagent[redis,testing]", "ruff"],
        },
    }
    names = sorted(r.name for r in dev_requirements(project))
    assert names == ["hypothesis", "pydantic", "redis", "ruff"]


def test_lock_pins_every_dev_requirement_within_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = read_lock(LOCK.read_text())
    missing, outside = [], []
    for requirement in dev_requirements(project):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = pins.get(canonicalize_name(requirement.name))
        if version is None:
            missing.append(requirement.name)
        elif not requirement.specifier.contains(version, prereleases=True):
            outside.append(f"{requirement} (locked {version})")
    stale = f"requirements/dev.lock is stale; refresh it with `{REFRESH}`"
    assert not missing, f"{stale}: not pinned: {missing}"
    assert not outside, f"{stale}: pinned outside their range: {outside}"
