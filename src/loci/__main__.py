from loci.cli.main import run

run()
