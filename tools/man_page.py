#!/usr/bin/env python3
"""Writes clustersim's man pages from the help text the CLI itself prints.

Usage: man_page.py CLUSTERSIM OUTDIR VERSION COMMAND...

Writes OUTDIR/clustersim.1 from `clustersim --help` and OUTDIR/clustersim-CMD.1
for each COMMAND from `clustersim CMD --help` and the --help of each of its
subcommands (`profile list`, `sweep merge`, ...: the words after "clustersim
CMD" in the help texts that are commands themselves). The pages are roff
(man(7)); no text is written twice: an option's line is the one --help
prints. Fails (exit 1) when COMMAND... differs from the commands `clustersim
--help` lists, so that a new command cannot miss its page (the list is
meson's, which must name the outputs; man/meson.build).

Run at build time (man/meson.build); standard library only.
"""
import os
import re
import subprocess
import sys

ENV = dict(os.environ, LC_ALL="C", LANG="C")
OPTION = re.compile(r"^  (?:(-\w), )?(--[\w-]+)(?:[= ](\S+))?\s{2,}(\S.*)$")


def run_help(exe, args):
    """stdout of `clustersim ARGS --help`, or None when it fails."""
    p = subprocess.run([exe] + args + ["--help"], capture_output=True, text=True, env=ENV)
    return p.stdout if p.returncode == 0 else None


def esc(text):
    """Text for a roff line: backslashes escaped, no control character first."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def parse(text):
    """A --help text: (synopsis lines, one-line summary, paragraphs, options).

    GOption's layout: "Usage:", the indented "NAME [OPTION?] ARGS - summary",
    paragraphs, then groups ("Help Options:", "Application Options:") of
    "  -s, --long=ARG   description" lines. A hand-written usage ("Usage:
    clustersim trace inspect FILE ...") gives synopsis lines only."""
    lines = text.rstrip("\n").split("\n")
    synopsis, summary, paragraphs, options = [], "", [], []
    i = 0
    if lines and lines[0].startswith("Usage:") and lines[0].strip() != "Usage:":
        first = lines[0][len("Usage:"):].strip()
        synopsis.append(first)
        i = 1
        while i < len(lines) and lines[i].startswith(" "):
            # continuation of the previous line, or one more usage line
            s = lines[i].strip()
            if s.startswith("clustersim "):
                synopsis.append(s)
            else:
                synopsis[-1] += " " + s
            i += 1
    elif lines and lines[0].strip() == "Usage:":
        i = 1
        if i < len(lines):
            usage = lines[i].strip().replace("[OPTION?]", "[OPTION...]").replace(
                "[OPTION\u2026]", "[OPTION...]")
            if " - " in usage:
                usage, summary = usage.split(" - ", 1)
            synopsis.append(usage)
            i += 1
    para = []
    for line in lines[i:]:
        if not line.strip():
            if para:
                paragraphs.append(" ".join(para))
                para = []
            continue
        if re.match(r"^\S.*Options:$", line):
            if para:
                paragraphs.append(" ".join(para))
                para = []
            continue
        m = OPTION.match(line)
        if m:
            options.append(m.groups())
        else:
            para.append(line.strip())
    if para:
        paragraphs.append(" ".join(para))
    return synopsis, summary, paragraphs, options


def option_lines(options):
    out = []
    for short, long, arg, desc in options:
        head = (f"\\fB{esc(short)}\\fR, " if short else "") + f"\\fB{esc(long)}\\fR"
        if arg:
            head += f"=\\fI{esc(arg)}\\fR"
        out += [".TP", head, esc(desc)]
    return out


def commands_of(top_help):
    """The commands of `clustersim --help` with their description lines."""
    cmds, current = {}, None
    in_commands = False
    for line in top_help.split("\n"):
        if line.startswith("Commands:"):
            in_commands = True
            continue
        if in_commands and line and not line.startswith(" "):
            break
        if not in_commands or not line.strip():
            continue
        m = re.match(r"^  ([a-z][a-z-]*)( [a-z][a-z-]*)?\b", line)
        if m and line[2] != " ":
            current = m.group(1)
            cmds.setdefault(current, []).append(line.strip())
        elif current:
            cmds[current].append(line.strip())
    return cmds


def subcommands(exe, cmd, texts):
    """The words after "clustersim CMD" in texts that are commands of their own."""
    found = []
    for text in texts:
        for m in re.finditer(r"\b(?:clustersim )?" + re.escape(cmd) + r" ([a-z][a-z-]+)\b", text):
            sub = m.group(1)
            if sub in found:
                continue
            help_text = run_help(exe, [cmd, sub])
            if help_text and re.search(r"^  " + re.escape(sub) + r" \[OPTION", help_text, re.M):
                found.append(sub)
    return found


def header(name, version, summary):
    return [f'.TH {name.upper()} 1 "" "clustersim {version}" "clustersim manual"',
            ".SH NAME", f"{name} \\- {esc(summary)}"]


def command_page(exe, cmd, version, top_help):
    text = run_help(exe, [cmd])
    if text is None:
        sys.exit(f"man_page.py: clustersim {cmd} --help failed")
    synopsis, summary, paragraphs, options = parse(text)
    subs = subcommands(exe, cmd, [top_help, text])
    if not summary:  # a hand-written usage: the command is its subcommands
        summary = f"{cmd} " + ", ".join(subs) if subs else cmd
    out = header(f"clustersim-{cmd}", version, summary)
    out.append(".SH SYNOPSIS")
    for s in synopsis:
        s = s if s.startswith("clustersim ") else f"clustersim {s}"
        out += [".PP", esc(s)]
    if paragraphs:
        out.append(".SH DESCRIPTION")
        for p in paragraphs:
            out += [".PP", esc(p)]
    if options:
        out.append(".SH OPTIONS")
        out += option_lines(options)
    if subs:
        out.append(".SH SUBCOMMANDS")
    for sub in subs:
        s_syn, s_sum, s_par, s_opt = parse(run_help(exe, [cmd, sub]))
        out.append(f".SS clustersim {cmd} {esc(s_syn[0]) if s_syn else sub}")
        if s_sum:
            out += [".PP", esc(s_sum[:1].upper() + s_sum[1:]) + "."]
        for p in s_par:
            out += [".PP", esc(p)]
        out += option_lines(s_opt)
    out += [".SH SEE ALSO", "\\fBclustersim\\fR(1)"]
    return "\n".join(out) + "\n"


def main_page(top_help, cmds, version):
    lines = top_help.rstrip("\n").split("\n")
    desc = next(l for l in lines[1:] if l.strip())
    out = header("clustersim", version, desc.strip().rstrip("."))
    out += [".SH SYNOPSIS", ".PP", "\\fBclustersim\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
            ".SH DESCRIPTION", ".PP", esc(desc.strip()), ".SH COMMANDS"]
    for cmd, text in cmds.items():
        first = text[0]
        m = re.match(r"^(\S+(?: [a-z-]+)?(?: [A-Z.\[\]]+)*(?: --\S+ \S+)?)\s{2,}(.*)$", first)
        head, rest = (m.group(1), [m.group(2)] + text[1:]) if m else (first, text[1:])
        out += [".TP", f"\\fB{esc(head)}\\fR", esc(" ".join(rest).rstrip(".")) + f". See \\fBclustersim\\-{cmd}\\fR(1)."]
    out.append(".SH OPTIONS")
    in_opts = False
    opts = []
    for line in lines:
        if line.startswith("Options:"):
            in_opts = True
            continue
        m = OPTION.match(line) if in_opts else None
        if m:
            opts.append(list(m.groups()))
        elif in_opts and opts and re.match(r"^\s{4,}\S", line):
            opts[-1][3] += " " + line.strip()  # a wrapped description goes on
    out += option_lines([tuple(o) for o in opts])
    out += [".SH EXIT STATUS", "0 on success; 2 on bad input (scenario, profile, trace or flags),",
            "with a message naming the file, the field and what was expected, and nothing written.",
            ".SH SEE ALSO",
            ", ".join(f"\\fBclustersim\\-{c}\\fR(1)" for c in cmds)]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    exe, outdir, version, wanted = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    top_help = run_help(exe, [])
    if top_help is None:
        sys.exit("man_page.py: clustersim --help failed")
    cmds = commands_of(top_help)
    if sorted(cmds) != sorted(wanted):
        sys.exit("man_page.py: `clustersim --help` lists the commands " + " ".join(sorted(cmds)) +
                 "; man/meson.build names " + " ".join(sorted(wanted)) +
                 " (add the new command's page there)")
    with open(os.path.join(outdir, "clustersim.1"), "w") as f:
        f.write(main_page(top_help, cmds, version))
    for cmd in cmds:
        with open(os.path.join(outdir, f"clustersim-{cmd}.1"), "w") as f:
            f.write(command_page(exe, cmd, version, top_help))


if __name__ == "__main__":
    main()
