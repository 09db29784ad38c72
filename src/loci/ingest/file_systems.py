"""Whether a folder's file system reports changes as events, or has to be polled.

Native events (inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows) come from
the local kernel, so they only see changes made through it. On a network share — NFS, SMB/CIFS,
sshfs, rclone and other FUSE mounts, WebDAV — a file changed by another machine raises no event
at all, and neither do Windows drives seen from WSL (`/mnt/c`: drvfs or 9p) or a host's folder
shared into a virtual machine (virtiofs, vboxsf, vmhgfs). Those folders are polled.

The file system is looked up in the mount table (`/proc/self/mountinfo`, Linux and WSL); where
there is none (macOS, Windows) a folder is taken to have events.
"""

from __future__ import annotations

import os
from pathlib import Path

MOUNT_INFO = Path("/proc/self/mountinfo")

# File systems whose changes made elsewhere raise no local event.
POLLED = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "afs", "ceph", "glusterfs", "lustre", "gpfs",
        "beegfs", "ncpfs", "coda", "davfs", "9p", "drvfs", "virtiofs", "vboxsf", "vmhgfs",
        "prl_fs", "fuse",
    }
)  # fmt: skip
# FUSE over a local block device (NTFS or exFAT through ntfs-3g): local, its events are real.
LOCAL_FUSE = frozenset({"fuseblk"})


def _unescape(field: str) -> str:
    # The mount table writes a space, tab, newline and backslash in a path as octal escapes.
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def file_system_type(path: Path, mount_info: Path = MOUNT_INFO) -> str | None:
    """The type of the file system `path` lies on (`ext4`, `nfs4`, `fuse.sshfs`, …), from the
    mount table; None where there is no mount table to read."""
    try:
        lines = mount_info.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, kind = "", None
    for line in lines:
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        mount_point = _unescape(fields[4])
        separator = fields.index("-", 6)
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best) and len(fields) > separator + 1:
            best, kind = mount_point, fields[separator + 1]
    return kind


def needs_polling(path: Path, mount_info: Path = MOUNT_INFO) -> bool:
    """Whether changes to the folder `path` may come without a native event."""
    kind = file_system_type(path, mount_info)
    if kind is None or kind in LOCAL_FUSE:
        return False
    return kind in POLLED or kind.split(".", 1)[0] in POLLED
