"""Waiting for something to become true: a check that holds in the end, a `loci serve`
process that comes up."""

from __future__ import annotations

import ssl
import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

T = TypeVar("T")


def eventually(check: Callable[[], T | None], timeout: float = 20.0) -> T:
    """`check()` once it is truthy; fails with its last value after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not so within {timeout}s; last: {value!r}")
        time.sleep(0.1)


def wait_up(url: str, process: subprocess.Popen[str], verify: ssl.SSLContext | bool = True) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"loci serve exited: {process.stderr.read() if process.stderr else ''}"
            )
        try:
            if httpx.get(url + "/api/v1/health", timeout=1, verify=verify).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("loci serve did not come up")
