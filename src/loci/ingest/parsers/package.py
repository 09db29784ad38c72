"""Zip packages (DOCX, PPTX, XLSX, EPUB, ODT) opened under the parse budgets, and told apart.

`Package` is checked before any member is inflated: the zip's declared sizes against the
decompressed-size and ratio budgets (a zip bomb fails here, cheaply; Python's zipfile stops at
the declared size and fails the CRC check, so the declaration cannot be used to lie past it),
then every XML part against the per-part budget when it is read, because a part is parsed into
memory whole (or, for spreadsheet sheets and shared strings, streamed but still kept). Bytes
are not the whole story: a parsed element costs lxml well over a hundred bytes however few it
took in the file, so every part parsed into memory is counted first (`xml_scan`) and the
package may hold at most `ParseBudgets.max_xml_nodes` elements and attributes in all, which
keeps any accepted file's parse within a few hundred megabytes. XML is parsed by lxml without
entity resolution, DTD loading or network access; the Office and OpenDocument formats never
need a DOCTYPE, so one anywhere in a part is refused outright (that is how XML bombs and
external-entity reads start), while EPUB's NCX and XHTML files often carry a harmless one and
are only parsed without resolving it.

`package_kind` reads the member names (and ODF/EPUB's `mimetype` member) to say which format a
zip is, falling back to the local file headers when the central directory is gone (a truncated
upload is still recognised as the PPTX it was, and fails as a corrupt PPTX).
"""

from __future__ import annotations

import io
import posixpath
import re
import struct
import zipfile
from collections.abc import Iterator
from typing import Any

from loci.errors import BudgetExceeded, ParseError
from loci.ingest.parsers import ParseBudgets
from loci.ingest.parsers.xml_scan import XmlScan, scan_xml
from loci.ingest.reasons import with_detail

_MAX_MEMBERS = 10_000
_RATIO_FLOOR = 1024 * 1024  # tiny packages cannot bomb; their ratios are noise
_LOCAL_HEADER = re.compile(rb"PK\x03\x04")
_ODF_TEXT = b"application/vnd.oasis.opendocument.text"
_EPUB = b"application/epub+zip"
_MIMETYPE_MAX = 256
_SCAN_CHUNK = 1024 * 1024
# What a person calls each format, for budget messages they can act on.
_NOUNS = {
    "DOCX": "Word document",
    "XLSX": "spreadsheet",
    "PPTX": "presentation",
    "EPUB": "EPUB book",
    "ODT": "OpenDocument text",
}


def package_kind(data: bytes) -> str:
    """ "docx", "pptx", "xlsx", "epub", "odt" for those packages, "zip" for any other zip."""
    names, mimetype = _names_and_mimetype(data)
    if mimetype is not None:
        if mimetype == _EPUB:
            return "epub"
        if mimetype == _ODF_TEXT:
            return "odt"
    if "[Content_Types].xml" in names:
        tops = {name.split("/", 1)[0] for name in names if "/" in name}
        for top, kind in (("word", "docx"), ("ppt", "pptx"), ("xl", "xlsx")):
            if top in tops:
                return kind
    if mimetype is None and "META-INF/container.xml" in names:
        return "epub"  # a sloppy EPUB without its mimetype member is still a book
    return "zip"


def _too_many_members(data: bytes) -> bool:
    """More central-directory headers than `_MAX_MEMBERS`, counted in the bytes (a few ms for
    50 MB) before `zipfile` reads the directory: it builds an object per member, and a 50 MB
    zip of 600,000 empty members took 306 MB and 13 s just to be told apart. A stored member's
    bytes may hold the signature too; that only counts more, and such a count is far past any
    real package."""
    return data.count(b"PK\x01\x02") > _MAX_MEMBERS


def readable_zip(data: bytes) -> bool:
    """Whether the zip's central directory can be read (False: truncated or damaged; a
    directory over the part budget is not read and counts as readable: the parser refuses it)."""
    if _too_many_members(data):
        return True
    try:
        with zipfile.ZipFile(io.BytesIO(data)):
            return True
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError):
        return False


def _names_and_mimetype(data: bytes) -> tuple[set[str], bytes | None]:
    if _too_many_members(data):
        return _local_headers(data)  # the first `_MAX_MEMBERS`, without the whole directory
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()[:_MAX_MEMBERS]
            names = {info.filename for info in infos}
            mimetype = None
            info = next((i for i in infos if i.filename == "mimetype"), None)
            if info is not None and info.file_size <= _MIMETYPE_MAX:
                mimetype = archive.read(info).strip()
            return names, mimetype
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError):
        return _local_headers(data)


def _local_headers(data: bytes) -> tuple[set[str], bytes | None]:
    """Member names from the local file headers of a zip whose directory cannot be read."""
    names: set[str] = set()
    mimetype = None
    for match in _LOCAL_HEADER.finditer(data):
        start = match.start()
        if len(names) >= _MAX_MEMBERS or start + 30 > len(data):
            break
        method, _, _, _, compressed, _, name_len, extra_len = struct.unpack(
            "<HHHIIIHH", data[start + 8 : start + 30]
        )
        name = data[start + 30 : start + 30 + name_len].decode("utf-8", "replace")
        names.add(name)
        if name == "mimetype" and method == 0 and compressed <= _MIMETYPE_MAX:
            body = start + 30 + name_len + extra_len
            mimetype = data[body : body + compressed].strip()
    return names, mimetype


class Package:
    """A zip package whose declared sizes passed the budgets; parts are read on demand."""

    def __init__(self, data: bytes, budgets: ParseBudgets, what: str) -> None:
        self.what = what
        self.budgets = budgets
        if _too_many_members(data):
            raise BudgetExceeded(
                f"{what} has more than {_MAX_MEMBERS:,} parts, over the part budget"
            )
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(data))
            members = self.archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
            raise ParseError(f"corrupt {what}: not a readable zip archive (truncated?)") from None
        if len(members) > _MAX_MEMBERS:
            raise BudgetExceeded(
                f"{what} has {len(members)} parts, over the {_MAX_MEMBERS}-part budget"
            )
        total = sum(m.file_size for m in members)
        if total > budgets.max_decompressed_bytes:
            raise BudgetExceeded(
                f"{what} decompresses past the {mib(budgets.max_decompressed_bytes)} budget "
                f"({mib(total)})"
            )
        ratio = total / max(len(data), 1)
        if total > _RATIO_FLOOR and ratio > budgets.max_compression_ratio:
            raise BudgetExceeded(
                f"{what} decompresses past the compression-ratio budget ({ratio:.0f}:1, limit "
                f"{budgets.max_compression_ratio:g}:1)"
            )
        self._members = {m.filename: m for m in members}
        self._nodes = 0  # elements and attributes of the parts parsed into memory so far

    def names(self) -> list[str]:
        return list(self._members)

    def __contains__(self, name: str) -> bool:
        return name in self._members

    def read(self, name: str, *, allow_doctype: bool = False) -> bytes:
        """A part's bytes, within the per-part budget; a missing part is a corrupt package."""
        info = self._members.get(name)
        if info is None:
            raise ParseError(f"corrupt {self.what}: part {name} is missing")
        self._check_size(info)
        try:
            data = self.archive.read(info)
        except (
            zipfile.BadZipFile,
            OSError,
            RuntimeError,
            EOFError,
            ValueError,
            NotImplementedError,
        ):
            # RuntimeError is zipfile's "encrypted member"; the rest are damaged data
            raise ParseError(f"corrupt {self.what}: part {name} cannot be read") from None
        self._admit(name, scan_xml([data]), allow_doctype=allow_doctype, kept=True)
        return data

    def inspect_parts(self) -> None:
        """Scan every XML part as a stream, for a library (python-docx) that will parse them all
        itself, unchecked: any DOCTYPE is refused, and their elements count against the
        package's node budget before one of them is parsed."""
        for name, info in self._members.items():
            if name.endswith((".xml", ".rels")):
                self._check_size(info)
                self._admit(name, self._scan(info), allow_doctype=False, kept=True)

    def xml(self, name: str, *, allow_doctype: bool = False) -> Any:
        """A part parsed whole into an lxml element (entities never resolved)."""
        from lxml import etree

        data = self.read(name, allow_doctype=allow_doctype)
        try:
            return etree.fromstring(data, safe_xml_parser())
        except etree.XMLSyntaxError as exc:
            raise ParseError(
                with_detail(f"corrupt {self.what}: part {name} is not well-formed XML", exc)
            ) from None

    def iter_elements(self, name: str, tag: str) -> Iterator[Any]:
        """Elements `tag` of a part, streamed: each is cleared once the caller moves on, so a
        big sheet costs memory for one row at a time."""
        from lxml import etree

        info = self._members.get(name)
        if info is None:
            raise ParseError(f"corrupt {self.what}: part {name} is missing")
        self._check_size(info)
        # Streamed, so the part's elements cost no memory past the current one: only the
        # DOCTYPE and encoding checks apply, and the caller budgets what it keeps.
        self._admit(name, self._scan(info), allow_doctype=False, kept=False)
        try:
            with self.archive.open(info) as stream:
                events = etree.iterparse(
                    stream,
                    events=("end",),
                    tag=tag,
                    resolve_entities=False,
                    load_dtd=False,
                    no_network=True,
                    huge_tree=False,
                )
                for _, element in events:
                    yield element
                    element.clear(keep_tail=False)
                    while element.getprevious() is not None:
                        del element.getparent()[0]
        except etree.XMLSyntaxError as exc:
            raise ParseError(
                with_detail(f"corrupt {self.what}: part {name} is not well-formed XML", exc)
            ) from None
        except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, NotImplementedError):
            raise ParseError(f"corrupt {self.what}: part {name} cannot be read") from None

    def relationships(self, part: str) -> dict[str, tuple[str, str]]:
        """OOXML relationships of `part`: id → (type, target part name); external ones skipped."""
        folder, base = posixpath.split(part)
        rels_name = posixpath.join(folder, "_rels", base + ".rels")
        if rels_name not in self._members:
            return {}
        out: dict[str, tuple[str, str]] = {}
        for rel in self.xml(rels_name):
            if not isinstance(rel.tag, str) or rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target") or ""
            resolved = resolve(folder, target)
            out[rel.get("Id") or ""] = (rel.get("Type") or "", resolved)
        return out

    def main_part(self, relationship: str, default: str) -> str:
        """The part the package's root relationships point at for `relationship` (the type's
        last path segment, e.g. "officeDocument"), else `default`."""
        for rel_type, target in self.relationships("").values():
            if rel_type.rsplit("/", 1)[-1] == relationship and target in self._members:
                return target
        return default

    def core_properties(self) -> dict[str, str]:
        """Title, author and dates from an OOXML package's docProps/core.xml, if present."""
        if "docProps/core.xml" not in self._members:
            return {}
        names = {
            "title": "title",
            "creator": "author",
            "subject": "subject",
            "keywords": "keywords",
            "created": "created",
            "modified": "modified",
        }
        out: dict[str, str] = {}
        for element in self.xml("docProps/core.xml"):
            key = names.get(local_name(element))
            text = " ".join("".join(element.itertext()).split())
            if key and text:
                out[key] = text[:500]
        return out

    def _check_size(self, info: zipfile.ZipInfo) -> None:
        limit = self.budgets.max_part_bytes
        if info.file_size > limit:
            raise BudgetExceeded(
                f"{self.what} part {info.filename} is {mib(info.file_size)} decompressed, over "
                f"the {mib(limit)} per-part budget"
            )

    def _scan(self, info: zipfile.ZipInfo) -> XmlScan:
        try:
            with self.archive.open(info) as stream:
                return scan_xml(iter(lambda: stream.read(_SCAN_CHUNK), b""))
        except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError):
            # RuntimeError is zipfile's "encrypted member"; the rest are damaged data
            raise ParseError(f"corrupt {self.what}: part {info.filename} cannot be read") from None

    def _admit(self, name: str, scan: XmlScan, *, allow_doctype: bool, kept: bool) -> None:
        if not scan.readable:
            raise ParseError(
                f"{self.what} part {name} is XML in an encoding other than UTF-8 or UTF-16, "
                "which these files never use; refused"
            )
        if scan.doctype and not allow_doctype:
            raise ParseError(
                f"{self.what} part {name} declares a DOCTYPE, which these files never need and "
                "XML bombs rely on; refused (save the file again from its application)"
            )
        if kept:
            self.spend_nodes(scan.nodes)

    def spend_nodes(self, nodes: int) -> None:
        """Count `nodes` elements (or values kept in memory) against the package's budget."""
        self._nodes += nodes
        limit = self.budgets.max_xml_nodes
        if self._nodes > limit:
            noun = _NOUNS.get(self.what, f"{self.what} file")
            raise BudgetExceeded(
                f"this {noun} has more than {limit:,} XML elements; Loci reads at most "
                f"{limit:,} in one file (split it into smaller files)"
            )


def resolve(folder: str, target: str) -> str:
    """A relative package reference (`../media/x.xml`, `/ppt/slides/s1.xml`) as a member name."""
    target = target.split("#", 1)[0]
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    return posixpath.normpath(posixpath.join(folder, target))


def safe_xml_parser() -> Any:
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False)


def local_name(element: Any) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def mib(n: int) -> str:
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.0f} MB"
