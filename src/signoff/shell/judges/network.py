"""Judging network clients: what they upload, download and hand to a remote host."""

from __future__ import annotations

import posixpath
import re

from ...lazyre import lazy
from .. import knowledge as K
from ..args import has_flag, option_values, positionals, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_read, note_write

_REMOTE_PATH = lazy(r"^[\w.@-]+:")  # host:path, user@host:path


def is_remote(word: Word) -> bool:
    """A `host:path` argument of scp, rsync and the like."""
    return bool(_REMOTE_PATH.match(word.text))


def judge_network(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    cwd = cmd.cwd
    texts = texts_of(args)
    f.network = True
    f.raise_to("network", f"{base} reaches the network")
    lowered = " ".join(texts).lower()
    if base in ("nc", "ncat", "netcat") and (
        has_flag(args, "-e", "-c") or any(t in ("--exec", "--sh-exec", "--lua-exec") for t in texts)
    ):
        f.deny(f"{base} -e hands a shell to a remote host (reverse shell)")
    if base == "socat" and re.search(r"\b(exec|system):", lowered):
        f.deny("socat connects a program to the network (reverse shell)")
    if (base in K.NETWORK and any(K.SQL_CATASTROPHIC.search(t) for t in texts)) or (
        cmd.stdin_text and K.SQL_CATASTROPHIC.search(cmd.stdin_text)
    ):
        f.deny("drops a whole database")
    uploads: list[Word] = []
    if base == "curl":
        uploads += option_values(args, "-T", "--upload-file")
        for w in option_values(
            args,
            "-d",
            "--data",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "-F",
            "--form",
            "--json",
        ):
            if "@" in w.text or "=<" in w.text:
                path = re.split(r"@|=<", w.text, maxsplit=1)[1].split(";")[0]
                uploads.append(Word(path, w.dynamic))
        outs = option_values(args, "-o", "--output")
        if option_values(args, "-K", "--config"):
            f.opaque("curl -K reads options from a file")
        if "-O" in texts or "--remote-name" in texts or has_flag(args, "-O"):
            outs += [Word(_url_file_name(t)) for t in texts if "://" in t]
        _note_downloads(f, outs, cwd, ctx)
        if not outs:
            f.fetch = True
    elif base == "wget":
        outs = option_values(args, "-O", "--output-document")
        uploads += option_values(args, "--post-file", "--body-file")
        if not outs:
            folder = (option_values(args, "-P", "--directory-prefix") or [Word(".")])[0]
            outs = [
                Word(posixpath.join(folder.text, _url_file_name(t)), folder.dynamic)
                for t in texts
                if "://" in t
            ]
        _note_downloads(f, outs, cwd, ctx)
        if any(w.text == "-" for w in outs):
            f.fetch = True
    elif base in ("scp", "rsync", "sftp", "rclone", "s3cmd"):
        pos = positionals(args, frozenset({"-i", "-P", "-p", "-e", "-F", "-o", "-c", "-l", "-S"}))
        for w in pos[:-1]:
            uploads.append(w)
        if pos and not is_remote(pos[-1]):
            note_write(f, pos[-1], cwd, ctx)
        if base == "rsync" and any(is_remote(w) for w in pos):
            f.raise_to("network", "rsync copies to or from a remote host")
        if base == "rsync" and has_flag(args, "--delete", "--delete-after", "--delete-before"):
            f.raise_to("destructive", "rsync --delete deletes files at the destination")
    for w in uploads:
        if ":" in w.text.split("/")[0] and base != "curl":
            continue  # remote source (host:path), not a local file
        before = f.secret
        note_read(f, w, cwd, ctx)
        if f.secret and not before:
            f.deny(f"sends a secret file over the network ({w.text})")


def _url_file_name(url: str) -> str:
    """The file a download of `url` is saved as by default (curl -O, wget)."""
    return posixpath.basename(url.split("?")[0]) or "index.html"


def _note_downloads(f: Facts, outs: list[Word], cwd: str | None, ctx: Context) -> None:
    """The files a download writes (`-` is stdout, not a file)."""
    for w in outs:
        if w.text != "-":
            note_write(f, w, cwd, ctx)
            path = ctx.path(w, cwd)
            if path:
                f.downloads.append(path)
