"""Outputs are published whole or not at all (sitesim.output)."""

from __future__ import annotations

import gzip
import os
import signal
import threading
from pathlib import Path

import pytest

from sitesim.output import atomic_write, atomic_write_all, staged_folder


def test_several_files_appear_together(tmp_path: Path) -> None:
    atomic_write_all([(tmp_path / "a.swf", "a\n"), (tmp_path / "sub" / "b.json.gz", b"{}")])
    assert (tmp_path / "a.swf").read_text() == "a\n"
    assert gzip.decompress((tmp_path / "sub" / "b.json.gz").read_bytes()) == b"{}"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.swf", "b.json.gz", "sub"]


def test_a_file_that_cannot_be_written_leaves_none_of_the_others(tmp_path: Path) -> None:
    (tmp_path / "old.swf").write_text("kept\n")
    (tmp_path / "blocker").write_text("a file where a folder is needed\n")
    with pytest.raises(OSError):
        atomic_write_all([(tmp_path / "old.swf", "new\n"), (tmp_path / "blocker" / "b.json", "")])
    assert (tmp_path / "old.swf").read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "old.swf"]


def test_a_ctrl_c_during_the_renames_comes_after_the_last(
    tmp_path: Path, sigint_as_from_a_terminal: None
) -> None:
    """SIGINT is held while the files are renamed into place: all are there when it lands,
    with another thread running too. (The signal is sent to the main thread, where Python
    runs handlers, so that it is there at once; under a shell's background job, which ignores
    SIGINT, the test gets Python's usual handler back: ``sigint_as_from_a_terminal``.)"""
    waiting = threading.Event()
    other = threading.Thread(target=waiting.wait, daemon=True)
    other.start()
    seen: list[bool] = []
    real = os.replace
    main = threading.main_thread().ident
    assert main is not None

    def replace_and_interrupt(src: str, dst: Path) -> None:
        real(src, dst)
        if not seen:
            seen.append(True)
            signal.pthread_kill(main, signal.SIGINT)  # held back until the renames are done

    os.replace = replace_and_interrupt  # type: ignore[assignment]
    try:
        with pytest.raises(KeyboardInterrupt):
            atomic_write_all([(tmp_path / name, name) for name in ("a", "b", "c")])
    finally:
        os.replace = real
        waiting.set()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


def test_one_file_is_written_atomically_and_reproducibly(tmp_path: Path) -> None:
    atomic_write(tmp_path / "x.csv.gz", "a,b\n")
    first = (tmp_path / "x.csv.gz").read_bytes()
    atomic_write(tmp_path / "x.csv.gz", "a,b\n")
    assert (tmp_path / "x.csv.gz").read_bytes() == first


def test_a_staged_folder_is_discarded_on_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), staged_folder(tmp_path / "run") as staging:
        (staging / "records.csv").write_text("x\n")
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_file_names_are_valid_on_every_system():
    from sitesim.output import file_name

    assert file_name("mypkg.sched:FairEASY") == "mypkg.sched.FairEASY"
    assert file_name("EASY") == "EASY" and file_name("a b/c\\d*?") == "a_b_c_d__"
