"""A stand-in for `python -m quiver.cli` that honours the runner's contract
(quiver.run_protocol: `run FILE --error-format json`, output on stdout, exit 0
on success; exit 1 with a last stderr line of JSON on failure, written with
the protocol's own RunError) and does what the file's
`# fake:` comment lines say, so run-file tests control exactly what happens:

    # fake: print 3             three lines "line 1".."line 3" on stdout
    # fake: stderr some text    a line on stderr
    # fake: fail 5 5 5 9 boom   a runtime failure at 5:5-5:9 (1-based, end exclusive)
    # fake: checkfail 2 1 2 4 bad   a check failure
    # fake: sleep 30            sleep that long
    # fake: child 30 PIDFILE    start a child that sleeps 30 s and write its pid to PIDFILE
    # fake: flood 5000000       write that many bytes to stdout, fast
    # fake: binary              write bytes that are not UTF-8
    # fake: exit 3              exit with that status (no JSON)
    # fake: escapes             write terminal control sequences (colours, a title, a link, a bell)
    # fake: cwd                 print the working directory
    # fake: file                print the path of the file it was given
    # fake: stdin               print what the program finds on its stdin (repr)
    # fake: daemon 30 PIDFILE   start a child in a session of its own (setsid), holding
    #                           stdout and stderr open, that sleeps 30 s; its pid to PIDFILE
    # fake: args                print the words after `--` (the arguments of main) as JSON
    # fake: metric 3 loss=0.5 acc=nan   one logged step (a MetricsRecord line on stderr)
    # fake: metrics 1000        that many logged steps 0..999, loss = 1 / (step + 1), fast

With --source-stdin (the editor's unsaved text) the file's text is read from
stdin, as the real runner does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from quiver.run_protocol import CHECK, RUNTIME, SOURCE_ON_STDIN, MetricsRecord, RunError


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "run":
        print("usage: fake_runner run FILE --error-format json", file=sys.stderr)
        return 2
    path = argv[1]
    if SOURCE_ON_STDIN in argv:
        lines = sys.stdin.buffer.read().decode("utf-8").splitlines()
        sys.stdin = open(os.devnull)  # noqa: SIM115 - the program's stdin from now on
    else:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    for line in lines:
        line = line.strip()
        if not line.startswith("# fake:"):
            continue
        cmd, _, rest = line[len("# fake:") :].strip().partition(" ")
        if cmd == "print":
            for i in range(int(rest)):
                print(f"line {i + 1}", flush=True)
        elif cmd == "stderr":
            print(rest, file=sys.stderr, flush=True)
        elif cmd in ("fail", "checkfail"):
            a, b, c, d, message = rest.split(" ", 4)
            error = RunError(path, int(a), int(b), int(c), int(d), message, RUNTIME if cmd == "fail" else CHECK)
            print("Traceback (most recent call last): ...", file=sys.stderr)
            print(error.to_json(), file=sys.stderr, flush=True)
            return 1
        elif cmd == "sleep":
            time.sleep(float(rest))
        elif cmd == "child":
            seconds, pidfile = rest.split(" ", 1)
            child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])
            with open(pidfile, "w") as f:
                f.write(str(child.pid))
        elif cmd == "flood":
            n = int(rest)
            block = ("x" * 1023 + "\n").encode()
            out = sys.stdout.buffer
            for _ in range(n // len(block)):
                out.write(block)
            out.flush()
        elif cmd == "binary":
            sys.stdout.buffer.write(b"caf\xe9 \xff\xfe ok\n")
            sys.stdout.flush()
        elif cmd == "daemon":
            seconds, pidfile = rest.split(" ", 1)
            child = subprocess.Popen(
                [sys.executable, "-c", f"import time; time.sleep({seconds})"], start_new_session=True
            )
            with open(pidfile, "w") as f:
                f.write(str(child.pid))
        elif cmd == "escapes":  # colours, a window title, a hyperlink, a bell; one split between writes
            out = sys.stdout
            out.write("\x1b[31mred\x1b[0m \x1b[1mbold\x1b[22m \x1b]0;evil title\x07title set ")
            out.write("\x1b]8;;https://evil.invalid\x1b\\link\x1b]8;;\x1b\\ done\x07\r\n\x1b[3")
            out.flush()
            time.sleep(0.2)
            out.write("2mloss\x1b[0m\t0.5\n")
            out.flush()
        elif cmd == "stdin":
            print(repr(sys.stdin.read()), flush=True)
        elif cmd == "exit":
            return int(rest)
        elif cmd == "cwd":
            print(os.getcwd(), flush=True)
        elif cmd == "file":
            print(path, flush=True)
        elif cmd == "args":
            print(json.dumps(argv[argv.index("--") + 1 :] if "--" in argv else []), flush=True)
        elif cmd == "metric":
            step, *pairs = rest.split()
            values = {k: float(v) for k, v in (p.split("=", 1) for p in pairs)}
            print(MetricsRecord(int(step), values).to_json(), file=sys.stderr, flush=True)
        elif cmd == "metrics":
            records = [MetricsRecord(i, {"loss": 1 / (i + 1)}).to_json() + "\n" for i in range(int(rest))]
            sys.stderr.write("".join(records))
            sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
