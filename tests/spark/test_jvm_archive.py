"""The driver JVM's class-data archive (`spark_trace_check.jvm_archive`): offered only when whole, keyed on
the JVM and the Spark jars, off on request; `warm()` writes one a JVM maps, and a check runs with it.

A JVM mapping a truncated archive dies (SIGBUS), so the size check is the guard that matters: its twin is a
truncated copy, which must not be offered."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spark_trace_check import jvm_archive as ja


@pytest.fixture
def fake_install(tmp_path, monkeypatch):
    """A JAVA_HOME with a `bin/java`, a SPARK_HOME with two jars and a cache directory, all in tmp_path."""
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    (jars / "a.jar").write_bytes(b"a" * 10)
    (jars / "b.jar").write_bytes(b"b" * 20)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "spark"))
    monkeypatch.setenv("HACONFORM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HACONFORM_JVM_ARCHIVE", raising=False)
    return tmp_path


def _place(path: Path, size: int, noted: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    path.with_suffix(".json").write_text(json.dumps({"size": noted}))


@pytest.mark.unit
def test_a_whole_archive_is_offered_to_the_driver_jvm(fake_install):
    path = ja.archive_path()
    assert path is not None and path.parent == fake_install / "cache"
    assert ja.java_options() == ""  # none written yet
    _place(path, 64, 64)
    assert ja.java_options().startswith(f"-XX:SharedArchiveFile={path} ")


@pytest.mark.unit
def test_a_truncated_or_unnoted_archive_is_never_offered(fake_install):
    path = ja.archive_path()
    _place(path, 32, 64)  # twin: shorter than noted (a JVM mapping it would die)
    assert not ja.usable(path) and ja.java_options() == ""
    path.with_suffix(".json").unlink()
    assert not ja.usable(path) and ja.java_options() == ""
    path.with_suffix(".json").write_text("{not json")
    assert ja.java_options() == ""


@pytest.mark.unit
def test_the_archive_is_off_on_request(fake_install, monkeypatch):
    path = ja.archive_path()
    _place(path, 64, 64)
    monkeypatch.setenv("HACONFORM_JVM_ARCHIVE", "off")
    assert ja.java_options() == ""


@pytest.mark.unit
def test_the_key_follows_the_jvm_and_the_jars(fake_install):
    first = ja.key()
    jar = fake_install / "spark" / "jars" / "b.jar"
    jar.write_bytes(b"b" * 21)
    second = ja.key()
    assert first != second
    (fake_install / "spark" / "jars" / "c.jar").write_bytes(b"c")
    assert ja.key() not in (first, second)
    java = fake_install / "jdk" / "bin" / "java"
    before = ja.key()
    java.write_text("#!/bin/sh\n# another build\n")
    assert ja.key() != before


@pytest.mark.unit
def test_no_key_without_java_or_jars(fake_install, monkeypatch):
    monkeypatch.setenv("SPARK_HOME", str(fake_install / "nowhere"))
    assert ja.key() is None and ja.archive_path() is None and ja.java_options() == ""


@pytest.mark.slow
@pytest.mark.spark
def test_warm_writes_an_archive_a_check_runs_with(tmp_path, monkeypatch):
    monkeypatch.setenv("HACONFORM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HACONFORM_JVM_ARCHIVE", raising=False)
    path = ja.warm()
    assert path is not None and ja.usable(path)
    assert [p.name for p in path.parent.iterdir() if ".tmp" in p.name] == []  # nothing half written left
    assert ja._child(ja.java_options() + " -Xshare:on", tmp_path / "run.log") == 0, (tmp_path / "run.log").read_text()
    assert os.path.getsize(path) > 1 << 20
