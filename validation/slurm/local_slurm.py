"""A real, unmodified Slurm on this machine, private to one work folder.

:class:`LocalSlurm` starts Debian's daemons in the foreground as child processes it tracks by
PID: ``munged`` (a key and socket of its own), for a case with accounts MariaDB (a data folder
of its own, on 127.0.0.1) and ``slurmdbd``, then ``slurmctld`` and one ``slurmd -N NAME`` a
node of the case's slurm.conf, each node at ``NodeAddr=127.0.0.1`` with its own ``Port``
(``SlurmdParameters=config_overrides``: a node may claim more CPUs, memory and GPUs than the
machine has; ``ProctrackType=proctrack/linuxproc``, ``TaskPlugin=task/none``: no cgroups).
GPUs are files in the work folder named by gres.conf (``File=``; a GPU without one is dropped
by slurmd: "Removing file-less GPU"), with ``AutoDetect=off``.

Everything lives in the work folder (state, spool, logs, sockets, the database); on leaving
the ``with`` block (also on Ctrl-C or an error) the jobs are cancelled, every daemon is sent
SIGTERM by its PID (SIGKILL if it has not ended after a while), any process still working in
the folder (a job's ``slurmstepd``, its shell) is ended by its PID, and the users created for
the case are deleted. Nothing else is touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType

from sitesim.slurm.conf import expand_hostlist
from validation.slurm.records import parse_sacct

#: The file that marks a folder as the harness's (only such a folder is ever emptied).
MARKER = ".slurm-harness"
#: Users created for cases, one a line, in the work root (deleted at the end, or next time).
CREATED_USERS = "created-users"
CLUSTER = "harness"
DB_USER, DB_PASSWORD, DB_NAME = "slurm", "harness", "slurm_acct_db"


class HarnessError(Exception):
    """Slurm could not be set up, started or stopped as the harness needs (one line)."""


@dataclass(frozen=True)
class Ports:
    """TCP ports on 127.0.0.1: the controller, slurmdbd, MariaDB, the first node's slurmd
    (the others follow)."""

    controller: int = 16817
    dbd: int = 16819
    database: int = 16820
    first_node: int = 16821

    @classmethod
    def from_first(cls, port: int) -> Ports:
        """The ports from ``port`` on, in the default's layout."""
        return cls(port, port + 2, port + 3, port + 4)


@dataclass(frozen=True)
class Node:
    """A node line of the case's slurm.conf, for one node."""

    name: str
    gpus: list[tuple[str, int]]  # (type or "", count)


def node_lines(
    conf: str, expand: Callable[[str], list[str]], address: Callable[[int], str]
) -> tuple[list[str], list[Node]]:
    """The lines of a case's slurm.conf with each node line replaced by one line a node, its
    address added (``address(k)`` for the k-th node: ``NodeAddr=... Port=...``), and the
    nodes (``expand`` turns a node expression into names: ``n[1-3]``, ``a,b``)."""
    lines: list[str] = []
    nodes: list[Node] = []
    for line in conf.splitlines():
        words = line.split("#", 1)[0].split()
        first = words[0].partition("=") if words else ("", "", "")
        if first[0].lower() != "nodename" or first[2].upper() == "DEFAULT":
            lines.append(line)
            continue
        rest = " ".join(words[1:])
        gres = next((w.split("=", 1)[1] for w in words[1:] if w.lower().startswith("gres=")), "")
        gpus = []
        for item in filter(None, gres.split(",")):
            parts = item.split(":")
            if parts[0] == "gpu" and len(parts) in (2, 3) and parts[-1].isdigit():
                gpus.append((parts[1] if len(parts) == 3 else "", int(parts[-1])))
        for name in expand(first[2]):
            lines.append(f"NodeName={name} {rest} {address(len(nodes))}")
            nodes.append(Node(name, gpus))
    return lines, nodes


def _terminal(pid: int) -> bool:
    """Whether process ``pid`` has ended (reaped, or a zombie)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return status.rsplit(")", 1)[1].split()[0] == "Z"


class LocalSlurm:
    """Slurm for one case, in ``work`` (see the module's docstring). Use as a context manager.

    Args:
        case: the case's folder (slurm.conf, optional accounts.txt).
        work: the work folder (created; emptied first if it is the harness's own).
        ports: the TCP ports.
        debug_flags: slurm.conf's ``DebugFlags`` (what slurmctld's log tells; ``Backfill``:
            each backfill cycle's plan; ``Backfill,Priority``: fairshare's computations too).
    """

    def __init__(
        self, case: Path, work: Path, ports: Ports | None = None, debug_flags: str = "Backfill"
    ) -> None:
        self.case, self.work, self.ports = case, work.resolve(), ports or Ports()
        self.debug_flags = debug_flags
        self.accounts = case / "accounts.txt" if (case / "accounts.txt").exists() else None
        self.daemons: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.created_users: list[str] = []
        self.nodes: list[Node] = []
        self.env = {
            **os.environ,
            "SLURM_CONF": str(self.work / "slurm.conf"),
            "TZ": "UTC",
            "SLURM_TIME_FORMAT": "standard",
        }

    # -- the context manager ------------------------------------------------------------------
    def __enter__(self) -> LocalSlurm:
        try:
            self.start()
        except BaseException:
            for problem in self.stop():
                print(f"harness: stopping Slurm: {problem}", file=sys.stderr)
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        problems = self.stop()
        if problems and error is None:
            raise HarnessError("stopping Slurm: " + "; ".join(problems))
        for problem in problems:  # (an error is on its way: it is the one to report)
            print(f"harness: stopping Slurm: {problem}", file=sys.stderr)

    # -- commands -----------------------------------------------------------------------------
    def command(self, args: list[str], check: bool = True, timeout: float = 60) -> str:
        """Run a Slurm client command against this Slurm; its standard output.

        Raises:
            HarnessError: it failed (with ``check``): the command and its last error line.
        """
        done = subprocess.run(
            args, env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise HarnessError(f"{' '.join(args[:3])} ...: exit {done.returncode}: {last}")
        return done.stdout

    # -- start --------------------------------------------------------------------------------
    def start(self) -> None:
        """Write the configuration and start the daemons; return once every node is idle."""
        self._prepare_folder()
        conf = self._write_conf()
        self._check_ports(len(self.nodes))
        self._start_munge()
        if self.accounts is not None:
            self._start_database()
            self._start_dbd()
        self._start("slurmctld", ["slurmctld", "-D", "-i", "-f", conf])
        self._wait(lambda: "is UP" in self.command(["scontrol", "ping"], check=False),
                   "slurmctld answering scontrol ping", "slurmctld")  # fmt: skip
        for node in self.nodes:
            (self.work / "spool" / node.name).mkdir(parents=True)
            self._start(f"slurmd-{node.name}", ["slurmd", "-D", "-N", node.name, "-f", conf])
        self._wait(self._nodes_idle, "every node idle (sinfo)", "slurmd")

    def _prepare_folder(self) -> None:
        work = self.work
        if work.exists() and any(work.iterdir()):
            if not (work / MARKER).exists():
                raise HarnessError(f"{work}: not empty and not a harness work folder: refused")
            shutil.rmtree(work)
        for sub in ("state", "spool", "log", "jobs", "dev"):
            (work / sub).mkdir(parents=True, exist_ok=True)
        (work / MARKER).write_text("work folder of validation/slurm/harness.py\n")
        work.chmod(0o755)
        (work / "jobs").chmod(0o1777)  # the jobs of every user work here

    def _check_ports(self, nodes: int) -> None:
        """Refuse ports another program listens on (a daemon's, like Slurm's own, binds with
        SO_REUSEADDR: the connections of an earlier run closing do not count)."""
        first = self.ports.first_node
        wanted = [self.ports.controller, *range(first, first + nodes)]
        if self.accounts is not None:
            wanted += [self.ports.dbd, self.ports.database]
        for port in wanted:
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    raise HarnessError(f"port {port} on 127.0.0.1 is in use: give --port") from None

    def _write_conf(self) -> str:
        """Write slurm.conf (the harness's lines, then the case's with each node's address and
        port) and gres.conf; return the slurm.conf path."""
        work, ports = self.work, self.ports
        case, self.nodes = node_lines(
            (self.case / "slurm.conf").read_text(),
            expand_hostlist,
            lambda k: f"NodeAddr=127.0.0.1 Port={ports.first_node + k}",
        )
        if not self.nodes:
            raise HarnessError(f"{self.case / 'slurm.conf'}: no NodeName line")
        munge = work / "munge.socket"
        plumbing = [
            "# Written by validation/slurm/harness.py. First: where this run's daemons live and",
            "# how they talk (nothing here changes a scheduling decision); then the case's lines.",
            f"ClusterName={CLUSTER}",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={ports.controller}",
            f"SlurmdPort={ports.first_node}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={munge}",
            f"StateSaveLocation={work}/state",
            f"SlurmdSpoolDir={work}/spool/%n",
            f"SlurmctldPidFile={work}/slurmctld.pid",
            f"SlurmdPidFile={work}/slurmd-%n.pid",
            f"SlurmctldLogFile={work}/log/slurmctld.log",
            f"SlurmdLogFile={work}/log/slurmd-%n.log",
            "SlurmctldDebug=info",
            f"DebugFlags={self.debug_flags}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            "MinJobAge=86400",
        ]
        if self.accounts is not None:
            plumbing += [
                "AccountingStorageType=accounting_storage/slurmdbd",
                "AccountingStorageHost=localhost",
                f"AccountingStoragePort={ports.dbd}",
                f"AccountingStoragePass={munge}",
            ]
        else:
            plumbing.append("AccountingStorageType=accounting_storage/none")
        if self.accounts is not None and any(node.gpus for node in self.nodes):
            plumbing.append("AccountingStorageTRES=gres/gpu")  # (sacct's AllocTRES: the GPUs)
        path = work / "slurm.conf"
        path.write_text("\n".join([*plumbing, "", *case]) + "\n")
        gres = ["AutoDetect=off"]
        for node in self.nodes:
            for kind, count in node.gpus:
                files = [work / "dev" / f"{node.name}-gpu{kind}{i}" for i in range(count)]
                for file in files:
                    file.touch()
                type_ = f" Type={kind}" if kind else ""
                names = f"{work}/dev/{node.name}-gpu{kind}[0-{count - 1}]"
                gres.append(f"NodeName={node.name} Name=gpu{type_} File={names}")
        if len(gres) > 1:
            (work / "gres.conf").write_text("\n".join(gres) + "\n")
        return str(path)

    def _start(self, name: str, args: list[str]) -> None:
        log = (self.work / "log" / f"{name}.out").open("wb")
        process = subprocess.Popen(
            args,
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C reaches the harness, which stops it in order
        )
        log.close()
        self.daemons.append((name, process))

    def _wait(self, ready: Callable[[], bool], what: str, name: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            for daemon, process in self.daemons:
                if process.poll() is not None:
                    tail = self._tail(self.work / "log" / f"{daemon}.out")
                    raise HarnessError(f"{daemon} ended (exit {process.returncode}): {tail}")
            if time.monotonic() > deadline:
                raise HarnessError(f"no {what} after {timeout:g} s: see {self.work}/log ({name})")
            time.sleep(0.2)

    @staticmethod
    def _tail(path: Path) -> str:
        try:
            lines = path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return lines[-1] if lines else "(empty log)"

    def _nodes_idle(self) -> bool:
        states = self.command(["sinfo", "-h", "-N", "-o", "%N %T"], check=False).split()
        idle = {states[k] for k in range(0, len(states) - 1, 2) if states[k + 1] == "idle"}
        return idle >= {node.name for node in self.nodes}

    def _start_munge(self) -> None:
        key, sock = self.work / "munge.key", self.work / "munge.socket"
        done = subprocess.run(
            ["mungekey", "--create", f"--keyfile={key}"], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise HarnessError(f"mungekey: {done.stderr.strip()}")
        self._start("munged", [
            "munged", "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
            f"--pid-file={self.work}/munged.pid", f"--log-file={self.work}/log/munged.log",
            f"--seed-file={self.work}/munged.seed",
        ])  # fmt: skip
        self._wait(sock.exists, "munge socket", "munged")

    # -- accounting ---------------------------------------------------------------------------
    def _start_database(self) -> None:
        db, sock = self.work / "db", self.work / "mysql.sock"
        done = subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={db}", "--user=root",
             "--auth-root-authentication-method=socket", "--skip-test-db"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise HarnessError(f"mariadb-install-db: {done.stderr.strip().splitlines()[-1:]}")
        self._start("mariadb", [
            "mariadbd", "--no-defaults", f"--datadir={db}", "--user=root", f"--socket={sock}",
            f"--port={self.ports.database}", "--bind-address=127.0.0.1",
            f"--pid-file={self.work}/mariadb.pid", f"--log-error={self.work}/log/mariadb.log",
            "--skip-log-bin", "--innodb-buffer-pool-size=128M", "--innodb-lock-wait-timeout=900",
        ])  # fmt: skip
        client = ["mariadb", "--no-defaults", f"--socket={sock}", "-u", "root", "-e"]

        def answers() -> bool:
            return subprocess.run([*client, "SELECT 1"], capture_output=True).returncode == 0

        self._wait(answers, "MariaDB answering", "mariadb")
        grant = (
            f"CREATE USER '{DB_USER}'@'127.0.0.1' IDENTIFIED BY '{DB_PASSWORD}'; "
            f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'127.0.0.1';"
        )
        done = subprocess.run([*client, grant], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise HarnessError(f"MariaDB user: {done.stderr.strip()}")

    def _start_dbd(self) -> None:
        assert self.accounts is not None
        conf = self.work / "slurmdbd.conf"
        conf.write_text(
            "\n".join([
                "AuthType=auth/munge", f"AuthInfo=socket={self.work}/munge.socket",
                "DbdHost=localhost", "DbdAddr=127.0.0.1", f"DbdPort={self.ports.dbd}",
                "SlurmUser=root", f"PidFile={self.work}/slurmdbd.pid",
                f"LogFile={self.work}/log/slurmdbd.log",
                "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
                f"StoragePort={self.ports.database}", f"StorageUser={DB_USER}",
                f"StoragePass={DB_PASSWORD}", f"StorageLoc={DB_NAME}",
            ]) + "\n"
        )  # fmt: skip
        conf.chmod(0o600)
        self._start("slurmdbd", ["slurmdbd", "-D"])

        def answers() -> bool:
            done = subprocess.run(["sacctmgr", "-n", "show", "cluster"], env=self.env,
                                  capture_output=True, timeout=30)  # fmt: skip
            return done.returncode == 0

        self._wait(answers, "slurmdbd answering sacctmgr", "slurmdbd")
        self.command(["sacctmgr", "-i", "add", "cluster", CLUSTER])
        rows = parse_sacct(self.accounts.read_text())  # (the same | format, with a header)
        for row in rows:
            if not row["User"]:
                self.command(["sacctmgr", "-i", "add", "account", row["Account"],
                              f"parent={row['ParentName'] or 'root'}",
                              f"fairshare={row['Share']}"])  # fmt: skip
        for row in rows:
            if row["User"]:
                self._create_user(row["User"])
                account, share = row["Account"], row["Share"]
                self.command(["sacctmgr", "-i", "add", "user", row["User"],
                              f"account={account}", f"fairshare={share}"])  # fmt: skip

    def _created_file(self) -> Path:
        return self.work.parent / CREATED_USERS

    def _create_user(self, name: str) -> None:
        """Create a system user for the case (deleted at the end); one the harness created
        before and did not delete (a run killed hard) is taken over."""
        listed = self._created_file()
        earlier = listed.read_text().split() if listed.exists() else []
        exists = subprocess.run(["getent", "passwd", name], capture_output=True).returncode == 0
        if exists and name not in earlier:
            raise HarnessError(f"user {name} exists and is not the harness's: refused")
        if not exists:
            done = subprocess.run(
                ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                 "--shell", "/usr/sbin/nologin", "--user-group", name],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise HarnessError(f"useradd {name}: {done.stderr.strip()}")
        self.created_users.append(name)
        listed.write_text("".join(f"{u}\n" for u in sorted({*earlier, name})))

    # -- stop ---------------------------------------------------------------------------------
    def stop(self) -> list[str]:
        """Cancel the jobs, stop every daemon by its PID, end what still works in the folder,
        delete the created users; what went wrong. Ctrl-C is held back until done (about a
        minute at most)."""
        with _held_back_interrupt():
            problems: list[str] = []
            names = {name for name, _ in self.daemons}
            if "slurmctld" in names:
                self._cancel_jobs(problems)
            for name, process in reversed(self.daemons):
                _end(process, 20 if name in ("mariadb", "slurmdbd") else 10, problems, name)
            self.daemons.clear()
            self._end_leftovers(problems)
            self._delete_users(problems)
        return problems

    def _cancel_jobs(self, problems: list[str]) -> None:
        try:
            jobs = self.command(["squeue", "-h", "-o", "%i"], check=False, timeout=15).split()
            if jobs:
                self.command(["scancel", *jobs], check=False, timeout=15)
                deadline = time.monotonic() + 30
                while (
                    time.monotonic() < deadline
                    and self.command(["squeue", "-h", "-o", "%i"], check=False, timeout=15).split()
                ):
                    time.sleep(0.5)
        except (subprocess.TimeoutExpired, OSError) as err:
            problems.append(f"cancelling jobs: {err}")

    def _end_leftovers(self, problems: list[str]) -> None:
        """End (SIGKILL, by PID) every process still working in the folder: a job's
        slurmstepd (slurmd detaches it, in the folder slurmd ran in) and its shell and sleep
        (working in ``jobs``)."""
        for pid in self._working_here():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while (left := self._working_here()) and time.monotonic() < deadline:
            time.sleep(0.2)
        if left:
            problems.append(f"processes {left} still working in {self.work}")

    def _working_here(self) -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cwd = Path(os.readlink(entry / "cwd"))
            except OSError:
                continue
            if cwd.is_relative_to(self.work) and not _terminal(int(entry.name)):
                found.append(int(entry.name))
        return found

    def _delete_users(self, problems: list[str]) -> None:
        listed = self._created_file()
        if not self.created_users and not listed.exists():
            return
        earlier = listed.read_text().split() if listed.exists() else []
        left = []
        for name in sorted({*earlier, *self.created_users}):
            done = subprocess.run(["userdel", name], capture_output=True, text=True)
            if done.returncode not in (0, 6):  # 6: no such user
                left.append(name)
                problems.append(f"userdel {name}: {done.stderr.strip()}")
        if left:
            listed.write_text("".join(f"{u}\n" for u in left))
        else:
            listed.unlink(missing_ok=True)
        self.created_users.clear()


def _end(process: subprocess.Popen[bytes], grace: float, problems: list[str], name: str) -> None:
    """SIGTERM to ``process`` (by its PID), SIGKILL after ``grace`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
        problems.append(f"{name} (pid {process.pid}) did not end on SIGTERM: killed")


@contextlib.contextmanager
def _held_back_interrupt() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) and SIGTERM during the block; raise KeyboardInterrupt after
    it if one came."""
    pending: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    try:
        previous = {sig: signal.signal(sig, hold) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: nothing to hold back
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            raise KeyboardInterrupt
