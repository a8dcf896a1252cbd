"""One `rtrack record --pid PID`, started detached from the interpreter that asked for it.

The recorder is not a child of the tracked process: a /bin/sh started in a session of its own
starts it in the background and exits, so the recorder is re-parented (to init or the nearest
subreaper). So it is not part of the tree it measures (a child would be: its own CPU and memory
would count as the job's), a terminal's Ctrl-C to the program's process group does not reach it
before its final sample, and the program's own waits, kills of its children and fork handlers
never touch it. What tells us about it, with no polling:

- RTRACK_READY_FD: a pipe on which rtrack writes one byte once its baseline sample is stored
  (docs/usage.md); end of file without the byte is a recorder that exited before recording;
- an "alive" pipe whose write end only the recorder holds: it reads end of file the moment the
  recorder has exited, its final sample committed;
- its stderr, an unnamed temporary file: rtrack's own messages.

The recorder ends by itself when the tracked tree is gone (`tree-gone`, at its next sample), so
an interpreter that dies without stop() (SIGKILL, SIGTERM's default action, os._exit) leaves a
finished run, not an orphan recorder.
"""

import os
import select
import signal
import subprocess
import tempfile
import time

from ._binary import RtrackError

# $0 is a name for messages; "$@" the recorder's argv
_LAUNCH = '"$@" </dev/null >/dev/null & echo $!'


def _readable(fd, timeout):
    """fd readable within timeout seconds (None: wait as long as it takes)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            r, _, _ = select.select([fd], [], [], left)
        except InterruptedError:
            continue
        return bool(r)


class Recorder:
    """The recorder's process and pipes. Only the process that started it (owner) may signal
    it: a forked child holds a copy of this object and leaves the recorder alone."""

    def __init__(self):
        self.owner = os.getpid()
        self.pid = None
        self._pidfd = None
        self._alive = None
        self._err = tempfile.TemporaryFile()

    def start(self, argv, env, timeout):
        """Start the recorder; return once its baseline is stored. Raises RtrackError with
        rtrack's own message when it exits before that."""
        ready_r, ready_w = os.pipe()
        alive_r, alive_w = os.pipe()
        env = dict(env, RTRACK_READY_FD=str(ready_w))
        try:
            sh = subprocess.Popen(["/bin/sh", "-c", _LAUNCH, "rtrack", *argv], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=self._err, pass_fds=(ready_w, alive_w),
                                  start_new_session=True)
        except OSError as e:
            for fd in (ready_r, ready_w, alive_r, alive_w):
                os.close(fd)
            raise RtrackError(f"cannot start /bin/sh to start rtrack: {e}") from e
        os.close(ready_w)
        os.close(alive_w)
        self._alive = alive_r
        try:
            out, _ = sh.communicate(timeout=timeout)
            self.pid = int(out)
            if not _readable(ready_r, timeout):
                self._kill(signal.SIGKILL)
                raise RtrackError(f"rtrack record did not take its first sample within "
                                  f"{timeout:g} s; stopped it{self._said()}")
            if os.read(ready_r, 1) != b"1":
                _readable(self._alive, timeout)  # its messages are complete once it is gone
                raise RtrackError(self.messages().strip() or
                                  "rtrack record exited before it began recording")
        except (ValueError, subprocess.TimeoutExpired) as e:
            sh.kill()
            sh.wait()
            self._close()
            raise RtrackError(f"could not start rtrack record: {e}{self._said()}") from e
        except RtrackError:
            self._close()
            raise
        finally:
            os.close(ready_r)
        if hasattr(os, "pidfd_open"):
            try:
                self._pidfd = os.pidfd_open(self.pid)
            except OSError:  # kernel before 5.3, or it is gone already
                self._pidfd = None

    def _said(self):
        said = self.messages().strip()
        return f": {said}" if said else ""

    def messages(self):
        """What the recorder wrote to stderr so far."""
        self._err.seek(0)
        return self._err.read().decode("utf-8", "replace")

    def exited(self):
        """The recorder has exited (its final sample is committed)."""
        return self._alive is None or _readable(self._alive, 0)

    def _kill(self, sig):
        # the pid is the recorder's while the alive pipe is open (and the pidfd, opened while
        # it was, names that process whatever happens to the number)
        try:
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, sig)
            elif not self.exited():
                os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, timeout):
        """SIGTERM, then wait for the recorder's final sample and exit. Only in the process
        that started it; harmless when done already. Raises RtrackError when it does not end
        within timeout seconds (then it is killed: its run is read as interrupted)."""
        if os.getpid() != self.owner or self._alive is None:
            return
        try:
            if not self.exited():
                self._kill(signal.SIGTERM)
                if not _readable(self._alive, timeout):
                    self._kill(signal.SIGKILL)
                    _readable(self._alive, 5)
                    raise RtrackError(f"rtrack record (pid {self.pid}) did not stop within "
                                      f"{timeout:g} s of SIGTERM; killed it{self._said()}")
        finally:
            self._close()

    def _close(self):
        for fd in (self._alive, self._pidfd):
            if fd is not None:
                os.close(fd)
        self._alive = self._pidfd = None

    def release(self):
        """Its stderr file closed too (once nothing will read its messages)."""
        self._close()
        self._err.close()
