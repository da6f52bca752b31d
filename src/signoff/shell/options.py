"""Long options as the programs define them, to read abbreviations the way they do.

GNU getopt_long and git's parse-options accept any unambiguous prefix of a long option
(`tar --extr`, `patch --dir=x`, `git config --glob`, `sed --in-pl`), so the analyzer
expands options against these lists before it reads them. The lists are the programs'
own (`--help`); a prefix they do not make unique is left as typed.
"""

from __future__ import annotations

from .parse import Word

TAR_LONG = frozenset(
    {
        "--absolute-names",
        "--acls",
        "--add-file",
        "--after-date",
        "--anchored",
        "--append",
        "--atime-preserve",
        "--auto-compress",
        "--backup",
        "--block-number",
        "--blocking-factor",
        "--bzip2",
        "--catenate",
        "--check-device",
        "--check-links",
        "--checkpoint",
        "--checkpoint-action",
        "--clamp-mtime",
        "--compare",
        "--compress",
        "--concatenate",
        "--confirmation",
        "--create",
        "--delay-directory-restore",
        "--delete",
        "--dereference",
        "--diff",
        "--directory",
        "--exclude",
        "--exclude-backups",
        "--exclude-caches",
        "--exclude-caches-all",
        "--exclude-caches-under",
        "--exclude-from",
        "--exclude-ignore",
        "--exclude-ignore-recursive",
        "--exclude-tag",
        "--exclude-tag-all",
        "--exclude-tag-under",
        "--exclude-vcs",
        "--exclude-vcs-ignores",
        "--extract",
        "--file",
        "--files-from",
        "--force-local",
        "--format",
        "--full-time",
        "--get",
        "--group",
        "--group-map",
        "--gunzip",
        "--gzip",
        "--hard-dereference",
        "--help",
        "--hole-detection",
        "--ignore-case",
        "--ignore-command-error",
        "--ignore-failed-read",
        "--ignore-zeros",
        "--incremental",
        "--index-file",
        "--info-script",
        "--interactive",
        "--keep-directory-symlink",
        "--keep-newer-files",
        "--keep-old-files",
        "--label",
        "--level",
        "--list",
        "--listed-incremental",
        "--lzip",
        "--lzma",
        "--lzop",
        "--mode",
        "--mtime",
        "--multi-volume",
        "--new-volume-script",
        "--newer",
        "--newer-mtime",
        "--no-acls",
        "--no-anchored",
        "--no-auto-compress",
        "--no-check-device",
        "--no-delay-directory-restore",
        "--no-ignore-case",
        "--no-ignore-command-error",
        "--no-null",
        "--no-overwrite-dir",
        "--no-quote-chars",
        "--no-recursion",
        "--no-same-owner",
        "--no-same-permissions",
        "--no-seek",
        "--no-selinux",
        "--no-unquote",
        "--no-verbatim-files-from",
        "--no-wildcards",
        "--no-wildcards-match-slash",
        "--no-xattrs",
        "--null",
        "--numeric-owner",
        "--occurrence",
        "--old-archive",
        "--one-file-system",
        "--one-top-level",
        "--overwrite",
        "--overwrite-dir",
        "--owner",
        "--owner-map",
        "--pax-option",
        "--portability",
        "--posix",
        "--preserve-order",
        "--preserve-permissions",
        "--quote-chars",
        "--quoting-style",
        "--read-full-records",
        "--record-size",
        "--recursion",
        "--recursive-unlink",
        "--remove-files",
        "--restrict",
        "--rmt-command",
        "--rsh-command",
        "--same-order",
        "--same-owner",
        "--same-permissions",
        "--seek",
        "--selinux",
        "--show-defaults",
        "--show-omitted-dirs",
        "--show-snapshot-field-ranges",
        "--show-stored-names",
        "--show-transformed-names",
        "--skip-old-files",
        "--sort",
        "--sparse",
        "--sparse-version",
        "--starting-file",
        "--strip-components",
        "--suffix",
        "--tape-length",
        "--test-label",
        "--to-command",
        "--to-stdout",
        "--totals",
        "--touch",
        "--transform",
        "--uncompress",
        "--ungzip",
        "--unlink-first",
        "--unquote",
        "--update",
        "--usage",
        "--use-compress-program",
        "--utc",
        "--verbatim-files-from",
        "--verbose",
        "--verify",
        "--version",
        "--volno-file",
        "--warning",
        "--wildcards",
        "--wildcards-match-slash",
        "--xattrs",
        "--xattrs-exclude",
        "--xattrs-include",
        "--xform",
        "--xz",
        "--zstd",
    }
)
PATCH_LONG = frozenset(
    {
        "--backup",
        "--backup-if-mismatch",
        "--basename-prefix",
        "--batch",
        "--binary",
        "--context",
        "--directory",
        "--dry-run",
        "--ed",
        "--force",
        "--forward",
        "--fuzz",
        "--get",
        "--help",
        "--ifdef",
        "--ignore-whitespace",
        "--input",
        "--merge",
        "--no-backup-if-mismatch",
        "--normal",
        "--output",
        "--posix",
        "--prefix",
        "--quiet",
        "--quoting-style",
        "--read-only",
        "--reject-file",
        "--reject-format",
        "--remove-empty-files",
        "--reverse",
        "--set-time",
        "--set-utc",
        "--silent",
        "--strip",
        "--suffix",
        "--unified",
        "--verbose",
        "--version",
        "--version-control",
        "--follow-symlinks",
    }
)
GIT_APPLY_LONG = frozenset(
    {
        "--3way",
        "--allow-empty",
        "--allow-overlap",
        "--apply",
        "--build-fake-ancestor",
        "--cached",
        "--check",
        "--directory",
        "--exclude",
        "--ignore-space-change",
        "--ignore-whitespace",
        "--inaccurate-eof",
        "--include",
        "--index",
        "--intent-to-add",
        "--no-add",
        "--numstat",
        "--quiet",
        "--recount",
        "--reject",
        "--reverse",
        "--stat",
        "--summary",
        "--unidiff-zero",
        "--unsafe-paths",
        "--verbose",
        "--whitespace",
        "--abort",
        "--committer-date-is-author-date",
        "--continue",
        "--empty",
        "--gpg-sign",
        "--ignore-date",
        "--interactive",
        "--keep",
        "--keep-cr",
        "--keep-non-patch",
        "--message-id",
        "--no-keep-cr",
        "--patch-format",
        "--quit",
        "--quoted-cr",
        "--rerere-autoupdate",
        "--resolved",
        "--resolvemsg",
        "--scissors",
        "--show-current-patch",
        "--signoff",
        "--skip",
        "--utf8",
    }
)
GIT_CONFIG_LONG = frozenset(
    {
        "--add",
        "--blob",
        "--bool",
        "--bool-or-int",
        "--bool-or-str",
        "--default",
        "--edit",
        "--expiry-date",
        "--file",
        "--fixed-value",
        "--get",
        "--get-all",
        "--get-color",
        "--get-colorbool",
        "--get-regexp",
        "--get-urlmatch",
        "--global",
        "--includes",
        "--int",
        "--list",
        "--local",
        "--name-only",
        "--null",
        "--path",
        "--remove-section",
        "--rename-section",
        "--replace-all",
        "--show-origin",
        "--show-scope",
        "--system",
        "--type",
        "--unset",
        "--unset-all",
        "--worktree",
        "--no-includes",
        "--no-type",
        "--comment",
        "--value",
        "--all",
        "--regexp",
        "--url",
        "--append",
    }
)


# GNU rm's long options: `rm --rec --forc /` is `rm --recursive --force /`.
RM_LONG = frozenset(
    {
        "--recursive",
        "--force",
        "--interactive",
        "--one-file-system",
        "--no-preserve-root",
        "--preserve-root",
        "--dir",
        "--verbose",
        "--help",
        "--version",
    }
)


def expand_long(args: list[Word], known: frozenset[str]) -> list[Word]:
    """`--extr=x` -> `--extract=x` when exactly one known option starts so; after `--`
    nothing is an option."""
    out: list[Word] = []
    ended = False
    for w in args:
        text = w.text
        # A quoted word is still an option: the shell removes the quotes (`sed '--in-pl'`).
        if ended or not text.startswith("--") or len(text) == 2:
            ended = ended or text == "--"
            out.append(w)
            continue
        name, eq, value = text.partition("=")
        if name not in known:
            matches = [k for k in known if k.startswith(name)]
            if len(matches) == 1:
                text = matches[0] + eq + value
        out.append(Word(text, w.dynamic, w.glob, w.quoted))
    return out


# GNU patch's short options that take a value.
PATCH_SHORT_VALUES = "BDFVYdgioprzx"


def split_short(args: list[Word], takes_value: str) -> list[Word]:
    """`-Np1` -> `-N -p1`: a short-option cluster split the way getopt reads it (a letter
    that takes a value takes the rest of the word), so `-p1` inside `-Np1` is seen."""
    out: list[Word] = []
    for i, w in enumerate(args):
        t = w.text
        if t == "--":
            out.extend(args[i:])  # after `--`, nothing is an option
            break
        if not t.startswith("-") or t.startswith("--") or len(t) <= 2:
            out.append(w)
            continue
        for k, letter in enumerate(t[1:], start=1):
            if letter in takes_value:
                out.append(Word("-" + t[k:], w.dynamic, w.glob, w.quoted))
                break
            out.append(Word("-" + letter, w.dynamic, w.glob, w.quoted))
    return out


__all__ = [
    "GIT_APPLY_LONG",
    "GIT_CONFIG_LONG",
    "PATCH_LONG",
    "PATCH_SHORT_VALUES",
    "RM_LONG",
    "TAR_LONG",
    "expand_long",
    "split_short",
]
