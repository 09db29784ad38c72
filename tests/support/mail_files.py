"""E-mail to feed Loci, made at test time: one message (with an attachment if asked) and an mbox
mailbox."""

from __future__ import annotations


def eml_message(attachment: tuple[str, bytes, str] | None = None) -> bytes:
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Grace Darling <grace@example.org>"
    message["To"] = "Keepers <keepers@example.org>"
    message["Date"] = "Tue, 07 Sep 1838 06:30:00 +0000"
    message["Subject"] = "=?utf-8?q?Rescue_at_Big_Harcar_=E2=80=94_report?="
    message.set_content(
        "Dear all,\n\nWe rowed out to the Forfarshire wreck at dawn.\n"
        "Nine survivors were brought to the lighthouse.\n\nGrace\n"
    )
    if attachment is not None:
        name, data, mime = attachment
        maintype, subtype = mime.split("/", 1)
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return message.as_bytes()


def mbox_mailbox() -> bytes:
    first = (
        b"From: Ada <ada@example.org>\nTo: Charles <charles@example.org>\n"
        b"Subject: Notes on the engine\nDate: Mon, 01 Jul 1843 10:00:00 +0000\n\n"
        b"The analytical engine weaves algebraic patterns.\n\n"
        b">From the looms of Jacquard, as I said.\n"
    )
    second = eml_message(
        ("survivors.txt", b"Survivor list: nine souls, all accounted for.\n", "text/plain")
    )
    return (
        b"From ada@example.org Mon Jul  1 10:00:00 1843\n"
        + first
        + b"\nFrom grace@example.org Tue Sep  7 06:30:00 1838\n"
        + second.replace(b"\r\n", b"\n")
    )
