"""Writing outputs so that nothing half-written is ever left behind.

- :func:`atomic_write`: one file, written to a temporary file in the same folder, then renamed;
  :func:`atomic_write_all`: several files, all published or none.
- :func:`staged_folder`: a folder of files, written into a temporary sibling folder and then
  published at once, so a run folder is complete or absent.
- :func:`check_output_folder` and :func:`check_output_file`: checked before a run starts, so a
  bad ``--out`` fails at once with one line instead of after hours of simulation; a folder that
  must be new is refused when it holds an older run's files, which would mix with the new ones.
- :func:`clear_output_folder`: removes an older run's outputs (``--force``), and nothing else.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sitesim.errors import SitesimError


def file_name(text: str) -> str:
    """``text`` as a file or folder name valid on every system: an import path's ``:`` becomes
    ``.`` (``mypkg.sched:FairEASY`` -> ``mypkg.sched.FairEASY``; a colon is not valid in a
    Windows file name), and any character but letters, digits and ``. + _ -`` becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9.+_-]", "_", text.replace(":", "."))


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (gzip-compressed when ``path`` ends in .gz).

    Compression is deterministic (no timestamp or name in the gzip header), so the same data
    always gives the same bytes.
    """
    atomic_write_all([(path, data)])


def atomic_write_all(files: Sequence[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several files so that either all of them appear or none does.

    Each is written to a temporary file beside it (an error or a Ctrl-C meanwhile removes them
    all); then they are renamed into place one after the other with a Ctrl-C held back, so it
    cannot fall between two renames (it is delivered once they are done).
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            target = Path(path)
            raw = data.encode() if isinstance(data, str) else data
            if target.suffix == ".gz":
                raw = gzip.compress(raw, compresslevel=6, mtime=0)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            staged.append((tmp, target))
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give what open() would
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
        with _sigint_held():
            for tmp, target in staged:
                os.replace(tmp, target)
    finally:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold a Ctrl-C back during the block and deliver it after (in the main thread, where
    Python runs signal handlers; elsewhere there is nothing to hold).

    The handler is swapped rather than the signal masked: a mask is per thread, and the
    kernel gives a process's SIGINT to any thread not masking it (NumPy's among them).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)


@contextmanager
def staged_folder(target: str | os.PathLike[str], *, last: str | None = None) -> Iterator[Path]:
    """Write the files of folder ``target`` into the yielded temporary folder; they are
    published when the block ends without an error, and discarded otherwise.

    A new ``target`` appears in one rename, complete. Into an existing folder the files are
    moved one by one (each move atomic), ``last`` (e.g. ``results.json``) after the others, so
    its presence marks a complete set.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield staging
        staging.chmod(0o777 & ~_umask())  # mkdtemp makes 0700; give what mkdir() would
        if not target.exists():
            staging.rename(target)
            return
        names = sorted(p.name for p in staging.iterdir())
        if last in names:
            names.remove(last)
            names.append(last)
        with _sigint_held():
            for name in names:
                os.replace(staging / name, target / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


#: The files sitesim writes into output folders: what :func:`clear_output_folder` may remove
#: (with the temporary files of interrupted writes, ``.NAME.*.tmp``).
WRITTEN_SUFFIXES = (
    ".json",
    ".csv",
    ".png",
    ".swf",
    ".swf.gz",
    ".toml",
    ".html",
    ".gif",
    ".parquet",
)


def check_output_folder(
    path: str | os.PathLike[str], *, new: bool = False, remedy: str = "choose another folder"
) -> None:
    """Fail now, with one line, if outputs cannot be written into folder ``path``.

    The folder may exist or not; its nearest existing ancestor must be a folder we can create
    files in. With ``new``, an existing folder must be empty: the files of an earlier run would
    otherwise mix with the new ones (a stale ``runs.csv`` naming other runs).

    Args:
        path: the folder.
        new: refuse a folder that holds anything.
        remedy: what the user can do then, ending the message.

    Raises:
        SitesimError: naming the path and the cause.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise SitesimError(f"{target}: exists and is not a folder")
    if new and target.is_dir():
        held = sorted(p.name for p in target.iterdir())
        if held:
            shown = ", ".join(held[:3]) + (f" and {len(held) - 3:,} more" if len(held) > 3 else "")
            raise SitesimError(
                f"{target}: not empty (holds {shown}); the new outputs would mix with those: "
                f"{remedy}"
            )
    _check_creatable(target)


def clear_output_folder(path: str | os.PathLike[str]) -> None:
    """Empty folder ``path`` of the outputs an earlier run wrote there, so that a new run's
    do not mix with them; nothing happens if it does not exist.

    Only files sitesim writes (:data:`WRITTEN_SUFFIXES`) and folders of them are removed, and
    only when there is nothing else: a folder holding any other file, a link, or the current
    folder is refused whole, and nothing is removed.

    Raises:
        SitesimError: naming the folder and what it holds that sitesim did not write.
    """
    target = Path(path)
    if not target.is_dir():
        return
    here = Path.cwd().resolve()
    if target.resolve() in (here, *here.parents):
        raise SitesimError(f"{target}: will not empty the current folder or one that holds it")
    foreign = []
    for folder, subfolders, files in os.walk(target):
        for name in [*subfolders, *files]:
            entry = Path(folder, name)
            if entry.is_symlink() or (name in files and not _written(name)):
                foreign.append(entry.relative_to(target))
    if foreign:
        more = f" and {len(foreign) - 1:,} more" if len(foreign) > 1 else ""
        raise SitesimError(
            f"{target}: holds {foreign[0]}{more}, which sitesim does not write; nothing was "
            "removed: move them away or choose another folder"
        )
    for entry in target.iterdir():
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _written(name: str) -> bool:
    """Whether a file of this name is one sitesim writes."""
    temporary = name.startswith(".") and name.endswith(".tmp")
    return temporary or name.endswith(WRITTEN_SUFFIXES)


def check_output_file(path: str | os.PathLike[str]) -> None:
    """Fail now, with one line, if file ``path`` cannot be written (see
    :func:`check_output_folder`)."""
    target = Path(path)
    if target.is_dir():
        raise SitesimError(f"{target}: is a folder; give a file name")
    _check_creatable(target.parent)


def _check_creatable(folder: Path) -> None:
    """The nearest existing ancestor of ``folder`` (itself included) must be a folder in which
    a file can be created: tried with an anonymous temporary file, which leaves nothing."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    where = "" if existing == folder else f" (in {existing})"
    if not existing.is_dir():
        raise SitesimError(f"{folder}: cannot create it{where}: {existing} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        raise SitesimError(f"{folder}: cannot write{where}: {err.strerror or err}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def to_json(obj: Any) -> str:
    """``obj`` as indented JSON; NaN and infinities become ``null`` and NumPy scalars plain."""
    return json.dumps(_plain(obj), indent=2, sort_keys=False) + "\n"


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if hasattr(obj, "tolist"):  # NumPy scalars and arrays
        return _plain(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
