"""Places a brain follows on a schedule that are not local folders: a feed, web pages, an IMAP
folder, a git repository, a WebDAV folder. Each is an `Upstream` (`base.py`): it lists what is
there now with a version per entry, and fetches an entry's bytes. The scheduled sync
(`loci.service.scheduled`) compares that listing with the documents the source made before
(known by their origin, "source:<id>:<key>") and adds, updates and removes accordingly."""
