"""Archives whose members name the files they write: `tar x`, `unzip`, `rsync --files-from`.

Every member (after `-C`, `--strip-components`, `-d`, `-j`) is judged as a write through
`shell_content.judge_targets`, the same judgement as `cp x TARGET`; what cannot be listed
(a transform, an unknown format, an archive from a pipe) asks. See `shell_content`.
"""

from __future__ import annotations

import io
import posixpath
import stat
from collections.abc import Callable, Iterable

from ..args import has_flag, option_values, positionals, texts_of
from ..content import MAX_MEMBERS, judge_targets, read_content, strip_name
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_link_target, note_read, unjudged

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any


def judge_tar_extract(
    args: list[Word], archive: list[Word], f: Facts, cmd: Cmd, ctx: Context
) -> None:
    """`tar x`: every member name, after -C and --strip-components, judged as a write."""
    texts = texts_of(args)
    longs = [t.partition("=")[0] for t in texts if t.startswith("--") and len(t) > 2]
    if "-s" in texts or any(_abbreviates(t, ("--transform", "--xform")) for t in longs):
        unjudged(f, "tar renames members with a transform: the names written are not the archive's")
        return
    if any(_abbreviates(t, _TAR_RUNS) for t in longs):
        f.runs_code = True
        f.opaque("tar runs a program named in its options")
        return
    if has_flag(args, "-O", "--to-stdout"):
        return
    values = tar_values(args)
    archive = values["f"]
    if not archive or any(w.text == "-" for w in archive):
        contents, why = read_content([], cmd, cmd.cwd, ctx, "archive", f)  # tar reads stdin
    else:
        contents, why = read_content(archive, cmd, cmd.cwd, ctx, "archive", f)
    if contents is None:
        unjudged(f, why)
        return
    strip = 0
    stripping = [
        t
        for t in texts
        if t.startswith("--") and _abbreviates(t.partition("=")[0], ("--strip-components",))
    ]
    for t in stripping:
        value = t.partition("=")[2]
        if not value.isdigit():
            unjudged(f, f"tar {t}: the number of components is not given as --strip-components=N")
            return
        strip = max(strip, int(value))
    # -C applies from where it is given; the current directory is judged too.
    roots = [*(ctx.path(w, cmd.cwd) for w in values["C"]), cmd.cwd]
    for top in _one_top_level(args, archive):  # --one-top-level[=DIR] puts all under DIR
        roots += [ctx.path(Word(top.text, top.dynamic), r) if r else None for r in roots]
    keep_absolute = has_flag(args, "-P", "--absolute-names")
    import lzma  # here, not at import: every shell check loads this module
    import tarfile
    import zlib

    for data in contents:
        try:
            raw = _decompressed(data)
            if raw is None:
                unjudged(f, f"the archive unpacks to more than {MAX_UNPACKED >> 20} MiB")
                return
            # ignore_zeros: GNU tar skips a bad header and goes on extracting; so must
            # the listing, or a member hidden behind garbage is never judged.
            with tarfile.open(fileobj=io.BytesIO(raw), mode="r:", ignore_zeros=True) as tar:
                members = tar.getmembers()
        except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as exc:
            unjudged(
                f, f"the archive cannot be listed ({type(exc).__name__}): its targets are unknown"
            )
            return
        if len(members) > MAX_MEMBERS:
            unjudged(f, f"the archive holds more than {MAX_MEMBERS} members")
            return
        names: list[str] = []
        for m in members:
            kept = m.name if keep_absolute else m.name.lstrip("/")
            name = strip_name(kept, strip) if strip else kept
            if not name:
                continue
            names.append(name)
            if m.issym() or m.islnk():
                for root in roots:
                    base = (
                        posixpath.dirname(posixpath.join(root or "", name)) if m.issym() else root
                    )
                    note_link_target(f, Word(m.linkname), [base], ctx)
                    target = ctx.path(Word(m.linkname), base)
                    if target is None or not ctx.inside(target):
                        unjudged(
                            f, f"the archive links {name} to {m.linkname}, outside the workspace"
                        )
            elif not (m.isfile() or m.isdir()):
                unjudged(f, f"the archive creates a device or FIFO ({name})")
            if m.isfile() and m.mode & stat.S_IXUSR:
                f.note(f"makes {name} executable")
        judge_targets(f, names, roots, ctx, "tar")


# Long options of tar that run a program (GNU tar accepts any unambiguous abbreviation).
_TAR_RUNS = (
    "--to-command",
    "--use-compress-program",
    "--checkpoint-action",
    "--info-script",
    "--new-volume-script",
    "--rsh-command",
    "--rmt-command",
)


def _abbreviates(option: str, names: Iterable[str]) -> bool:
    """`--tra` may be `--transform`: getopt_long takes any unambiguous prefix."""
    return len(option) >= 4 and any(name.startswith(option) for name in names)


MAX_UNPACKED = 64 << 20  # a compressed tar is listed only up to this many bytes


def _decompressed(data: bytes) -> bytes | None:
    """gzip / bzip2 / xz unpacked with a bound (a small bomb must not cost a gigabyte)."""
    import bz2
    import lzma
    import zlib

    makers: dict[bytes, Callable[[], Any]] = {
        b"\x1f\x8b": lambda: zlib.decompressobj(wbits=31),
        b"BZh": bz2.BZ2Decompressor,
        b"\xfd7zXZ\x00": lzma.LZMADecompressor,
    }
    make = next((m for magic, m in makers.items() if data.startswith(magic)), None)
    if make is None:
        return data
    out = b""
    rest = data
    while rest and len(out) <= MAX_UNPACKED:  # concatenated streams: every one is unpacked
        if not any(rest.startswith(magic) for magic in makers):
            break  # trailing garbage: the unpackers stop there too
        unpacker = make()
        out += unpacker.decompress(rest, MAX_UNPACKED + 1 - len(out))
        rest = unpacker.unused_data
    return out if len(out) <= MAX_UNPACKED else None


# Short options of GNU tar that take a value (in a cluster, the rest of it or the next word).
_TAR_SHORT_VALUE = frozenset("bCfFgHIKLNTVX")


def tar_values(args: list[Word]) -> dict[str, list[Word]]:
    """The values of `-C` and `-f` however they are spelled: `-C dir`, `-Cdir`, `-xC dir`,
    `--directory=dir`, and the old style `tar xCf dir a.tar` (values in letter order)."""
    out: dict[str, list[Word]] = {"C": [], "f": []}
    long_names = {"--directory": "C", "--file": "f"}
    i = 0
    while i < len(args):
        w = args[i]
        t = w.text
        if t == "--":
            break
        name, eq, value = t.partition("=")
        if name in long_names:
            if eq:
                out[long_names[name]].append(Word(value, w.dynamic, w.glob, w.quoted))
            elif i + 1 < len(args):
                out[long_names[name]].append(args[i + 1])
                i += 1
        elif (t.startswith("-") and not t.startswith("--") and len(t) > 1) or (
            i == 0 and not t.startswith("-")
        ):
            letters = t.lstrip("-")
            old_style = not t.startswith("-")
            for k, letter in enumerate(letters):
                if letter not in _TAR_SHORT_VALUE:
                    continue
                rest = letters[k + 1 :]
                if rest and not old_style:
                    taken = Word(rest, w.dynamic, w.glob, w.quoted)
                elif i + 1 < len(args):
                    taken = args[i + 1]
                    i += 1
                else:
                    break
                if letter in out:
                    out[letter].append(taken)
                if not old_style:
                    break
        i += 1
    return out


def tar_letters(args: list[Word]) -> set[str]:
    """Every option given: short letters (a cluster stops at a letter that takes a value)
    and long names (`--extract`); the first word may be old style (`xzf`)."""
    out: set[str] = set()
    for i, w in enumerate(args):
        t = w.text
        if t == "--":
            break
        if t.startswith("--"):
            out.add(t.partition("=")[0])
        elif (t.startswith("-") and len(t) > 1) or (i == 0 and t and not t.startswith("-")):
            for letter in t.lstrip("-"):
                out.add(letter)
                if letter in _TAR_SHORT_VALUE and t.startswith("-"):
                    break
    return out


def _one_top_level(args: list[Word], archive: list[Word]) -> list[Word]:
    """`--one-top-level=DIR`, or without a value the archive's name less its suffixes."""
    out: list[Word] = []
    for w in args:
        name, eq, value = w.text.partition("=")
        if name != "--one-top-level":
            continue
        if eq:
            out.append(Word(value, w.dynamic))
        for a in archive:
            base = posixpath.basename(a.text)
            out += [Word(base[:i], a.dynamic) for i in range(1, len(base)) if base[i] == "."]
    return out


def _unzip_letters(args: list[Word]) -> set[str]:
    """unzip's option letters; `-d` and `-P` take the rest of the word (`-d.git/hooks` is a
    directory, not -t), and after `-x` come names, not options."""
    out: set[str] = set()
    for w in args:
        t = w.text
        if t == "-x":
            break
        if t.startswith("-") and len(t) > 1 and not w.quoted:
            for letter in t[1:]:
                out.add(letter)
                if letter in "dP":
                    break
    return out


def judge_unzip(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """`unzip a.zip [-d dir]`: every member name judged as a write."""
    letters = _unzip_letters(args)
    if letters & set("ltvZpcz"):
        f.cls = "read_only"
        f.reasons = ["unzip lists, tests or prints an archive"]
        for w in positionals(args, frozenset({"-d", "-x"}))[:1]:
            note_read(f, w, cmd.cwd, ctx)
        return
    f.raise_to("reversible_write", "unzip writes the files named in the archive")
    pos = positionals(args, frozenset({"-d", "-P"}))
    if not pos:
        unjudged(f, "unzip without an archive")
        return
    archive = pos[0]
    path = ctx.path(archive, cmd.cwd)
    if path and not archive.text.endswith(".zip") and ctx.reader(path) is None:
        archive = Word(archive.text + ".zip", archive.dynamic, archive.glob, archive.quoted)
    contents, why = read_content([archive], cmd, cmd.cwd, ctx, "archive", f)
    if contents is None:
        unjudged(f, why)
        return
    roots = [ctx.path(w, cmd.cwd) for w in option_values(args, "-d")] or [cmd.cwd]
    junk = "j" in letters
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(contents[0])) as zf:
            infos = zf.infolist()
            names: list[str] = []
            for info in infos[: MAX_MEMBERS + 1]:
                mode = info.external_attr >> 16
                name = posixpath.basename(info.filename) if junk else info.filename
                if stat.S_ISLNK(mode):
                    unjudged(f, f"the archive holds a symbolic link ({info.filename})")
                elif mode & stat.S_IXUSR and not info.is_dir():
                    f.note(f"makes {name} executable")
                names.append(name.lstrip("/"))
                if "\\" in name:  # unzip turns DOS separators into directories
                    names.append(name.replace("\\", "/").lstrip("/"))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        unjudged(f, f"the archive cannot be listed ({type(exc).__name__}): its targets are unknown")
        return
    if len(names) > MAX_MEMBERS:
        unjudged(f, f"the archive holds more than {MAX_MEMBERS} members")
        return
    judge_targets(f, names, roots, ctx, "unzip")


def judge_rsync_files_from(
    args: list[Word], dest: list[Word], f: Facts, cmd: Cmd, ctx: Context
) -> None:
    """`rsync --files-from=LIST SRC DEST`: each listed name lands under DEST."""
    lists = option_values(args, "--files-from")
    contents, why = read_content(lists, cmd, cmd.cwd, ctx, "file list", f)
    if contents is None:
        unjudged(f, why)
        return
    sep = "\0" if has_flag(args, "-0", "--from0") else "\n"
    names = [
        n.strip("\r")
        for data in contents
        for n in data.decode("utf-8", "surrogateescape").split(sep)
        if n.strip() and not n.startswith(("#", ";"))
    ]
    roots = [ctx.path(w, cmd.cwd) for w in dest]
    judge_targets(f, [n.lstrip("/") for n in names], roots, ctx, "rsync")


__all__ = [
    "judge_rsync_files_from",
    "judge_tar_extract",
    "judge_unzip",
    "tar_letters",
    "tar_values",
]
