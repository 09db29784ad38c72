"""Scanned vs text PDFs: pages per second through the parser, and peak memory OCRing 100 pages.

    .venv/bin/python bench/ocr_pdf.py [--pages 20] [--big 100]

Text PDF: tests/support/pdf_files.py's text_pdf (~400 words a page), parsed without OCR (every
page has text).
Scanned PDF: pages of ~400 words rendered with Pillow's bundled font at 150 dpi (letter size,
1275 x 1650 greyscale), saved as a PDF of images with no text layer — what a sheet-feed scanner
makes. The parser renders each page at 200 dpi and runs Tesseract on it, one page at a time.
Ten distinct pages are cycled to build long files, so generating them stays quick.

Memory: the `--big`-page scanned PDF is written to a temporary file and parsed in a fresh
subprocess; its peak RSS (getrusage ru_maxrss; interpreter and imports included) is printed, and
separately the largest Tesseract child's. Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ocr_accuracy import WORDS  # noqa: E402  (a sibling script: its folder is on sys.path)
from PIL import Image, ImageDraw, ImageFont  # noqa: E402
from tests.support import pdf_files  # noqa: E402

from loci.ingest.parsers import ParseBudgets, parse  # noqa: E402

DPI = 150


def page_image(seed: int) -> Image.Image:
    rng = random.Random(seed)
    image = Image.new("L", (int(8.5 * DPI), 11 * DPI), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=22)
    y = 120
    for _ in range(40):  # ~10 words a line: ~400 words a page
        start = rng.randrange(0, len(WORDS) - 10)
        draw.text((110, y), " ".join(WORDS[start : start + 10]), fill=0, font=font)
        y += 36
    return image


def scanned_pdf(pages: int) -> bytes:
    distinct = [page_image(seed) for seed in range(min(pages, 10))]
    images = [distinct[i % len(distinct)] for i in range(pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=DPI)
    return buffer.getvalue()


def throughput(pages: int) -> None:
    for label, data in (
        ("text PDF", pdf_files.text_pdf(pages)),
        ("scanned PDF", scanned_pdf(pages)),
    ):
        started, cpu = time.perf_counter(), time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        doc = parse(data, "bench.pdf", ParseBudgets())
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_total = (time.process_time() - cpu) + (after.ru_utime - children.ru_utime)
        cpu_total += after.ru_stime - children.ru_stime
        words = len(doc.text.split())
        print(
            f"{label:<12} {pages} pages, {len(data) / 1e6:5.1f} MB: {wall:6.2f} s = "
            f"{pages / wall:7.2f} pages/s ({words / pages:.0f} words a page; "
            f"CPU incl. OCR processes {cpu_total:.1f} s)"
        )


def peak_memory(pages: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scan.pdf"
        for step in ("--generate", "--measure"):
            out = subprocess.run(
                [sys.executable, __file__, step, str(path), "--big", str(pages)],
                capture_output=True,
                text=True,
                check=True,
            )
            if out.stdout.strip():
                print(out.stdout.strip())


def measure(path: Path) -> None:
    data = path.read_bytes()
    started = time.perf_counter()
    doc = parse(data, path.name, ParseBudgets())
    wall = time.perf_counter() - started
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    pages = len({b.location.page for b in doc.blocks})
    print(
        f"{pages}-page scanned PDF ({len(data) / 1e6:.1f} MB) OCRed in {wall:.0f} s: "
        f"peak RSS {me:.0f} MB (parser process), {child:.0f} MB (largest Tesseract process)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--big", type=int, default=100)
    parser.add_argument("--generate", type=Path)
    parser.add_argument("--measure", type=Path)
    args = parser.parse_args()
    if args.generate:
        args.generate.write_bytes(scanned_pdf(args.big))
        return
    if args.measure:
        measure(args.measure)
        return
    throughput(args.pages)
    peak_memory(args.big)


if __name__ == "__main__":
    main()
