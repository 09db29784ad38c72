"""What stemming by language costs: analysis time, FTS5 index size and vocabulary, per language.

    python bench/stemming_cost.py --vaults bench/data/nushell-book [--repeat 5]

For each vault (the Nushell book in English, German, Japanese and Chinese) the Markdown is cut
into paragraphs and analysed two ways: `simple` (segmentation, Unicode normalisation, no
stemming: what a brain set to `simple` indexes) and the language's own stemmer (`auto` for a
passage detected in that language: FTS5's Porter for English, Snowball for German; Japanese
and Chinese have no stemmer, so their analysis is the same as `simple`). Printed: median
analysis time over `--repeat` runs, the size of a contentless FTS5 table holding the analysed
text, and the number of distinct terms.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import apsw

from loci.store.stemming import FTS_TOKENIZE_SQL, SIMPLE, SNOWBALL, analyze, analyzed_text


def paragraphs(folder: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(folder.rglob("*.md")):
        found += [p.strip() for p in re.split(r"\n\s*\n", path.read_text()) if p.strip()]
    return found


def table_bytes(texts: list[str]) -> int:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1,"
        f' tokenize="{FTS_TOKENIZE_SQL}")'
    )
    with conn:
        conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", list(enumerate(texts, 1)))
    conn.execute("INSERT INTO t(t) VALUES ('optimize')")
    return sum(
        int(str(r[0]))
        for r in conn.execute("SELECT sum(length(block)) FROM t_data UNION ALL SELECT 0")
        if r[0] is not None
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vaults", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| language | paragraphs, characters | analysis | µs a paragraph | FTS5 data | terms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for language in ("en", "de", "ja", "zh"):
        texts = paragraphs(args.vaults / language)
        chars = sum(len(t) for t in texts)
        for stemmer in (SIMPLE, SNOWBALL.get(language, SIMPLE)):
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                for text in texts:
                    analyze(text, stemmer)
                times.append(time.perf_counter() - started)
            analysed = [analyzed_text(t, stemmer) for t in texts]
            terms = {term for text in analysed for term in text.split()}
            each = statistics.median(times) / len(texts) * 1e6
            print(
                f"| {language} | {len(texts):,}, {chars:,} | {stemmer} | {each:.0f}"
                f" | {table_bytes(analysed) / 1e3:,.0f} kB | {len(terms):,} |",
                flush=True,
            )
            if stemmer == SNOWBALL.get(language, SIMPLE):
                break


if __name__ == "__main__":
    main()
