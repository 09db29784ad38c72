"""Decoding untrusted image bytes under limits, before any OCR or captioning sees them.

An image file is small on disk and huge in memory when it is decoded (a 50 KB PNG can declare
50,000 x 50,000 pixels: 2.5 GB as greyscale). So the format is read from the magic bytes and must
be on the allowlist, and the pixel count is read from the header and checked before a single
pixel is decoded; Pillow's own `DecompressionBombError` backs that up. Animated images (GIF,
WebP, TIFF pages) are read at their first frame only.
"""

from __future__ import annotations

import io
import logging
import warnings
from typing import TYPE_CHECKING

from loci.errors import BudgetExceeded, NoParser, ParseError
from loci.ingest.reasons import with_detail

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

IMAGE_EXTENSIONS = frozenset(
    {".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".gif", ".bmp", ".heic", ".heif"}
)
DEFAULT_MAX_PIXELS = 40_000_000  # a 40-megapixel photo; ~120 MB as RGB while it is read

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
_DIB_HEADER_SIZES = frozenset({12, 16, 40, 52, 56, 64, 108, 124})


def sniff_image(data: bytes) -> str | None:
    """The image format the bytes start with ("PNG", "HEIF", ...), or None."""
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    # "BM" alone starts plenty of text files; a real BMP's DIB header size follows at byte 14.
    if data[:2] == b"BM" and int.from_bytes(data[14:18], "little") in _DIB_HEADER_SIZES:
        return "BMP"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"heif"):
        return "HEIF"
    return None


def heif_supported() -> bool:
    try:
        import pillow_heif  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


def open_image(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """The first frame, decoded, as greyscale-or-RGB; a bomb or a broken file fails here."""
    from PIL import Image, UnidentifiedImageError

    kind = sniff_image(data)
    if kind is None:
        raise ParseError("not an image this parser reads (PNG, JPEG, WebP, TIFF, GIF, BMP, HEIC)")
    if kind == "HEIF":
        if not heif_supported():
            raise NoParser("no decoder for HEIC images here (install pillow-heif)")
        import pillow_heif

        pillow_heif.register_heif_opener()
    try:
        with warnings.catch_warnings():
            # Pillow warns past MAX_IMAGE_PIXELS and raises past twice that; our own check
            # below is the limit, and it runs on the header before anything is decoded.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data), formats=[kind])
            width, height = opened.size
            if width * height > max_pixels:
                raise BudgetExceeded(
                    f"image is {width} x {height} pixels ({width * height / 1e6:.0f} megapixels),"
                    f" over the {max_pixels / 1e6:g}-megapixel budget (a decompression bomb?)"
                )
            opened.seek(0)
            opened.load()
    except BudgetExceeded:
        raise
    except Image.DecompressionBombError:
        raise BudgetExceeded(
            f"image is over the {max_pixels / 1e6:g}-megapixel budget (a decompression bomb?)"
        ) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ParseError(
            with_detail(
                f"corrupt {kind} image: it is damaged or cut short and cannot be decoded",
                exc,
            )
        ) from None
    image: Image.Image = opened
    if image.mode not in ("L", "RGB"):
        image = _flatten(image)
    return image


def _flatten(image: Image.Image) -> Image.Image:
    """RGB on white: transparency becomes paper, not black (dark text on a clear PNG)."""
    from PIL import Image

    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        paper = Image.new("RGB", rgba.size, (255, 255, 255))
        paper.paste(rgba, mask=rgba.getchannel("A"))
        return paper
    if image.mode.startswith(("I;16", "I", "F")):
        return image.convert("L")
    return image.convert("RGB")
