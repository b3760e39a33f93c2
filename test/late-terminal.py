#!/usr/bin/env python3
# A terminal that answers late but in order, as one across a slow network
# does, for the tests of what hmm does with the answers a terminal still owes
# the command when it ends (native-helpers/pty.c, fence):
#
#   python3 test/late-terminal.py COMMAND [ARG...]
#
# Runs COMMAND as the session leader on a new pseudo-terminal and reads its
# output as a terminal would. It answers DA1 (CSI c), the cursor position
# report (CSI 6n) and DSR (CSI 5n), but holds every answer until it is asked
# DSR 5n, and then sends all it holds, in the order asked. When the command
# has ended it prints one JSON object: {"status": exit status or -signal,
# "transcript": everything the terminal was sent, "dsr": how many times it
# was asked DSR 5n}. Gives up (and kills the command) after 60 seconds: a
# hung test, not a measurement.
import json
import os
import pty
import re
import select
import sys
import time

QUERY = re.compile(rb'\x1b\[([0-9;?>=]*)([a-zA-Z])')
ANSWERS = {(b'', b'c'): b'\x1b[?1;2c', (b'0', b'c'): b'\x1b[?1;2c', (b'6', b'n'): b'\x1b[1;1R'}


def main():
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        except OSError as error:
            os.write(2, f'late-terminal: {sys.argv[1]}: {error.strerror}\n'.encode())
        os._exit(127)

    out = bytearray()
    scanned = 0  # output before this has been looked at for queries
    held = []
    dsr = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every slave descriptor is closed
            chunk = b''
        if not chunk:
            break
        out.extend(chunk)
        for match in QUERY.finditer(out, scanned):
            scanned = match.end()
            asked = (match.group(1), match.group(2))
            if asked == (b'5', b'n'):
                dsr += 1
                os.write(master, b''.join(held) + b'\x1b[0n')
                held = []
            elif asked in ANSWERS:
                held.append(ANSWERS[asked])
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({'status': code, 'transcript': out.decode('utf-8', 'replace'), 'dsr': dsr}))


main()
