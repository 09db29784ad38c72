"""Real git repositories for tests: a bare repository (what a followed source points at) and a
work clone from which a test commits and pushes, as a person would.

    origin = Origin.create(tmp_path)
    origin.write("notes/a.md", "# A")
    origin.commit_and_push("first note")
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Commits made by the tests are reproducible and never read the machine's own git settings.
_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Tess Tester",
    "GIT_AUTHOR_EMAIL": "tess@example.org",
    "GIT_COMMITTER_NAME": "Tess Tester",
    "GIT_COMMITTER_EMAIL": "tess@example.org",
    "LC_ALL": "C",
}


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=_ENV, capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


@dataclass
class Origin:
    """A bare repository `bare` with default branch main, and a clone `work` to change it."""

    bare: Path
    work: Path

    @classmethod
    def create(cls, folder: Path) -> Origin:
        bare, work = folder / "origin.git", folder / "work"
        bare.mkdir(parents=True)
        git("init", "--bare", "--quiet", "--initial-branch=main", cwd=bare)
        work.mkdir()
        git("init", "--quiet", "--initial-branch=main", cwd=work)
        git("remote", "add", "origin", str(bare), cwd=work)
        return cls(bare, work)

    def write(self, path: str, content: str | bytes) -> None:
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def remove(self, path: str) -> None:
        git("rm", "--quiet", path, cwd=self.work)

    def commit_and_push(self, message: str, branch: str = "main") -> str:
        """Commit everything in the work clone onto `branch` and push it; the commit."""
        git("add", "--all", cwd=self.work)
        git("commit", "--quiet", "--allow-empty", "-m", message, cwd=self.work)
        git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def rewrite_history(self, message: str) -> str:
        """Replace the branch's history by one new commit of the work tree as it is and
        force-push it (what `git commit --amend` or a rebase and `push --force` do)."""
        git("add", "--all", cwd=self.work)
        git("checkout", "--quiet", "--orphan", "rewritten", cwd=self.work)
        git("commit", "--quiet", "-m", message, cwd=self.work)
        git("push", "--quiet", "--force", "origin", "HEAD:refs/heads/main", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def delete_branch(self, branch: str) -> None:
        git("push", "--quiet", "origin", f":refs/heads/{branch}", cwd=self.work)

    def head(self, branch: str = "main") -> str:
        return git("rev-parse", f"refs/heads/{branch}", cwd=self.bare)
