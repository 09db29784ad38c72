"""Imports of what people keep in other tools: an export (a zip, an ENEX file, a JSON dump)
read whole into `Item`s by its reader (`readers.READERS`), then written to a brain by
`loci.service.importing.Importing`, each item a document known by its origin
(`Document.origin`, "<kind>:<key>"), so a second run of the same export adds nothing and an
edited item updates its document in place."""
