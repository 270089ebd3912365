"""A run stopped politely (SIGINT, SIGTERM) ends without publishing anything.

Dagster, while it runs a job in-process, swaps the SIGINT handler several times (one that
only notes an interrupt, then one that raises it inside a step) and points SIGTERM at the
same handler. Its handlers do not say which signal came, and an interrupt arriving in some
windows is lost: the run would go on and publish. So the stop signals are recorded below
Python's handlers: the interpreter writes the number of every signal it handles to the
wakeup file descriptor (`signal.set_wakeup_fd`), whichever handler is installed at that
moment. The run's resource asks `requested()` at each step's
first read or write and before publishing; the CLI asks it to choose its exit code.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_seen: list[int] = []  # stop signals received since `watch`, first first
_wakeup: list[int] = []  # the read end of the wakeup pipe, once watching


def watch(handlers: bool = True) -> None:
    """From now on, record SIGINT and SIGTERM. `handlers`: also let both raise
    KeyboardInterrupt (by default SIGTERM ends the process at once: no staging copy
    removed, no worker stopped); not inside a Dagster run, whose handlers are in place.
    Main thread only (elsewhere: nothing); watching twice does nothing more."""
    if handlers and threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, _interrupt)
    if _wakeup or threading.current_thread() is not threading.main_thread():
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    if previous != -1:  # someone else's (an event loop's): theirs, and our handler records
        signal.set_wakeup_fd(previous)
        os.close(read)
        os.close(write)
    else:
        _wakeup.append(read)


def finishing() -> None:
    """Once stopping: a further SIGINT or SIGTERM (an impatient second Ctrl-C) is recorded,
    not raised, so the cleanup under way (each part of it bounded) is not cut short."""
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, _record)


def _record(signum: int, frame: FrameType | None) -> None:
    _note(signum)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _note(signum)
    raise KeyboardInterrupt


def _note(signum: int) -> None:
    if signum in STOP_SIGNALS and signum not in _seen:
        _seen.append(signum)


def requested() -> int | None:
    """The first stop signal received since `watch`, or None."""
    while _wakeup:
        try:
            arrived = os.read(_wakeup[0], 512)
        except BlockingIOError:  # nothing more
            break
        for signum in arrived:
            _note(signum)
    return _seen[0] if _seen else None


def name(signum: int) -> str:
    return signal.Signals(signum).name


def exit_code(signum: int) -> int:
    """As a shell reports a process its signal ended: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + signum
