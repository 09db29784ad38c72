"""Images to feed Loci, made at test time with Pillow: lines of text drawn on white, and
images saved as the pages of a PDF with no text layer, as a scanner makes."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont


def text_image(
    lines: list[str], *, size: tuple[int, int] = (900, 260), top: int = 30
) -> Image.Image:
    image = Image.new("RGB", size, "white")
    font = ImageFont.load_default(size=28)
    ImageDraw.Draw(image).multiline_text((30, top), "\n".join(lines), fill="black", font=font)
    return image


def scanned_pdf(pages: list[Image.Image]) -> bytes:
    """Images saved as PDF pages: what a scanner makes, with no text layer."""
    buffer = io.BytesIO()
    pages[0].save(buffer, format="PDF", save_all=True, append_images=pages[1:], resolution=100)
    return buffer.getvalue()
