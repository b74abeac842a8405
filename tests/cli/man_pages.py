#!/usr/bin/env python3
"""The man pages (man/meson.build, tools/man_page.py) against the CLI's help:
- clustersim.1 and a clustersim-CMD.1 for every command `clustersim --help`
  lists, each installed into mandir/man1;
- a page's options are exactly those `clustersim CMD --help` prints, with
  those of its subcommands (`clustersim CMD SUB --help`), and its
  subsections are exactly those subcommands;
- the roff is a man(7) page (.TH, NAME "clustersim-CMD \\- ...", SYNOPSIS),
  and groff renders it without a warning where groff is installed.
Usage: man_pages.py CLUSTERSIM BUILD_ROOT
"""
import json
import os
import re
import shutil
import subprocess
import sys

exe, build = sys.argv[1], sys.argv[2]
env = dict(os.environ, LC_ALL="C")
fails = []


def helptext(*args):
    p = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, env=env)
    return p.stdout if p.returncode == 0 else None


def options(text):
    """Long options of --help lines ("  -s, --set=PATH=VALUE  ...")."""
    return {m.group(1) for m in re.finditer(r"^  (?:-\w, )?(--[\w-]+)", text, re.M)}


top = helptext()
commands = dict.fromkeys(re.findall(r"^  ([a-z][a-z-]*)\b", top.split("Commands:")[1].split("\nOptions:")[0], re.M))
if len(commands) < 10:
    fails.append(f"only {len(commands)} commands found in clustersim --help")
installed = json.load(open(os.path.join(build, "meson-info", "intro-installed.json"))).values()
man_dir = os.path.join(build, "man")
for page in ["clustersim"] + [f"clustersim-{c}" for c in commands]:
    path = os.path.join(man_dir, page + ".1")
    if not os.path.isfile(path):
        fails.append(f"{page}.1: missing")
        continue
    if not any(p.endswith(f"/man/man1/{page}.1") for p in installed):
        fails.append(f"{page}.1: not installed into man1")
    roff = open(path).read()
    lines = roff.split("\n")
    if not lines[0].startswith(f".TH {page.upper()} 1 "):
        fails.append(f"{page}.1: first line {lines[0]!r}, not .TH {page.upper()} 1")
    for sec in (".SH NAME", ".SH SYNOPSIS"):
        if sec not in lines:
            fails.append(f"{page}.1: no {sec}")
    if ".SH NAME" in lines and not lines[lines.index(".SH NAME") + 1].startswith(page + " \\- "):
        fails.append(f"{page}.1: NAME line {lines[lines.index('.SH NAME') + 1]!r}")
    if any(l[:1] in (".", "'") and not re.match(r"^\.(TH|SH|SS|TP|PP|nf|fi|B|BR|I)\b", l)
           for l in lines if l):
        fails.append(f"{page}.1: a text line starts with a control character")
    page_opts = {o.replace("\\-", "-") for o in
                 re.findall(r"^(?:\\fB\\-\w\\fR, )?\\fB((?:\\-){2}[\w\\-]+)\\fR", roff, re.M)}
    if page == "clustersim":
        want = options(top.split("\nOptions:")[1])
    else:
        cmd = page[len("clustersim-"):]
        text = helptext(cmd)
        want = options(text)
        subs = set()
        for w in re.findall(r"\b" + re.escape(cmd) + r" ([a-z][a-z-]+)\b", top + text):
            sub_text = helptext(cmd, w)
            if sub_text and re.search(r"^  " + w + r" \[OPTION", sub_text, re.M):
                subs.add(w)
                want |= options(sub_text)
        page_subs = set(re.findall(r"^\.SS clustersim " + re.escape(cmd) + r" ([a-z-]+)", roff, re.M))
        if page_subs != subs:
            fails.append(f"{page}.1: subcommands {sorted(page_subs)}, --help has {sorted(subs)}")
    if page_opts != want:
        fails.append(f"{page}.1: options differ from --help: page only {sorted(page_opts - want)}, "
                     f"--help only {sorted(want - page_opts)}")
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", path], capture_output=True,
                           text=True)
        if g.returncode != 0 or g.stderr.strip():
            fails.append(f"{page}.1: groff: {g.stderr.strip()}")
for f in fails:
    print("FAIL -", f)
print(f"{len(commands) + 1} pages checked, {len(fails)} failures")
sys.exit(1 if fails else 0)
