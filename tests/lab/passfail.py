# SPDX-License-Identifier: GPL-2.0
"""PASS/FAIL lines for the lab's Python checkers (kmod-tool.py, observer_ab.py).

The shell side turns the lines into TAP; status() is the checker's exit
status: 0 when every check passed.
"""

fails = 0


def result(ok, desc, detail=""):
    """Print one PASS/FAIL line."""
    global fails
    if ok:
        print("PASS " + desc)
    else:
        fails += 1
        print("FAIL %s :: %s" % (desc, detail))


def status():
    """1 when any check failed, else 0."""
    return 1 if fails else 0
