"""A fork server slot's share of its runs' sealing: made once, or between two runs (Linux).

A slot (``forkserver._slot``) runs snippets one after the other, each in a
fork of itself that gets the view of ``_snipcheck_mounts``.  It makes the
read-only view and the proc once (:func:`prepare`, a *template* namespace
the slot holds while it stays in its own), and between two runs, after it
reported the first, a *spare*: a copy of the template with fresh tmpfs on
``/tmp`` and ``/dev/shm``, and a new IPC namespace (:func:`ready`).  When
the next run's request comes, the slot binds that run's folders into the
spare and forks the run inside it (:func:`stage`), so the run only seals
itself (``_snipcheck_mounts.enter``).  So each run still gets a namespace,
tmpfs mounts and an IPC namespace of its own, made for it alone, but made
while the build is busy with the last run's result rather than while it
waits for this one, by the slot rather than by the run (each first write of
a run to a page of the slot's memory copies the page); and the namespaces'
teardown (an RCU grace period) comes after the report.

Only the standard library may be used here, and nothing may be imported once
a run has been forked (see ``_snipcheck_mounts``).
"""

import os

import _snipcheck_seal  # beside this file
from _snipcheck_mountcalls import CLONE_NEWIPC, CLONE_NEWNS, _check, _setns, _unshare
from _snipcheck_mounts import (
    _attach_all,
    _binds,
    _cover_hidden,
    _enter_home,
    _inside,
    _slot,
    _spare_key,
    _tmpfs,
    _trees,
    _unstage,
    _view,
    survey,
)


def prepare(config):  # type: ignore[no-untyped-def]
    """In a fork server's slot (init of the runs' PID namespace), before its
    first run: make the read-only view and the proc
    (``_snipcheck_mounts._view``) once, in a template namespace that the
    slot holds by a descriptor while it goes back to its own (it removes run
    directories and keeps compile caches); note its own IPC namespace;
    empty the slot's capability bounding set and install the keyring filter
    (``_snipcheck_seal``), and make the first run's spare (:func:`ready`).

    What failed here, each run does itself (and reports).

    :raises OSError: only if the slot cannot go back to its own namespace
        (it must not run anything then).
    """
    here = os.getcwd()
    home = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    made = None
    try:
        try:
            _view(config.get("proc", True), config.get("hide", ()))
            made = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            pass
    finally:
        _enter_home(home, here)  # also after a half-made view
    if made is not None:
        _slot.update(fd=made, proc=config.get("proc", True))
        if config.get("ipc"):
            _slot["ipc_home"] = os.open("/proc/self/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
    if config.get("seal"):
        try:
            _snipcheck_seal.prepare_slot(config.get("keys"))
        except OSError:
            pass  # each run tries again, and reports
    ready(config)


def _close(spare):  # type: ignore[no-untyped-def]
    for fd in spare[1:]:
        if fd is not None:
            os.close(fd)


def _new_ipc():  # type: ignore[no-untyped-def]
    """A new IPC namespace, made by the slot while it stays in its own: its
    descriptor, or ``None`` where the kernel refused (the run then tries,
    and reports).

    :raises OSError: if the slot cannot go back to its own IPC namespace.
    """
    if _unshare(CLONE_NEWIPC) != 0:
        return None
    try:
        return os.open("/proc/self/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        _check(_setns(_slot["ipc_home"], CLONE_NEWIPC), "setns back to the slot's IPC namespace")


def ready(config):  # type: ignore[no-untyped-def]
    """In a slot, after a run was reported: let that run's spare go (its
    namespace is torn down now) and make the next run's, a copy of the
    template with fresh tmpfs for a run told ``config`` (see the module
    docstring).  Nothing where the slot has no template or the kernel no
    ``open_tree``.

    :raises OSError: only if the slot cannot go back to its own namespace.
    """
    for old in (_slot.pop("spare", None), _slot.pop("used", None)):
        if old is not None:
            _close(old)
    if _slot.get("fd") is None or not survey()["trees"] or not config:
        return
    here = os.getcwd()
    home = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    made = None
    try:
        try:
            _check(_setns(_slot["fd"], CLONE_NEWNS), "setns to the slot's template namespace")
            _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
            _tmpfs(config)
            made = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            pass  # the run makes its own
    finally:
        _enter_home(home, here)
    if made is not None:
        ipc = _new_ipc() if config.get("ipc") and "ipc_home" in _slot else None
        _slot["spare"] = (_spare_key(config), made, ipc)


def stage(config, run_dir):  # type: ignore[no-untyped-def]
    """In a slot, for the run it forks next: bind the run's folders into its
    spare (:func:`ready`) and stay in it until the fork, so that the run
    starts in its namespace as it must be (``_snipcheck_mounts.enter`` only seals it) and
    the slot goes back to its own right after (``Holder.after_fork``).  Done
    here rather than in the run, whose every first write to a page of the
    slot's memory copies that page.  Where there is no matching spare, the run
    does it all; what fails here, the run reports.

    :raises OSError: only if the slot cannot go back to its own namespace.
    """
    _slot.pop("error", None)  # the last run's
    spare = _slot.pop("spare", None)
    if spare is None or spare[0] != _spare_key(config):
        if spare is not None:
            _close(spare)
        return
    _slot["used"] = spare  # closed once the run is reported (ready)
    if not any(_inside(run_dir, folder) for folder in survey()["private"]):
        run_dir = os.path.realpath(run_dir)  # as enter() has it
    here = os.getcwd()
    home = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    try:
        binds = _binds(config, run_dir)
        trees = _trees(binds, run_dir)
        if trees is None:
            os.close(home)
            return
        _check(_setns(spare[1], CLONE_NEWNS), "setns to the run's namespace")
        _slot["staged"] = (home, here)
        if spare[2] is not None:
            _check(_setns(spare[2], CLONE_NEWIPC), "setns to the run's IPC namespace")
            _slot["staged_ipc"] = True
        _attach_all(trees, run_dir)
        _cover_hidden(config, binds)
    except OSError as exc:
        _slot["error"] = (exc.errno or 0, exc.strerror or str(exc))
        if "staged" not in _slot:
            os.close(home)
        _unstage()
