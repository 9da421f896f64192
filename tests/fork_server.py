# Copyright 2026 The official_spanbert Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The tests' Python processes forked from one that imported TensorFlow.

The tests start a hundred and more Python processes (binaries, workers,
exports); each paid TensorFlow's and Model Garden's imports again, ~7-9
CPU-s on the 2-core CI machines. tests/conftest.py points `sys.executable`
at a `python` launcher (install()): a stdlib-only client that hands its
argv, environment, working directory, resource limits and standard streams
to a server of its pytest session. The server imported TensorFlow, tf_keras,
tensorflow_text, Model Garden and the package once, without starting
TensorFlow's runtime, and forks a child per request that runs the script,
`-m` module or `-c` code as a fresh interpreter would (sys.path, __main__,
atexit, exit status). The launcher forwards signals to the child and exits
as it did.

Anything the child could not reproduce runs the real interpreter instead
(os.execv, the same command): interpreter options other than -m / -c / -u,
descriptors beyond 0-2, environment variables read when TensorFlow is
imported (TF_CPP_MIN_LOG_LEVEL, TF_ENABLE_ONEDNN_OPTS, ...) with values no
server was started for (install starts them for the pytest process's
values, TF_CPP_MIN_LOG_LEVEL=3 too), another mount / user / PID namespace (`unshare`),
a package found elsewhere on the request's sys.path, or
SPANBERT_FRESH_PYTHON=1 (tests that compare pids or what a start-up imports).

  fork_server.install(tmp_dir)   # conftest, once per pytest process
  subprocess.run([sys.executable, "-m", "official_spanbert.tools.train", ...])
"""

import json
import os
import signal
import socket
import struct
import sys

_ENV_DIR = "SPANBERT_FORK_DIR"        # where the servers' sockets live
_ENV_REAL = "SPANBERT_REAL_PYTHON"    # the interpreter the launcher stands for
_ENV_OWNER = "SPANBERT_FORK_OWNER"    # the pytest process's pid
_ENV_OFF = "SPANBERT_FRESH_PYTHON"    # "1": always the real interpreter
# Read when a process starts or imports TensorFlow (by TF, the loader or
# Python itself), so a child forked from a server started with other values
# would not see them: a request's values must be its server's. Variables
# read later (TF_NUM_INTRAOP_THREADS, CUDA_VISIBLE_DEVICES, OMP_* / KMP_*
# when torch is imported, ...) are set in the child's os.environ in time.
_START_VARS = ("TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL",
               "TF_CPP_VMODULE", "TF_ENABLE_ONEDNN_OPTS", "TF_USE_LEGACY_KERAS",
               "TF_XLA_FLAGS", "XLA_FLAGS", "LD_PRELOAD", "PYTHONHASHSEED",
               "PYTHONWARNINGS", "PYTHONIOENCODING", "PYTHONUTF8",
               "PYTHONMALLOC", "PYTHONDEVMODE", "PYTHONOPTIMIZE",
               "PYTHONNOUSERSITE", "PYTHONHOME", "PYTHONSAFEPATH")
_LIMITS = ("RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_NOFILE",
           "RLIMIT_CPU", "RLIMIT_CORE", "RLIMIT_STACK")
_NAMESPACES = ("mnt", "pid", "user", "net", "ipc", "uts")
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
              signal.SIGUSR1, signal.SIGUSR2)


def start_env(env) -> dict:
  """The variables of `env` a process reads at its start (_START_VARS)."""
  return {k: env[k] for k in _START_VARS if k in env}


def _key(env) -> str:
  import hashlib  # pylint: disable=g-import-not-at-top
  text = json.dumps(sorted(start_env(env).items()))
  return hashlib.sha1(text.encode()).hexdigest()[:12]


def _namespaces() -> dict:
  out = {}
  for ns in _NAMESPACES:
    try:
      out[ns] = os.readlink(f"/proc/self/ns/{ns}")
    except OSError:
      pass
  return out


def _send(sock, obj, fds=()):
  data = json.dumps(obj).encode()
  data = struct.pack("!I", len(data)) + data
  if fds:
    socket.send_fds(sock, [data], list(fds))
  else:
    sock.sendall(data)


def _recv(sock, maxfds=0):
  """(message, fds) or (None, []) if the peer closed."""
  if maxfds:
    data, fds, _, _ = socket.recv_fds(sock, 65536, maxfds)
  else:
    data, fds = sock.recv(65536), []
  if not data:
    return None, fds
  while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
    more = sock.recv(65536)
    if not more:
      return None, fds
    data += more
  return json.loads(data[4:4 + struct.unpack("!I", data[:4])[0]]), fds


# The launcher (stdlib only: it runs with -I -S) -----------------------------


def _parse(argv):
  """(kind, target, args, unbuffered) of a python command line, or None if
  it uses anything else."""
  unbuffered = False
  i = 0
  while i < len(argv):
    a = argv[i]
    if a == "-u":
      unbuffered, i = True, i + 1
    elif a in ("-m", "-c"):
      if i + 1 >= len(argv):
        return None
      return a, argv[i + 1], argv[i + 2:], unbuffered
    elif a.startswith("-m") and len(a) > 2:
      return "-m", a[2:], argv[i + 1:], unbuffered
    elif a.startswith("-c") and len(a) > 2:
      return "-c", a[2:], argv[i + 1:], unbuffered
    elif a.startswith("-") or a == "":
      return None
    else:
      return "script", a, argv[i + 1:], unbuffered
  return None


def _inherited_fds():
  """Open descriptors beyond 0-2 (pass_fds, multiprocessing's spawn pipes):
  only the real interpreter inherits them."""
  fds = []
  for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    if fd > 2:
      try:
        os.fstat(fd)
      except OSError:  # the listing's own descriptor, closed by now
        continue
      fds.append(fd)
  return fds


def _exec_real(argv, reason=""):
  """Runs the real interpreter; the reason goes to <fork dir>/fallbacks.log."""
  fork_dir = os.environ.get(_ENV_DIR)
  if reason and fork_dir and os.path.isdir(fork_dir):
    try:
      with open(os.path.join(fork_dir, "fallbacks.log"), "a",
                encoding="utf-8") as f:
        f.write(json.dumps({
            "reason": reason, "argv": argv[:3], "key": _key(os.environ),
            "test": os.environ.get("PYTEST_CURRENT_TEST", "")}) + "\n")
    except OSError:
      pass
  real = os.environ.get(_ENV_REAL) or "/usr/bin/python3"
  os.execv(real, [real] + argv)


def launcher_main(argv):
  """The `python` launcher: a forked child if the server can run it, the
  real interpreter otherwise."""
  parsed = _parse(argv)
  fork_dir = os.environ.get(_ENV_DIR)
  if parsed is None:
    _exec_real(argv, "options")
  if (not fork_dir or os.environ.get(_ENV_OFF) == "1"
      or not os.path.isdir(fork_dir)):
    _exec_real(argv, "off")
  if _inherited_fds():
    _exec_real(argv, "descriptors")
  env = dict(os.environ)
  if parsed[3]:
    env["PYTHONUNBUFFERED"] = "1"
  path = os.path.join(fork_dir, _key(env) + ".sock")
  sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  try:
    sock.connect(path)
  except OSError:
    sock.close()
    # Servers are started by the pytest processes only (install): one
    # started here would pass this process's limits, nice value and
    # namespaces on to every child.
    if not _wait_for_server(path):
      _exec_real(argv, "no server for these start-up variables: " +
                 json.dumps(start_env(env), sort_keys=True))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
      sock.connect(path)
    except OSError:
      _exec_real(argv, "server not reachable")
  import resource  # pylint: disable=g-import-not-at-top
  limits = {n: resource.getrlimit(getattr(resource, n)) for n in _LIMITS}
  request = {"kind": parsed[0], "target": parsed[1], "args": parsed[2],
             "env": env, "cwd": os.getcwd(), "limits": limits,
             "namespaces": _namespaces(), "umask": os.umask(0o022),
             "nice": os.getpriority(os.PRIO_PROCESS, 0),
             "affinity": sorted(os.sched_getaffinity(0))}
  os.umask(request["umask"])
  # A fresh interpreter keeps the signals its caller ignores ignored (a
  # background job's SIGINT, say); the child does the same.
  request["ignored"] = [s for s in _FORWARDED
                        if signal.getsignal(s) == signal.SIG_IGN]
  # Caught from before the request: a signal sent once the child has started
  # (even before its pid is here) reaches it, not this process's default.
  pending, pid = [], None

  def forward(signum, _):
    if pid is None:
      pending.append(signum)
      return
    try:
      os.kill(pid, signum)
    except OSError:
      pass

  before = {s: signal.signal(s, forward) for s in _FORWARDED}
  _send(sock, request, fds=(0, 1, 2))
  reply, _ = _recv(sock)
  if not reply or "pid" not in reply:
    sock.close()
    for s, handler in before.items():
      signal.signal(s, handler)
    for s in pending:
      os.kill(os.getpid(), s)
    _exec_real(argv, "refused (namespace or package path)")
  pid = reply["pid"]
  for s in pending:
    forward(s, None)
  while True:
    try:
      status, _ = _recv(sock)
      break
    except InterruptedError:
      continue
  if status is None:
    sys.stderr.write("python launcher (tests/fork_server.py): the server "
                     "closed before the child ended\n")
    os._exit(1)  # pylint: disable=protected-access
  if status.get("signal"):
    if status["signal"] not in (signal.SIGKILL, signal.SIGSTOP):
      signal.signal(status["signal"], signal.SIG_DFL)
    os.kill(os.getpid(), status["signal"])
  os._exit(status.get("code", 1))  # pylint: disable=protected-access


def _wait_for_server(path, timeout_s: float = 60.0) -> bool:
  """Waits while a server for `path` is starting (its pid in .starting is
  alive): it is ready sooner than a fresh interpreter would import."""
  import time  # pylint: disable=g-import-not-at-top
  deadline = time.time() + timeout_s
  while not os.path.exists(path):
    try:
      with open(path + ".starting", encoding="utf-8") as f:
        pid = int(f.read().strip() or 0)
      if pid:
        os.kill(pid, 0)
    except (OSError, ValueError):
      return False
    if time.time() > deadline:
      return False
    time.sleep(0.1)
  return True


def _start_server(path, env):
  """Starts a server for env's start-up variables (once: a lock file), in
  the background; this request runs the real interpreter meanwhile."""
  try:
    fd = os.open(path + ".starting", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
  except OSError:  # another request started it
    return
  os.close(fd)
  real = env.get(_ENV_REAL)
  if not real:
    return
  pid = os.fork()
  if pid == 0:  # detach: the launcher's caller does not wait for it
    os.setsid()
    if os.fork() == 0:
      devnull = os.open(os.devnull, os.O_RDWR)
      log = os.open(path + ".log", os.O_CREAT | os.O_WRONLY | os.O_APPEND)
      os.dup2(devnull, 0)
      os.dup2(devnull, 1)
      os.dup2(log, 2)
      # No PYTHONPATH: sys.path as a fresh interpreter's without it (each
      # request's own entries go in front of it in the child).
      server_env = {k: v for k, v in env.items()
                    if k not in (_ENV_OFF, "PYTHONPATH")}
      os.chdir("/")
      with open(path + ".starting", "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))  # the server's, after the exec
      os.execve(real, [real, os.path.abspath(__file__), "serve", path],
                server_env)
    os._exit(0)  # pylint: disable=protected-access
  os.waitpid(pid, 0)


# The server -------------------------------------------------------------------


def _preload():
  """What every child would import first, without starting TF's runtime."""
  # pylint: disable=g-import-not-at-top,unused-import,import-outside-toplevel
  import numpy  # noqa: F401
  import official_spanbert  # noqa: F401
  import tensorflow  # noqa: F401
  import tensorflow_text  # noqa: F401
  import tf_keras  # noqa: F401
  from official_spanbert import registry_imports  # noqa: F401
  from official_spanbert.training import train_lib  # noqa: F401


def _convert_encoder():
  """AutoGraph's conversions of the BERT encoder's Keras calls, which every
  child that builds a model made again: a Keras functional model converts
  each layer's `call` on its first symbolic call, ~0.9 CPU-s a process for
  the encoder (a tiny pretraining run on the 2-core Zen 4). Converted here
  with the options of that call, they are in the transpiler's cache (keyed
  by code object and options) that the children inherit; the converted
  code is the same. Pure Python: TF's runtime does not start."""
  # pylint: disable=g-import-not-at-top,import-outside-toplevel
  from official.nlp.modeling import layers
  from official.nlp.modeling import networks
  from official.nlp.modeling.layers import self_attention_mask
  from tensorflow.python.autograph.core import converter
  from tensorflow.python.autograph.impl import api
  # Keras' functional construction: recursive, not user-requested.
  context = converter.ProgramContext(options=converter.ConversionOptions(
      recursive=True, optional_features=None))
  for fn in (networks.BertEncoderV2.call,
             networks.BertEncoderV2._get_embeddings,  # pylint: disable=protected-access
             layers.TransformerEncoderBlock.call,
             layers.OnDeviceEmbedding.call, layers.PositionEmbedding.call,
             layers.SelfAttentionMask.call, self_attention_mask.get_mask):
    try:
      api._convert_actual(fn, context)  # pylint: disable=protected-access
    except Exception:  # pylint: disable=broad-except
      pass  # the child converts it, as a fresh interpreter does


def freeze_heap() -> None:
  """Moves every object alive now (the ~440k of the TensorFlow and package
  imports) out of the garbage collector's generations (gc.freeze): each
  full collection of this process, and of the children forked from it,
  then scans only what was made later instead of 0.22-0.29 CPU-s over the
  imports (2-core Zen 4). What the collector frees is unchanged: objects
  made after the freeze are collected as before, and the frozen ones were
  alive anyway. SPANBERT_TEST_GC_FREEZE=0 leaves the collector alone.

  Example:
    _preload(); freeze_heap()  # then fork
  """
  import gc  # pylint: disable=g-import-not-at-top
  if os.environ.get("SPANBERT_TEST_GC_FREEZE", "1") != "0":
    gc.collect()
    gc.freeze()


def _child_path(request, base_path):
  """sys.path of a fresh interpreter for the request."""
  kind, target, cwd = request["kind"], request["target"], request["cwd"]
  if kind == "script":
    first = os.path.dirname(os.path.abspath(os.path.join(cwd, target)))
  elif kind == "-m":
    first = cwd
  else:
    first = ""
  extra = [os.path.join(cwd, p) if p else cwd for p in
           request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
  return [first] + extra + base_path


def _same_package(path, cwd) -> bool:
  """Whether a fresh interpreter on `path` finds the package the server
  imported (or none on the path, as the server)."""
  import importlib.machinery  # pylint: disable=g-import-not-at-top
  spec = importlib.machinery.PathFinder.find_spec(
      "official_spanbert", [p or cwd for p in path])
  loaded = os.path.dirname(os.path.abspath(
      sys.modules["official_spanbert"].__file__))
  if spec is None or not spec.submodule_search_locations:
    return True
  return os.path.abspath(list(spec.submodule_search_locations)[0]) == loaded


def serve(path):
  """Accepts requests on the UNIX socket `path` until the owner exits."""
  import select  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  base_path = list(sys.path[1:])  # started without PYTHONPATH
  _preload()
  _convert_encoder()
  freeze_heap()
  owner = int(os.environ.get(_ENV_OWNER, "0"))
  namespaces = _namespaces()
  listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  tmp = path + f".{os.getpid()}"
  listener.bind(tmp)
  listener.listen(64)
  os.rename(tmp, path)
  children = {}  # pid -> connection
  last_check = time.time()
  while True:
    ready, _, _ = select.select([listener] + list(children.values()), [], [],
                                0.05)
    for conn in ready:
      if conn is listener:
        _accept(listener, children, base_path, namespaces)
      else:  # the launcher went away (killed): so does its child
        pid = next(p for p, c in children.items() if c is conn)
        try:
          os.kill(pid, signal.SIGKILL)
        except OSError:
          pass
    while children:
      try:
        pid, status = os.waitpid(-1, os.WNOHANG)
      except ChildProcessError:
        break
      if pid == 0:
        break
      conn = children.pop(pid, None)
      if conn is not None:
        result = ({"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status)
                  else {"code": os.waitstatus_to_exitcode(status)})
        try:
          _send(conn, result)
        except OSError:
          pass
        conn.close()
    if time.time() - last_check > 1.0:
      last_check = time.time()
      try:
        if owner:
          os.kill(owner, 0)
        if not os.path.exists(path):
          raise OSError("the session's folder is gone")
      except OSError:
        for pid in children:
          os.kill(pid, signal.SIGKILL)
        if os.path.exists(path):
          os.unlink(path)
        _log_cpu()
        return


def _log_cpu():
  """Appends this server's and its children's CPU seconds to the file
  $SPANBERT_FORK_CPU_LOG names, if any (their processes are not the test
  run's children, so its own accounting misses them)."""
  log = os.environ.get("SPANBERT_FORK_CPU_LOG")
  if not log:
    return
  import resource  # pylint: disable=g-import-not-at-top
  usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                            resource.RUSAGE_CHILDREN)]
  with open(log, "a", encoding="utf-8") as f:
    f.write(json.dumps({"pid": os.getpid(),
                        "self": usage[0].ru_utime + usage[0].ru_stime,
                        "children": usage[1].ru_utime + usage[1].ru_stime})
            + "\n")


def _accept(listener, children, base_path, namespaces):
  conn, _ = listener.accept()
  try:
    request, fds = _recv(conn, maxfds=3)
  except (OSError, ValueError):
    conn.close()
    return
  if request is None or len(fds) != 3:
    for fd in fds:
      os.close(fd)
    conn.close()
    return
  child_path = _child_path(request, base_path)
  if (request["namespaces"] != namespaces
      or not _same_package(child_path, request["cwd"])):
    for fd in fds:
      os.close(fd)
    _send(conn, {"fallback": True})
    conn.close()
    return
  pid = os.fork()
  if pid == 0:
    listener.close()
    for c in children.values():
      c.close()
    conn.close()
    _run_child(request, fds, child_path)
  for fd in fds:
    os.close(fd)
  children[pid] = conn
  _send(conn, {"pid": pid})


def _run_child(request, fds, child_path):
  """In the forked child: become the requested interpreter; never returns."""
  import atexit  # pylint: disable=g-import-not-at-top
  import resource  # pylint: disable=g-import-not-at-top
  import runpy  # pylint: disable=g-import-not-at-top
  import threading  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  code = 0
  try:
    ignored = set(request.get("ignored", ()))
    for s in _FORWARDED + (signal.SIGCHLD,):
      signal.signal(s, signal.SIG_IGN if s in ignored else
                    signal.default_int_handler if s == signal.SIGINT
                    else signal.SIG_DFL)
    for target, fd in enumerate(fds):
      os.dup2(fd, target)
      os.close(fd)
    for name, (soft, hard) in request["limits"].items():
      try:
        resource.setrlimit(getattr(resource, name), (soft, hard))
      except (ValueError, OSError):
        pass
    os.umask(request["umask"])
    try:
      os.setpriority(os.PRIO_PROCESS, 0, request["nice"])
      os.sched_setaffinity(0, request["affinity"])
    except OSError:
      pass
    os.chdir(request["cwd"])
    env = request["env"]
    os.environ.clear()
    os.environ.update(env)
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    if env.get("PYTHONUNBUFFERED"):
      sys.stdout.reconfigure(write_through=True)
      sys.stderr.reconfigure(write_through=True)
    sys.path[:] = child_path
    atexit._clear()  # pylint: disable=protected-access
    if "numpy" in sys.modules:
      sys.modules["numpy"].random.seed()
    kind, target = request["kind"], request["target"]
    if kind == "-c":
      sys.argv = ["-c"] + request["args"]
      main = types.ModuleType("__main__")
      main.__builtins__ = __builtins__
      sys.modules["__main__"] = main
      code_object = compile(target, "<string>", "exec")
      exec(code_object, main.__dict__)  # pylint: disable=exec-used
    elif kind == "-m":
      sys.argv = [target] + request["args"]
      # A fresh interpreter has not imported it (runpy would warn).
      sys.modules.pop(target, None)
      runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
      sys.argv = [target] + request["args"]
      runpy.run_path(target, run_name="__main__")
  except SystemExit as e:
    if e.code is None:
      code = 0
    elif isinstance(e.code, int):
      code = e.code
    else:
      sys.stderr.write(f"{e.code}\n")
      code = 1
  except KeyboardInterrupt:
    _finish(threading, atexit)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
  except BaseException:  # pylint: disable=broad-except
    etype, value, tb = sys.exc_info()
    sys.excepthook(etype, value, tb.tb_next)  # not this function's frame
    code = 1
  _finish(threading, atexit)
  os._exit(code & 0xFF)  # pylint: disable=protected-access


def _finish(threading, atexit):
  """A normal interpreter exit's last steps: join non-daemon threads, atexit
  handlers, flush."""
  try:
    threading._shutdown()  # pylint: disable=protected-access
  except BaseException:  # pylint: disable=broad-except
    pass
  atexit._run_exitfuncs()  # pylint: disable=protected-access
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except (OSError, ValueError):
      pass


# Set-up from conftest -------------------------------------------------------


def ensure_server(env=None, timeout_s: float = 300.0, wait: bool = True
                  ) -> str:
  """Starts the server for `env` (default: this process's) if none runs,
  and waits until it accepts requests (unless not `wait`); returns its
  socket's path."""
  import time  # pylint: disable=g-import-not-at-top
  env = dict(os.environ if env is None else env)
  path = os.path.join(env[_ENV_DIR], _key(env) + ".sock")
  if not os.path.exists(path):
    _start_server(path, env)
  deadline = time.time() + timeout_s
  while wait and not os.path.exists(path):
    if time.time() > deadline:
      raise TimeoutError(f"no fork server at {path} after {timeout_s:.0f} s "
                         f"(its log: {path}.log)")
    time.sleep(0.2)
  return path


def install(tmp_dir: str, set_executable: bool = True) -> str:
  """Points sys.executable at a launcher in tmp_dir/bin (beside links to the
  real interpreter's bin/ entries), for this process and its children (an
  xdist worker inherits its controller's: one set of servers a session);
  returns the real interpreter.

  set_executable: False in xdist's controller, which starts its workers
    with sys.executable and runs no test.
  """
  real = os.environ.get(_ENV_REAL) or sys.executable
  launcher = os.path.join(tmp_dir, "bin", "python")
  if os.path.exists(launcher):
    if set_executable:
      sys.executable = launcher
    return real
  bin_dir = os.path.dirname(launcher)
  os.makedirs(bin_dir, exist_ok=True)
  real_bin = os.path.dirname(real)
  for name in os.listdir(real_bin):
    if not name.startswith("python"):
      try:
        os.symlink(os.path.join(real_bin, name), os.path.join(bin_dir, name))
      except FileExistsError:
        pass
  here = os.path.dirname(os.path.abspath(__file__))
  with open(launcher + ".tmp", "w", encoding="utf-8") as f:
    f.write(f"#!{real} -IS\n"
            "import sys\n"
            f"sys.path.insert(0, {here!r})\n"
            "import fork_server\n"
            "fork_server.launcher_main(sys.argv[1:])\n")
  os.chmod(launcher + ".tmp", 0o755)
  os.rename(launcher + ".tmp", launcher)
  os.environ[_ENV_DIR] = tmp_dir
  os.environ[_ENV_REAL] = real
  os.environ[_ENV_OWNER] = str(os.getpid())
  if set_executable:
    sys.executable = launcher
  # The two sets of start-up variables most tests' processes have: this
  # process's, and TF_CPP_MIN_LOG_LEVEL=3 (train_helpers.env()).
  for extra in ({}, {"TF_CPP_MIN_LOG_LEVEL": "3"}):
    ensure_server(dict(os.environ, **extra), wait=False)
  return real


if __name__ == "__main__":
  if len(sys.argv) == 3 and sys.argv[1] == "serve":
    serve(sys.argv[2])
  else:
    launcher_main(sys.argv[1:])
