"""Every language a person writes in: text search finds a phrase inside a Japanese, Chinese,
Korean or Thai note (scripts written without spaces), German and Russian by their words, both
backends rank CJK alike, snippets never cut a grapheme cluster, databases indexed before the
segmentation are re-derived by migration 16, and graph ids are readable in any script —
through a brain import, an export/import round trip, links and URLs."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from playwright.sync_api import Browser, expect

from loci.answer.grading import coverage
from loci.graph.links import is_slug, slug_prefix, slugify
from loci.graph.transfer import GraphTransfer
from loci.models import Brain, ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.search.engine import SearchRequest
from loci.search.lexical import query_terms
from loci.search.snippets import make_snippet
from loci.service import Loci
from loci.store.base import Store
from loci.store.lexical_index import FTS5_B, FTS5_K1
from loci.store.postgres import PostgresStore
from loci.store.sqlite import SqliteStore
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.pg import EmbeddedPostgres
from tests.support.web_app import open_session, sign_in

pytestmark = pytest.mark.both_backends
Opener = Callable[[], Store]

# (title, text, a phrase inside it, a phrase of the same language in no note)
NOTES = {
    "japanese": (
        "内部リンク",
        "Obsidianでは、特定の見出しにリンクするには、ファイル名の後にハッシュ記号を付けます。"
        "内部リンクは二重の角括弧で囲みます。",
        "特定の見出しにリンク",
        "天気予報",
    ),
    "chinese": (
        "内部链接",
        "要链接到特定标题，请在文件名后添加井号。内部链接使用双方括号。",
        "链接到特定标题",
        "天气预报",
    ),
    "korean": (
        "내부 링크",
        "특정 제목에 링크하려면 파일 이름 뒤에 해시 기호를 추가하세요.",
        "특정 제목에 링크",
        "일기 예보",
    ),
    "thai": (
        "ลิงก์ภายใน",
        "หากต้องการลิงก์ไปยังหัวข้อเฉพาะ ให้เพิ่มเครื่องหมายแฮชหลังชื่อไฟล์",
        "หัวข้อเฉพาะ",
        "ดนตรีคลาสสิก",
    ),
    "german": (
        "Bergtour",
        "Die Bergsteiger überquerten den Gletscher bei Sonnenaufgang.",
        "Gletscher",
        "Kochrezept",
    ),
    "russian": (
        "Пчёлы",
        "Пчёлы собирают нектар с цветущих лугов ранним утром.",
        "нектар лугов",
        "паровоз",
    ),
}


def _text_hits(loci: Loci, brain: Brain, query: str) -> list[str]:
    hits = loci.searching.search(brain, SearchRequest(query, mode="text"))
    return [h.citation.title or h.citation.name for h in hits]


def test_a_phrase_inside_a_note_finds_it_in_every_script(loci: Loci, brain: Brain) -> None:
    ids = [
        loci.library.add_note(brain, text, title=title).document.id
        for title, text, *_ in NOTES.values()
    ]
    loci.library.wait_for(brain, ids)
    for language, (title, _, phrase, unrelated) in NOTES.items():
        found = _text_hits(loci, brain, phrase)
        assert found and found[0] == title, (language, phrase, found)
        assert title not in _text_hits(loci, brain, unrelated), (language, unrelated)
    # the phrase's own hit shows it, marked, in its snippet
    hit = loci.searching.search(brain, SearchRequest("特定の見出しにリンク", mode="text"))[0]
    assert "特定の見出しにリンク" in [hit.snippet[a:b] for a, b in hit.highlights]


def test_normalisation_folds_width_and_arabic_vowel_points(loci: Loci, brain: Brain) -> None:
    ids = [
        loci.library.add_note(
            brain, "ＬＯＣＩのマニュアルはｶﾀｶﾅで書かれていない。", title="全角"
        ).document.id,
        loci.library.add_note(brain, "تَتَسَلَّقُ القِطَطُ الأَشْجَارَ بِسُهُولَةٍ", title="قطط").document.id,
    ]
    loci.library.wait_for(brain, ids)
    assert _text_hits(loci, brain, "loci")[:1] == ["全角"]  # full-width letters, folded
    assert _text_hits(loci, brain, "カタカナ")[:1] == ["全角"]  # half-width katakana, folded
    assert _text_hits(loci, brain, "القطط")[:1] == ["قطط"]  # written without vowel points


def test_query_terms_are_the_bigrams_the_index_holds() -> None:
    assert query_terms("特定の見出し") == ["特定", "定の", "の見", "見出", "出し"]
    assert query_terms("東") == ["東"]  # a lone character stays a unigram
    assert query_terms("Obsidianの内部リンク") == [
        "obsidian",
        "の内",
        "内部",
        "部リ",
        "リン",
        "ンク",
    ]
    assert query_terms("हिन्दी भाषा") == ["हिन्दी", "भाषा"]  # vowel signs stay in the word
    assert query_terms("What is the effect of vitamin D?") == ["effect", "vitamin", "d"]


THAI = "ภาษาไทยเป็นภาษาที่มีวรรณยุกต์ " * 12 + "สวัสดีครับ 👩‍👩‍👧 น้ำใจ " * 6


def _whole_clusters(text: str, snippet: str) -> None:
    """Every piece of `snippet` between ellipses is a run of whole clusters of `text`."""
    for piece in snippet.split("…"):
        if not piece:
            continue
        at = " ".join(text.split()).find(piece)
        assert at >= 0, piece
        flat = " ".join(text.split())
        after = flat[at + len(piece) : at + len(piece) + 1]
        assert not after or not unicodedata.category(after).startswith("M"), (piece, after)
        assert not after or after != "\u200d" and not piece.endswith("\u200d"), piece
        assert not unicodedata.category(piece[0]).startswith("M"), piece


def test_snippets_never_cut_inside_a_grapheme_cluster() -> None:
    for width in range(20, 120, 7):
        _whole_clusters(THAI, make_snippet(THAI, ["absent"], width).text)
        _whole_clusters(THAI, make_snippet(THAI, query_terms("น้ำใจ"), width).text)
        _whole_clusters(THAI, make_snippet(THAI, query_terms("ครับ"), width).text)


def test_a_thai_hits_snippet_keeps_its_clusters(loci: Loci, brain: Brain) -> None:
    loci.library.wait_for(brain, [loci.library.add_note(brain, THAI, title="ไทย").document.id])
    hits = loci.searching.search(brain, SearchRequest("น้ำใจ", mode="text"))
    assert hits and hits[0].citation.title == "ไทย"
    assert "น้ำใจ" in [hits[0].snippet[a:b] for a, b in hits[0].highlights]
    _whole_clusters(THAI, hits[0].snippet)


# --- ranking alike on both backends ---------------------------------------------------------

CJK_CORPUS = [
    ("リンク", ["内部リンクは二重の角括弧で囲みます。", "特定の見出しにリンクできます。"]),
    ("見出し", ["見出しは井桁記号で始めます。見出しの階層は六つまで。"]),
    ("链接", ["内部链接使用双方括号。", "链接到特定标题需要井号。"]),
    ("标题", ["标题以井号开头，最多六级标题。"]),
    ("링크", ["내부 링크는 이중 대괄호를 사용합니다.", "특정 제목에 링크할 수 있습니다."]),
    ("ไทย", ["ลิงก์ภายในใช้วงเล็บเหลี่ยมคู่", "หัวข้อเฉพาะใช้เครื่องหมายแฮช"]),
]
CJK_QUERIES = [
    "内部リンク", "特定の見出し", "見出し", "链接", "特定标题", "内部", "링크", "특정 제목",
    "หัวข้อเฉพาะ", "ลิงก์ภายใน", "井号", "absent",
]  # fmt: skip


def _fill(store: Store, name: str) -> int:
    brain = store.ensure_brain(name)
    for title, texts in CJK_CORPUS:
        doc = store.create_document(brain.id, _new_doc(title), "index")
        chunks = [
            IndexedChunk(
                ChunkDraft(
                    i, t, (title,), Location(char_start=0, char_end=len(t)), 1, f"{title}-{i}"
                ),
                f"e{title}-{i}",
            )
            for i, t in enumerate(texts)
        ]
        store.replace_index(doc.id, chunks, {}, "m", " ".join(texts), title, None)
    return brain.id


def _new_doc(title: str) -> NewDocument:
    digest = title.encode().hex().ljust(64, "0")[:64]
    return NewDocument("note", title, title, None, "text/plain", 10, digest)


def _ranked(store: Store, brain_id: int, query: str) -> list[tuple[str, float]]:
    hits = store.text_search(brain_id, query_terms(query), 10, SearchFilters())
    texts = store.chunks_with_documents([i for i, _ in hits])
    return [(texts[i][0].text, score) for i, score in hits]


def test_both_backends_rank_cjk_alike(postgres_server: EmbeddedPostgres, tmp_path: Path) -> None:
    lite = SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1)
    url = postgres_server.new_database()
    pg = PostgresStore(url, pool_size=2)
    try:
        a, b = _fill(lite, "cjk"), _fill(pg, "cjk")
        lite.search_index.lexical_index(a)  # the brain's own statistics, as PostgreSQL keeps
        for query in CJK_QUERIES:
            want, got = _ranked(lite, a, query), _ranked(pg, b, query)
            assert [t for t, _ in got] == [t for t, _ in want], query
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), query
            if query != "absent":
                assert want, query
    finally:
        lite.close()
        pg.close()
        postgres_server.drop_database(url)


def test_fts5_and_the_in_memory_index_segment_alike(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1, bm25=(FTS5_K1, FTS5_B))
    try:
        brain_id = _fill(store, "cjk")
        store.search_index.lexical_index(brain_id)
        for query in CJK_QUERIES:
            terms = query_terms(query)
            exact = store.search_index.fts_search(brain_id, terms, 10, SearchFilters())
            indexed = store.text_search(brain_id, terms, 10, SearchFilters())
            assert [s for _, s in indexed] == pytest.approx([s for _, s in exact], rel=1e-9)
            assert {i for i, _ in indexed} == {i for i, _ in exact}, query
    finally:
        store.close()


# --- migration 28: databases indexed before the segmentation and the stemming by language --


def _as_before_28(store: Store, owner_url: str | None) -> None:
    """Put the schema and the index back as they were before migration 28 (and 16, which 28
    now does the work of): no language columns, the FTS table with FTS5's Porter tokenizer over
    the raw text, and forget the step."""
    if isinstance(store, SqliteStore):
        with store.db.write() as conn:
            conn.execute("DROP TABLE chunks_fts")
            conn.execute(
                "CREATE VIRTUAL TABLE chunks_fts USING fts5(brain, title, headings, body,"
                " content='', contentless_delete=1,"
                " tokenize='porter unicode61 remove_diacritics 2')"
            )
            conn.execute(
                "INSERT INTO chunks_fts(rowid, brain, title, headings, body)"
                " SELECT c.id, 'b' || c.brain_id, coalesce(nullif(d.title, ''), d.name), '',"
                " c.text FROM chunks c JOIN documents d ON d.id = c.document_id"
            )
            conn.execute(
                "DROP INDEX documents_language; ALTER TABLE documents DROP COLUMN language;"
                " ALTER TABLE chunks DROP COLUMN language;"
                " ALTER TABLE brains DROP COLUMN text_language;"
            )
            conn.execute("DELETE FROM schema_migrations WHERE version = 28")
        return
    assert isinstance(store, PostgresStore)
    with store.db.tx() as cur:  # every brain: the terms as no query of today can name them
        cur.execute("UPDATE chunk_terms SET term = 'old:' || term")
        cur.execute("UPDATE term_df SET term = 'old:' || term")
        cur.execute("UPDATE brains SET text_language = 'english'")
    assert owner_url is not None
    with psycopg.connect(owner_url, autocommit=True) as owner:  # the schema's owner
        owner.execute(
            "ALTER TABLE brains ALTER COLUMN text_language SET DEFAULT 'english';"
            " DROP INDEX documents_language; ALTER TABLE documents DROP COLUMN language;"
            " ALTER TABLE chunks DROP COLUMN language;"
            " DELETE FROM schema_migrations WHERE version = 28"
        )


@pytest.fixture
def open_old(tmp_path: Path, database_url: str | None, request: pytest.FixtureRequest) -> Opener:
    """Opens the test's database as a new process would: on SQLite with FTS5 answering every
    search (the path migration 28 repairs; the in-memory index is rebuilt at each start), on
    PostgreSQL with the schema owner's URL, which a pending migration needs."""

    def opened() -> Store:
        if database_url is None:
            return SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=None)
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        return PostgresStore(database_url, owner_url=server.owner_url(database_url), pool_size=2)

    return opened


def test_migration_28_re_derives_an_old_index(
    open_old: Opener, database_url: str | None, request: pytest.FixtureRequest
) -> None:
    owner_url = None
    if database_url is not None:
        owner_url = request.getfixturevalue("postgres_server").owner_url(database_url)
    store = open_old()
    try:
        brain_id = _fill(store, "old")
        assert _ranked(store, brain_id, "特定の見出し")
        _as_before_28(store, owner_url)
    finally:
        store.close()
    again = open_old()  # a new process applies migration 28
    try:
        found = [text for text, _ in _ranked(again, brain_id, "特定の見出し")]
        assert found[0] == "特定の見出しにリンクできます。"
        assert _ranked(again, brain_id, "หัวข้อเฉพาะ")
        assert _ranked(again, brain_id, "내부 링크")
    finally:
        again.close()


# --- graph ids in every script --------------------------------------------------------------


def test_slugs_keep_letters_of_every_script_and_refuse_path_tricks() -> None:
    assert slugify("内部リンク") == "内部リンク"
    assert slugify("东京・大阪 2026") == "东京-大阪-2026"
    assert slugify("Ana López") == "ana-lopez"  # Latin accents fold as they always did
    assert slugify("ＡＢＣ テスト") == "abc-テスト"  # full width folded
    assert slugify("Привет Мир") == "привет-мир"
    assert slugify("ภาษาไทย") == "ภาษาไทย"
    assert slugify("../../etc/passwd") == "etc-passwd"
    assert slugify("a\u202eb\u0007c") == "a-b-c"  # a bidi override and a control character
    assert slugify("日" * 200).encode().__len__() <= 240  # `<id>.md` stays a legal file name
    for bad in ("Abc", "a/b", "..", "a..b", "-a", "a-", "a\u202eb", "ｶﾀｶﾅ", ""):
        assert not is_slug(bad), bad
    for good in ("内部リンク", "ev-見出し", "привет", "straße", "ภาษาไทย", "a-1"):
        assert is_slug(good), good


VAULT = {
    "内部リンク.md": "# 内部リンク\n\n[[見出し]]を参照してください。\n",
    "見出し.md": "# 見出し\n\n見出しは井桁記号で始めます。\n",
    "基本設定/ファイル名.md": "ファイル名の規則。\n",
    "快速入门.md": "# 快速入门\n\n欢迎使用。\n",
    "内部链接.md": "内部链接使用双方括号。\n",
    "核心插件/日记.md": "每日笔记。\n",
    "한국어 문서.md": "내부 링크.\n",
    "ملاحظات/اجتماع الفريق.md": "اجتماع الفريق يوم الثلاثاء. انظر [[Übersicht]].\n",
    "Übersicht.md": "# Übersicht\n\nDie Häuser am Fluss.\n",
    "Заметки.md": "Пчёлы собирают нектар.\n",
    "บันทึก.md": "หัวข้อเฉพาะ\n",
}


def test_a_vault_named_in_japanese_and_chinese_imports_and_round_trips(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    for rel, text in VAULT.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    transfer = GraphTransfer(loci.graph)
    report = transfer.import_folder(brain, vault, actor="test")
    assert report.counts == {"created": len(VAULT)}, report.files
    ids = {f.path: f.id for f in report.files}
    assert ids["内部リンク.md"] == "内部リンク" and ids["快速入门.md"] == "快速入门"
    assert ids["한국어 문서.md"] == "한국어-문서"
    assert ids["ملاحظات/اجتماع الفريق.md"] == "اجتماع-الفريق"
    assert ids["Übersicht.md"] == "ubersicht" and ids["Заметки.md"] == "заметки"
    assert ids["บันทึก.md"] == "บันทึก"
    arabic = loci.graph.get(brain, "اجتماع-الفريق")
    assert arabic.summary.folder == "ملاحظات"
    assert {(e.type, e.target) for e in arabic.links} == {("wiki_link", "ubersicht")}
    page = loci.graph.get(brain, "ファイル名")
    assert page.summary.folder == "基本設定"
    link = loci.graph.get(brain, "内部リンク")
    assert "[[page:見出し|見出し]]" in link.doc.truth or "[[page:見出し]]" in link.doc.truth
    assert {(e.type, e.target) for e in link.links} == {("wiki_link", "見出し")}

    exported = tmp_path / "out"
    assert transfer.export(brain, exported).counts == {"written": len(VAULT)}
    files = {p.relative_to(exported).as_posix() for p in exported.rglob("*.md")}
    assert "基本設定/ファイル名.md" in files and "inbox/内部リンク.md" in files
    assert "ملاحظات/اجتماع-الفريق.md" in files and "inbox/ubersicht.md" in files
    second = loci.graph.store.ensure_brain("second")
    again = transfer.import_folder(second, exported, actor="test")
    assert again.counts == {"created": len(VAULT)}
    assert {f.id for f in again.files} == set(ids.values())
    assert loci.graph.get(second, "内部リンク").content == link.content


def test_a_unicode_id_works_in_urls(server: LiveServer) -> None:
    docs = "/brains/people/graph/documents"
    with server.client() as api:
        assert api.post("/brains", json={"name": "people"}).status_code == 201
        made = api.post(docs, json={"type": "concept", "title": "内部リンク", "text": "角括弧。"})
        assert made.status_code == 201, made.text
        assert made.json()["id"] == "内部リンク"
        explicit = api.post(
            docs, json={"type": "concept", "title": "見出し", "id": "見出し-2", "text": "井桁。"}
        )
        assert explicit.status_code == 201, explicit.text
        refused = api.post(docs, json={"type": "concept", "title": "x", "id": "../x", "text": ""})
        assert refused.status_code == 422
        page = api.get(f"{docs}/{quote('内部リンク')}")
        assert page.status_code == 200 and "角括弧" in page.json()["truth"]


def test_ids_built_from_a_long_title_stay_valid_in_any_script(loci: Loci, brain: Brain) -> None:
    title = "特定の見出しにリンクする方法についての長い会議の記録" * 6  # 150 characters
    page = loci.graph.create(brain, actor="t", doc_type="concept", title=title[:120])
    assert is_slug(page.id) and page.id.startswith("特定の見出し")
    evidence, _ = loci.graph.append_evidence(brain, page.id, "議事録。", title=title, actor="t")
    assert is_slug(evidence.id) and evidence.id.startswith("ev-特定の見出し")
    assert len(f"{evidence.id}.md".encode()) <= 255
    # at most `chars` characters and 2 × `chars` bytes, never a letter without its marks
    assert slug_prefix("ภาษาไทย", 4) == "ภา" and slug_prefix("kickoff call", 4) == "kick"
    assert slug_prefix("กิน", 2) == ""  # "ก" alone would drop its vowel sign


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_the_web_app_links_and_opens_pages_with_unicode_ids(
    browser: Browser, server: LiveServer
) -> None:
    docs = "/brains/wiki/graph/documents"
    with server.client() as api:
        assert api.post("/brains", json={"name": "wiki"}).status_code == 201
        for title, text in (
            ("見出し", "井桁記号で始めます。"),
            ("内部リンク", "[[page:見出し|見出し]]を参照。"),
        ):
            made = api.post(docs, json={"type": "concept", "title": title, "text": text})
            assert made.status_code == 201, made.text
    session = open_session(browser, server, "languages", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#brain/" + quote("内部リンク"))
        sign_in(page, server.owner_token)
        expect(page.locator("#graph-title")).to_have_text("内部リンク")
        link = page.locator("#graph-truth a.graph-page")
        expect(link).to_have_text("見出し")
        link.click()
        expect(page.locator("#graph-title")).to_have_text("見出し")
        assert page.evaluate("decodeURIComponent(location.hash)") == "#brain/見出し"
        expect(page.locator("#graph-backlinks")).to_contain_text("内部リンク")
        session.shot("unicode-ids")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))  # before signing in
    finally:
        session.page.context.close()


def test_grading_without_a_model_counts_a_cjk_questions_words() -> None:
    _, text, phrase, unrelated = NOTES["japanese"]
    assert coverage(phrase, text) == 1.0
    assert coverage(unrelated, text) == 0.0
    assert coverage("链接到特定标题", NOTES["chinese"][1]) == 1.0
