import cProfile, pstats, random, sys, tempfile, time, shutil
from pathlib import Path
sys.path.insert(0, "bench")
import sync as B
from loci.app import service_settings
from loci.config import Settings
from loci.embed.local import LocalEmbedder
from loci.service import Loci
from loci.store.blobs import BlobStore

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
scratch = Path(tempfile.mkdtemp(prefix="parts-"))
home = scratch / "home"; home.mkdir()
settings = Settings(home=home)
emb = B.CountingEmbedder(LocalEmbedder())
loci = Loci(store=B.open_store(home, None), blobs=BlobStore(settings.blob_dir), embedder=lambda: emb, settings=service_settings(settings))
folder = scratch / "folder"
notes = B.generate(folder, N)
brain = loci.brain("bench")
source = loci.sources.add(brain, folder)
(first,) = loci.sources.sync(brain).sources
edited = [p for p in notes if p.suffix == ".md"][:100]
ids = {str(d.source_path): d.id for d in loci.store.documents_under(brain.id, str(folder))}
only = [ids[str(p)] for p in edited]
loci.library.wait_for(brain, only)
rng = random.Random(99)
for i, path in enumerate(edited):
    middle = f"Edited {i}: the marker zq{i}x is new here. {B.paragraph(rng, 5)}"
    head, tail = path.read_text().split("## Details", 1)
    rest = tail.split("## Next steps", 1)[1]
    path.write_text(f"{head}## Details\n\n{middle}\n\n## Next steps{rest}")
prof = cProfile.Profile()
t = time.perf_counter(); prof.enable()
r = loci.sources.sync_paths(brain, loci.sources.get(brain, source.id), edited)
prof.disable(); print("reconcile", round(time.perf_counter() - t, 3), r.updated)
pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
runner = loci.library.worker()
prof = cProfile.Profile()
t = time.perf_counter(); prof.enable()
while runner.run_batch(only, only_stage="text"): pass
prof.disable(); print("text stage", round(time.perf_counter() - t, 3))
pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
loci.store.close(); shutil.rmtree(scratch)
