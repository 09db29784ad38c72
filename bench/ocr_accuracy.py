"""OCR engines compared on the same rendered text images: character accuracy and seconds per image.

    .venv/bin/python bench/ocr_accuracy.py [--engines tesseract,rapidocr,fallback] [--samples 8]

Fixture set, made here with Pillow (its bundled scalable font, so every machine renders the same):
`--samples` paragraphs of prose with names, numbers and punctuation, each rendered three ways:

- clean: black on white, 26 px text, 1100 px wide;
- rotated: the clean image turned 3 degrees (white fill), as a phone photo of a page is;
- low contrast: grey text (140) on light grey (185), as a faded print or a dim photo;
- photo: all of it harder at once, smaller (20 px) grey text on grey, turned 5 degrees, blurred
  (radius 1) and with pixel noise, as a quick phone snap of a notice board.

Character accuracy is 1 - CER, CER = Levenshtein distance / reference length, both texts with
whitespace collapsed to single spaces (line breaks are layout, not content). Seconds per image are
wall time per call after one warm-up call (engine start-up and model loading excluded), on
whatever the machine is doing: run it when the neighbours are quiet. CPU seconds per image
(this process's threads plus the Tesseract processes) are steadier on a shared machine.

Engines: "tesseract" (the `tesseract` command, Debian package tesseract-ocr, TSV output as
Loci reads it) and "rapidocr" (the `rapidocr` 3.x wheel with its bundled PP-OCR models, or
`rapidocr_onnxruntime` 1.x, default settings), and "fallback": what Loci itself does
(`loci.ingest.ocr.choice`, needs `loci[ocr-photos]`): Tesseract first, RapidOCR (without its
line-angle classifier) only where Tesseract's reading is weak, the more confident one kept.
An engine that is not installed is reported and skipped.
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

TEXT = (
    "the boiler pressure gauge reads between one and two bar when the heating is cold "
    "open the filling loop valve slowly and close it again at 1.5 bar invoice number "
    "for the kitchen renovation was paid on March 14 by bank transfer Margaret Okafor "
    "signed the lease for flat 3B at 27 Harrow Road the warranty covers parts and labour "
    "for five years quarterly review of the garden budget shows a surplus of 212 pounds "
    "call the plumber before Friday the dentist appointment moved to Tuesday at 09:40 "
    "password hints never go into shared notes the recipe needs 250 g flour two eggs "
    "and a pinch of salt whisk the batter until smooth and rest it for thirty minutes"
)
WORDS = TEXT.split()

CONDITIONS = ("clean", "rotated", "low contrast", "photo")


def sample_texts(count: int, seed: int = 8) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        lines = []
        for _ in range(6):
            start = rng.randrange(0, len(WORDS) - 9)
            line = " ".join(WORDS[start : start + rng.randint(7, 9)])
            lines.append(line[0].upper() + line[1:] + rng.choice([".", ",", ";", ":", ""]))
        texts.append("\n".join(lines))
    return texts


def render(text: str, condition: str, seed: int = 0) -> Image.Image:
    photo = condition == "photo"
    font = ImageFont.load_default(size=20 if photo else 26)
    ink, paper = (140, 185) if condition == "low contrast" else (90, 200) if photo else (0, 255)
    image = Image.new("L", (1100, 60 + 40 * text.count("\n") + 40), paper)
    ImageDraw.Draw(image).multiline_text((40, 30), text, fill=ink, font=font, spacing=12)
    if condition in ("rotated", "photo"):
        angle = 5 if photo else 3
        image = image.rotate(angle, expand=True, fillcolor=paper, resample=Image.Resampling.BICUBIC)
    if photo:
        image = image.filter(ImageFilter.GaussianBlur(1))
        noise = Image.effect_noise(image.size, 24)  # centred on 128
        image = ImageChops.add(image, noise, scale=1.0, offset=-128)
    return image


def png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cpu_seconds() -> float:
    """CPU time of this process (all its threads) and its finished children (Tesseract): on a
    shared machine wall time swings with the neighbours' load, CPU time mostly does not."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def normal(text: str) -> str:
    return " ".join(text.split())


def accuracy(reference: str, found: str) -> float:
    ref, hyp = normal(reference), normal(found)
    return 1.0 - min(1.0, levenshtein(ref, hyp) / max(1, len(ref)))


# --- engines --------------------------------------------------------------------------------------


def tesseract_engine() -> Callable[[Image.Image], str] | None:
    if shutil.which("tesseract") is None:
        return None

    def run(image: Image.Image) -> str:
        out = subprocess.run(
            ["tesseract", "-", "-", "-l", "eng", "--psm", "3", "tsv"],
            input=png(image),
            capture_output=True,
            check=True,
            env={"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin"},
        ).stdout.decode()
        lines: dict[tuple[str, ...], list[str]] = {}
        for row in out.splitlines()[1:]:
            cells = row.split("\t")
            if len(cells) == 12 and cells[0] == "5" and cells[11].strip():
                lines.setdefault(tuple(cells[1:5]), []).append(cells[11])
        return "\n".join(" ".join(words) for words in lines.values())

    return run


def rapidocr_engine() -> Callable[[Image.Image], str] | None:
    engine: Any
    try:
        from rapidocr import RapidOCR

        engine = RapidOCR(params={"Global.log_level": "warning"})
    except ImportError:
        try:
            from rapidocr_onnxruntime import RapidOCR as Legacy  # type: ignore[import-not-found]

            legacy = Legacy()

            def run_legacy(image: Image.Image) -> str:
                result, _ = legacy(png(image))
                return "\n".join(item[1] for item in result or [])

            return run_legacy
        except ImportError:
            return None

    def run(image: Image.Image) -> str:
        result = engine(png(image))
        return "\n".join(result.txts or ())

    return run


def fallback_engine() -> Callable[[Image.Image], str] | None:
    """Loci's own reading (`loci.ingest.ocr.choice`): Tesseract, and RapidOCR only where
    Tesseract's reading is weak, keeping the more confident one."""
    try:
        from loci.ingest.ocr.choice import fallback_ready, read_image
    except ImportError:
        return None
    if shutil.which("tesseract") is None or not fallback_ready(True):
        return None

    def run(image: Image.Image) -> str:
        words = read_image(image, fallback=True).recognized.words
        lines: dict[tuple[int, int, int], list[str]] = {}
        for word in words:
            lines.setdefault((word.block, word.paragraph, word.line), []).append(word.text)
        return "\n".join(" ".join(texts) for texts in lines.values())

    return run


ENGINES = {
    "tesseract": tesseract_engine,
    "rapidocr": rapidocr_engine,
    "fallback": fallback_engine,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engines", default="tesseract,rapidocr,fallback")
    parser.add_argument("--samples", type=int, default=8)
    args = parser.parse_args()
    texts = sample_texts(args.samples)
    images = {c: [render(t, c) for t in texts] for c in CONDITIONS}
    print(f"{args.samples} samples x {len(CONDITIONS)} conditions, {sum(map(len, texts))} chars")
    print(f"{'engine':<10} {'condition':<13} {'accuracy':>9} {'s/image':>8} {'CPU s/image':>12}")
    for name in args.engines.split(","):
        run = ENGINES[name]()
        if run is None:
            print(f"{name:<10} not installed; skipped")
            continue
        run(images["clean"][0])  # warm-up: model loading is not per-image cost
        for condition in CONDITIONS:
            scores, seconds, cpu = [], 0.0, 0.0
            for text, image in zip(texts, images[condition], strict=True):
                started, cpu_started = time.perf_counter(), cpu_seconds()
                found = run(image)
                seconds += time.perf_counter() - started
                cpu += cpu_seconds() - cpu_started
                scores.append(accuracy(text, found))
            mean = sum(scores) / len(scores)
            n = len(texts)
            print(f"{name:<10} {condition:<13} {mean:>9.3f} {seconds / n:>8.2f} {cpu / n:>12.2f}")


if __name__ == "__main__":
    main()
