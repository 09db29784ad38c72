"""What the shared text analysis (`loci.store.text_analysis`) costs, and that English is untouched.

    python bench/text_analysis.py [--chunks 20000] [--beir ../shared/datasets/scifact]

1. A synthetic CJK corpus (Japanese and Chinese sentences drawn from about 150 real words,
   about 70 characters a passage) goes into two contentless FTS5 tables in one in-memory
   SQLite: the old one (`porter unicode61 remove_diacritics 2`, raw text: a sentence is one
   token) and today's (marks as token characters, text segmented into bigrams). Prints the time
   to analyse and insert, the size of each table's index, and the in-memory BM25 index's build
   time and vocabulary over the same passages. Also how many of a set of CJK phrase queries
   find their passage on each table (the reason for the cost).
2. With --beir, every SciFact passage and query is tokenized both ways and compared: passages
   or queries whose tokens differ are the only ones whose BM25 scores could move.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from loci.eval.metrics import ndcg_at
from loci.search.lexical import MAX_TERMS, STOPWORDS, query_terms
from loci.store.lexical_index import LexicalIndex
from loci.store.stemming import ENGLISH, FTS_TOKENIZE_SQL, PORTER, analyze, analyzed_text
from loci.store.text_analysis import segment

FTS_TOKENIZER = PORTER  # the English analysis: FTS5's Porter after the shared segmentation


def _analysed(text: str) -> str:
    return analyzed_text(text, ENGLISH)


OLD_TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])
OLD_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
JAPANESE = [
    "内部",
    "リンク",
    "見出し",
    "ファイル",
    "名前",
    "設定",
    "画面",
    "表示",
    "検索",
    "結果",
    "文書",
    "作成",
    "保存",
    "削除",
    "変更",
    "追加",
    "機能",
    "利用",
    "方法",
    "説明",
    "場合",
    "必要",
    "可能",
    "以下",
    "以上",
    "記号",
    "角括弧",
    "井桁",
    "最初",
    "最後",
    "日付",
    "時間",
    "会議",
    "資料",
    "予定",
    "報告",
    "確認",
    "連絡",
    "参加",
    "準備",
    "開始",
    "終了",
    "問題",
    "解決",
    "理由",
    "目的",
    "手順",
    "例",
    "注意",
    "重要",
    "自動",
    "同期",
    "共有",
    "編集",
    "閲覧",
    "権限",
    "管理",
    "利用者",
    "端末",
    "同期化",
    "プラグイン",
    "テンプレート",
    "タグ",
    "フォルダ",
    "ノート",
    "グラフ",
    "ビュー",
    "ワークスペース",
    "コマンド",
    "パレット",
    "ショートカット",
    "テーマ",
]
PARTICLES = ["は", "が", "を", "に", "で", "と", "の", "も", "から", "まで", "へ"]
ENDINGS = ("します。", "できます。", "ではありません。", "してください。", "です。")
CHINESE = [
    "内部",
    "链接",
    "标题",
    "文件",
    "名称",
    "设置",
    "界面",
    "显示",
    "搜索",
    "结果",
    "文档",
    "创建",
    "保存",
    "删除",
    "修改",
    "添加",
    "功能",
    "使用",
    "方法",
    "说明",
    "情况",
    "需要",
    "可以",
    "以下",
    "以上",
    "符号",
    "方括号",
    "井号",
    "第一",
    "最后",
    "日期",
    "时间",
    "会议",
    "资料",
    "计划",
    "报告",
    "确认",
    "联系",
    "参加",
    "准备",
    "开始",
    "结束",
    "问题",
    "解决",
    "原因",
    "目的",
    "步骤",
    "例子",
    "注意",
    "重要",
    "自动",
    "同步",
    "共享",
    "编辑",
    "浏览",
    "权限",
    "管理",
    "用户",
    "设备",
    "插件",
    "模板",
    "标签",
    "文件夹",
    "笔记",
    "图谱",
    "视图",
    "工作区",
    "命令",
]
CONNECTIVES = ["的", "了", "在", "和", "与", "把", "被", "对", "从", "到"]


def _japanese(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(6, 12)):
        words += [rng.choice(JAPANESE), rng.choice(PARTICLES)]
    return "".join(words) + rng.choice(ENDINGS)


def _chinese(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(8, 14)):
        words += [rng.choice(CHINESE), rng.choice(CONNECTIVES)]
    return "".join(words) + "。"


def corpus(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [(_japanese if i % 2 else _chinese)(rng) + (_japanese if i % 3 else _chinese)(rng)
            for i in range(n)]  # fmt: skip


Tokenizer = Callable[..., Any]
Prepare = Callable[[str], str]


def _tokens(tokenizer: Tokenizer, text: str) -> list[str]:
    found = tokenizer(
        text.encode(),
        apsw.FTS5_TOKENIZE_DOCUMENT,
        None,
        include_offsets=False,
        include_colocated=False,
    )
    return [str(t) for t in found]


def _table_bytes(conn: apsw.Connection, table: str) -> int:
    return sum(len(row[0] or b"") for row in conn.execute(f"SELECT block FROM {table}_data"))


def old_terms(question: str) -> list[str]:  # query_terms before the shared analysis
    words = [w.lower().replace("’", "'") for w in OLD_WORD.findall(question)]
    kept = [w for w in dict.fromkeys(words) if w not in STOPWORDS]
    return (kept or list(dict.fromkeys(words)))[:MAX_TERMS]


def measure_cjk(n: int) -> None:
    texts = corpus(n)
    chars = sum(len(t) for t in texts)
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE old_fts USING fts5(body, content='', contentless_delete=1,"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE new_fts USING fts5(body, content='', contentless_delete=1,"
        f' tokenize="{FTS_TOKENIZE_SQL}")'
    )
    print(f"{n} passages, {chars / n:.0f} characters each on average")
    for table, prepare in (("old_fts", lambda t: t), ("new_fts", _analysed)):
        started = time.perf_counter()
        analysed = [prepare(t) for t in texts]
        analysis = time.perf_counter() - started
        with conn:
            conn.executemany(
                f"INSERT INTO {table}(rowid, body) VALUES (?, ?)", list(enumerate(analysed, 1))
            )
        total = time.perf_counter() - started
        size = _table_bytes(conn, table)
        print(
            f"  {table}: analysis {analysis * 1e3:.0f} ms, analysis + insert {total:.2f} s"
            f" ({n / total:,.0f} passages/s), index {size / 1e6:.2f} MB"
            f" ({size / chars:.1f} bytes per character)"
        )
    for name, tokenizer_args, prepare in (
        ("old", OLD_TOKENIZER, lambda t: t),
        ("new", FTS_TOKENIZER, segment),
    ):
        tokenizer = conn.fts5_tokenizer(*tokenizer_args)

        def tokenize(
            text: str, _stemmer: str, tok: Tokenizer = tokenizer, prep: Prepare = prepare
        ) -> list[str]:
            return _tokens(tok, prep(text))

        index = LexicalIndex(tokenize, (2, 1, 1))
        started = time.perf_counter()
        index.add((i, "", "", t, ENGLISH) for i, t in enumerate(texts, 1))
        built = time.perf_counter() - started
        vocabulary = sum(len(s.terms) for s in index.segments)
        postings = sum(len(s.rows) for s in index.segments)
        print(
            f"  in-memory BM25 ({name}): built in {built:.2f} s, {vocabulary:,} terms,"
            f" {postings:,} postings"
        )
    rng = random.Random(11)
    found = {"old_fts": 0, "new_fts": 0}
    probes = 200
    for _ in range(probes):
        row = rng.randrange(n)
        start = rng.randrange(0, len(texts[row]) - 8)
        phrase = texts[row][start : start + 6]
        for table in found:
            terms = query_terms(phrase) if table == "new_fts" else old_terms(phrase)
            words = (" ".join(analyze(t, ENGLISH)) if table == "new_fts" else t for t in terms)
            match = " OR ".join('"' + a.replace('"', '""') + '"' for a in words if a)
            if not match:
                continue
            top = [
                r[0]
                for r in conn.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT 10",
                    (match,),
                )
            ]
            found[table] += (row + 1) in top
    print(
        f"  6-character phrases from {probes} passages, passage in the top 10: old"
        f" {found['old_fts']}/{probes}, new {found['new_fts']}/{probes}"
    )


def compare_beir(folder: Path) -> None:
    conn = apsw.Connection(":memory:")
    old = conn.fts5_tokenizer(*OLD_TOKENIZER)
    new = conn.fts5_tokenizer(*FTS_TOKENIZER)

    changed = total = non_ascii = 0
    for line in (folder / "corpus.jsonl").open(encoding="utf-8"):
        entry = json.loads(line)
        text = f"{entry.get('title', '')} {entry['text']}"
        total += 1
        non_ascii += not text.isascii()
        changed += _tokens(old, text) != _tokens(new, segment(text))
    print(f"  {folder.name}: {total} passages, {non_ascii} with non-ASCII text,"
          f" {changed} tokenized differently")  # fmt: skip
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open()]

    moved = sum(
        [tok for t in query_terms(q) for tok in _tokens(new, segment(t))]
        != [tok for t in old_terms(q) for tok in _tokens(old, t)]
        for q in queries
    )
    print(f"  {len(queries)} queries, {moved} whose index tokens differ")
    # Whole documents in FTS5 (title weighted 2), each way: the dev nDCG@10 of bm25() alone.
    judged: dict[str, dict[str, int]] = {}
    for line in list((folder / "qrels" / "dev.tsv").open())[1:]:
        query_id, doc_id, grade = line.split()
        judged.setdefault(query_id, {})[doc_id] = int(grade)
    by_id = {q["_id"]: q["text"] for q in map(json.loads, (folder / "queries.jsonl").open())}
    for name, tokenize_sql, prepare, terms_of in (
        ("old", "porter unicode61 remove_diacritics 2", lambda t: t, old_terms),
        ("new", FTS_TOKENIZE_SQL, _analysed, query_terms),
    ):
        conn.execute(
            f"CREATE VIRTUAL TABLE {name}_docs USING fts5(doc_id UNINDEXED, title, body,"
            f' tokenize="{tokenize_sql}")'
        )
        with conn:
            conn.executemany(
                f"INSERT INTO {name}_docs(doc_id, title, body) VALUES (?, ?, ?)",
                [
                    (e["_id"], prepare(e.get("title", "")), prepare(e["text"]))
                    for e in map(json.loads, (folder / "corpus.jsonl").open(encoding="utf-8"))
                ],
            )
        scores = []
        for query_id, grades in judged.items():
            terms = terms_of(by_id[query_id])
            match = " OR ".join('"' + prepare(t).strip().replace('"', '""') + '"' for t in terms)
            ranking = [
                str(r[0])
                for r in conn.execute(
                    f"SELECT doc_id FROM {name}_docs WHERE {name}_docs MATCH ?"
                    f" ORDER BY bm25({name}_docs, 0, 2, 1) LIMIT 10",
                    (match,),
                )
            ]
            scores.append(ndcg_at(ranking, grades))
        print(f"  {name} analysis, FTS5 bm25() over whole documents: dev nDCG@10"
              f" {sum(scores) / len(scores):.4f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--beir", type=Path)
    args = parser.parse_args()
    measure_cjk(args.chunks)
    if args.beir:
        compare_beir(args.beir)


if __name__ == "__main__":
    main()
