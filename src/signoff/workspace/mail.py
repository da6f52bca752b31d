"""The `send_email` tool: messages are appended to a local mbox outbox, never sent.

`email_fields` checks a message once, for its preview and for sending alike; with an
idempotency key a message is written at most once.
"""

from __future__ import annotations

import mailbox
import os
import threading
from email.message import EmailMessage
from email.utils import formatdate, getaddresses, make_msgid
from typing import Any

from ..exceptions import InvalidInput

OUTBOX = os.path.join(".signoff", "outbox.mbox")

_outbox_locks: dict[str, threading.Lock] = {}
_outbox_guard = threading.Lock()


def email_fields(sender: str, to: Any, subject: Any, body: Any, cc: Any) -> dict[str, str]:
    """Checked headers and body of a message, exactly as `send_email` will write them."""
    if isinstance(cc, str):
        cc = [cc]
    for name, value in (("to", to), ("subject", subject), ("body", body)):
        if not isinstance(value, str):
            raise InvalidInput(f"send_email: {name} must be a string")
    if cc is not None and not (isinstance(cc, list) and all(isinstance(c, str) for c in cc)):
        raise InvalidInput("send_email: cc must be a list of addresses")
    for name, value in (("to", to), ("subject", subject), *(("cc", c) for c in cc or ())):
        if "\r" in value or "\n" in value:  # header injection (a hidden Bcc:, say)
            raise InvalidInput(f"send_email: {name} must be one line")
    for name, value in (("to", to), *(("cc", c) for c in cc or ())):
        addresses = getaddresses([value])
        if not addresses or any("@" not in address for _, address in addresses):
            raise InvalidInput(f"send_email: {name} {value!r} is not an email address")
    return {"From": sender, "To": to, "Cc": ", ".join(cc or ()), "Subject": subject, "Body": body}


def append_to_outbox(root: str, fields: dict[str, str], idempotency_key: str | None) -> str:
    """Append the checked message (`email_fields`) to `root`'s outbox; say what was sent."""
    box_path = os.path.join(root, OUTBOX)
    os.makedirs(os.path.dirname(box_path), exist_ok=True)
    with _outbox_lock(box_path):
        box = mailbox.mbox(box_path)
        box.lock()  # other processes
        try:
            if idempotency_key:
                for sent in box:
                    if sent.get("X-Signoff-Idempotency-Key") == idempotency_key:
                        return (
                            f"already sent as {sent.get('Message-ID')} "
                            f"(idempotency key {idempotency_key}); not sent again"
                        )
            message = EmailMessage()
            for name in ("From", "To", "Cc", "Subject"):
                if fields[name]:
                    message[name] = fields[name]
            message["Date"] = formatdate(localtime=True)
            message["Message-ID"] = make_msgid(domain="signoff.localhost")
            if idempotency_key:
                message["X-Signoff-Idempotency-Key"] = idempotency_key
            message.set_content(fields["Body"])
            box.add(message)
            box.flush()
        finally:
            box.unlock()
            box.close()
    cc_note = f" (cc {fields['Cc']})" if fields["Cc"] else ""
    return (
        f"sent to {fields['To']}{cc_note}: {message['Message-ID']}, appended to the outbox {OUTBOX}"
    )


def _outbox_lock(path: str) -> threading.Lock:
    # mailbox locks across processes only; threads of one process need their own lock.
    with _outbox_guard:
        return _outbox_locks.setdefault(path, threading.Lock())
