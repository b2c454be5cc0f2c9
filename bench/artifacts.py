"""An artifact's upload and download over real HTTP, beside `cp` of the same file.

A file of `--mib` MiB (1 GiB by default; a random MiB from a fixed seed, repeated) is
written to a scratch folder and made durable. In the same run, on the same disk, each
round (`--rounds`) runs:

- the floor: `cp` of the file to a new file, then `sync` of the copy (an upload is
  fsynced before it is answered, so the floor is a durable copy too; `cp` alone is
  printed beside it);
- the upload: `POST /api/artifacts` to a real uvicorn process serving hub (the
  filesystem store, in the scratch folder), the body streamed from the file by httpx
  a MiB at a time with its `Content-Length`; timed until the answer arrives, which is
  after the server has hashed, written, fsynced and moved the file and committed it;
- the download: `GET /artifacts/{id}` streamed into a new file, which is then fsynced;
- the stack's floor: the same body, sent the same way, to the stack-floor server
  (`bench/stack_floor.py`: Starlette on uvicorn, the body read to its end and dropped,
  nothing hashed or written). Its rate is the ceiling of any upload on this stack here,
  and `stack_ratio` is the upload's rate over it: what hub's own work costs.

Interference on a shared machine only ever slows a run down, so each rate printed is the
fastest round's (as timeit takes the minimum). While each transfer runs, the server's
resident memory is read from /proc/<pid>/status: its high-water mark VmHWM, reset through
/proc/<pid>/clear_refs just before, and VmRSS every 20 ms; growth is the peak less the
resident size just before (the largest of the rounds). A small upload first warms the
server's code paths. The upload's size and SHA-256 as the server answers them, and the
downloaded file's, must be the source's.

    .venv/bin/python bench/artifacts.py
    .venv/bin/python bench/artifacts.py --backend postgresql --mib 256

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from claims import Server, served
from scratch import scratch_database
from stack_floor import floor_served

from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.settings import Settings

MIB = 1024 * 1024
SEED = 13
TIMEOUT = httpx.Timeout(600, connect=30)


# --- the file, the caller, the floor ---------------------------------------------------------


def make_file(path: Path, mib: int) -> str:
    """`mib` MiB of a random MiB (a fixed seed) repeated, fsynced; its SHA-256."""
    block = random.Random(SEED).randbytes(MIB)
    digest = hashlib.sha256()
    with path.open("wb") as file:
        for _ in range(mib):
            file.write(block)
            digest.update(block)
        file.flush()
        os.fsync(file.fileno())
    return digest.hexdigest()


def prepare(runtime: Runtime) -> tuple[str, str]:
    """A project and an operator's personal token, through the service layer."""

    def operator(uow: Any) -> str:
        principal = identity.create_principal(
            uow, name="bench-operator", kind="human", operator=True
        )
        return identity.create_token(uow, principal=principal.id, label="bench").plaintext

    token = runtime.write(operator)
    project = runtime.write(
        lambda uow: projects.create_project(
            uow, identity.authenticate(uow, token), name="artifacts bench"
        )
    )
    return project.id, token


def copy_floor(source: Path, target: Path) -> tuple[float, float]:
    """Seconds for `cp`, and for `cp` then `sync` of the copy (the floor)."""
    started = time.perf_counter()
    subprocess.run(["cp", str(source), str(target)], check=True)
    copied = time.perf_counter()
    subprocess.run(["sync", str(target)], check=True)
    synced = time.perf_counter()
    target.unlink()
    return copied - started, synced - started


# --- the server's memory ---------------------------------------------------------------------


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise SystemExit(f"no {field} in /proc/{pid}/status")


@dataclass
class Memory:
    baseline_kib: int
    peak_kib: int = 0

    @property
    def growth_mib(self) -> float:
        return round(max(0, self.peak_kib - self.baseline_kib) / 1024, 1)


@contextmanager
def watched(pid: int) -> Iterator[Memory]:
    """The process's resident memory before and at its peak while the block runs."""
    try:  # Reset the high-water mark (Linux 4.0 on); sampling covers the rest.
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    memory = Memory(baseline_kib=_status_kib(pid, "VmRSS"))
    memory.peak_kib = memory.baseline_kib
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            memory.peak_kib = max(memory.peak_kib, _status_kib(pid, "VmRSS"))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield memory
    finally:
        done.set()
        sampler.join()
        memory.peak_kib = max(memory.peak_kib, _status_kib(pid, "VmRSS"))
        if reset:
            memory.peak_kib = max(memory.peak_kib, _status_kib(pid, "VmHWM"))


# --- the transfers ---------------------------------------------------------------------------


def upload(client: httpx.Client, project_id: str, path: Path, name: str) -> dict[str, Any]:
    def body() -> Iterator[bytes]:
        with path.open("rb") as file:
            while chunk := file.read(MIB):
                yield chunk

    response = client.post(
        "/api/artifacts",
        params={"projectId": project_id, "name": name, "mediaType": "application/octet-stream"},
        headers={"Content-Length": str(path.stat().st_size)},
        content=body(),
    )
    if response.status_code != 201:
        raise SystemExit(f"the upload was answered {response.status_code}: {response.text}")
    artifact: dict[str, Any] = response.json()["artifact"]
    return artifact


def bare_upload(floor: Server, path: Path) -> float:
    """Seconds to send the file to the stack floor (`upload`'s body and framing)."""

    def body() -> Iterator[bytes]:
        with path.open("rb") as file:
            while chunk := file.read(MIB):
                yield chunk

    started = time.perf_counter()
    response = httpx.post(
        f"{floor.url}/body",
        headers={"Content-Length": str(path.stat().st_size)},
        content=body(),
        timeout=TIMEOUT,
    )
    seconds = time.perf_counter() - started
    if response.json() != {"sizeBytes": path.stat().st_size}:
        raise SystemExit(f"the stack floor answered {response.text}")
    return seconds


def download(client: httpx.Client, artifact_id: str, target: Path) -> None:
    with client.stream("GET", f"/artifacts/{artifact_id}") as response:
        if response.status_code != 200:
            raise SystemExit(f"the download was answered {response.status_code}")
        with target.open("wb") as file:
            # As received: re-chunking into MiBs cost this client more CPU than the server.
            for chunk in response.iter_raw():
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(MIB):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class Round:
    """One round's figures, seconds and MiB (`cp` is the floor: cp, then sync)."""

    cp_s: float
    cp_sync_s: float
    stack_s: float
    upload_s: float
    download_s: float
    upload_rss_mib: float
    download_rss_mib: float
    upload_cpu_s: float
    round_trip: bool


def rounds(
    server: Server,
    floor: Server,
    token: str,
    project_id: str,
    source: Path,
    digest: str,
    count: int,
) -> list[Round]:
    """A warm-up, then `count` rounds of the floor, an upload and its download."""
    warmup = source.with_name("warmup.bin")
    with source.open("rb") as file:
        warmup.write_bytes(file.read(64 * 1024))
    headers = {"Authorization": f"Bearer {token}"}
    done = []
    with httpx.Client(base_url=server.url, headers=headers, timeout=TIMEOUT) as client:
        first = upload(client, project_id, warmup, "warmup.bin")
        download(client, first["id"], source.with_name("warmup-again.bin"))
        for index in range(count):
            figures = one_round(server, floor, client, project_id, source, digest, f"bench-{index}")
            done.append(figures)
            _say(
                f"round {index + 1}: cp {figures.cp_s:.2f} s, cp + sync {figures.cp_sync_s:.2f}"
                f" s, stack floor {figures.stack_s:.2f} s, upload {figures.upload_s:.2f} s"
                f" (server CPU {figures.upload_cpu_s:.2f} s,"
                f" RSS +{figures.upload_rss_mib} MiB), download {figures.download_s:.2f} s"
            )
    return done


def one_round(
    server: Server,
    floor: Server,
    client: httpx.Client,
    project_id: str,
    source: Path,
    digest: str,
    name: str,
) -> Round:
    cp_s, cp_sync_s = copy_floor(source, source.with_name("copy.bin"))
    stack_s = bare_upload(floor, source)
    cpu = server.cpu_seconds()
    with watched(server.pid) as upload_memory:
        started = time.perf_counter()
        artifact = upload(client, project_id, source, name)
        upload_s = time.perf_counter() - started
    upload_cpu_s = server.cpu_seconds() - cpu
    received = source.with_name("downloaded.bin")
    with watched(server.pid) as download_memory:
        started = time.perf_counter()
        download(client, artifact["id"], received)
        download_s = time.perf_counter() - started
    size = source.stat().st_size
    round_trip = (
        (artifact["sizeBytes"], artifact["sha256"]) == (size, digest)
        and received.stat().st_size == size
        and sha256_of(received) == digest
    )
    received.unlink()  # the disk holds the source and the uploads, no more
    return Round(
        cp_s=cp_s,
        cp_sync_s=cp_sync_s,
        stack_s=stack_s,
        upload_s=upload_s,
        download_s=download_s,
        upload_rss_mib=upload_memory.growth_mib,
        download_rss_mib=download_memory.growth_mib,
        upload_cpu_s=upload_cpu_s,
        round_trip=round_trip,
    )


# --- the run ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--mib", type=int, default=1024, help="the file's size in MiB")
    parser.add_argument("--rounds", type=int, default=2, help="floor, upload, download")
    parser.add_argument("--database-url", help="SQLite file, or a hub_bench* PostgreSQL db")
    parser.add_argument(
        "--server-wrapper",
        default="",
        help="command the server runs under, e.g. 'py-spy record -o upload.svg --' "
        "(its memory figures are then the wrapper's)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.mib < 1 or args.rounds < 1:
        parser.error("--mib and --rounds must be at least 1")

    with scratch_database(args.backend, args.database_url, keep=args.keep) as scratch:
        started = time.perf_counter()
        source = scratch.folder / "source.bin"
        digest = make_file(source, args.mib)
        runtime = Runtime(
            Settings(
                database_url=scratch.url,
                var_dir=scratch.folder / "var",
                artifact_dir=scratch.folder / "artifacts",
                _env_file=None,  # type: ignore[call-arg]
            )
        )
        project_id, token = prepare(runtime)
        runtime.close()
        _say(
            f"{args.backend}: a {args.mib} MiB file ready in "
            f"{time.perf_counter() - started:.1f} s; scratch {scratch.folder}"
        )
        # Room for the file and every round's copy, beside the default quotas.
        room = max(64 * MIB, source.stat().st_size + MIB)
        stored = (args.rounds + 1) * room
        limits = {
            "HUB_ARTIFACT_MAX_FILE_BYTES": str(room),
            "HUB_ARTIFACT_MAX_PROJECT_BYTES": str(max(2 * 1024 * MIB, stored)),
            "HUB_ARTIFACT_MAX_TOTAL_BYTES": str(max(20 * 1024 * MIB, stored)),
        }
        with (
            served(
                scratch,
                workers=1,
                synchronous="FULL",
                pool_size=4,
                wrapper=args.server_wrapper,
                settings=limits,
            ) as server,
            floor_served() as stack_server,
        ):
            done = rounds(server, stack_server, token, project_id, source, digest, args.rounds)

    def rate(seconds: list[float]) -> float:
        return round(args.mib / min(seconds), 1)

    floor = rate([r.cp_sync_s for r in done])
    uploads = rate([r.upload_s for r in done])
    downloads = rate([r.download_s for r in done])
    stack = rate([r.stack_s for r in done])
    round_trip = all(r.round_trip for r in done)
    if not round_trip:
        _say("WARNING: the bytes did not round-trip (size or SHA-256 differ)")
    print(
        json.dumps(
            {
                "backend": args.backend,
                "mib": args.mib,
                "rounds": args.rounds,
                "mib_per_s": uploads,
                "cp_mib_per_s": floor,
                "ratio": round(uploads / floor, 3),
                "stack_mib_per_s": stack,
                "stack_ratio": round(uploads / stack, 3),
                "stack_cp_ratio": round(stack / floor, 3),
                "download_mib_per_s": downloads,
                "download_ratio": round(downloads / floor, 3),
                "rss_growth_mib": max(r.upload_rss_mib for r in done),
                "download_rss_growth_mib": max(r.download_rss_mib for r in done),
                "server_cpu_s_per_gib": round(
                    min(r.upload_cpu_s for r in done) * 1024 / args.mib, 2
                ),
                "cp_nosync_mib_per_s": rate([r.cp_s for r in done]),
                "round_trip": round_trip,
                "load_1min": round(os.getloadavg()[0], 1),
            }
        ),
        flush=True,
    )


def _say(message: str) -> None:
    print(message, flush=True)


if __name__ == "__main__":
    main()
