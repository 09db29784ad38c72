"""What a person can do about a document that failed to index, by the failure's code.

The worker records the code of the error that failed a job (`loci.errors`: `no_parser`,
`encrypted`, …) beside its message. Most failures are fixed by changing the file, not by trying
again: offering "Retry" for "no parser for this type" only teaches people that Retry does
nothing. A failure that may be transient (a model server that did not answer, the database
busy) gave up after the worker's retries, and is the one a retry can fix.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Advice:
    retry_helps: bool
    what_to_do: str


_PERMANENT: dict[str, str] = {
    "no_parser": "Loci cannot read this type of file. Save it as PDF, Word (.docx), Markdown or "
    "text, and add that copy.",
    "encrypted": "The file is protected by a password. Save a copy without the password and "
    "add that.",
    "budget_exceeded": "The file is too large or complex to read within the server's limits. "
    "Split it into smaller files and add those.",
    "parse_failed": "The file is damaged or is not what its name says. Open it on your computer "
    "to check it, then add a good copy.",
    "file_too_large": "The file is over the upload limit. Split or compress it, or ask the "
    "administrator to raise the limit.",
    "invalid_input": "The file was refused as it is. Change it and add it again.",
    "unsupported_source": "This source cannot be read. Add the file itself instead.",
    "fetch_failed": "The page could not be fetched. Check the address, then add it again.",
    "blocked_address": "The address is on a private network, which the server does not fetch.",
    "challenge_page": "The site answered with a bot check instead of the page. Save the page "
    "with the browser extension instead.",
    "embedder_mismatch": "The brain's vectors come from another embedding model. An "
    "administrator runs `loci reindex` to bring them in line.",
    "transcription_refused": "Speech to text is not set up on the server, or refused this "
    "recording. Once an administrator has set it up, reprocess the recording.",
    "not_found": "The document changed while it was indexed. Reprocess it.",
}
_TRANSIENT = Advice(
    True,
    "This may be temporary (a model server or the database did not answer in time). "
    "Retry in a moment.",
)


def advice_for(code: str | None) -> Advice:
    """What to do about a failure with this code; an unknown or missing code (an error Loci did
    not raise on purpose, or a failure recorded before codes were) may be transient."""
    if code is not None and code in _PERMANENT:
        return Advice(False, _PERMANENT[code])
    return _TRANSIENT


def what_to_do(code: str | None, document_id: int) -> str:
    """The advice as a command line gives it: the web app's words, and where trying again is
    what helps, the command that does it."""
    advice = advice_for(code)
    if advice.retry_helps:
        return f"{advice.what_to_do} `loci reprocess {document_id}` tries it again."
    return advice.what_to_do
