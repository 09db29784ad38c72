"""A document's bytes written back to its file in a followed folder: what a restored version of
a folder's file does, so the folder and Loci agree (else the next edit of the file would
silently replace the restore).

The rule is the one a folder kept as pages follows (`loci brain sync`): a file is only
replaced if it is still the version Loci replaces — changed since Loci last read it (an edit
not synced yet) or gone, it is a conflict and nothing is written. The write is atomic: the
bytes go to a hidden temporary file beside it (never a document: the folder's walk skips
hidden names), flushed, given the file's permissions, and renamed over the file — all of it in
the file's folder as opened once, never through a link (`loci.confined_paths`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from loci import confined_paths
from loci.confined_paths import NO_FENCE, Fence
from loci.errors import Conflict, InvalidInput, LociError
from loci.ingest.folder_walk import FolderFile, read_whole_in, stat_identity_in
from loci.models import Brain, Document, Source
from loci.service.source_files import of_source
from loci.store.base import Store
from loci.store.blobs import sha256_hex

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def followed_by(store: Store, brain: Brain, document: Document) -> Source | None:
    """The folder followed as files that `document` is the document of a file of, if any."""
    if document.source_path is None:
        return None
    for source in store.sources(brain.id):
        if not source.scheduled and source.mode == "files" and of_source(source, document):
            return source
    return None


def replace_file(
    path: Path, expected_hash: str, data: bytes, what: str, fence: Fence = NO_FENCE
) -> FolderFile:
    """Put `data` in the file at `path`, which must hold the bytes of `expected_hash` (`what`
    names that version for a person); the stamp of the file written. `Conflict` if the file
    changed or is gone, and nothing is written. The file's folder is reached without a link
    (`loci.confined_paths`) and opened once: the file is read, checked and replaced in that
    folder, whatever is renamed or swapped for a link meanwhile."""
    try:
        with confined_paths.parent(path, fence) as (folder, name):
            return _replace_in(folder, name, path, expected_hash, data, what)
    except FileNotFoundError:
        raise _gone(path) from None
    except confined_paths.Refused as refused:
        raise InvalidInput(f"{path} cannot be reached: {refused}; nothing was restored") from None
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror}; nothing was restored") from None


def _gone(path: Path) -> Conflict:
    return Conflict(
        f"{path} is not there (deleted or moved since Loci last synced it); nothing was"
        " restored — run `loci sync` first, or save the version elsewhere with"
        " `loci versions save`"
    )


def _replace_in(
    folder: int, name: str, path: Path, expected_hash: str, data: bytes, what: str
) -> FolderFile:
    try:
        current, read = read_whole_in(folder, name, path)
    except FileNotFoundError:
        raise _gone(path) from None
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror}; nothing was restored") from None
    except LociError as error:
        raise Conflict(f"{error.message}; nothing was restored") from None
    if sha256_hex(current) != expected_hash:
        raise Conflict(
            f"{path} changed since Loci last read it (it no longer holds {what}, which the"
            " restore would replace); nothing was restored, so that edit is not lost — run"
            " `loci sync` to keep it as the newest version, then restore"
        )
    temporary = f".{name}.{secrets.token_hex(4)}.loci-restore"
    try:
        descriptor = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder
        )
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            os.fchmod(handle.fileno(), stat.S_IMODE(mode))
        now = os.stat(name, dir_fd=folder, follow_symlinks=False)
        # written to meanwhile: still a conflict, still nothing lost
        if (now.st_ino, now.st_size, now.st_mtime_ns) != (read.inode, read.size, read.mtime_ns):
            raise Conflict(
                f"{path} changed while the restore was being written; nothing was restored"
            )
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as error:
        _remove(folder, temporary)
        raise InvalidInput(f"cannot write {path}: {error.strerror}; nothing was restored") from None
    except BaseException:
        _remove(folder, temporary)
        raise
    return stat_identity_in(folder, name, path)


def _remove(folder: int, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)
