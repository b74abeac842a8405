"""The exceptions clustersim raises: the C library's errors (domain CS_ERROR),
with the message the CLI prints and, parsed from it, the file and JSON path.
"""
import re

# CsErrorCode (clustersim/core.h)
IO, PARSE, INVALID, POLICY, CANCELLED = range(5)

# "FILE: PATH: what" -- a JSON path is names, [indices] and dots; "line N" is
# the position in a CSV or a JSON text, not a path.
_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[0-9*]+\])*(\.[A-Za-z_][A-Za-z0-9_]*(\[[0-9*]+\])*)*$")


class ClusterSimError(Exception):
    """An error of the simulator.

    message: the text the CLI prints after "clustersim: ".
    file, path: the input and the JSON path in it, when the message names
        them (else None).
    problems: for an error that lists several problems ("FILE: N problems in
        WHAT:" and one a line), each as (path, text); else [(path, message)].
    code: the library's CsErrorCode (IO, PARSE, INVALID, POLICY, CANCELLED).
    """

    def __init__(self, message, code=INVALID):
        super().__init__(message)
        self.message = message
        self.code = code
        self.file, self.path = _file_and_path(message.split("\n", 1)[0])
        lines = message.split("\n")
        if len(lines) > 1 and re.match(r"^.*: [0-9]+ problems in .*:$", lines[0]):
            self.problems = [_problem(l.strip()) for l in lines[1:] if l.startswith("  ")
                             and not l.startswith("    ")]
        else:
            self.problems = [(self.path, message)]


class InputError(ClusterSimError, ValueError):
    """Bad input: a scenario, profile, trace or setting the library refused
    (a file that cannot be read, is not JSON, or says something invalid)."""


class PolicyError(ClusterSimError):
    """A policy could not produce a placement, or misused the engine."""


class CancelledError(ClusterSimError):
    """The run was stopped (a progress callback returned False, or Ctrl-C)."""


def _looks_like_file(word):
    return bool(word) and " " not in word and not word.startswith("-") and \
        ("." in word or "/" in word)


def _file_and_path(first_line):
    parts = first_line.split(": ")
    if len(parts) < 2 or not _looks_like_file(parts[0]):
        return None, None
    if len(parts) >= 3 and _PATH.match(parts[1]):
        return parts[0], parts[1]
    return parts[0], None


def _problem(line):
    head = line.split(": ", 1)
    if len(head) == 2 and _PATH.match(head[0]):
        return head[0], line
    return None, line


def error_from_gerror(code, message):
    if code == POLICY:
        return PolicyError(message, code)
    if code == CANCELLED:
        return CancelledError(message, code)
    return InputError(message, code)
