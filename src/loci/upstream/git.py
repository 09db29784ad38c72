"""A git repository followed on a schedule: the files at the head of one branch, each an entry
known by its path in the repository, its version the blob's hash, so only files whose content
changed are fetched again and a file a commit deleted is no longer listed.

Each run fetches the branch's head into a bare cache repository of this source (in the
`cache_dir` the options give), one commit deep: the history is not needed, and a branch that was
force-pushed is simply read at its new head. What is indexed is what is committed; a local
repository's uncommitted edits are not.

What is taken: without "include" globs, text a person reads and code (Markdown, plain text, the
source files Loci's code parser knows, README, LICENSE, …) that git does not see as binary;
with them, exactly what they match. Files over "max_file_bytes" (1 MB unless set) are left out,
as are symlinks and submodules.

Remotes: a local path (or file:// URL), or an https:// URL. git runs without a shell, with no
configuration of this machine or its user, never prompting, allowed only the one transport the
location needs (so no `ext::` command transport, no ssh, no submodule fetched), following no
redirect, and for https pinned to the addresses the fetch policy vetted (curl's resolve list),
so an https remote cannot reach a host the policy forbids. A token in `secret` goes as HTTP
Basic authentication through git's environment, never on its command line.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import mimetypes
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from loci.errors import FetchError, InvalidInput, NotFound
from loci.ingest.addresses import vetted_addresses
from loci.ingest.fetch_policy import MB, FetchPolicy
from loci.ingest.host_literals import host_address
from loci.ingest.parsers.code import language_of
from loci.upstream.base import Entry, Fetched, Listing
from loci.upstream.paths import PathFilter, path_filter

__all__ = ["GitRepository", "open"]

_DEFAULT_MAX_FILE = 1 * MB
_DEFAULT_TIMEOUT_S = 600.0  # a first fetch of a large repository
_LOCAL_TIMEOUT_S = 60.0  # commands on the cache alone
_HEAD_REF = "refs/loci/head"
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Read as prose or notes: Markdown and its kin, plain text.
_PROSE = frozenset(
    {".md", ".markdown", ".mdown", ".mkd", ".txt", ".text", ".rst", ".adoc", ".asciidoc", ".org"}
)
# Files without a telling extension that every repository's reader opens first.
_NAMED = frozenset(
    {"readme", "license", "licence", "copying", "changelog", "changes", "notice", "authors"}
)
# How git itself tells a transport helper ("ext::", "fd::", "file::"): scheme characters, "::".
_HELPER = re.compile(r"[A-Za-z0-9+.-]+::")
# Reading ahead (see `GitRepository._read`): at most this many blobs and bytes at once.
_READ_AHEAD = 64
_READ_AHEAD_BYTES = 8 * MB
_NO_REMOTE_REF = re.compile(r"couldn't find remote ref", re.IGNORECASE)


def _readable(path: str) -> bool:
    """The default choice: prose and code, by name (git's binary check comes on top)."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    stem = name.split(".", 1)[0].lower()
    return suffix in _PROSE or language_of(name) is not None or stem in _NAMED


@dataclass(frozen=True)
class _Remote:
    """Where the repository is: what git is given, how a person names it, and for https
    what curl must be pinned to."""

    target: str
    shown: str
    scheme: str  # "file" or "https"
    host: str | None = None
    port: int | None = None
    user: str | None = None


def open(  # noqa: A001 - the name every upstream module exposes
    location: str, options: Mapping[str, Any], secret: str | None, fetch: FetchPolicy
) -> GitRepository:
    """The repository at `location` (a local path, file:// or https:// URL).

    Options: "cache_dir" (required: where the cache repository of this source is kept),
    "branch" (default: the repository's HEAD), "include" / "exclude" globs, "max_file_bytes",
    "user" (with a token in `secret`, default "git"), "timeout_s" for one fetch. Raises
    InvalidInput for a location or options that cannot work; nothing is fetched until `list`.
    """
    remote = _remote(location, options)
    cache_root = options.get("cache_dir")
    if not isinstance(cache_root, (str, os.PathLike)) or not str(cache_root):
        raise InvalidInput("a git source needs a cache_dir to keep its copy of the repository")
    branch = options.get("branch")
    if branch is not None:
        branch = _branch(branch)
    timeout = options.get("timeout_s", _DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise InvalidInput(f"timeout_s must be a positive number of seconds, not {timeout!r}")
    files = path_filter(options, max_bytes=_DEFAULT_MAX_FILE, default=_readable)
    # One cache per location and branch, so sources sharing cache_dir never share a copy.
    name = hashlib.sha256(f"{remote.target}\0{branch or ''}".encode()).hexdigest()[:24]
    cache = Path(cache_root).expanduser() / f"{name}.git"
    return GitRepository(remote, branch, files, cache, secret, fetch, float(timeout))


def _remote(location: str, options: Mapping[str, Any]) -> _Remote:
    location = location.strip()
    if not location:
        raise InvalidInput("no repository given")
    if _HELPER.match(location):
        raise InvalidInput(f"git transport helpers (name::address) are not followed: {location}")
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme == "https":
        if not parts.hostname:
            raise InvalidInput(f"no host in {location}")
        if parts.password is not None:
            raise InvalidInput("put the password or token in the source's secret, not in its URL")
        if parts.query or parts.fragment:
            raise InvalidInput(f"a repository URL has no ?query or #fragment: {location}")
        try:
            port = parts.port or 443
        except ValueError as exc:
            raise InvalidInput(f"not a port in {location}") from exc
        host_address(parts.hostname)  # a percent-escaped or zoned host is refused here
        netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        if parts.port:
            netloc += f":{parts.port}"
        target = f"https://{netloc}{parts.path}"
        user = options.get("user") or (unquote(parts.username) if parts.username else None)
        return _Remote(target, target, "https", parts.hostname, port, user)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise InvalidInput(f"a file:// URL names a path on this machine: {location}")
        location = unquote(parts.path)
    elif scheme and len(scheme) > 1:  # "C:" is a drive, not a scheme
        raise InvalidInput(
            f"a repository is a local path or an https:// URL, not {scheme}: ({location})"
        )
    elif re.match(r"^[^/]*:", location):
        raise InvalidInput(f"ssh remotes (host:path) are not followed yet; use https: {location}")
    path = Path(location).expanduser()
    if not path.is_absolute():
        raise InvalidInput(f"a local repository is given by its absolute path, not {location}")
    return _Remote(str(path), str(path), "file")


def _branch(branch: Any) -> str:
    if not isinstance(branch, str) or not branch.strip():
        raise InvalidInput(f"branch must be a branch name, not {branch!r}")
    branch = branch.strip().removeprefix("refs/heads/")
    checked = subprocess.run(
        ["git", "check-ref-format", f"refs/heads/{branch}"],
        capture_output=True,
        timeout=_LOCAL_TIMEOUT_S,
        env=_environment({}),
    )
    if checked.returncode != 0 or branch.startswith("-"):
        raise InvalidInput(f"not a valid branch name: {branch!r}")
    return str(branch)


class GitRepository:
    """One followed repository (see the module's docstring)."""

    def __init__(
        self,
        remote: _Remote,
        branch: str | None,
        files: PathFilter,
        cache: Path,
        secret: str | None,
        policy: FetchPolicy,
        timeout: float,
    ) -> None:
        self._remote = remote
        self._branch = branch
        self._files = files
        self._cache = cache
        self._secret = secret
        self._policy = policy
        self._timeout = timeout
        self._commit: str | None = None
        # The last listing's blobs in order, for reading ahead (`_read`).
        self._listed: Sequence[tuple[str, int | None]] = ()
        self._listed_at: dict[str, int] = {}
        self._last_read: int | None = None
        self._read_ahead: dict[str, bytes] = {}

    @property
    def _shown_branch(self) -> str:
        return f"branch {self._branch}" if self._branch else "the default branch"

    def list(self, state: Mapping[str, Any]) -> Listing:
        commit = self._pull()
        new_state = {"commit": commit, "files": self._files.fingerprint()}
        if dict(state) == new_state:
            return Listing(unchanged=True, state=new_state)
        entries = []
        listed: list[tuple[str, int | None]] = []
        text = None if self._files.chosen else self._text_paths(commit)
        for mode, kind, blob, size, path in self._tree(commit):
            # Regular files only: a symlink's blob is its target's name, a submodule a commit.
            if kind != "blob" or mode not in ("100644", "100755"):
                continue
            if not self._files.takes(path, size):
                continue
            if text is not None and path not in text:
                continue
            entries.append(Entry(path, blob, title=path))
            listed.append((blob, size))
        self._listed = listed
        self._listed_at = {}
        for index, (blob, _size) in enumerate(listed):
            self._listed_at.setdefault(blob, index)
        self._last_read = None
        self._read_ahead = {}
        return Listing(entries=tuple(entries), state=new_state)

    def fetch(self, entry: Entry) -> Fetched:
        if not _OBJECT_ID.fullmatch(entry.version):
            raise InvalidInput(f"not a blob of a git repository: {entry.version!r}")
        commit = self._commit or self._resolve_head()
        data = self._read_ahead.pop(entry.version, None)
        if data is None:
            data = self._read(entry)
        else:
            self._last_read = self._listed_at.get(entry.version)
        name = PurePosixPath(entry.key).name
        return Fetched(
            name=name,
            data=data,
            mime_type=mimetypes.guess_type(name)[0],
            title=entry.key,
            metadata={
                "path": entry.key,
                "commit": commit,
                "branch": self._branch,
                "repository": self._remote.shown,
            },
        )

    def __str__(self) -> str:
        return self._remote.shown

    def _read(self, entry: Entry) -> bytes:
        """The entry's blob. When the fetches follow the listing's order (a first run takes
        every file), the blobs listed next are read in the same `git cat-file --batch`, some
        forty times faster than a git process for each; other fetches read their blob alone."""
        wanted = [entry.version]
        index = self._listed_at.get(entry.version)
        if index is not None and index - 1 == self._last_read:
            budget = _READ_AHEAD_BYTES
            for blob, size in self._listed[index + 1 : index + 1 + _READ_AHEAD]:
                if size is None or size > budget:
                    break
                budget -= size
                if blob not in wanted:
                    wanted.append(blob)
        self._last_read = index
        self._read_ahead.clear()  # what was read ahead and not asked for is not kept
        result = self._git(
            ["cat-file", "--batch"],
            timeout=_LOCAL_TIMEOUT_S,
            input="".join(f"{blob}\n" for blob in wanted).encode(),
        )
        blobs = _batch(result.stdout) if result.returncode == 0 else {}
        data = blobs.pop(entry.version, None)
        if data is None:
            raise NotFound(f"{entry.key} ({entry.version[:12]}) is not in the copy of {self}")
        self._read_ahead = blobs
        return data

    def _pull(self) -> str:
        """Fetch the branch's head into the cache; its commit."""
        self._prepare_cache()
        source = f"refs/heads/{self._branch}" if self._branch else "HEAD"
        settings: dict[str, str] = {
            "protocol.allow": "never",
            f"protocol.{self._remote.scheme}.allow": "always",
            "http.followRedirects": "false",
            # A remote that stalls is given up on rather than holding the worker.
            "http.lowSpeedLimit": "1000",
            "http.lowSpeedTime": "30",
        }
        if self._remote.scheme == "https":
            settings.update(self._https_settings())
        result = self._git(
            [
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-recurse-submodules",
                "--no-write-fetch-head",
                "--depth=1",
                "--end-of-options",
                self._remote.target,
                f"+{source}:{_HEAD_REF}",
            ],
            timeout=self._timeout,
            settings=settings,
        )
        if result.returncode != 0:
            said = _last_line(result.stderr)
            if _NO_REMOTE_REF.search(said) and self._branch:
                raise FetchError(f"{self._shown_branch} is not in {self} (deleted or renamed?)")
            if _NO_REMOTE_REF.search(said):
                raise FetchError(f"{self} has no commit on its default branch (empty?)")
            raise FetchError(f"git could not fetch {self._shown_branch} of {self}: {said}")
        self._commit = self._resolve_head()
        return self._commit

    def _https_settings(self) -> dict[str, str]:
        remote = self._remote
        assert remote.host is not None and remote.port is not None
        addresses = vetted_addresses(remote.host, remote.port, self._policy)
        pinned = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
        settings = {
            # curl connects only to these, whatever DNS answers by the time it asks.
            "http.curloptResolve": f"{remote.host}:{remote.port}:{pinned}",
            "http.proxy": "",
        }
        if self._policy.ca_file is not None:
            settings["http.sslCAInfo"] = self._policy.ca_file
        if self._secret:
            pair = f"{remote.user or 'git'}:{self._secret}".encode()
            token = base64.b64encode(pair).decode("ascii")
            settings["http.extraHeader"] = f"Authorization: Basic {token}"
        return settings

    def _prepare_cache(self) -> None:
        if (self._cache / "HEAD").is_file():
            return
        self._cache.mkdir(parents=True, exist_ok=True)
        result = self._git(["init", "--bare", "--quiet"], timeout=_LOCAL_TIMEOUT_S)
        if result.returncode != 0:
            raise FetchError(
                f"could not make the cache copy of {self}: {_last_line(result.stderr)}"
            )

    def _resolve_head(self) -> str:
        result = self._git(
            ["rev-parse", "--verify", "--quiet", f"{_HEAD_REF}^{{commit}}"],
            timeout=_LOCAL_TIMEOUT_S,
        )
        commit = result.stdout.decode().strip()
        if result.returncode != 0 or not _OBJECT_ID.fullmatch(commit):
            raise FetchError(f"{self} has not been fetched yet")
        return commit

    def _tree(self, commit: str) -> Sequence[tuple[str, str, str, int | None, str]]:
        """(mode, type, object id, size, path) of every file in the commit's tree."""
        result = self._git(
            ["ls-tree", "-r", "-z", "-l", "--full-tree", commit], timeout=_LOCAL_TIMEOUT_S
        )
        if result.returncode != 0:
            raise FetchError(f"could not read the files of {self}: {_last_line(result.stderr)}")
        rows = []
        for record in result.stdout.split(b"\0"):
            if not record:
                continue
            head, _, raw_path = record.partition(b"\t")
            mode, kind, blob, size = head.decode().split()
            try:
                path = raw_path.decode("utf-8")
            except UnicodeDecodeError:
                continue  # a name in a legacy encoding: not a key a document can carry
            rows.append((mode, kind, blob, int(size) if size.isdigit() else None, path))
        return rows

    def _text_paths(self, commit: str) -> set[str]:
        """Paths of the commit's files git reads as text (no NUL byte in their first 8000
        bytes, as `git diff` decides): `-I` skips binary files, an empty pattern matches any
        other file that has a line."""
        result = self._git(
            ["grep", "-I", "-l", "-z", "--no-color", "-e", "", commit, "--"],
            timeout=_LOCAL_TIMEOUT_S,
        )
        if result.returncode not in (0, 1):  # 1: nothing matched
            raise FetchError(f"could not read the files of {self}: {_last_line(result.stderr)}")
        prefix = f"{commit}:".encode()
        return {
            raw.removeprefix(prefix).decode("utf-8", errors="replace")
            for raw in result.stdout.split(b"\0")
            if raw
        }

    def _git(
        self,
        args: Sequence[str],
        *,
        timeout: float,
        settings: Mapping[str, str] | None = None,
        input: bytes | None = None,  # noqa: A002 - subprocess's name
    ) -> subprocess.CompletedProcess[bytes]:
        """git on the cache repository, with `settings` passed through the environment."""
        command = ["git", f"--git-dir={self._cache}", *args]
        env = _environment(settings or {})
        return _run(command, timeout, env, what=f"git {args[0]}", input=input)


def _environment(settings: Mapping[str, str]) -> dict[str, str]:
    """git's whole environment: nothing inherited but PATH, no user or system configuration,
    never a prompt, `settings` as configuration (GIT_CONFIG_COUNT: not on the command line,
    where other users of the machine could read a token)."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.devnull,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "SSH_ASKPASS": "true",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_CONFIG_COUNT": str(len(settings)),
    }
    for index, (key, value) in enumerate(settings.items()):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _run(
    command: list[str],
    timeout: float,
    env: Mapping[str, str],
    *,
    what: str,
    input: bytes | None = None,  # noqa: A002 - subprocess's name
) -> subprocess.CompletedProcess[bytes]:
    """`command` to its end or its timeout; on a timeout its whole process group (git's
    helpers: git-remote-https, upload-pack) is killed, not only git itself."""
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        raise FetchError(f"could not run git: {exc}") from exc
    try:
        stdout, stderr = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise FetchError(f"{what} took longer than {timeout:g} s and was stopped") from None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _batch(output: bytes) -> dict[str, bytes]:
    """The blobs in `git cat-file --batch` output ("<id> blob <size>\\n<bytes>\\n" each;
    "<id> missing\\n" for one that is not there)."""
    blobs: dict[str, bytes] = {}
    at = 0
    while at < len(output):
        end = output.index(b"\n", at)
        header = output[at:end].decode("ascii", errors="replace").split()
        at = end + 1
        if len(header) != 3:
            continue  # "<id> missing" and the like
        blob, kind, size = header
        data = output[at : at + int(size)]
        at += int(size) + 1
        if kind == "blob":
            blobs[blob] = data
    return blobs


def _last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines()]
    lines = [line for line in lines if line]
    return (lines[-1] if lines else "no reason given")[:300]
