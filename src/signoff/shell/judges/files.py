"""Judging programs that read, write, copy, move and delete local files."""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache

from .. import knowledge as K
from ..args import has_flag, option_values, positionals, sed_scripts, texts_of
from ..content import judge_patch
from ..facts import Context, Facts
from ..options import RM_LONG, TAR_LONG, expand_long
from ..parse import Cmd, Word
from ..paths import (
    catastrophic_target,
    holds_secrets,
    is_secret,
    note_delete,
    note_link_target,
    note_read,
    note_repository_copy,
    note_write,
    unjudged,
)
from ..places import note_implicit_reads


def judge_read_only(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    cwd = cmd.cwd
    args = expand_long(args, long_options(base))  # `sed --in-pl` is `sed --in-place`
    texts = texts_of(args)
    extras: list[Facts] = []
    f.note(f"{base} only reads")
    if base in K.WRITE_FLAGS or base in K.EXEC_FLAGS:
        if any(w.glob and not w.quoted for w in args):
            f.ask("an unquoted glob could expand to an option that writes or runs programs")
        for flag in K.EXEC_FLAGS.get(base, frozenset()):
            if (
                flag in texts
                or any(t.startswith(flag + "=") for t in texts)
                or (len(flag) == 2 and has_flag(args, flag))
            ):
                f.runs_code = True
                f.opaque(f"{base} {flag} runs other programs")
        written = K.WRITE_FLAGS.get(base, frozenset())
        if base == "sed" and has_flag(args, *written):
            f.raise_to("reversible_write", f"{base} -i edits files in place")
            for w in sed_scripts(args)[2]:
                note_write(f, w, cwd, ctx)
        elif base == "yq" and has_flag(args, *written):
            f.raise_to("reversible_write", f"{base} -i edits files in place")
            for w in positionals(args)[0 if has_flag(args, "-e", "--expression") else 1 :]:
                note_write(f, w, cwd, ctx)
        elif base in ("date", "hostname", "ss") and has_flag(args, *written):
            f.raise_to("privilege", f"{base} changes the system's state")
        elif written:
            for w in option_values(args, *written):
                f.raise_to("reversible_write", f"{base} writes its output to a file")
                note_write(f, w, cwd, ctx)
    if base == "sed":
        scripts, script_files, _ = sed_scripts(args)
        if script_files:  # a program signoff does not read here: what it does is unknown
            f.opaque("sed -f runs a script file, which may write files or run commands")
        if any(w.dynamic for w in scripts):
            f.opaque("the sed script is only known at run time")
        script = "\n".join(w.text for w in scripts)
        stripped = re.sub(
            r"s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1([a-zA-Z0-9]*)",
            lambda m: "" if not set(m.group(2)) & set("ew") else " w ",
            script,
        )
        stripped = re.sub(r"y(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1", "", stripped)
        if K.SED_WRITE_CMD.search(stripped):
            f.opaque("the sed script writes files or runs commands (w / e)")
    if base in ("awk", "gawk", "mawk", "nawk") and any(K.AWK_UNSAFE.search(t) for t in texts):
        f.opaque("the awk program runs commands or writes files")
    if base in ("less", "more", "most", "man") and any(
        t.startswith("+") and ("!" in t or "|" in t) for t in texts
    ):
        f.opaque(f"{base} +command runs shell commands")
    if base == "hostname" and positionals(args):
        f.raise_to("privilege", "hostname NAME renames the machine")
    if base in ("uniq", "xxd"):
        pos = positionals(args)
        if len(pos) >= 2:
            f.raise_to("reversible_write", f"{base} writes its second file argument")
            note_write(f, pos[1], cwd, ctx)
    # A command's output goes to the model and its provider: printing the environment or a
    # secret-named variable sends those secrets away even without a pipe to a remote.
    if base in ("echo", "printf") and any(K.SECRET_VAR.search(w.text) for w in args if w.dynamic):
        f.secret = True
        f.ask("prints a secret-named environment variable to the model")
    if base in ("env", "printenv", "set", "export", "declare", "typeset") and (
        (base in ("env", "printenv") and not positionals(args))
        or (not args and not cmd.assigns)
        or "-p" in texts
    ):
        f.secret = True
        f.ask("prints the whole environment (secrets included) to the model")
    if base == "printenv" and any(K.SECRET_VAR.search("$" + t) for t in texts):
        f.secret = True
        f.ask("prints a secret-named environment variable to the model")
    if base == "alias":
        for w in args:
            if "=" in w.text:
                extras.extend(ctx.script(w.text.partition("=")[2], cwd, cmd.vars))
    if base in K.NO_PATH_ARGS:
        return extras
    pos = positionals(args, K.VALUE_OPTS if base in K.PATTERN_FIRST else frozenset())
    if base in K.PATTERN_FIRST and not has_flag(args, *K.PATTERN_OPTS):
        pos = pos[1:]
    for w in pos:
        note_read(f, w, cwd, ctx)
    for w in option_values(args, "-f", "--file"):
        note_read(f, w, cwd, ctx)
    note_implicit_reads(base, texts, bool(pos), f, cwd, ctx)  # `cd ~ && ls`, journalctl
    if base in K.RECURSIVE_SEARCH and (
        base not in ("grep", "egrep", "fgrep")
        or has_flag(args, "-r", "-R", "--recursive", "--dereference-recursive")
    ):
        for path in f.reads:
            if not ctx.inside(path) and holds_secrets(path, ctx):
                f.secret = True
                f.ask(f"{base} searches every file under {path}, secrets included")
    return extras


def judge_writer(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    # archives' and network's judges load with the first writer (a read-only pipeline
    # meets neither)
    from .archives import judge_tar_extract, tar_letters, tar_values
    from .network import is_remote, judge_network

    cwd = cmd.cwd
    args = expand_long(args, TAR_LONG if base == "tar" else long_options(base))
    exec_flags = K.WRITER_EXEC_FLAGS.get(base)
    if exec_flags and has_flag(args, *exec_flags):
        f.runs_code = True
        f.opaque(f"{base} runs a program named in its options")
    mode = K.WRITERS[base]
    texts = texts_of(args)
    value_opts = frozenset(
        {
            "-t",
            "--target-directory",
            "-m",
            "--mode",
            "-o",
            "-g",
            "-S",
            "--suffix",
            "-C",
            "-d",
            "-f",
            "--reference",
        }
    )
    if base == "truncate":
        value_opts |= {"-s", "--size"}  # for ln and cp, -s is a flag (make symbolic links)
    pos = positionals(
        args,
        value_opts
        if base in ("install", "truncate", "tar", "unzip", "cp", "mv", "ln")
        else frozenset(),
    )
    f.raise_to("reversible_write", f"{base} changes files")
    if base == "rsync" and any(is_remote(w) for w in pos):
        judge_network(base, args, f, cmd, ctx)
        return
    if base == "rsync" and has_flag(args, "--delete", "--delete-after", "--delete-before"):
        f.raise_to("destructive", "rsync --delete deletes files at the destination")
    if base == "rsync":  # files unchanged since --link-dest become hard links into it
        for w in option_values(args, "--link-dest"):
            note_link_target(f, w, [cwd], ctx)
    recursive = has_flag(args, "-R", "-r", "--recursive")
    if base in ("patch", "unzip", "7z", "7za", "7zr") or (
        base == "rsync" and option_values(args, "--files-from")
    ):
        _content_defined(base, args, pos, f, cmd, ctx)
        if base != "rsync":
            return
    if base in ("chmod", "chown", "chgrp"):
        mode_word = pos[0].text if pos else ""
        if base == "chmod" and (
            re.fullmatch(r"0?[2-7][0-7]{3}", mode_word) or re.search(r"[+=][rwxXt]*s", mode_word)
        ):
            f.deny("sets the setuid/setgid bit (a privilege backdoor)")
        for w in pos[1:]:
            path = ctx.path(w, cwd)
            why = catastrophic_target(path, ctx, True) if path and recursive else ""
            if why:
                f.deny(f"{base} -R on {why}")
            note_write(f, w, cwd, ctx, content=False)
        return
    if base == "mv":
        target_dir = option_values(args, "-t", "--target-directory")
        sources = pos if target_dir else pos[:-1]
        for w in sources:
            note_delete(f, w, cwd, ctx, recursive=True, verb="moves away")
            note_read(f, w, cwd, ctx)  # what is moved can be read at its new place
        for w in target_dir or pos[-1:]:
            if w.text in K.PSEUDO_FILES:
                f.raise_to("destructive", "moving to /dev/null deletes")
            note_write(f, w, cwd, ctx)
            note_landing(f, sources, w, cwd, ctx, contents=False)
            _note_moved_out(f, sources, w, cwd, ctx)
        return
    if base in ("cp", "install", "ln", "rsync", "convert", "ffmpeg"):
        target_dir = option_values(args, "-t", "--target-directory")
        sources = pos if target_dir else pos[:-1]
        dest = target_dir or pos[-1:]
        if base == "ln" and len(pos) == 1:
            dest = [Word(posixpath.basename(pos[0].text))]
            sources = pos
        for w in sources:
            if base != "ln":
                note_read(f, w, cwd, ctx)
                note_repository_copy(f, w, cwd, ctx)
                continue
            note_link(f, w, dest, cwd, ctx)
        if base == "ln" or (
            base == "cp" and has_flag(args, "-s", "-l", "--symbolic-link", "--link")
        ):
            _note_links(f, sources, dest, cwd, ctx)
        for w in dest:
            note_write(f, w, cwd, ctx)
            if base in ("cp", "install", "ln", "rsync"):
                note_landing(f, sources, w, cwd, ctx, contents=base in ("cp", "rsync"))
        return
    if base == "tar":
        # Letters are read the way tar reads them: in `-xC.git` or `-Cdist`, the letters
        # after C are its value, not the -t (list) or -c (create) they spell.
        letters = tar_letters(args)
        if letters & {
            "I",
            "F",
            "--to-command",
            "--use-compress-program",
            "--checkpoint-action",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
        }:
            f.opaque("tar runs an external program")
        if letters & {"t", "--list"}:
            f.cls = "read_only"
            f.reasons = ["tar lists an archive"]
            return
        values = tar_values(args)
        archive = values["f"]
        if letters & {"c", "r", "u", "--create", "--append", "--update"}:
            for w in archive:
                if w.text != "-":
                    note_write(f, w, cwd, ctx)
            # `-C DIR` changes directory for the names after it: read them there too.
            dirs = [cwd, *(ctx.path(c, cwd) for c in values["C"])]
            for w in pos:
                if w not in archive and w is not args[0] and w not in values["C"]:
                    for where in dict.fromkeys(dirs):
                        note_read(f, w, where, ctx)
            return
        for w in archive:
            note_read(f, w, cwd, ctx)
        for w in values["C"] or [Word(".")]:
            note_write(f, w, cwd, ctx)
        if letters & {"x", "--extract", "--get"} or not letters & {
            "d",
            "--diff",
            "--compare",
            "--delete",
            "A",
            "--catenate",
            "--concatenate",
        }:
            judge_tar_extract(args, archive, f, cmd, ctx)
        return
    if (
        base in ("gzip", "gunzip", "bzip2", "xz", "unxz")
        and has_flag(args, "-N", "--name")
        and (base in ("gunzip", "unxz") or has_flag(args, "-d", "--decompress"))
    ):
        unjudged(f, f"{base} -N restores a file name stored inside the archive")
    if mode == "all":
        for w in pos:
            note_write(f, w, cwd, ctx, content=base not in ("touch", "mkdir"))
        if base == "truncate":
            f.raise_to("destructive", "truncate discards file contents")
    elif mode == "first" and pos:
        note_write(f, pos[0], cwd, ctx)
        for w in pos[1:]:
            note_read(f, w, cwd, ctx)
    elif mode == "cwd":
        for w in option_values(args, "-d", "-o", "--output", "-f") or [Word(".")]:
            note_write(f, w, cwd, ctx)
        if base == "split":  # split FILE PREFIX: the pieces are PREFIX + a suffix
            for w in positionals(
                args, frozenset({"-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix"})
            )[1:2]:
                note_write(f, Word(w.text + "*", w.dynamic, True, w.quoted), cwd, ctx)
    elif mode == "flag":
        for w in option_values(args, "-o", "-out", "--output"):
            note_write(f, w, cwd, ctx)
        if base == "openssl" and any(t in ("s_client", "s_server") for t in texts):
            f.network = True
            f.raise_to("network", "openssl connects to a remote host")
        elif not option_values(args, "-o", "-out", "--output") and base in ("openssl", "pandoc"):
            f.cls = "read_only"
    elif mode == "none" and base in ("code", "open", "xdg-open"):
        f.opaque(f"{base} hands files to another application")
    if base == "ssh-keygen":
        f.ask("ssh-keygen manages SSH keys")


def _note_links(
    f: Facts, sources: list[Word], dest: list[Word], cwd: str | None, ctx: Context
) -> None:
    """A link's target is judged from where the link lands (its directory, or the
    destination directory itself) and from the current directory."""
    dirs: list[str | None] = [cwd]
    for w in dest:
        landing = ctx.path(w, cwd)
        if landing:
            dirs += [landing, posixpath.dirname(landing)]
    for w in sources:
        note_link_target(f, w, dirs, ctx)


# Long options that change where a program writes or what it runs, beyond the tables in
# shell_knowledge: GNU getopt_long takes any unambiguous prefix of them.
_TARGETING = frozenset(
    {
        "--target-directory",
        "--symbolic-link",
        "--link",
        "--output",
        "--link-dest",
        "--in-place",
        "--inplace",
        "--reference",
        "--suffix",
        "--files-from",
        "--no-target-directory",
        "--parents",
    }
)


def _note_moved_out(
    f: Facts, sources: list[Word], dest: Word, cwd: str | None, ctx: Context
) -> None:
    """Moving a project folder out of the workspace (even into scratch space) takes it out
    of the project: for the project, a deletion that signoff cannot undo. A single file
    (a log, a build output) moved to scratch space stays notify."""
    where = ctx.path(dest, cwd)
    if where is None or ctx.inside(where):
        return
    for w in sources:
        path = ctx.path(w, cwd)
        folder = w.text.endswith("/") or "." not in posixpath.basename(w.text.rstrip("/"))
        if path is not None and ctx.inside(path) and path != ctx.workspace and folder:
            f.raise_to("destructive", f"moves {path} out of the workspace (to {where})")
            f.ask(f"moves {path} out of the workspace (to {where})")
            return


@lru_cache(maxsize=256)  # bounded: `base` is any name a command gives
def long_options(base: str) -> frozenset[str]:
    """The long options of `base` that matter here, to expand abbreviations against
    (built from constant tables, so once per program rather than once per command)."""
    named = (
        K.WRITE_FLAGS.get(base, frozenset())
        | K.EXEC_FLAGS.get(base, frozenset())
        | K.WRITER_EXEC_FLAGS.get(base, frozenset())
    )
    return frozenset(o for o in named if o.startswith("--")) | _TARGETING


def _content_defined(
    base: str, args: list[Word], pos: list[Word], f: Facts, cmd: Cmd, ctx: Context
) -> None:
    """Programs whose targets are named inside a patch, an archive or a file list."""
    from .archives import judge_rsync_files_from, judge_unzip

    if base == "patch":
        judge_patch(args, f, cmd, ctx)
    elif base == "unzip":
        judge_unzip(args, f, cmd, ctx)
    elif base == "rsync":
        judge_rsync_files_from(args, pos[-1:], f, cmd, ctx)
    else:  # 7z: a format signoff cannot list; listing and testing only read
        verb = pos[0].text if pos else ""
        if verb in ("l", "t", "h", "i"):
            f.cls = "read_only"
            f.reasons = [f"{base} {verb} lists or tests an archive"]
        elif verb == "a" or verb == "u":
            for w in pos[1:2]:
                note_write(f, w, cmd.cwd, ctx)
            for w in pos[2:]:
                note_read(f, w, cmd.cwd, ctx)
        else:
            unjudged(f, f"{base} {verb} writes files named inside an archive signoff cannot list")


def judge_delete(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if base == "rm":
        args = expand_long(args, RM_LONG)
    recursive = base == "rm" and has_flag(args, "-r", "-R", "--recursive")
    f.raise_to(
        "destructive",
        f"{base} deletes files irreversibly"
        if not recursive
        else "rm -r deletes files irreversibly",
    )
    if has_flag(args, "--no-preserve-root"):
        f.deny("rm --no-preserve-root")
    targets = positionals(args, frozenset({"-n", "--iterations", "-s", "--size"}))
    if not targets:
        f.note("no files named")
    for w in targets:
        if base == "shred" and K.DISK_DEVICE.match(w.text):
            f.deny(f"shreds a disk device ({w.text})")
        note_delete(f, w, cmd.cwd, ctx, recursive=recursive or base == "rmdir")


def judge_dd(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    f.raise_to("reversible_write", "dd copies raw data")
    for w in args:
        key, _, value = w.text.partition("=")
        if key == "if":
            note_read(f, Word(value, w.dynamic, w.glob, w.quoted), cmd.cwd, ctx)
        elif key == "of":
            f.raise_to("reversible_write", "dd writes its output in place")
            note_write(f, Word(value, w.dynamic, w.glob, w.quoted), cmd.cwd, ctx)


def note_link(f: Facts, source: Word, dest: list[Word], cwd: str | None, ctx: Context) -> None:
    """`ln [-s] TARGET LINK`: a link is a second name for its target, so the target is
    recorded (relative to the link's directory, as the kernel reads it, and to cwd)."""
    if source.dynamic:
        f.unknown_paths = True
        f.ask(f"links to a path only known at run time ({source.text})")
        return
    spellings = [source.text]
    if not source.text.startswith("/"):
        for d in dest:
            if not d.dynamic:
                spellings += [
                    posixpath.join(d.text, source.text),
                    posixpath.join(posixpath.dirname(d.text), source.text),
                ]
    for text in spellings:
        target = ctx.path(Word(text, glob=source.glob), cwd)
        if target is None:
            continue
        f.links.append(target)
        if is_secret(target, ctx):
            f.secret = True  # `ln -s ~/.ssh/id_rsa key; cat key` reads it by another name
            f.ask(f"links to a secret ({target})")


def note_landing(
    f: Facts, sources: list[Word], dest: Word, cwd: str | None, ctx: Context, *, contents: bool
) -> None:
    """Where copies land when `dest` is a directory: dest/NAME for each source. A source
    that is a directory's contents (`stage/.`, rsync's `stage/`) or a name known only at
    run time defines what lands by what is on disk then: the whole of `dest` is written."""
    if dest.dynamic:
        return
    if f.argv[:1] == ["rsync"] and any(
        a == "--files-from" or a.startswith("--files-from=") for a in f.argv
    ):
        return  # what lands is the list's names, each judged (shell_archives) or asked
    for source in sources:
        name = posixpath.basename(source.text.rstrip("/"))
        whole = (
            source.dynamic
            or name in ("", ".", "..")
            or (contents and source.text.endswith("/") and f.argv[:1] == ["rsync"])
        )
        if whole:
            path = ctx.path(dest, cwd)
            if path is not None:
                f.tree_writes.append(path)
            continue
        note_write(
            f, Word(posixpath.join(dest.text, name), glob=source.glob or dest.glob), cwd, ctx
        )
