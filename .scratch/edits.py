import cProfile, pstats, random, sys, tempfile, threading, time, shutil
from pathlib import Path
sys.path.insert(0, "bench")
import sync as B
from loci.app import service_settings
from loci.config import Settings
from loci.embed.local import LocalEmbedder
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.watching import FolderWatcher, WatchSettings
from loci.store.blobs import BlobStore

scratch = Path(tempfile.mkdtemp(prefix="edits-"))
home = scratch / "home"; home.mkdir()
settings = Settings(home=home)
emb = B.CountingEmbedder(LocalEmbedder())
db = sys.argv[1] if len(sys.argv) > 1 else None
loci = Loci(store=B.open_store(home, db), blobs=BlobStore(settings.blob_dir), embedder=lambda: emb, settings=service_settings(settings))
folder = scratch / "folder"
notes = B.generate(folder, 300)
brain = loci.brain("bench")
loci.sources.add(brain, folder)
(first,) = loci.sources.sync(brain).sources
loci.library.wait_for(brain, first.queued)
ids = {str(d.source_path): d.id for d in loci.store.documents_under(brain.id, str(folder))}
edited = [p for p in notes if p.suffix == ".md"][:100]
only = [ids[str(p)] for p in edited]
stop = threading.Event()
prof = cProfile.Profile()
def work():
    runner = loci.library.worker()
    while not stop.is_set():
        prof.enable(); got = runner.run_batch(only); prof.disable()
        if not got: stop.wait(0.05)
w = threading.Thread(target=work); w.start()
watcher = FolderWatcher(loci.sources, loci.store, WatchSettings(mode="events")).start()
time.sleep(3)
rng = random.Random(99)
t0 = time.perf_counter()
for i, path in enumerate(edited):
    middle = f"Edited {i}: the marker zq{i}x is new here. {B.paragraph(rng, 5)}"
    head, tail = path.read_text().split("## Details", 1)
    rest = tail.split("## Next steps", 1)[1]
    path.write_text(f"{head}## Details\n\n{middle}\n\n## Next steps{rest}")
tw = time.perf_counter() - t0
marks = {}
while True:
    now = time.perf_counter() - t0
    if "reconciled" not in marks and watcher.totals["updated"] >= 100: marks["reconciled"] = now
    if "reconciled" in marks:
        busy = [d for d in loci.store.list_documents(brain.id, status="processing") if d.id in set(only)]
        if "words" not in marks and all(d.vectors_pending for d in busy): marks["words"] = now
        if not busy: marks["ready"] = now; break
    time.sleep(0.03)
print(f"writes {tw:.2f}s", {k: round(v, 2) for k, v in marks.items()})
watcher.stop(); stop.set(); w.join()
pstats.Stats(prof).sort_stats("cumulative").print_stats(35)
loci.store.close(); shutil.rmtree(scratch)
