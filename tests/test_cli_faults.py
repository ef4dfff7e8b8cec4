"""Fault injection for the command line: damaged inputs, Ctrl-C, closed or full output.

Every fault ends in exactly one line on standard error, the documented exit
code (1 for a damaged input or an output that cannot be written, 130 for
Ctrl-C) and no traceback, in a real subprocess (``python -m fastkappa``).
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")

TIMEOUT = 180


def _env() -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _default_sigint() -> None:
    # a child started from a background job inherits SIGINT ignored; the CLI is
    # tested as a user runs it, with Ctrl-C delivered
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _python(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fastkappa", *argv], capture_output=True,
                          timeout=TIMEOUT, env=_env(), **kw)


def _one_line(stderr: bytes, *needles: str) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    lines = text.splitlines()
    assert len(lines) == 1, text
    for needle in needles:
        assert needle in lines[0], text
    return lines[0]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    rng = np.random.default_rng(3)
    n = 200_000
    t = rng.integers(0, 5, n)
    p = np.clip(t + rng.integers(-1, 2, n), 0, 4)
    table = pa.table({"t": t, "p": p})
    paths = {"csv": root / "x.csv", "parquet": root / "x.parquet"}
    pcsv.write_csv(table, paths["csv"])
    pq.write_table(table, paths["parquet"], row_group_size=20_000)
    raw = paths["csv"].read_bytes()
    gz = gzip.compress(raw)
    paths["gz_truncated"] = root / "truncated.csv.gz"
    paths["gz_truncated"].write_bytes(gz[: len(gz) // 2])
    bad = bytearray(gz)
    bad[len(bad) // 2: len(bad) // 2 + 64] = b"\x00" * 64
    paths["gz_corrupt"] = root / "corrupt.csv.gz"
    paths["gz_corrupt"].write_bytes(bytes(bad))
    pbytes = paths["parquet"].read_bytes()
    paths["parquet_truncated"] = root / "truncated.parquet"
    paths["parquet_truncated"].write_bytes(pbytes[: len(pbytes) // 2])
    bad = bytearray(pbytes)
    for i in range(64, len(bad) - 4096, 509):  # damage the data pages, keep the footer
        bad[i] ^= 0x5A
    paths["parquet_corrupt"] = root / "corrupt.parquet"
    paths["parquet_corrupt"].write_bytes(bytes(bad))
    paths["long_field"] = root / "long_field.csv"
    paths["long_field"].write_bytes(b"t," + b"p" * 200_000 + b"\n1,1\n")
    paths["small"] = root / "small.csv"
    paths["small"].write_bytes(b"t,p\n1,1\n2,2\n1,2\n2,1\n1,1\n")
    return {k: str(v) for k, v in paths.items()}


ARGS = ["--true", "t", "--pred", "p"]


# --------------------------------------------------------------------------- inputs


@pytest.mark.parametrize("name, needle", [
    ("gz_truncated", "truncated"),
    ("gz_corrupt", "cannot"),
    ("parquet_truncated", "Parquet"),
    ("parquet_corrupt", "cannot"),
])
def test_damaged_file_one_line_exit_1(data, name, needle):
    proc = _python(["score", data[name], *ARGS])
    assert proc.returncode == 1
    _one_line(proc.stderr, "fastkappa score: error:", needle)


@pytest.mark.parametrize("name", ["gz_truncated", "gz_corrupt", "parquet_truncated",
                                  "parquet_corrupt"])
def test_damaged_stdin_one_line_exit_1(data, name):
    with open(data[name], "rb") as f:
        proc = _python(["score", "-", *ARGS], stdin=f)
    assert proc.returncode == 1
    _one_line(proc.stderr, "fastkappa score: error:", "stdin")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_file_without_newline_is_bounded():
    # /dev/zero never ends and holds no newline: the header read stops at its bound
    proc = _python(["score", "/dev/zero", *ARGS])
    assert proc.returncode == 1
    _one_line(proc.stderr, "header line is longer than")


def test_header_field_over_csv_limit(data):
    proc = _python(["score", data["long_field"], *ARGS])
    assert proc.returncode == 1
    _one_line(proc.stderr, "cannot read the header line", "field larger than field limit")


# --------------------------------------------------------------------------- Ctrl-C


def _stream(kind: str, parquet_path: str) -> bytes:
    """More bytes than a pipe buffers, so a finished write means the CLI is reading."""
    rng = np.random.default_rng(0)
    n = 600_000
    body = "\n".join(f"{a},{b}" for a, b in zip(rng.integers(0, 200, n),
                                                 rng.integers(0, 200, n), strict=True))
    text = ("t,p\n" + body + "\n").encode()
    if kind == "csv":
        return text
    if kind == "gz":
        return gzip.compress(text)
    with open(parquet_path, "rb") as f:
        raw = f.read()
    return raw[: len(raw) // 2]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("kind", ["csv", "gz", "parquet"])
def test_sigint_mid_input_exits_130(data, kind):
    proc = subprocess.Popen([sys.executable, "-m", "fastkappa", "score", "-", *ARGS],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(), preexec_fn=_default_sigint)
    try:
        # the pipe holds 64 KiB: once this write returns, the CLI is reading the input,
        # which never ends (stdin stays open)
        proc.stdin.write(_stream(kind, data["parquet"]))
        proc.stdin.flush()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
    assert code == 130
    assert proc.stdout.read() == b""
    _one_line(proc.stderr.read(), "fastkappa score: interrupted")
    proc.stdout.close()
    proc.stderr.close()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_in_process_returns_130(data, monkeypatch, capsys):
    import importlib

    from fastkappa import cli
    from fastkappa.cli.commands import score

    entry = importlib.import_module("fastkappa.cli.main")  # the module, not the function

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(score, "run", interrupted)
    monkeypatch.setattr(entry, "_parser", cli.make_parser)  # the parser binds the command
    assert cli.main(["score", data["small"], *ARGS]) == 130
    assert capsys.readouterr().err == "fastkappa score: interrupted\n"


# --------------------------------------------------------------------------- output


def test_closed_pipe_one_line(data):
    proc = subprocess.Popen([sys.executable, "-m", "fastkappa", "score", data["csv"], *ARGS,
                             "--by", "t", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read()
    code = proc.wait(timeout=TIMEOUT)
    proc.stderr.close()
    assert code == 1
    _one_line(err, "standard output was closed")


def test_stdout_not_open_one_line(data):
    proc = subprocess.run([sys.executable, "-m", "fastkappa", "score", data["small"], *ARGS],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(),
                          timeout=TIMEOUT, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 1
    _one_line(proc.stderr, "standard output is closed")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_one_line(data):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "fastkappa", "score", data["small"],
                               *ARGS], stdout=full, stderr=subprocess.PIPE, env=_env(),
                              timeout=TIMEOUT)
    assert proc.returncode == 1
    _one_line(proc.stderr, "cannot write the results", "No space left on device")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_in_process(data, monkeypatch, capsys):
    from fastkappa.cli import main

    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = main(["score", data["small"], *ARGS])
    monkeypatch.undo()
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err


@pytest.mark.parametrize("header", [b"t,p", b"t,p\n", b"t,p\r\n"])
@pytest.mark.parametrize("packed", [False, True])
def test_a_header_alone_on_stdin_holds_no_rows(tmp_path, header, packed):
    # with a line break pyarrow said "Empty CSV file"; without one "Could not skip
    # initial 1 rows": both are a file without rows, as on a path
    import gzip

    path = tmp_path / "h"
    path.write_bytes(gzip.compress(header) if packed else header)
    with open(path, "rb") as f:
        proc = _python(["score", "-", *ARGS], stdin=f)
    assert proc.returncode == 1
    _one_line(proc.stderr, "fastkappa score: error: stdin holds no rows to score")
