"""A file's identity on its file system: what a rename or a move within the file system keeps,
and an edit in place too, so a moved file can be told from a new one whatever its bytes.

The identity is the device and inode number — but on Linux an inode number is handed out again
at once: a note deleted and another written a moment later get the same number (ext4 did so
200 times out of 200 here). The inode's *generation* tells them apart: a number the file system
draws afresh each time it hands an inode out (ext4, btrfs, XFS, F2FS; the
`FS_IOC_GETVERSION` ioctl, what NFS file handles use for the same reason). So on Linux two
files are the same only with the same device, inode and generation; where the generation
cannot be read (tmpfs, most FUSE and network file systems) the identity is not trusted and a
move is matched by its bytes alone. macOS (APFS numbers files without reuse) and Windows (NTFS
file ids carry a sequence number) are trusted on device and inode.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

if sys.platform != "win32":
    import fcntl

# _IOR('v', 1, long): the kernel writes the generation as an int at the start of the buffer.
FS_IOC_GETVERSION = 0x80087601 if struct.calcsize("l") == 8 else 0x80047601
# Where a device and inode alone name one file for good (inode numbers not soon reused).
INODES_NAME_FILES = sys.platform in ("darwin", "win32")


@dataclass(frozen=True)
class FileIdentity:
    device: int
    inode: int
    generation: int | None = None  # None: the file system keeps none (or it was not read)

    def as_stamp(self) -> dict[str, int]:
        """The identity's part of the stamp a document of a folder's file keeps."""
        stamp = {"dev": self.device, "ino": self.inode}
        if self.generation is not None:
            stamp["gen"] = self.generation
        return stamp


def generation_of(descriptor: int, info: os.stat_result) -> int | None:
    """The generation of the open file's inode, or None where there is none to read."""
    st_gen = getattr(info, "st_gen", 0)  # the BSDs report it in stat
    if st_gen:
        return int(st_gen)
    if sys.platform != "linux":
        return None
    try:
        raw = fcntl.ioctl(descriptor, FS_IOC_GETVERSION, bytes(8))
    except OSError:  # ENOTTY: this file system keeps no generation
        return None
    return int(struct.unpack_from("I", raw)[0])


def identity_of(descriptor: int) -> FileIdentity:
    """The identity of an open file."""
    info = os.fstat(descriptor)
    return FileIdentity(info.st_dev, info.st_ino, generation_of(descriptor, info))


def recorded_identity(stamp: Mapping[str, Any] | None) -> FileIdentity | None:
    """The identity a document's stamp recorded, or None (recorded before identities were)."""
    if not stamp or "ino" not in stamp or "dev" not in stamp:
        return None
    generation = stamp.get("gen")
    return FileIdentity(
        int(stamp["dev"]), int(stamp["ino"]), None if generation is None else int(generation)
    )


def same_file(recorded: FileIdentity, current: FileIdentity) -> bool:
    """Whether `current` is the file whose identity was `recorded` — moved, renamed or edited
    in place since, but the same file (not another given its inode number)."""
    if (recorded.device, recorded.inode) != (current.device, current.inode):
        return False
    if recorded.generation is not None or current.generation is not None:
        return recorded.generation == current.generation
    return INODES_NAME_FILES
