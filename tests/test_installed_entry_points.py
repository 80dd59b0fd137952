"""The installed entry points are read once, and again as soon as a distribution appears on the import path."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

from privasis_bench import registry

GROUP = "privasis_bench.test_only_group"


def _install(site: Path, name: str, entry: str) -> None:
    """A minimal installed distribution (a ``.dist-info`` folder) declaring one entry point of :data:`GROUP`."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entry} = {name}_mod:thing\n")


def test_entry_points_are_read_once_while_the_import_path_is_unchanged(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(tmp_path))  # a key of its own: no earlier test's answer is reused
    reads = []
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: reads.append(kw) or real(**kw))
    first = registry.installed_entry_points(GROUP)
    assert registry.installed_entry_points(GROUP) == first and reads == [{"group": GROUP}]


def test_a_distribution_installed_later_is_seen(monkeypatch, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert [ep.name for ep in registry.installed_entry_points(GROUP)] == []
    _install(site, "first_plugin", "one")  # the same sys.path, a folder changed under it
    assert [ep.name for ep in registry.installed_entry_points(GROUP)] == ["one"]
    other = tmp_path / "other"
    other.mkdir()
    _install(other, "second_plugin", "two")
    monkeypatch.syspath_prepend(str(other))  # a new folder on the path
    assert sorted(ep.name for ep in registry.installed_entry_points(GROUP)) == ["one", "two"]
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(other)])
    assert [ep.name for ep in registry.installed_entry_points(GROUP)] == ["one"]  # and one that left it
