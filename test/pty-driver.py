#!/usr/bin/env python3
# Runs a command on a new pseudo-terminal, as a person at a terminal would,
# for the tests that need a real one (job control, resize, TIOCSTI): Node has
# no pty of its own, and script(1) cannot resize its terminal or type Ctrl-Z
# on cue.
#
#   python3 test/pty-driver.py STEPS_JSON COMMAND [ARG...]
#
# The command is the session leader on the pty's slave (its controlling
# terminal), 24 rows by 80 columns. STEPS_JSON is a list of:
#   {"expect": REGEX}       wait until output after the last match matches
#   {"send": TEXT}          type TEXT (control characters included); what the
#                           terminal does not take within the wait fails the step
#   {"resize": [ROWS, COLS]} change the window size (the kernel sends SIGWINCH)
#   {"hangup": true}        close the terminal, as a closed window or a dropped
#                           ssh does (the last step: nothing is read after it)
# after which the driver reads to the end and waits for the command. It
# prints one JSON object: {"status": exit status or -signal, "transcript":
# everything the terminal showed, "failed": what was not seen, or null}.
# A wait gives up after 30 seconds (a hung test, not a measurement); after
# a failed wait the command is killed.
import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time

WAIT = 30.0


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))


def main():
    steps = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    pid, master = pty.fork()
    if pid == 0:
        try:
            set_size(0, 24, 80)
            os.execvp(argv[0], argv)
        except OSError as error:
            os.write(2, f'pty-driver: {argv[0]}: {error.strerror}\n'.encode())
        os._exit(127)

    out = bytearray()
    seen = 0  # where the next expect starts looking
    eof = False

    def read_some(deadline):
        nonlocal eof
        left = deadline - time.monotonic()
        if left <= 0 or eof:
            return False
        ready, _, _ = select.select([master], [], [], left)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every slave descriptor is closed
                chunk = b''
            if not chunk:
                eof = True
            out.extend(chunk)
        return True

    def send(data):
        # A terminal that takes no more (the command reads nothing) must not hang the driver.
        os.set_blocking(master, False)
        deadline = time.monotonic() + WAIT
        try:
            while data:
                try:
                    data = data[os.write(master, data):]
                except BlockingIOError:
                    if eof or time.monotonic() >= deadline:
                        return False
                    read_some(min(deadline, time.monotonic() + 0.05))
        finally:
            os.set_blocking(master, True)
        return True

    failed = None
    for step in steps:
        if 'send' in step:
            if not send(step['send'].encode()):
                failed = 'the terminal taking %d bytes' % len(step['send'])
                break
        elif 'resize' in step:
            set_size(master, *step['resize'])
        elif 'hangup' in step:
            os.close(master)
            eof = True
        elif 'expect' in step:
            pattern = re.compile(step['expect'].encode())
            deadline = time.monotonic() + WAIT
            while True:
                match = pattern.search(out, seen)
                if match:
                    seen = match.end()
                    break
                if not read_some(deadline):
                    failed = step['expect']
                    break
            if failed:
                break

    if failed is None:
        deadline = time.monotonic() + WAIT
        while not eof and read_some(deadline):
            pass
        if not eof:
            failed = 'the end of the output'
    # Waited for without blocking: after a hangup it may live on (the failure a test looks for).
    deadline = time.monotonic() + WAIT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if not eof or time.monotonic() > deadline:
            failed = failed or 'the end of the command'
            os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({'status': code, 'transcript': out.decode('utf-8', 'replace'), 'failed': failed}))


main()
